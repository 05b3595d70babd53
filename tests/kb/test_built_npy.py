"""serialization.map_built_npy: a KB array mapped from a finished build file is saved by copying the file;
anything else (another array, a file that is gone or no longer matches) is saved by ``np.save``."""
import io

import numpy as np

from spacy_el.kb import serialization
from spacy_el.kb.serialization import map_built_npy, read_kb_dir, write_kb_dir


def saved(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, values, allow_pickle=False)
    return buffer.getvalue()


def test_built_files_are_copied_and_others_saved(tmp_path, monkeypatch):
    built = tmp_path / "built"
    built.mkdir()
    values = {"a": np.arange(10, dtype=np.int64), "b": np.zeros(0, dtype=np.float32), "c": np.arange(5, dtype=np.uint8)}
    for name, array in values.items():
        np.save(built / f"{name}.npy", array)
    arrays = {name: map_built_npy(built / f"{name}.npy") for name in ("a", "b")}
    arrays["c"] = np.load(built / "c.npy", mmap_mode="r")  # mapped, but not through map_built_npy
    calls = []
    real_save = np.save
    monkeypatch.setattr(np, "save", lambda f, array, **kw: (calls.append(array.nbytes), real_save(f, array, **kw)))
    write_kb_dir(tmp_path / "kb", {}, arrays, {})
    assert calls == [5]  # only "c" went through np.save
    _, loaded, _ = read_kb_dir(tmp_path / "kb")
    for name, array in values.items():
        assert (tmp_path / "kb" / "arrays" / f"{name}.npy").read_bytes() == saved(array)
        assert np.array_equal(loaded[name], array)


def test_a_missing_or_changed_file_is_saved_from_the_array(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.int32))
    np.save(tmp_path / "b.npy", np.arange(4, dtype=np.int32))
    a, b = map_built_npy(tmp_path / "a.npy"), map_built_npy(tmp_path / "b.npy")
    assert serialization._built_file(a) == tmp_path / "a.npy"
    (tmp_path / "a.npy").unlink()  # the map outlives the name
    with (tmp_path / "b.npy").open("ab") as f:
        f.write(b"\0" * 4)  # longer than the array: no longer its np.save file
    assert serialization._built_file(a) is None and serialization._built_file(b) is None
    assert serialization._built_file(np.array(a)) is None  # a copy is no mapped array
    write_kb_dir(tmp_path / "kb", {}, {"a": a, "b": b}, {})
    for name in ("a", "b"):
        assert (tmp_path / "kb" / "arrays" / f"{name}.npy").read_bytes() == saved(np.arange(4, dtype=np.int32))

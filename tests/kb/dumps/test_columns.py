"""spacy_el.kb.dumps.columns: columns written straight to files are the files ``np.save`` writes, and the
string columns and hash indexes equal ``StringArray`` / ``HashIndex`` built in memory."""
import io

import numpy as np
import pytest

from spacy_el.kb.dumps import columns
from spacy_el.kb.dumps.columns import ArrayFile, Column, StringColumn, read_chunks, write_hash_index
from spacy_el.kb.string_array import HashIndex, StringArray


def saved(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, values, allow_pickle=False)
    return buffer.getvalue()


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.uint64, np.float32])
@pytest.mark.parametrize("length", [0, 1, 1000, 300_000])
def test_array_file_is_what_np_save_writes(tmp_path, monkeypatch, dtype, length):
    monkeypatch.setattr(columns, "BUFFER_BYTES", 4096)  # many flushes
    values = (np.arange(length) % 251).astype(dtype)
    out = ArrayFile(tmp_path / "a.npy", dtype)
    for start in range(0, length, 777):
        out.write(values[start : start + 777])
    assert out.close().read_bytes() == saved(values)
    assert np.array_equal(np.load(tmp_path / "a.npy"), values)


def test_columns_convert_as_array_does(tmp_path):
    priors = [1 / 3, 0.01, 2 / 7, 1.0]
    column = Column(tmp_path / "p.npy", "f", np.float32)
    column.extend(priors[:2])
    column.append(priors[2])
    column.append(priors[3])
    assert len(column) == 4
    assert column.close().read_bytes() == saved(np.array(priors, dtype=np.float32))
    offsets = Column(tmp_path / "o.npy", "q", np.int64, first=[0])
    assert len(offsets) == 1 and offsets.close().read_bytes() == saved(np.zeros(1, np.int64))
    raw = Column(tmp_path / "h.bin", "Q", np.uint64, npy=False)
    raw.extend([3, 2, 1])
    raw.close()
    assert np.concatenate(list(read_chunks(tmp_path / "h.bin", np.uint64, chunk=2))).tolist() == [3, 2, 1]
    with pytest.raises(ValueError):
        Column(tmp_path / "x.npy", "i", np.int64)


def test_string_column_and_hash_index_equal_the_in_memory_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "BUFFER_BYTES", 64)
    monkeypatch.setattr(columns, "CHUNK_ROWS", 3)
    texts = ["Paris", "", "Zürich", "東京", "Paris", "a" * 100, "b", "Paris, Texas"]
    (tmp_path / "scratch").mkdir()
    column = StringColumn(tmp_path, "aliases.strings", hashed=True, scratch=tmp_path / "scratch")
    for text in texts:
        column.append(text)
    column.close()
    assert len(column) == len(texts)
    expected = StringArray.from_strings(texts)
    for name, array in expected.to_arrays("aliases.strings").items():
        assert (tmp_path / f"{name}.npy").read_bytes() == saved(array), name
    hashes = np.fromfile(column.hashes_path, dtype=np.uint64)
    files = write_hash_index(hashes, tmp_path, "aliases.exact_index")
    for name, array in HashIndex.build(texts).to_arrays("aliases.exact_index").items():
        assert files[name].read_bytes() == saved(array), name


def test_a_key_other_than_the_text_is_indexed(tmp_path):
    column = StringColumn(tmp_path, "ids", hashed=True)
    column.append("Paris", key="paris")
    column.close()
    files = write_hash_index(np.fromfile(column.hashes_path, dtype=np.uint64), tmp_path, "index")
    assert np.load(files["index.hashes"]).tolist() == HashIndex.build(["paris"]).hashes.tolist()

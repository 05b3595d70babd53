import json

import numpy as np
import pytest

from spacy_el.kb import ElKnowledgeBase, KBFormatError
from spacy_el.kb.serialization import MANIFEST

from ..conftest import build_toy_kb

QUERIES = ["Paris", "paris", "Hiltom", "beatles", "Fab Four", "unknown", ""]


def assert_same_kb(a: ElKnowledgeBase, b: ElKnowledgeBase) -> None:
    arrays_a, arrays_b = a._arrays(), b._arrays()
    assert arrays_a.keys() == arrays_b.keys()
    for name in arrays_a:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)
    assert a.entities.type_names == b.entities.type_names
    assert a.settings == b.settings
    assert a.entity_vector_length == b.entity_vector_length
    for q in QUERIES:
        assert a.lookup(q) == b.lookup(q)


@pytest.mark.parametrize("vectors", [False, True])
@pytest.mark.parametrize("mmap", [False, True])
def test_disk_round_trip(tmp_path, vectors, mmap):
    kb = build_toy_kb(vectors=vectors)
    kb.to_disk(tmp_path / "kb")
    assert_same_kb(kb, ElKnowledgeBase.load(tmp_path / "kb", mmap=mmap))


@pytest.mark.parametrize("vectors", [False, True])
def test_bytes_round_trip(vectors):
    kb = build_toy_kb(vectors=vectors)
    data = kb.to_bytes()
    restored = ElKnowledgeBase(kb.vocab).from_bytes(data)
    assert_same_kb(kb, restored)
    assert restored.to_bytes() == data


def test_empty_kb_round_trips(tmp_path):
    kb = ElKnowledgeBase(build_toy_kb().vocab, 16)
    kb.to_disk(tmp_path / "kb")
    loaded = ElKnowledgeBase.load(tmp_path / "kb")
    assert loaded.is_empty() and loaded.entity_vector_length == 16 and loaded.lookup("x") == []


@pytest.fixture
def kb_dir(tmp_path):
    path = tmp_path / "kb"
    build_toy_kb(vectors=True).to_disk(path)
    return path


def test_missing_directory_and_manifest(tmp_path, kb_dir):
    with pytest.raises(KBFormatError, match="E206"):
        ElKnowledgeBase.load(tmp_path / "nothing")
    (kb_dir / MANIFEST).unlink()
    with pytest.raises(KBFormatError, match=r"E207.*manifest\.json"):
        ElKnowledgeBase.load(kb_dir)


def test_truncated_array_names_the_file(kb_dir):
    target = kb_dir / "arrays" / "aliases.cand_priors.npy"
    target.write_bytes(target.read_bytes()[:-3])
    with pytest.raises(KBFormatError, match=r"E217.*aliases\.cand_priors\.npy"):
        ElKnowledgeBase.load(kb_dir)


def test_tampered_array_fails_checksum(kb_dir):
    target = kb_dir / "arrays" / "entities.frequencies.npy"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(KBFormatError, match=r"E218.*entities\.frequencies\.npy"):
        ElKnowledgeBase.load(kb_dir)


def test_missing_array_is_named(kb_dir):
    (kb_dir / "arrays" / "entities.vectors.npy").unlink()
    with pytest.raises(KBFormatError, match=r"E216.*entities\.vectors\.npy"):
        ElKnowledgeBase.load(kb_dir)


def test_structural_check_runs_without_checksums(kb_dir):
    """A consistent-looking but wrong file (checksum updated by an attacker) is still caught by structure checks."""
    target = kb_dir / "arrays" / "aliases.cand_entities.npy"
    np.save(target, np.array([99, 0, 1, 2, 3, 3], dtype=np.int32))
    with pytest.raises(KBFormatError, match=r"E120.*aliases\.cand_entities"):
        ElKnowledgeBase.load(kb_dir, verify=False)


def test_pickled_array_is_refused(kb_dir):
    target = kb_dir / "arrays" / "entities.frequencies.npy"
    np.save(target, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(KBFormatError, match=r"E217.*entities\.frequencies"):
        ElKnowledgeBase.load(kb_dir, verify=False)


@pytest.mark.parametrize(
    "edit,error",
    [(lambda m: "{broken", "E214"),
     (lambda m: json.dumps({**m, "format": "other"}), "E208"),
     (lambda m: json.dumps({**m, "format_version": 999}), "E209"),
     (lambda m: json.dumps({**m, "files": {"../../etc/passwd": {}}}), "E215")],
)
def test_bad_manifest(kb_dir, edit, error):
    manifest = json.loads((kb_dir / MANIFEST).read_text())
    (kb_dir / MANIFEST).write_text(edit(manifest))
    with pytest.raises(KBFormatError, match=error):
        ElKnowledgeBase.load(kb_dir)


def test_bad_bytes():
    kb = build_toy_kb()
    with pytest.raises(KBFormatError, match="E221"):
        ElKnowledgeBase(kb.vocab).from_bytes(b"\x00garbage")
    data = bytearray(kb.to_bytes())
    data[-5] ^= 0xFF
    with pytest.raises(KBFormatError):
        ElKnowledgeBase(kb.vocab).from_bytes(bytes(data))


@pytest.mark.parametrize("factory", ["Flat", "HNSW32"])
def test_dense_index_round_trips_inside_the_kb(tmp_path, factory):
    from spacy_el.kb.build_steps import attach_dense_index

    kb = build_toy_kb(vectors=True)
    attach_dense_index(kb, factory)
    queries = np.eye(4, dtype=np.float32)
    expected = kb.search_dense(queries, k=2)
    assert [hits[0][0] for hits in expected] == ["Paris", "Paris_Hilton", "Paris,_Texas", "The_Beatles"]
    kb.to_disk(tmp_path / "kb")
    for mmap in (False, True):
        assert ElKnowledgeBase.load(tmp_path / "kb", mmap=mmap).search_dense(queries, k=2) == expected
    assert ElKnowledgeBase(kb.vocab).from_bytes(kb.to_bytes()).search_dense(queries, k=2) == expected


def test_tampered_dense_index_is_named(tmp_path):
    from spacy_el.kb.build_steps import attach_dense_index

    kb = build_toy_kb(vectors=True)
    attach_dense_index(kb, "Flat")
    kb.to_disk(tmp_path / "kb")
    target = tmp_path / "kb" / "dense.faiss"
    target.write_bytes(target.read_bytes()[:-10])
    with pytest.raises(KBFormatError, match=r"E217.*dense\.faiss"):
        ElKnowledgeBase.load(tmp_path / "kb")


def test_dense_search_without_index_or_vectors_is_a_clear_error():
    from spacy_el.kb.build_steps import attach_dense_index

    kb = build_toy_kb()
    with pytest.raises(ValueError, match="E119"):
        kb.search_dense(np.zeros((1, 4), np.float32), k=1)
    with pytest.raises(ValueError, match="E151"):
        attach_dense_index(kb, "Flat")

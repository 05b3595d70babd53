"""DenseIndex: exactness, round trips (file, mmap, bytes) and error handling on small random data."""
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

faiss = pytest.importorskip("faiss")
from spacy_el.kb.dense_index import DenseIndex  # noqa: E402

DIM = 32
# PQ8x4 (4-bit codes) trains in ~1 s here; 8-bit PQ codebooks take ~15 s on 2 busy cores.
FACTORIES = ["Flat", "HNSW32", "IVF16,PQ8x4"]


def _unit(rows: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data() -> Dict[str, np.ndarray]:
    return {"vectors": _unit(2000, 0), "queries": _unit(20, 1)}


@pytest.fixture(scope="module")
def built(data: Dict[str, np.ndarray]) -> Dict[str, DenseIndex]:
    indexes = {}
    for factory in FACTORIES:
        index = DenseIndex(DIM, factory, ef_search=64, nprobe=4, max_train=1500)
        index.add(data["vectors"])
        indexes[factory] = index
    return indexes


def test_flat_is_exact(built: Dict[str, DenseIndex], data: Dict[str, np.ndarray]) -> None:
    scores, rows = built["Flat"].search(data["queries"], 10)
    sims = data["queries"] @ data["vectors"].T
    expected = np.argsort(-sims, axis=1)[:, :10]
    assert rows.dtype == np.int64 and scores.dtype == np.float32 and rows.shape == (20, 10)
    assert np.array_equal(rows, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(sims, expected, axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("factory", FACTORIES)
def test_round_trips_give_identical_neighbours(
    built: Dict[str, DenseIndex], data: Dict[str, np.ndarray], factory: str, tmp_path: Path
) -> None:
    index = built[factory]
    scores, rows = index.search(data["queries"], 10)
    assert index.ntotal == 2000 and index.dim == DIM and index.factory == factory
    # approximate indexes are still far better than chance (0.005) on structureless random data
    exact = np.argsort(-(data["queries"] @ data["vectors"].T), axis=1)[:, :10]
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(rows, exact)])
    assert recall > {"Flat": 0.99, "HNSW32": 0.8, "IVF16,PQ8x4": 0.15}[factory]
    path = index.save(tmp_path / "dense.faiss")
    copies = [
        DenseIndex.load(path, mmap=True),
        DenseIndex.load(path, mmap=False),
        DenseIndex.from_bytes(index.to_bytes()),
        DenseIndex.from_bytes(path.read_bytes()),  # the file and the bytes share one format
    ]
    for copy in copies:
        assert copy.factory == factory and copy.ntotal == 2000 and copy.search_params == index.search_params
        s2, r2 = copy.search(data["queries"], 10)
        assert np.array_equal(rows, r2)
        np.testing.assert_array_equal(scores, s2)
    assert copies[0].is_mmapped and not copies[1].is_mmapped
    # a plain FAISS reader opens the file too (the metadata trailer is ignored)
    assert faiss.read_index(str(path)).ntotal == 2000


def test_add_to_mmapped_index_reloads_it(built: Dict[str, DenseIndex], tmp_path: Path) -> None:
    path = built["Flat"].save(tmp_path / "dense.faiss")
    index = DenseIndex.load(path, mmap=True)
    index.add(_unit(5, 7))  # FAISS would abort on a mapped index; DenseIndex reads it into memory first
    assert index.ntotal == 2005 and not index.is_mmapped
    assert DenseIndex.load(path).ntotal == 2000


def test_search_params(built: Dict[str, DenseIndex]) -> None:
    hnsw, ivf, flat = built["HNSW32"], built["IVF16,PQ8x4"], built["Flat"]
    assert hnsw.search_params == {"ef_search": 64} and ivf.search_params == {"nprobe": 4}
    assert flat.search_params == {}
    ivf.set_search_params(nprobe=1000)  # clamped to nlist by FAISS semantics
    assert faiss.extract_index_ivf(ivf._index).nprobe == 16
    ivf.set_search_params(nprobe=4)
    with pytest.raises(ValueError):
        hnsw.set_search_params(ef_search=0)


def test_k_larger_than_ntotal_and_empty_index() -> None:
    index = DenseIndex(DIM, "Flat")
    scores, rows = index.search(_unit(3, 2), 5)
    assert rows.shape == (3, 5) and (rows == -1).all() and np.isneginf(scores).all()
    index.add(_unit(4, 3))
    scores, rows = index.search(_unit(3, 2), 6)
    assert (rows[:, :4] >= 0).all() and (rows[:, 4:] == -1).all()
    assert np.isfinite(scores[:, :4]).all() and np.isneginf(scores[:, 4:]).all()
    assert DenseIndex(DIM, "IVF16,PQ8x4").search(_unit(2, 2), 3)[1].tolist() == [[-1] * 3] * 2  # untrained


def test_wrong_shape_or_dtype_is_a_clear_error() -> None:
    index = DenseIndex(DIM)
    with pytest.raises(ValueError, match="E235"):
        index.add(np.zeros((4, 16), np.float32))
    with pytest.raises(ValueError, match="E235"):
        index.search(np.zeros((1, DIM)), 3)
    with pytest.raises(ValueError, match="E235"):
        index.search(np.zeros(DIM, np.float32), 3)
    with pytest.raises(ValueError, match="E238"):
        DenseIndex(DIM, "NoSuchIndex")
    with pytest.raises(ValueError, match="E227"):
        DenseIndex(DIM, "HNSW32", ef_construction=0)


def test_too_few_vectors_to_train() -> None:
    with pytest.raises(ValueError, match="E228"):
        DenseIndex(DIM, "IVF64,Flat").add(_unit(50, 4))


def test_truncated_or_corrupted_file_names_the_file(built: Dict[str, DenseIndex], tmp_path: Path) -> None:
    data = built["HNSW32"].to_bytes()
    for name, content in [("cut.faiss", data[: len(data) // 2]), ("tiny.faiss", data[:10]), ("junk.faiss", b"x" * 99)]:
        path = tmp_path / name
        path.write_bytes(content)
        for mmap in (True, False):
            with pytest.raises(ValueError, match=rf"E24[23].*{name}"):
                DenseIndex.load(path, mmap=mmap)
        with pytest.raises(ValueError, match="E23[12]"):
            DenseIndex.from_bytes(content)
    # intact trailer, damaged FAISS header: FAISS's RuntimeError becomes a ValueError naming the file
    broken = tmp_path / "broken.faiss"
    broken.write_bytes(b"\0" * 64 + data[64:])
    with pytest.raises(ValueError, match=r"E236.*broken\.faiss"):
        DenseIndex.load(broken)
    with pytest.raises(ValueError, match="E230"):
        DenseIndex.load(tmp_path / "missing.faiss")


def test_num_threads_is_scoped() -> None:
    before = faiss.omp_get_max_threads()
    index = DenseIndex(DIM, num_threads=1)
    index.add(_unit(100, 5))
    index.search(_unit(2, 6), 3)
    assert faiss.omp_get_max_threads() == before

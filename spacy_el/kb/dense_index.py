"""``DenseIndex``: a FAISS inner-product index over the KB's entity vectors (row i = KB entity row i).

Any ``faiss.index_factory`` string works; the three the project uses and tests are

* ``"Flat"``: exact search, 4 * dim bytes per entity.
* ``"HNSW32"``: graph search, ~4 * dim + 256 bytes per entity; recall/speed set by ``ef_search``.
* ``"IVF{nlist},PQ{m}"``: compressed (m bytes + 8 per entity); trained on a sample; ``nprobe`` lists searched.

Vectors are compared by inner product, so L2-normalised vectors (as ``TextEncoder`` returns) give cosine.

File format (one file, what ``save`` writes and ``to_bytes`` returns)::

    [FAISS index, N bytes][JSON metadata, M bytes][N: uint64 LE][M: uint64 LE][magic b"SPELDIX1"]

FAISS ignores the trailing metadata, so the file is also a plain FAISS file that ``faiss.read_index``
opens and that can be memory-mapped from offset 0. The exact size check catches truncated files.
Nothing is ever unpickled.
"""
import contextlib
import json
import os
import struct
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import faiss
import numpy as np

from .errors import KBErrors
from .files import write_path

# Why the BLAS threshold is changed. faiss-cpu 1.15 scores exhaustive searches (Flat, and the IVF
# coarse quantizer) with a per-query SIMD loop while ``n_queries * dim < distance_compute_blas_threshold``
# and with BLAS sgemm from there on. Its default, 128000, keeps every batch below 334 queries at dim 384
# on the loop, which re-reads the whole matrix for each query; BLAS is several times faster from about
# 8 queries on, while "always BLAS" (threshold 1) is slower for 1-4 queries. Hence BLAS from 8 queries at
# dim 384 (docs/kb_scale.md compares the three settings).
# Single queries on a big index are unaffected (FAISS then splits the database across threads). The unit
# (queries x dim) is that of the pinned faiss 1.15; older releases compared the query count alone.
# Process-wide FAISS setting, set once here.
BLAS_THRESHOLD = 8 * 384
faiss.cvar.distance_compute_blas_threshold = BLAS_THRESHOLD

FORMAT_NAME = "spacy_el.dense_index"
FORMAT_VERSION = 1
_MAGIC = b"SPELDIX1"
_TRAILER = struct.Struct("<QQ8s")  # faiss bytes, metadata bytes, magic

PathLike = Union[str, Path]


class DenseIndex:
    """FAISS index over float32 entity vectors, searched by inner product.

    dim (int): vector width.
    factory (str): a ``faiss.index_factory`` string, e.g. "Flat", "HNSW32", "IVF4096,PQ48".
    ef_search (int): HNSW candidate-list size at search time (used when the index has an HNSW part).
    nprobe (int): inverted lists visited per query (used when the index is IVF).
    ef_construction (int): HNSW candidate-list size while adding (graph quality vs build time).
    max_train (int): IVF/PQ indexes are trained on at most this many vectors, sampled uniformly.
    seed (int): seed of the training sample.
    num_threads (Optional[int]): OpenMP threads for this index's calls; None leaves FAISS's
        process-wide setting alone. When set, it is applied around each call and restored after.
    """

    def __init__(
        self,
        dim: int,
        factory: str = "Flat",
        *,
        ef_search: int = 128,
        nprobe: int = 32,
        ef_construction: int = 40,
        max_train: int = 200_000,
        seed: int = 0,
        num_threads: Optional[int] = None,
    ) -> None:
        if dim < 1:
            raise ValueError(KBErrors.E226.format(dim=dim))
        try:
            index = faiss.index_factory(int(dim), factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as err:
            raise ValueError(KBErrors.E238.format(factory=factory, dim=dim, err=_first_line(err))) from err
        if int(ef_construction) < 1:
            raise ValueError(KBErrors.E227.format(ef_construction=ef_construction))
        self._init(index, factory, ef_search, nprobe, ef_construction, max_train, seed, num_threads)
        hnsw = _hnsw_of(index)
        if hnsw is not None:
            hnsw.efConstruction = int(ef_construction)
        ivf = faiss.try_extract_index_ivf(index)
        ivf = faiss.downcast_index(ivf) if ivf is not None else None
        if isinstance(ivf, faiss.IndexIVFPQ):
            # The factory turns on polysemous training for "IVF..,PQ.." (it reorders PQ centroids so
            # Hamming distances approximate real ones). It only serves polysemous_ht filtering, which
            # DenseIndex never enables, and it took ~2/3 of IVF1024,PQ48 training time here.
            ivf.do_polysemous_training = False

    def _init(
        self,
        index: Any,
        factory: str,
        ef_search: int,
        nprobe: int,
        ef_construction: int,
        max_train: int,
        seed: int,
        num_threads: Optional[int],
    ) -> None:
        self._index = index
        self._factory = factory
        self._ef_search = int(ef_search)
        self._nprobe = int(nprobe)
        self._ef_construction = int(ef_construction)
        self._max_train = int(max_train)
        self._seed = int(seed)
        self._num_threads = num_threads
        # Path of the file this index is memory-mapped from (FAISS aborts the process when a mapped
        # index is modified, so ``add`` first reloads it into owned memory).
        self._mmap_path: Optional[Path] = None
        self.set_search_params(ef_search=self._ef_search, nprobe=self._nprobe)

    # -- properties --------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return int(self._index.d)

    @property
    def factory(self) -> str:
        return self._factory

    @property
    def ntotal(self) -> int:
        return int(self._index.ntotal)

    @property
    def is_trained(self) -> bool:
        return bool(self._index.is_trained)

    @property
    def is_mmapped(self) -> bool:
        return self._mmap_path is not None

    @property
    def search_params(self) -> Dict[str, int]:
        """The search parameters that apply to this index type (empty for Flat)."""
        params: Dict[str, int] = {}
        if _hnsw_of(self._index) is not None:
            params["ef_search"] = self._ef_search
        if faiss.try_extract_index_ivf(self._index) is not None:
            params["nprobe"] = self._nprobe
        return params

    def __len__(self) -> int:
        return self.ntotal

    def __repr__(self) -> str:
        return f"<DenseIndex factory={self._factory!r} dim={self.dim} ntotal={self.ntotal} {self.search_params}>"

    # -- configuration -----------------------------------------------------------------------------
    def set_search_params(self, ef_search: Optional[int] = None, nprobe: Optional[int] = None) -> None:
        """Set HNSW ``efSearch`` and/or IVF ``nprobe``. A parameter the index type lacks is kept (and
        saved) but has no effect, so one config can serve every factory."""
        if ef_search is not None:
            if ef_search < 1:
                raise ValueError(KBErrors.E239.format(ef_search=ef_search))
            self._ef_search = int(ef_search)
            hnsw = _hnsw_of(self._index)
            if hnsw is not None:
                hnsw.efSearch = self._ef_search
        if nprobe is not None:
            if nprobe < 1:
                raise ValueError(KBErrors.E240.format(nprobe=nprobe))
            self._nprobe = int(nprobe)
            ivf = faiss.try_extract_index_ivf(self._index)
            if ivf is not None:
                ivf.nprobe = min(self._nprobe, int(ivf.nlist))

    # -- building ----------------------------------------------------------------------------------
    def train(self, vectors: np.ndarray) -> None:
        """Train the index (IVF centroids, PQ codebooks) on at most ``max_train`` rows of ``vectors``.

        vectors (np.ndarray): float32 (n, dim).
        """
        vectors = self._check(vectors, "vectors")
        n = len(vectors)
        ivf = faiss.try_extract_index_ivf(self._index)
        if ivf is not None and n < ivf.nlist:
            raise ValueError(
                KBErrors.E228.format(factory=self._factory, nlist=ivf.nlist, n=n, max_lists=max(1, n // 39))
            )
        if n > self._max_train:
            rows = np.sort(np.random.default_rng(self._seed).choice(n, self._max_train, replace=False))
            vectors = vectors[rows]
        try:
            with self._threads():
                self._index.train(vectors)
        except RuntimeError as err:
            raise ValueError(
                KBErrors.E241.format(factory=self._factory, n_vectors=len(vectors), err=_first_line(err))
            ) from err

    def add(self, vectors: np.ndarray) -> None:
        """Append vectors; they get the next row numbers (add in KB entity-row order).

        vectors (np.ndarray): float32 (n, dim). Trains the index first when it needs training.
        """
        vectors = self._check(vectors, "vectors")
        if len(vectors) == 0:
            return
        if self._mmap_path is not None:
            self._index = _read_index_file(self._mmap_path, mmap=False)
            self._mmap_path = None
            self.set_search_params(ef_search=self._ef_search, nprobe=self._nprobe)
        if not self._index.is_trained:
            self.train(vectors)
        with self._threads():
            self._index.add(vectors)

    # -- search ------------------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
        """Top-k rows by inner product.

        queries (np.ndarray): float32 (q, dim).
        k (int): neighbours per query; may exceed ``ntotal``.
        RETURNS (Tuple[np.ndarray, np.ndarray]): scores float32 (q, k), best first, and rows int64
            (q, k). Missing results (fewer than k found) have row -1 and score -inf.
        """
        queries = self._check(queries, "queries")
        if k < 1:
            raise ValueError(KBErrors.E229.format(k=k))
        n_q = len(queries)
        if n_q == 0 or self.ntotal == 0:
            return np.full((n_q, k), -np.inf, dtype=np.float32), np.full((n_q, k), -1, dtype=np.int64)
        with self._threads():
            scores, rows = self._index.search(queries, int(k))
        scores[rows < 0] = -np.inf
        return scores, rows.astype(np.int64, copy=False)

    # -- serialisation -----------------------------------------------------------------------------
    def meta(self) -> Dict[str, Any]:
        """JSON-serialisable description stored next to the FAISS bytes."""
        return {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "factory": self._factory,
            "dim": self.dim,
            "ntotal": self.ntotal,
            "metric": "inner_product",
            "ef_search": self._ef_search,
            "nprobe": self._nprobe,
            "ef_construction": self._ef_construction,
            "max_train": self._max_train,
            "seed": self._seed,
        }

    def save(self, path: PathLike) -> Path:
        """Write the index file (format in the module docstring) atomically; RETURNS its path.

        Writing to a temporary file and renaming (``files.write_path``) keeps any process that maps the old
        file working, and replaces a symlink at ``path`` instead of writing through it.
        """
        path = Path(path)

        def write(tmp: Path) -> None:
            faiss.write_index(self._index, str(tmp))
            n_faiss = tmp.stat().st_size
            meta = json.dumps(self.meta()).encode("utf8")
            with tmp.open("ab") as f:
                f.write(meta + _TRAILER.pack(n_faiss, len(meta), _MAGIC))

        write_path(path, write)
        return path

    @classmethod
    def load(cls, path: PathLike, mmap: bool = True, num_threads: Optional[int] = None) -> "DenseIndex":
        """Read an index file written by ``save`` (or ``to_bytes``).

        mmap (bool): memory-map the vectors/codes instead of reading them (``IO_FLAG_MMAP_IFC``: works
            for Flat, the HNSW vector storage and IVF lists in faiss 1.15; falls back to a normal read
            for index types FAISS cannot map). The file must not be modified in place while mapped.
        RAISES ValueError: the file is missing, truncated, corrupted or not a DenseIndex file.
        """
        path = Path(path)
        if not path.is_file():
            raise ValueError(KBErrors.E230.format(path=path))
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size < _TRAILER.size:
                raise ValueError(KBErrors.E242.format(path=path, size=size))
            f.seek(size - _TRAILER.size)
            n_faiss, n_meta, magic = _TRAILER.unpack(f.read(_TRAILER.size))
            if magic != _MAGIC or n_faiss + n_meta + _TRAILER.size != size:
                raise ValueError(KBErrors.E243.format(path=path, size=size))
            f.seek(n_faiss)
            meta = _parse_meta(f.read(n_meta), str(path))
        index = _read_index_file(path, mmap=mmap)
        self = cls._from_faiss(index, meta, str(path), num_threads)
        self._mmap_path = path if mmap else None
        return self

    def to_bytes(self) -> bytes:
        """The index file's content (see the module docstring). Holds a full copy of the index."""
        meta = json.dumps(self.meta()).encode("utf8")
        data = faiss.serialize_index(self._index)
        return data.tobytes() + meta + _TRAILER.pack(len(data), len(meta), _MAGIC)

    @classmethod
    def from_bytes(cls, data: bytes, num_threads: Optional[int] = None) -> "DenseIndex":
        """Inverse of ``to_bytes``. RAISES ValueError on truncated or corrupted data."""
        where = "the dense index bytes"
        if len(data) < _TRAILER.size:
            raise ValueError(KBErrors.E231.format(where=where, n_data=len(data)))
        n_faiss, n_meta, magic = _TRAILER.unpack(data[-_TRAILER.size :])
        if magic != _MAGIC or n_faiss + n_meta + _TRAILER.size != len(data):
            raise ValueError(KBErrors.E232.format(where=where))
        meta = _parse_meta(data[n_faiss : n_faiss + n_meta], where)
        try:
            index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8, count=n_faiss))
        except RuntimeError as err:
            raise ValueError(KBErrors.E244.format(where=where, err=_first_line(err))) from err
        return cls._from_faiss(index, meta, where, num_threads)

    @classmethod
    def _from_faiss(cls, index: Any, meta: Dict[str, Any], where: str, num_threads: Optional[int]) -> "DenseIndex":
        if int(index.d) != int(meta["dim"]) or int(index.ntotal) != int(meta["ntotal"]):
            raise ValueError(
                KBErrors.E233.format(
                    where=where, dim=meta["dim"], ntotal=meta["ntotal"], index_dim=index.d, index_ntotal=index.ntotal
                )
            )
        if index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise ValueError(KBErrors.E234.format(where=where))
        self = cls.__new__(cls)
        self._init(
            index,
            str(meta["factory"]),
            int(meta.get("ef_search", 128)),
            int(meta.get("nprobe", 32)),
            int(meta.get("ef_construction", 40)),
            int(meta.get("max_train", 200_000)),
            int(meta.get("seed", 0)),
            num_threads,
        )
        return self

    # -- helpers -----------------------------------------------------------------------------------
    def _check(self, array: np.ndarray, name: str) -> np.ndarray:
        """Require a float32 (n, dim) array; RETURNS it C-contiguous (FAISS reads raw memory)."""
        found = f"{getattr(array, 'dtype', type(array).__name__)} array of shape {getattr(array, 'shape', '?')}"
        ok = isinstance(array, np.ndarray) and array.dtype == np.float32 and array.ndim == 2
        if not ok or array.shape[1] != self.dim:
            raise ValueError(KBErrors.E235.format(name=name, dim=self.dim, found=found))
        return np.ascontiguousarray(array)

    @contextlib.contextmanager
    def _threads(self) -> Iterator[None]:
        """Apply ``num_threads`` for one call. OpenMP's setting is process-wide, hence the restore."""
        if self._num_threads is None:
            yield
            return
        before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(int(self._num_threads))
        try:
            yield
        finally:
            faiss.omp_set_num_threads(before)


def _hnsw_of(index: Any) -> Optional[Any]:
    """The HNSW graph of an ``IndexHNSW*`` (or None)."""
    index = faiss.downcast_index(index)
    return index.hnsw if isinstance(index, faiss.IndexHNSW) else None


def _read_index_file(path: Path, *, mmap: bool) -> Any:
    """``faiss.read_index`` with FAISS's RuntimeError turned into a ValueError naming the file."""
    try:
        if mmap:
            try:
                return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
            except RuntimeError:
                pass  # an index type FAISS cannot map: read it normally (errors are reported below)
        return faiss.read_index(str(path))
    except RuntimeError as err:
        raise ValueError(KBErrors.E236.format(path=path, err=_first_line(err))) from err


def _parse_meta(raw: bytes, where: str) -> Dict[str, Any]:
    try:
        meta = json.loads(raw.decode("utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(KBErrors.E237.format(where=where, err=err)) from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ValueError(KBErrors.E223.format(where=where, format_name=FORMAT_NAME))
    if int(meta.get("format_version", 0)) > FORMAT_VERSION:
        raise ValueError(
            KBErrors.E224.format(where=where, format_version=meta["format_version"], max_version=FORMAT_VERSION)
        )
    missing = [key for key in ("factory", "dim", "ntotal") if key not in meta]
    if missing:
        raise ValueError(KBErrors.E225.format(where=where, missing=missing))
    return meta


def _first_line(err: BaseException) -> str:
    """FAISS errors span many lines (C++ location, then the message); keep them short."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return " ".join(lines)[:500]


__all__: List[str] = ["DenseIndex", "BLAS_THRESHOLD", "FORMAT_NAME"]

"""Packed string storage and hash lookup for millions of strings without a Python object per string."""
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np
from spacy.strings import hash_string


class StringArray:
    """Immutable UTF-8 strings packed into one byte buffer plus offsets.

    Costs ``len(utf8) + 8`` bytes per string, against ~50-80 bytes for a Python ``str`` object.

    data (np.ndarray): uint8 array of shape (total_bytes,), the concatenated UTF-8 strings.
    offsets (np.ndarray): int64 array of shape (n + 1,); string i is ``data[offsets[i]:offsets[i+1]]``.
    """

    def __init__(self, data: np.ndarray, offsets: np.ndarray) -> None:
        self.data = data
        self.offsets = offsets
        self._view: Optional[memoryview] = None  # of ``data``, made on first use

    def __getstate__(self) -> Dict[str, Any]:
        return {"data": self.data, "offsets": self.offsets, "_view": None}  # a memoryview cannot be pickled

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> "StringArray":
        encoded = [s.encode("utf8") for s in strings]
        lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return cls(data, offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> str:
        return self.bytes_at(i).decode("utf8")

    def bytes_at(self, i: int) -> bytes:
        """String ``i``'s UTF-8 bytes. Scalars are read with ``.item`` and the bytes through a memoryview: a
        numpy scalar and a numpy slice per call cost several times the decoding (the look-up's fast path reads
        a few strings per mention)."""
        view = self._view
        if view is None:
            view = self._view = memoryview(np.ascontiguousarray(self.data, dtype=np.uint8)).cast("B")
        offsets = self.offsets
        return view[offsets.item(i) : offsets.item(i + 1)].tobytes()

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def to_list(self) -> List[str]:
        return list(self)

    def to_arrays(self, prefix: str) -> Dict[str, np.ndarray]:
        return {f"{prefix}.data": self.data, f"{prefix}.offsets": self.offsets}

    @classmethod
    def from_arrays(cls, arrays: Dict[str, np.ndarray], prefix: str) -> "StringArray":
        return cls(arrays[f"{prefix}.data"], arrays[f"{prefix}.offsets"])

    def validate(self) -> Optional[str]:
        """Return a description of the first structural problem, or None if the arrays are consistent."""
        if self.offsets.ndim != 1 or len(self.offsets) < 1:
            return "offsets must be a non-empty 1-d array"
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.data):
            return f"offsets span [{self.offsets[0]}, {self.offsets[-1]}] but the data holds {len(self.data)} bytes"
        if len(self.offsets) > 1 and bool(np.any(np.diff(self.offsets) < 0)):
            return "offsets are not non-decreasing"
        return None

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.offsets.nbytes)


def hash_strings(strings: Iterable[str]) -> np.ndarray:
    """64-bit MurmurHash (spaCy's ``hash_string``) of each string, as a uint64 array of shape (n,)."""
    return np.fromiter((hash_string(s) for s in strings), dtype=np.uint64)


class HashIndex:
    """Maps a string key to the rows that were indexed under it, by binary search over sorted hashes.

    Costs 16 bytes per key (a uint64 hash and an int64 row). Hash collisions are possible, so callers
    verify each returned row against the real string.

    hashes (np.ndarray): uint64 array of shape (n,), sorted ascending.
    rows (np.ndarray): int64 array of shape (n,); ``rows[i]`` is the row whose key hashes to ``hashes[i]``.
    """

    def __init__(self, hashes: np.ndarray, rows: np.ndarray) -> None:
        self.hashes = hashes
        self.rows = rows

    @classmethod
    def build(cls, keys: Sequence[str]) -> "HashIndex":
        hashes = hash_strings(keys)
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], order.astype(np.int64))

    def candidate_rows(self, key: str) -> np.ndarray:
        """Rows whose key has the same hash as ``key`` (usually 0 or 1 of them; verify before use)."""
        h = hash_string(key)
        hashes = self.hashes
        # One binary search (a numpy uint64 scalar: a Python int below 2**63 would make numpy convert the whole
        # array), then the equal neighbours read with .item, rather than a second search.
        lo = hi = int(hashes.searchsorted(np.uint64(h)))
        n = len(hashes)
        while hi < n and hashes.item(hi) == h:
            hi += 1
        return self.rows[lo:hi]

    def to_arrays(self, prefix: str) -> Dict[str, np.ndarray]:
        return {f"{prefix}.hashes": self.hashes, f"{prefix}.rows": self.rows}

    @classmethod
    def from_arrays(cls, arrays: Dict[str, np.ndarray], prefix: str) -> "HashIndex":
        return cls(arrays[f"{prefix}.hashes"], arrays[f"{prefix}.rows"])

    def validate(self, n_rows: int) -> Optional[str]:
        if self.hashes.shape != self.rows.shape:
            return f"hashes {self.hashes.shape} and rows {self.rows.shape} differ in shape"
        if len(self.rows) and (int(self.rows.min()) < 0 or int(self.rows.max()) >= n_rows):
            return f"rows out of range [0, {n_rows})"
        if len(self.hashes) > 1 and bool(np.any(self.hashes[1:] < self.hashes[:-1])):
            return "hashes are not sorted"
        return None

    @property
    def nbytes(self) -> int:
        return int(self.hashes.nbytes + self.rows.nbytes)

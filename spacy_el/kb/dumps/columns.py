"""Columns of a KB assembled row by row straight into files, so that assembling a KB holds only small
write buffers, never the KB: each column is a ``.npy`` file appended to through a buffer, and ``close``
writes the header with the final length in place. The files are byte for byte those ``np.save`` writes
(its header leaves room for any length of the first axis), so the KB folder is made of them unchanged.

``StringColumn`` gives the two arrays of a ``StringArray`` (UTF-8 bytes, int64 offsets) and, when asked
for, the hashes of its strings in a scratch file, from which ``write_hash_index`` writes the arrays of
the ``HashIndex`` (sorted hashes, rows): 16 bytes per row for the sort, the only part that is not
streamed.
"""
import io
from array import array
from pathlib import Path
from typing import Dict, Iterable, Iterator, Optional, Union

import numpy as np
from spacy.strings import hash_string

from ..errors import KBErrors

BUFFER_BYTES = 1 << 20  # a column's write buffer
CHUNK_ROWS = 1 << 20  # rows read back at a time


def npy_header(dtype: np.dtype, length: int) -> bytes:
    """The header ``np.save`` writes for a 1-d C-ordered array of ``length`` values of ``dtype``."""
    buffer = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (int(length),)}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


class ArrayFile:
    """A 1-d array appended to a file: ``.npy`` (``npy=True``) or raw values (a scratch file)."""

    def __init__(self, path: Path, dtype: Union[str, np.dtype], npy: bool = True) -> None:
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.npy = npy
        self.length = 0
        self._file: Optional[io.BufferedWriter] = self.path.open("wb")
        self._header = npy_header(self.dtype, 0) if npy else b""
        self._file.write(self._header)

    def write(self, values: Union[np.ndarray, array, bytes, bytearray]) -> None:
        """Append values: an array of this dtype (or convertible to it), or the raw bytes of such values."""
        if isinstance(values, (bytes, bytearray, array)):
            data = memoryview(values).cast("B")
        else:
            data = memoryview(np.ascontiguousarray(values, dtype=self.dtype)).cast("B")
        if len(data) % self.dtype.itemsize:
            raise ValueError(KBErrors.E310.format(n_data=len(data), dtype=self.dtype))
        assert self._file is not None, f"{self.path} is closed"
        self._file.write(data)
        self.length += len(data) // self.dtype.itemsize

    def close(self) -> Path:
        """Finish the file (the ``.npy`` header now gives its length). RETURNS: its path."""
        if self._file is None:
            return self.path
        file, self._file = self._file, None
        if not self.npy:
            file.close()
            return self.path
        header = npy_header(self.dtype, self.length)
        # numpy pads the header for any length of the first axis (GROWTH_AXIS_MAX_DIGITS), for this very use.
        if len(header) != len(self._header):
            file.close()
            raise RuntimeError(KBErrors.E311.format(path=self.path))
        file.seek(0)
        file.write(header)
        file.close()
        return self.path


class Column:
    """An ``ArrayFile`` filled value by value through an ``array`` buffer (``typecode`` as in ``array``),
    which converts Python values as ``array`` does (floats to float32 for "f")."""

    def __init__(self, path: Path, typecode: str, dtype: Union[str, np.dtype], npy: bool = True,
                 first: Iterable = ()) -> None:
        self.file = ArrayFile(path, dtype, npy=npy)
        self.buffer = array(typecode, first)
        if self.buffer.itemsize != self.file.dtype.itemsize:
            raise ValueError(KBErrors.E312.format(typecode=typecode, dtype=self.file.dtype))
        self._flush_at = max(1, BUFFER_BYTES // self.buffer.itemsize)

    def append(self, value) -> None:
        self.buffer.append(value)
        if len(self.buffer) >= self._flush_at:
            self.flush()

    def extend(self, values: Iterable) -> None:
        self.buffer.extend(values)
        if len(self.buffer) >= self._flush_at:
            self.flush()

    def __len__(self) -> int:
        return self.file.length + len(self.buffer)

    def flush(self) -> None:
        if self.buffer:
            self.file.write(self.buffer)
            del self.buffer[:]

    def close(self) -> Path:
        self.flush()
        return self.file.close()


class StringColumn:
    """Strings appended to ``<prefix>.data.npy`` (UTF-8) and ``<prefix>.offsets.npy`` (int64) in
    ``folder``; a hashed column also writes the hash of each string's key to a scratch file
    (``hashes_path``) for ``write_hash_index``."""

    def __init__(self, folder: Path, prefix: str, hashed: bool = False, scratch: Optional[Path] = None) -> None:
        self.prefix = prefix
        self.data = ArrayFile(Path(folder) / f"{prefix}.data.npy", np.uint8)
        self.offsets = Column(Path(folder) / f"{prefix}.offsets.npy", "q", np.int64, first=[0])
        self._buffer = bytearray()
        self._size = 0
        self.hashes: Optional[Column] = None
        if hashed:
            self.hashes_path = Path(scratch or folder) / f"{prefix}.hashes.bin"
            self.hashes = Column(self.hashes_path, "Q", np.uint64, npy=False)

    def append(self, text: str, key: Optional[str] = None) -> None:
        """Add ``text``; a hashed column indexes it under ``key`` (default: the text itself)."""
        encoded = text.encode("utf8")
        self._buffer += encoded
        self._size += len(encoded)
        self.offsets.append(self._size)
        if self.hashes is not None:
            self.hashes.append(hash_string(text if key is None else key))
        if len(self._buffer) >= BUFFER_BYTES:
            self.data.write(self._buffer)
            self._buffer.clear()

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def close(self) -> None:
        self.data.write(self._buffer)
        self._buffer = bytearray()
        self.data.close()
        self.offsets.close()
        if self.hashes is not None:
            self.hashes.close()


def read_chunks(path: Path, dtype: Union[str, np.dtype], chunk: int = CHUNK_ROWS, offset: int = 0) -> Iterator[np.ndarray]:
    """The values of a raw file (from byte ``offset``), ``chunk`` at a time, read (not memory-mapped: a
    mapped page read once would stay in this process's resident set)."""
    dtype = np.dtype(dtype)
    with Path(path).open("rb") as f:
        f.seek(offset)
        while True:
            values = np.fromfile(f, dtype=dtype, count=chunk)
            if not len(values):
                return
            yield values


def write_hash_index(hashes: np.ndarray, folder: Path, prefix: str) -> Dict[str, Path]:
    """Write the arrays of the ``HashIndex`` of rows whose keys hash to ``hashes`` (as ``HashIndex.build``
    makes it: ``<prefix>.hashes`` sorted, ``<prefix>.rows`` the stable order), in ``folder``. Holds
    ``hashes``, the order and one chunk. RETURNS: the files by array name."""
    order = np.argsort(hashes, kind="stable")
    out = ArrayFile(Path(folder) / f"{prefix}.hashes.npy", np.uint64)
    for start in range(0, len(order), CHUNK_ROWS):
        out.write(hashes[order[start : start + CHUNK_ROWS]])
    files = {f"{prefix}.hashes": out.close()}
    del hashes
    rows = ArrayFile(Path(folder) / f"{prefix}.rows.npy", np.int64)
    rows.write(order)
    files[f"{prefix}.rows"] = rows.close()
    return files


def read_raw(path: Path, dtype: Union[str, np.dtype]) -> np.ndarray:
    """A whole raw scratch file as an array in memory."""
    return np.fromfile(path, dtype=np.dtype(dtype))


def save_array(folder: Path, name: str, values: np.ndarray) -> Path:
    """A 1-d array held in memory, written as ``<name>.npy`` (as ``np.save`` writes it)."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(KBErrors.E309.format(name=name, shape=values.shape))
    out = ArrayFile(Path(folder) / f"{name}.npy", values.dtype)
    out.write(values)
    return out.close()

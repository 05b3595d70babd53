"""Growing columns for assembling a KB row by row without a Python object per row: strings go into one
``bytearray`` (plus int64 offsets), numbers into ``array`` buffers. ``StringColumn.finish()`` gives the
KB's ``StringArray`` and, when asked for, the ``HashIndex`` of the strings, hashed as they arrive."""
from array import array
from typing import Optional

import numpy as np
from spacy.strings import hash_string

from ..string_array import HashIndex, StringArray


class StringColumn:
    def __init__(self, hashed: bool = False) -> None:
        self.data = bytearray()
        self.offsets = array("q", [0])
        self.hashes: Optional[array] = array("Q") if hashed else None

    def append(self, text: str, key: Optional[str] = None) -> None:
        """Add ``text``; a hashed column indexes it under ``key`` (default: the text itself)."""
        self.data += text.encode("utf8")
        self.offsets.append(len(self.data))
        if self.hashes is not None:
            self.hashes.append(hash_string(text if key is None else key))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def finish(self) -> StringArray:
        return StringArray(np.frombuffer(bytes(self.data), dtype=np.uint8), np.frombuffer(self.offsets, dtype=np.int64).copy())

    def hash_index(self) -> HashIndex:
        assert self.hashes is not None, "the column was not created with hashed=True"
        return index_of_hashes(np.frombuffer(self.hashes, dtype=np.uint64))


def index_of_hashes(hashes: np.ndarray) -> HashIndex:
    """The ``HashIndex`` of rows whose keys hash to ``hashes`` (as ``HashIndex.build`` would make it)."""
    order = np.argsort(hashes, kind="stable")
    return HashIndex(hashes[order], order.astype(np.int64))

"""Streaming readers for dump files: bz2 (also multistream), gzip or plain, never unpacked to disk.

The compression is recognised from the file's magic bytes, not its name. Decompression errors (a
truncated stream, corrupt data) become ``DumpFormatError`` naming the file and the line being read and
the compressed byte offset reached, instead of a bare ``EOFError`` from somewhere in the stream.
"""
import bz2
import gzip
import io
import lzma
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator, Optional, Tuple, Union

from ..errors import KBErrors
from .errors import BadInput, DumpFormatError, dump_error

PathLike = Union[str, Path]
_MAGIC = ((b"BZh", "bz2"), (b"\x1f\x8b", "gzip"))


def compression_of(path: PathLike) -> str:
    """"bz2", "gzip" or "plain", from the first bytes of the file."""
    with open(path, "rb") as f:
        head = f.read(3)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return "plain"


class _Counted(io.RawIOBase):
    """A raw file that counts the bytes read through it (the compressed offset, for error messages)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = self.raw.readinto(buffer)
        self.offset += n or 0
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_dump(path: PathLike) -> Tuple[BinaryIO, _Counted]:
    """The decompressed byte stream of ``path``, and the counter of compressed bytes read so far."""
    path = Path(path)
    if not path.is_file():
        raise DumpFormatError(KBErrors.E304.format(path=path))
    kind = compression_of(path)
    counted = _Counted(open(path, "rb"))
    raw = io.BufferedReader(counted, buffer_size=1 << 20)
    if kind == "bz2":
        return bz2.BZ2File(raw, "rb"), counted  # reads every stream of a multistream file
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb"), counted
    return raw, counted


# What decompressors raise on a truncated or corrupt stream.
DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


def iter_lines(
    path: PathLike, max_line_bytes: Optional[int] = None, bad: Optional[BadInput] = None
) -> Iterator[Tuple[int, bytes]]:
    """(1-based line number, raw line bytes with its newline) of the decompressed ``path``.

    max_line_bytes: the longest line taken (newline included). A longer one is read no further than that
        limit and then skipped in bounded pieces, so memory never grows with it: a DumpFormatError naming
        the line, or, when ``bad`` is given (``skip_bad``), counted there and left out.
    Raises DumpFormatError naming the line reached and the compressed byte offset when the stream
    is truncated or corrupt.
    """
    stream, counted = open_dump(path)
    limit = -1 if max_line_bytes is None else max(1, int(max_line_bytes)) + 1
    line_no = 0
    with stream:
        while True:
            try:
                line = stream.readline(limit)
                if limit > 0 and len(line) == limit:
                    if not line.endswith(b"\n"):
                        _skip_rest_of_line(stream)
                    line_no += 1
                    where = f"line {line_no}"
                    if bad is None:
                        raise dump_error(path, where, KBErrors.E325, reason=TOO_LONG, limit=limit - 1)
                    bad.add(TOO_LONG, f"{path}, {where}")
                    continue
            except DECOMPRESSION_ERRORS as err:
                raise truncated_error(path, f"line {line_no + 1}", counted.offset, err) from err
            if not line:
                return
            line_no += 1
            yield line_no, line


TOO_LONG = "line too long"
_SKIP_PIECE = 1 << 16


def _skip_rest_of_line(stream: BinaryIO) -> None:
    """Read up to the end of the current line in pieces of ``_SKIP_PIECE`` bytes, keeping none of them."""
    while True:
        piece = stream.readline(_SKIP_PIECE)
        if not piece or piece.endswith(b"\n"):
            return


def truncated_error(path: PathLike, where: str, offset: int, err: BaseException) -> DumpFormatError:
    where = f"{where} (compressed byte offset {offset})"
    return dump_error(path, where, KBErrors.E317, err_type=type(err).__name__, err=err)


class ByteStream(io.RawIOBase):
    """The decompressed bytes of a dump as a raw stream for ``ElementTree.iterparse``, translating
    decompression errors into ``DumpFormatError`` (iterparse would otherwise report a bare EOFError)."""

    def __init__(self, path: PathLike) -> None:
        self.path = path
        self.stream, self.counted = open_dump(path)
        self.position = 0  # decompressed bytes handed out

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        try:
            data = self.stream.read(len(buffer))
        except DECOMPRESSION_ERRORS as err:
            raise truncated_error(self.path, f"decompressed byte offset {self.position}", self.counted.offset, err) from err
        n = len(data)
        buffer[:n] = data
        self.position += n
        return n

    def close(self) -> None:
        self.stream.close()
        super().close()

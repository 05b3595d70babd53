"""Reading a multistream bz2 XML dump in parallel: decompression and XML parsing in the workers too.

``enwiki-…-pages-articles-multistream.xml.bz2`` is many bz2 streams laid end to end: the first holds the
``<mediawiki>`` head and the ``<siteinfo>``, each of the others 100 whole ``<page>`` elements, the last
``</mediawiki>``. Any stream can be decompressed on its own, so with ``--n-process N`` the main process only
finds where the streams start (a scan of the compressed bytes for the stream header ``BZh?1AY&SY``), reads
the siteinfo from the first, and hands ranges of whole streams to the workers, each of which decompresses
its range, parses its pages and runs the per-page step. The main process then merges the results in file
order, as for the sequential read, so the KB is the same.

A single-stream file, gzip or plain XML, or one whose streams are not cut between pages (as ``pbzip2``
cuts them) is read by the main process as before. A worker that finds its range not cut between pages says
so (E330) rather than misread it.
"""
import bz2
import io
import re
from pathlib import Path
from typing import List, NamedTuple, Optional, Tuple, Union

from ..errors import KBErrors
from .errors import BadInput, DumpFormatError
from .streams import DECOMPRESSION_ERRORS, compression_of, truncated_error
from .wikipedia import Page, SiteInfo, iter_pages_from

PathLike = Union[str, Path]
# A stream header (block size 1-9) followed by the first block's magic (pi): an empty stream has none.
_STREAM_START = re.compile(rb"BZh[1-9]1AY&SY")
_FIRST_PAGE = re.compile(rb"<page[\s>]")
RANGE_BYTES = 4 << 20  # compressed bytes per range handed to a worker (at least one stream)


def stream_offsets(path: PathLike, block: int = 1 << 24) -> List[int]:
    """Compressed byte offsets of the streams of a bz2 file (the first is 0), found by their headers; [] for
    a file that is not bz2. A header that happened to sit inside compressed data would make a range fail to
    decompress (E317), never be read as data."""
    if compression_of(path) != "bz2":
        return []
    offsets: List[int] = []
    with open(path, "rb") as f:
        tail, position = b"", 0
        while True:
            data = f.read(block)
            if not data:
                return offsets
            buffer, base = tail + data, position - len(tail)
            for match in _STREAM_START.finditer(buffer):
                at = base + match.start()
                if not offsets or at > offsets[-1]:
                    offsets.append(at)
            tail, position = buffer[-9:], position + len(data)


class Range(NamedTuple):
    """Whole streams ``[start, end)`` of the compressed file; ``first``/``last``: whether they hold the head
    or the end of the document."""

    start: int
    end: int
    first: bool
    last: bool


def ranges(offsets: List[int], size: int, target: Optional[int] = None) -> List[Range]:
    """The streams grouped into ranges of at least ``target`` (``RANGE_BYTES``) compressed bytes (a stream is
    never split)."""
    target = RANGE_BYTES if target is None else target
    bounds = [*offsets, size]
    out: List[Range] = []
    start = bounds[0]
    for i in range(1, len(bounds)):
        if bounds[i] - start >= target or i == len(bounds) - 1:
            out.append(Range(start, bounds[i], start == bounds[0], i == len(bounds) - 1))
            start = bounds[i]
    return out


def decompress_range(path: PathLike, start: int, end: int) -> bytes:
    """The decompressed bytes of the whole streams in ``[start, end)``."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    out: List[bytes] = []
    try:
        while data:
            decompressor = bz2.BZ2Decompressor()
            out.append(decompressor.decompress(data))
            if not decompressor.eof:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            data = decompressor.unused_data
    except DECOMPRESSION_ERRORS as err:
        raise truncated_error(path, f"the bz2 streams from byte {start}", end, err) from err
    return b"".join(out)


class _Fragment(io.RawIOBase):
    """Bytes in memory with the ``position`` of ``ByteStream``, for ``iter_pages_from``."""

    def __init__(self, data: bytes) -> None:
        self.data, self.position = data, 0

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        end = len(self.data) if n < 0 else self.position + n
        chunk = self.data[self.position:end]
        self.position += len(chunk)
        return chunk


def fragment_body(data: bytes, first: bool, last: bool) -> Optional[bytes]:
    """The ``<page>`` elements of a range's bytes: without the head (first range) or the end (last range);
    None when the range is not cut between pages."""
    body = data
    if first:
        found = _FIRST_PAGE.search(body)
        body = body[found.start():] if found else b""
    if last:
        end = body.rfind(b"</mediawiki>")
        body = body[:end] if end >= 0 else body
    stripped = body.strip()
    if stripped and not (stripped.startswith(b"<page") and stripped.endswith(b"</page>")):
        return None
    return body


def pages_of_range(path: PathLike, part: Range, bad: BadInput, skip_bad: bool) -> List[Page]:
    """The pages of one range (in a worker)."""
    body = fragment_body(decompress_range(path, part.start, part.end), part.first, part.last)
    where = f"{path} (bz2 streams from compressed byte offset {part.start})"
    if body is None:
        raise DumpFormatError(KBErrors.E330.format(place=where))
    stream = _Fragment(b"<mediawiki>" + body + b"</mediawiki>")
    return list(iter_pages_from(stream, where, bad, skip_bad=skip_bad, require_pages=False))


def site_info(path: PathLike, offsets: List[int], size: int) -> SiteInfo:
    """The siteinfo of the head, read from the first streams (as many as hold it)."""
    bounds = [*offsets, size]
    for i in range(1, len(bounds)):
        data = decompress_range(path, bounds[0], bounds[i])
        end = data.find(b"</siteinfo>")
        if end >= 0:
            head = data[: end + len(b"</siteinfo>")] + b"</mediawiki>"
            site: List[SiteInfo] = []
            list(iter_pages_from(_Fragment(head), path, BadInput(), site=site, require_pages=False))
            return site[0] if site else SiteInfo(frozenset())
        if _FIRST_PAGE.search(data):
            break
    return SiteInfo(frozenset())


def parallel_plan(path: PathLike) -> Optional[Tuple[SiteInfo, List[Range]]]:
    """(the siteinfo, the ranges) when ``path`` is a multistream bz2 file cut between pages, else None (read
    it sequentially)."""
    offsets = stream_offsets(path)
    if len(offsets) < 3:
        return None
    size = Path(path).stat().st_size
    # Cut between pages? The second stream (the first of pages in a Wikimedia dump) tells.
    if fragment_body(decompress_range(path, offsets[1], offsets[2]), False, False) is None:
        return None
    return site_info(path, offsets, size), ranges(offsets, size)

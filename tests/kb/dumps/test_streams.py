"""spacy_el.kb.dumps.streams: bz2 (multistream too), gzip and plain, and located errors for truncated streams."""
import bz2
import gzip

import pytest

from spacy_el.kb.dumps.errors import DumpFormatError
from spacy_el.kb.dumps.streams import compression_of, iter_lines

LINES = b"".join(b"line %d with some text\n" % i for i in range(2000))


@pytest.mark.parametrize("kind", ["bz2", "gzip", "plain"])
def test_every_compression_reads_the_same_lines(tmp_path, kind):
    data = {"bz2": bz2.compress, "gzip": gzip.compress, "plain": bytes}[kind](LINES)
    path = tmp_path / "dump.any"  # the name says nothing: the magic bytes decide
    path.write_bytes(data)
    assert compression_of(path) == kind
    lines = list(iter_lines(path))
    assert lines[0] == (1, b"line 0 with some text\n") and lines[-1] == (2000, b"line 1999 with some text\n")


def test_multistream_bz2_reads_every_stream(tmp_path):
    half = len(LINES) // 2
    path = tmp_path / "multi.bz2"
    path.write_bytes(bz2.compress(LINES[:half]) + bz2.compress(LINES[half:]))
    assert b"".join(line for _, line in iter_lines(path)) == LINES


@pytest.mark.parametrize("kind, compress", [("bz2", bz2.compress), ("gzip", gzip.compress)])
def test_truncated_stream_names_file_line_and_offset(tmp_path, kind, compress):
    data = compress(LINES * 20)
    path = tmp_path / f"cut.{kind}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpFormatError) as err:
        for _ in iter_lines(path):
            pass
    text = str(err.value)
    assert str(path) in text and "line " in text and "compressed byte offset" in text and "truncated" in text


def test_missing_file(tmp_path):
    with pytest.raises(DumpFormatError, match="E304"):
        list(iter_lines(tmp_path / "nope.bz2"))

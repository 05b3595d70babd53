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


@pytest.mark.hostile("resources")
@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_line_longer_than_the_limit_is_refused_or_skipped_in_bounded_memory(tmp_path, skip_bad):
    """Issue 71, defect 12: a line of 12 MB read with a 64 KB limit never sits in memory whole."""
    import tracemalloc

    from spacy_el.kb.dumps.errors import BadInput

    path = tmp_path / "long.json.bz2"
    path.write_bytes(bz2.compress(b"[\n" + b"x" * (12 << 20) + b"\n" + b"after\n"))
    bad = BadInput() if skip_bad else None
    tracemalloc.start()
    try:
        if skip_bad:
            lines = list(iter_lines(path, max_line_bytes=1 << 16, bad=bad))
        else:
            with pytest.raises(DumpFormatError, match="E325") as err:
                list(iter_lines(path, max_line_bytes=1 << 16))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak
    if skip_bad:
        assert lines == [(1, b"[\n"), (3, b"after\n")]
        assert bad.total == 1 and bad.examples == [f"{path}, line 2: line too long"]
    else:
        assert f"{path}, line 2" in str(err.value)


def test_lines_up_to_the_limit_are_read_whole(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_bytes(b"abc\n" + b"y" * 9 + b"\n" + b"z" * 10)  # 10 bytes with the newline; 10 without one
    assert list(iter_lines(path, max_line_bytes=10)) == [(1, b"abc\n"), (2, b"y" * 9 + b"\n"), (3, b"z" * 10)]
    with pytest.raises(DumpFormatError, match="E325"):
        list(iter_lines(path, max_line_bytes=9))


def test_a_line_one_byte_too_long_skips_no_other_line(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_bytes(b"abc\n" + b"y" * 10 + b"\n" + b"next\n")
    from spacy_el.kb.dumps.errors import BadInput

    bad = BadInput()
    assert list(iter_lines(path, max_line_bytes=10, bad=bad)) == [(1, b"abc\n"), (3, b"next\n")]
    assert bad.total == 1

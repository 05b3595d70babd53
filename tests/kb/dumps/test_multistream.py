"""spacy_el.kb.dumps.multistream: a multistream bz2 XML dump read in parallel (workers decompress and parse)
gives the KB of the sequential read; files whose streams are not cut between pages are read sequentially
or refused, never misread."""
import bz2

import numpy as np
import pytest

pytest.importorskip("mwparserfromhell")

from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps, multistream
from spacy_el.kb.dumps.errors import DumpFormatError

from .conftest import XML_HEAD, wikidata_bytes, wikipedia_bytes, write_bz2
from .fixtures import PAGES, WIKIDATA


def write_multistream(path, pages, per_stream=2, cut=None):
    """The Wikimedia layout: the head in the first stream, ``per_stream`` pages in each of the next, the end
    in the last. ``cut``: cut the document at these byte positions instead (as pbzip2 does)."""
    head, end = XML_HEAD.format(schema="0.10").encode(), b"</mediawiki>\n"
    if cut is None:
        parts = [head] + ["".join(pages[i:i + per_stream]).encode() for i in range(0, len(pages), per_stream)] + [end]
    else:
        document = head + "".join(pages).encode() + end
        bounds = [0, *cut, len(document)]
        parts = [document[a:b] for a, b in zip(bounds, bounds[1:])]
    path.write_bytes(b"".join(bz2.compress(part) for part in parts))
    return path


def same_kb(a, b):
    assert a.entities.ids.to_list() == b.entities.ids.to_list()
    assert a.entities.descriptions.to_list() == b.entities.descriptions.to_list()
    assert np.array_equal(a.entities.frequencies, b.entities.frequencies)
    assert a.aliases.aliases.to_list() == b.aliases.aliases.to_list()
    assert np.array_equal(a.aliases.cand_entities, b.aliases.cand_entities)
    assert np.array_equal(a.aliases.cand_priors, b.aliases.cand_priors)


@pytest.fixture
def small_ranges(monkeypatch):
    monkeypatch.setattr(multistream, "RANGE_BYTES", 1)  # one stream per range: several ranges in flight


def test_stream_offsets_and_ranges(tmp_path, small_ranges):
    path = write_multistream(tmp_path / "m.xml.bz2", PAGES, per_stream=3)
    offsets = multistream.stream_offsets(path)
    assert len(offsets) == 2 + 3 and offsets[0] == 0  # head, 9 pages in 3 streams, end
    parts = multistream.ranges(offsets, path.stat().st_size)
    assert [p.first for p in parts] == [True, False, False, False, False] and parts[-1].last
    assert multistream.stream_offsets(write_bz2(tmp_path / "one.bz2", b"x" * 1000)) == [0]


@pytest.mark.parametrize("per_stream", [1, 4])
def test_parallel_read_gives_the_sequential_kb(tmp_path, small_ranges, per_stream):
    wikidata = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes(WIKIDATA))
    single = write_bz2(tmp_path / "single.xml.bz2", wikipedia_bytes(PAGES))
    multi = write_multistream(tmp_path / "multi.xml.bz2", PAGES, per_stream)
    assert multistream.parallel_plan(multi) is not None and multistream.parallel_plan(single) is None
    sequential, report = build_kb_from_dumps(wikidata, single, None, DumpsSettings(progress=False, work_dir=tmp_path / "w"))
    parallel, parallel_report = build_kb_from_dumps(
        wikidata, multi, None, DumpsSettings(progress=False, n_process=2, work_dir=tmp_path / "w")
    )
    same_kb(sequential, parallel)
    assert parallel_report.to_dict()["wikipedia"] == report.to_dict()["wikipedia"]


def test_streams_cut_inside_pages_are_read_sequentially_or_refused(tmp_path, small_ranges):
    wikidata = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes(WIKIDATA))
    single = write_bz2(tmp_path / "single.xml.bz2", wikipedia_bytes(PAGES))
    cut = write_multistream(tmp_path / "cut.xml.bz2", PAGES, cut=[100, 700, 1500])  # pbzip2-like: anywhere
    assert multistream.parallel_plan(cut) is None
    expected, _ = build_kb_from_dumps(wikidata, single, None, DumpsSettings(progress=False, work_dir=tmp_path / "w"))
    got, _ = build_kb_from_dumps(wikidata, cut, None, DumpsSettings(progress=False, n_process=2, work_dir=tmp_path / "w"))
    same_kb(expected, got)
    # The second stream cut between pages, a later one not: that range is refused, not misread.
    head = XML_HEAD.format(schema="0.10").encode()
    document = "".join(PAGES).encode()
    split = document.index(b"<page>", 1) + 3  # inside the second page's tag
    mixed = tmp_path / "mixed.xml.bz2"
    mixed.write_bytes(b"".join(bz2.compress(x) for x in (head, document[:document.index(b"<page>", 1)],
                                                           document[document.index(b"<page>", 1):split],
                                                           document[split:], b"</mediawiki>\n")))
    with pytest.raises(DumpFormatError, match="E330"):
        build_kb_from_dumps(wikidata, mixed, None, DumpsSettings(progress=False, n_process=2, work_dir=tmp_path / "w"))


def test_no_page_in_a_multistream_file_is_an_error(tmp_path, small_ranges):
    wikidata = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes(WIKIDATA))
    empty = write_multistream(tmp_path / "empty.xml.bz2", [])
    empty.write_bytes(empty.read_bytes() + bz2.compress(b"\n"))  # three streams, no page
    with pytest.raises(DumpFormatError, match="E326"):
        build_kb_from_dumps(wikidata, empty, None, DumpsSettings(progress=False, n_process=2, work_dir=tmp_path / "w"))

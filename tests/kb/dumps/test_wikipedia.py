"""spacy_el.kb.dumps.wikipedia: the enwiki excerpt (schema 0.10) page by page, other schemas, unknown
structure, truncated and non-UTF-8 input."""
import bz2

import pytest

pytest.importorskip("mwparserfromhell")

from spacy_el.kb.dumps.errors import BadInput, DumpFormatError
from spacy_el.kb.dumps.wikipedia import PageConfig, iter_pages, process_pages

from .conftest import ENWIKI, needs, page_xml, wikipedia_bytes, write_bz2

DISAMBIGUATION_PAGES = [
    "Austin (disambiguation)", "Aberdeen (disambiguation)", "Argument (disambiguation)", "Animal (disambiguation)",
    "Asia Minor (disambiguation)", "Ada", "Alien", "Aa River",
]


@needs(ENWIKI)
def test_enwiki_excerpt():
    site = []
    pages = list(iter_pages(ENWIKI, BadInput(), site=site))
    assert len(pages) == 206 and pages[0].title == "AccessibleComputing" and pages[-1].title == "Algorithm"
    assert [p.page_id for p in pages[:3]] == [10, 12, 13] and pages[-1].page_id == 775
    assert sum(p.redirect is not None for p in pages) == 100 and sum(p.ns == 4 for p in pages) == 1
    assert {"File", "Category", "Template", "Topic"} <= site[0].namespaces
    result = process_pages(pages, PageConfig(namespaces=site[0].namespaces))
    assert result.counts["redirects"] == 99  # the 100th is the namespace-4 page
    assert result.counts["pages in other namespaces"] == 1
    assert sorted(result.disambiguations) == sorted(DISAMBIGUATION_PAGES)
    assert result.counts["articles"] == 206 - 1 - 99 - 8
    assert ("AccessibleComputing", "Computer accessibility") in result.redirects
    # independently counted with grep: 5 x [[George Washington]] and 2 x [[George Washington|Washington]]
    assert result.links[("George Washington", "George Washington")] == 5
    assert result.links[("Washington", "George Washington")] == 2


@pytest.mark.parametrize("schema", ["0.10", "0.11", "0.3"])
def test_any_export_schema_reads_the_same(tmp_path, schema):
    data = wikipedia_bytes([page_xml("Paris", "[[France]] capital", 1)], schema=schema)
    pages = list(iter_pages(write_bz2(tmp_path / "p.xml.bz2", data), BadInput()))
    assert [(p.title, p.ns, p.page_id, p.text) for p in pages] == [("Paris", 0, 1, "[[France]] capital")]


def test_no_namespace_at_all(tmp_path):
    data = wikipedia_bytes([page_xml("Paris", "x", 1)]).replace(b' xmlns="http://www.mediawiki.org/xml/export-0.10/"', b"")
    path = tmp_path / "p.xml"
    path.write_bytes(data)
    assert [p.title for p in iter_pages(path, BadInput())] == ["Paris"]


def test_unknown_root_is_an_error(tmp_path):
    path = tmp_path / "p.xml"
    path.write_bytes(b"<rss><channel/></rss>")
    with pytest.raises(DumpFormatError, match="E313"):
        list(iter_pages(path, BadInput()))


def test_page_without_text_errors_or_is_skipped(tmp_path):
    broken = "  <page>\n    <title>Broken</title>\n    <ns>0</ns>\n    <id>2</id>\n  </page>\n"
    path = write_bz2(tmp_path / "p.xml.bz2", wikipedia_bytes([page_xml("A", "a", 1), broken, page_xml("B", "b", 3)]))
    with pytest.raises(DumpFormatError, match="E316"):
        list(iter_pages(path, BadInput()))
    bad = BadInput()
    assert [p.title for p in iter_pages(path, bad, skip_bad=True)] == ["A", "B"]
    assert bad.counts == {"malformed page": 1}


def test_truncated_bz2_xml(tmp_path):
    data = bz2.compress(wikipedia_bytes([page_xml(f"P{i}", "text " * 200, i) for i in range(300)]))
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(DumpFormatError, match=r"E317.*cut\.xml\.bz2, decompressed byte offset \d+ \(compressed byte offset \d+\)"):
        list(iter_pages(path, BadInput()))


def test_truncated_xml_and_non_utf8_name_the_line(tmp_path):
    data = wikipedia_bytes([page_xml("A", "a", 1), page_xml("B", "b", 2)])
    cut = tmp_path / "cut.xml"
    cut.write_bytes(data[:-40])
    with pytest.raises(DumpFormatError, match=r"E315.*cut\.xml, line \d+, column \d+"):
        list(iter_pages(cut, BadInput()))
    latin = tmp_path / "latin.xml"
    latin.write_bytes(data.replace(b"<title>B</title>", b"<title>Caf\xe9</title>"))
    with pytest.raises(DumpFormatError, match=r"E315.*latin\.xml, line 20, column \d+"):
        list(iter_pages(latin, BadInput()))


def _deeper(pages):
    """A dump whose pages sit in a <pages> wrapper: one level deeper than the export schema puts them."""
    return wikipedia_bytes(["  <pages>\n", *pages, "  </pages>\n"])


@pytest.mark.hostile("silent wrong results")
@pytest.mark.parametrize("skip_bad", [False, True])
@pytest.mark.parametrize("data", ["deeper pages", "no pages"])
def test_a_dump_without_pages_at_their_place_is_an_error(tmp_path, data, skip_bad):
    """Issue 71, defect 19: such a dump read 0 pages, and the build went on without a single link."""
    pages = [page_xml("Paris", "[[France]]", 1), page_xml("Lyon", "[[France]]", 2)]
    xml = _deeper(pages) if data == "deeper pages" else wikipedia_bytes([])
    path = write_bz2(tmp_path / "p.xml.bz2", xml)
    bad = BadInput()
    code = "E327" if data == "deeper pages" and not skip_bad else "E326"  # E327: the first page out of place
    with pytest.raises(DumpFormatError, match=code) as err:
        list(iter_pages(path, bad, skip_bad=skip_bad))
    if data == "deeper pages":
        assert "mediawiki/pages/page" in str(err.value)
        assert bad.total == (2 if skip_bad else 0)


def test_a_page_out_of_place_among_pages_is_an_error_or_is_counted(tmp_path):
    data = wikipedia_bytes([page_xml("A", "a", 1), "  <pages>\n", page_xml("B", "b", 2), "  </pages>\n", page_xml("C", "c", 3)])
    path = write_bz2(tmp_path / "p.xml.bz2", data)
    with pytest.raises(DumpFormatError, match="E327"):
        list(iter_pages(path, BadInput()))
    bad = BadInput()
    assert [p.title for p in iter_pages(path, bad, skip_bad=True)] == ["A", "C"]
    assert bad.total == 1

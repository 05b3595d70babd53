"""Fixtures of the dump tests: the shared real-format excerpts (skipped when ../shared is missing) and
writers of small hand-made dumps in the same formats."""
import bz2
import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

import pytest

from ...conftest import REPO_ROOT

SHARED_DUMPS = REPO_ROOT.parent / "shared" / "dumps"
WIKIDATA_HEAD = SHARED_DUMPS / "wikibase-dump-filter-entities.json.gz"
WIKIDATA_LOTR = SHARED_DUMPS / "wikidata-20210705-all.json.bz2"
ENWIKI = SHARED_DUMPS / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
PAGE_PROPS = SHARED_DUMPS / "enwiki-20210701-page_props.sql.gz"


def needs(path: Path):
    return pytest.mark.skipif(not path.is_file(), reason=f"{path} is missing (../shared/dumps)")


shared = pytest.mark.skipif(not SHARED_DUMPS.is_dir(), reason="../shared/dumps is missing")


def item(qid: str, label: Optional[str], title: Optional[str], p31: Sequence[str] = (), description: str = "",
         aliases: Sequence[str] = ()) -> Dict:
    """A Wikidata entity in the dump's JSON layout."""
    record: Dict = {"type": "item", "id": qid, "labels": {}, "descriptions": {}, "aliases": {}, "claims": {}, "sitelinks": {}}
    if label:
        record["labels"]["en"] = {"language": "en", "value": label}
    if description:
        record["descriptions"]["en"] = {"language": "en", "value": description}
    if aliases:
        record["aliases"]["en"] = [{"language": "en", "value": a} for a in aliases]
    if p31:
        record["claims"]["P31"] = [
            {"mainsnak": {"snaktype": "value", "property": "P31", "datavalue": {"value": {"entity-type": "item", "id": q}, "type": "wikibase-entityid"}}, "rank": "normal"}
            for q in p31
        ]
    if title:
        record["sitelinks"]["enwiki"] = {"site": "enwiki", "title": title, "badges": []}
    return record


def wikidata_bytes(records: Iterable[Dict], closing: bool = True) -> bytes:
    lines = ["["] + [json.dumps(r, ensure_ascii=False) + "," for r in records]
    if closing:
        lines[-1] = lines[-1].rstrip(",") if len(lines) > 1 else lines[-1]
        lines.append("]")
    return ("\n".join(lines) + "\n").encode("utf8")


XML_HEAD = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-{schema}/" version="{schema}" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def page_xml(title: str, text: str, page_id: int, ns: int = 0, redirect: Optional[str] = None) -> str:
    from xml.sax.saxutils import escape, quoteattr

    redirect_el = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n{redirect_el}"
        f"    <revision>\n      <id>{page_id * 10}</id>\n      <text xml:space=\"preserve\">{escape(text)}</text>\n"
        f"    </revision>\n  </page>\n"
    )


def wikipedia_bytes(pages: List[str], schema: str = "0.10") -> bytes:
    return (XML_HEAD.format(schema=schema) + "".join(pages) + "</mediawiki>\n").encode("utf8")


def write_bz2(path: Path, data: bytes) -> Path:
    path.write_bytes(bz2.compress(data))
    return path

"""spacy_el.kb.dumps.page_props: the real page_props excerpt (four INSERTs on one line) and the
disambiguation property."""
import gzip

import pytest

from spacy_el.kb.dumps.errors import DumpFormatError
from spacy_el.kb.dumps.page_props import PageProp, iter_page_props, read_page_props

from .conftest import PAGE_PROPS, needs


@needs(PAGE_PROPS)
def test_excerpt_rows():
    rows = list(iter_page_props(PAGE_PROPS))
    assert len(rows) == 14
    items = {r.page_id: r.value for r in rows if r.name == "wikibase_item"}
    assert items == {53221: "Q177499", 61599: "Q219504", 62320: "Q219473", 76749: "Q95074", 450998: "Q6647660"}
    assert PageProp(76749, "page_image_free", "Four_Commedia_dell’Arte_Figures_claude-gillot.jpg") in rows
    assert PageProp(62320, "defaultsort", "Gamgee, Samwise") in rows
    disambiguation, counts = read_page_props(PAGE_PROPS)
    assert disambiguation == set() and counts["wikibase_item"] == 5


def test_disambiguation_property_and_escapes(tmp_path):
    path = tmp_path / "pp.sql.gz"
    path.write_bytes(gzip.compress(
        b"-- MySQL dump\nINSERT INTO `page_props` VALUES (7,'disambiguation','',NULL),(8,'displaytitle','It\\'s; here',NULL);\n"
        b"INSERT INTO `page_props` VALUES (9,'disambiguation','',NULL);\n"
    ))
    rows = list(iter_page_props(path))
    assert rows[1] == PageProp(8, "displaytitle", "It's; here")
    assert read_page_props(path)[0] == {7, 9}


def test_not_a_page_props_dump(tmp_path):
    path = tmp_path / "x.sql"
    path.write_bytes(b"CREATE TABLE foo;\n")
    with pytest.raises(DumpFormatError, match="E319"):
        list(iter_page_props(path))

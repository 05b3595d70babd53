"""spacy_el.kb.dumps.wikitext: links (sections, namespaces, captions, lower-case first letters),
disambiguation templates (nested too) and the first paragraph."""
import pytest

pytest.importorskip("mwparserfromhell")

from spacy_el.kb.dumps.titles import normalize_title
from spacy_el.kb.dumps.wikitext import extract_links, first_paragraph, is_disambiguation, redirect_target

NAMESPACES = frozenset({"File", "Category", "Template", "Wikipedia"})


def test_links_anchors_and_targets():
    text = (
        "[[Paris#History|the old city]] and [[paris]] and [[ Lord_Byron ]], "
        "[[File:Map.png|thumb|A map of [[France|French]] roads]] [[fr:Paris]] [[Category:Cities]] "
        "[[:Category:Towns]] [[#Etymology]] [[Star Wars: Episode I]] [[bus]]es [[Target|]] "
        "[[Nice|''Nice'']] <!-- [[Hidden]] --> [[AT&amp;T]]"
    )
    links, skipped = extract_links(text, NAMESPACES)
    assert links == [
        ("the old city", "Paris"), ("paris", "Paris"), ("Lord Byron", "Lord Byron"), ("French", "France"),
        ("Star Wars: Episode I", "Star Wars: Episode I"), ("bus", "Bus"), ("Nice", "Nice"), ("AT&T", "AT&T"),
    ]
    assert skipped == 3  # fr:, Category:, :Category:; the File link's caption link counts


@pytest.mark.parametrize("raw, title", [
    ("paris", "Paris"), ("Paris#History", "Paris"), ("lord_byron", "Lord byron"), ("  New   York ", "New York"),
    ("#Section", None), ("éclair", "Éclair"),
])
def test_normalize_title(raw, title):
    assert normalize_title(raw) == title


@pytest.mark.parametrize("text, expected", [
    ("'''Paris''' may refer to:\n* [[Paris]]\n{{disambiguation}}", True),
    ("{{Disambiguation|geo|hndis}}", True),
    ("{{geodis}}", True),
    ("{{Hndis|name=Smith, John}}", True),
    ("{{dab}}", True),
    ("{{Disambiguation_page}}", True),
    ("{{Some wrapper|content={{disambig}}}}", True),  # nested
    ("{{distinguish|Paris, Texas}} '''Paris''' is the capital.", False),
    ("{{Disability}} text about [[Disambiguation]]", False),
    ("no templates", False),
])
def test_disambiguation_templates(text, expected):
    assert is_disambiguation(text) is expected


def test_first_paragraph_skips_infobox_files_and_references():
    text = (
        "{{Infobox country|name=Belgium|capital=[[Brussels]]}}\n{{Use dmy dates}}\n"
        "[[File:Flag.svg|thumb|The [[flag]]]]\n"
        "'''Belgium''', officially the [[Kingdom of Belgium|Kingdom]], is a country<ref>A source</ref> in "
        "[[Western Europe]].\n\nIt is small.\n== History ==\nLater."
    )
    assert first_paragraph(text) == "Belgium, officially the Kingdom, is a country in Western Europe."


def test_redirect_text():
    assert redirect_target("#REDIRECT [[computer accessibility]] {{R from CamelCase}}") == "Computer accessibility"
    assert redirect_target("#redirect [[Paris#History]]") == "Paris"
    assert redirect_target("Paris is a city.") is None

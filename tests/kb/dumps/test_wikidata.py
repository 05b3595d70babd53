"""spacy_el.kb.dumps.wikidata: the two real-format excerpts read exactly; brackets, trailing commas,
malformed and non-UTF-8 lines."""
import json

import pytest

from spacy_el.kb.dumps.errors import DumpFormatError
from spacy_el.kb.dumps.streams import iter_lines
from spacy_el.kb.dumps.wikidata import (
    DISAMBIGUATION, NO_SITELINK, NOT_ALLOWED, NOT_AN_ITEM, WikidataConfig, WikidataItem, item_of, process_lines,
)

from .conftest import WIKIDATA_HEAD, WIKIDATA_LOTR, item, needs, wikidata_bytes, write_bz2


def read_all(path, **config):
    return process_lines(list(iter_lines(path)), WikidataConfig(path=str(path), **config))


@needs(WIKIDATA_HEAD)
def test_truncated_head_without_closing_bracket_reads_all_49_items():
    result = read_all(WIKIDATA_HEAD)
    assert result.counts["entities read"] == 49 and len(result.items) == 49 and result.bad.total == 0
    scotland = result.items[0]
    assert scotland == WikidataItem(
        qid="Q22", title="Scotland", label="Scotland",
        description="country in North-West Europe, part of the United Kingdom",
        aliases=scotland.aliases, p31=("Q3336843",), coarse="LOC",
    )
    assert len(scotland.aliases) == 5 and "Caledonia" in scotland.aliases
    # Q1's English label is lower case: the label is kept as written, the title is the enwiki title.
    universe = next(i for i in result.items if i.qid == "Q1")
    assert (universe.label, universe.title, universe.p31) == ("universe", "Universe", ("Q1454986",))
    assert [i.qid for i in result.items[:3]] == ["Q22", "Q31", "Q1"] and result.items[-1].qid == "Q313"
    assert sum(bool(i.p31) for i in result.items) == 40  # README: 40 of the 49 have P31


@needs(WIKIDATA_LOTR)
def test_reserialised_excerpt_with_comma_before_bracket():
    result = read_all(WIKIDATA_LOTR)
    assert result.counts["entities read"] == 22
    assert result.counts[f"filtered: {NOT_AN_ITEM}"] == 3  # P31, P279, P463
    assert result.counts[f"filtered: {NO_SITELINK}"] == 5
    assert len(result.items) == 14  # README: 14 items have an enwiki sitelink
    gandalf = next(i for i in result.items if i.qid == "Q177499")
    assert gandalf.title == "Gandalf" and gandalf.label == "Gandalf"
    assert gandalf.description == "fictional character created by J. R. R. Tolkien"
    assert gandalf.p31 == ("Q3658341", "Q719506", "Q15773347") and gandalf.coarse == "PER"
    assert gandalf.aliases[:5] == ("Gandalf the Grey", "Gandalf the White", "Olórin", "Mithrandir", "Olorin")
    gimli = next(i for i in result.items if i.qid == "Q206818")
    assert gimli.title == "Gimli (Middle-earth)"


def test_filters_and_their_reasons(tmp_path):
    records = [
        item("Q1", "Paris", "Paris", ["Q515"]),
        item("Q2", "Paris", "Paris (disambiguation)", ["Q4167410"]),
        item("Q3", "Nowhere", None, ["Q515"]),
        {"type": "property", "id": "P31", "labels": {}},
        item("Q4", "Ada", "Ada Lovelace", ["Q5"]),
    ]
    path = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes(records))
    result = read_all(path, p31_allow=frozenset({"Q515", "Q4167410"}))
    assert [i.qid for i in result.items] == ["Q1"]
    assert result.counts == {
        "entities read": 5, f"filtered: {DISAMBIGUATION}": 1, f"filtered: {NO_SITELINK}": 1,
        f"filtered: {NOT_AN_ITEM}": 1, f"filtered: {NOT_ALLOWED}": 1,
    }


def test_lower_case_sitelink_title_is_capitalised():
    got, _ = item_of(item("Q9", "iPod", "iPod", ["Q1"]), WikidataConfig())
    assert got.title == "IPod" and got.label == "iPod" and got.coarse == "MISC"


def _with_bad_line(tmp_path, bad: bytes):
    good = wikidata_bytes([item("Q1", "A", "A"), item("Q2", "B", "B")], closing=False)
    lines = good.split(b"\n")
    data = b"\n".join([lines[0], lines[1], bad, lines[2]]) + b"\n"
    return write_bz2(tmp_path / "bad.json.bz2", data)


@pytest.mark.parametrize("bad, reason", [
    (b'{"type": "item", "id": "Q7", "labels": {"en": {"value": "cut',  "malformed JSON line"),
    (b'{"type": "item", "id": "Q8", "labels": {"en": {"value": "\xff\xfe"}}},', "not UTF-8"),
])
def test_bad_line_error_names_file_and_line_or_is_counted(tmp_path, bad, reason):
    path = _with_bad_line(tmp_path, bad)
    with pytest.raises(DumpFormatError) as err:
        read_all(path)
    assert f"{path}, line 3" in str(err.value) and "--skip-bad" in str(err.value)
    result = read_all(path, skip_bad=True)
    assert [i.qid for i in result.items] == ["Q1", "Q2"]
    assert result.bad.counts == {reason: 1} and result.bad.examples == [f"{path}, line 3: {reason}"]


def test_a_json_value_that_is_not_an_entity(tmp_path):
    path = tmp_path / "wd.json"
    path.write_bytes(b"[\n" + json.dumps([1, 2]).encode() + b",\n]\n")
    with pytest.raises(DumpFormatError, match=r"E322.*line 2"):
        read_all(path)


def _set(path, value):
    """A change to an item record: ``path`` of keys (a key that is missing is created as a dict)."""

    def change(record):
        target = record
        for key in path[:-1]:
            target = target.setdefault(key, {}) if isinstance(target, dict) else target[key]
        target[path[-1]] = value

    return change


# Lines that are valid JSON with a structure the reader does not know: issue 71, defect 9 (the first five),
# and the same mistakes in the other fields the reader uses.
ODD_RECORDS = {
    "P31 as a list of ints": _set(("claims", "P31"), [5, 515]),
    "sitelinks as a list": _set(("sitelinks",), ["enwiki"]),
    "an int title": _set(("sitelinks", "enwiki", "title"), 42),
    "an int label": _set(("labels", "en", "value"), 42),
    "a null mainsnak": _set(("claims", "P31"), [{"mainsnak": None, "rank": "normal"}]),
    "claims as a list": _set(("claims",), [1]),
    "labels as a string": _set(("labels",), "Seven"),
    "an int description": _set(("descriptions", "en"), {"value": 7}),
    "aliases as a dict": _set(("aliases", "en"), {"value": "Sept"}),
    "an int alias": _set(("aliases", "en"), [{"value": 7}]),
    "an int id": _set(("id",), 7),
    "a P31 value that is a string": _set(("claims", "P31"), [{"mainsnak": {"datavalue": {"value": "Q5"}}}]),
}


@pytest.mark.hostile("crashes that block a run")
@pytest.mark.parametrize("odd", sorted(ODD_RECORDS))
def test_odd_structure_is_a_coded_error_naming_the_line_or_is_counted(tmp_path, odd):
    record = item("Q7", "Seven", "Seven", ["Q5"], "a number", ["VII"])
    ODD_RECORDS[odd](record)
    path = _with_bad_line(tmp_path, json.dumps(record).encode() + b",")
    with pytest.raises(DumpFormatError, match="E323") as err:
        read_all(path)
    assert f"{path}, line 3" in str(err.value)
    result = read_all(path, skip_bad=True)
    assert [i.qid for i in result.items] == ["Q1", "Q2"] and result.bad.total == 1


def test_missing_fields_and_valueless_snaks_are_no_odd_structure():
    """What real dumps hold: an item without sitelinks, labels or claims, a P31 "somevalue" snak (no
    datavalue), a deprecated statement."""
    bare = {"type": "item", "id": "Q9"}
    assert item_of(bare, WikidataConfig()) == (None, NO_SITELINK)
    record = item("Q7", "Seven", "Seven", ["Q5"])
    record["claims"]["P31"].append({"mainsnak": {"snaktype": "somevalue", "property": "P31"}, "rank": "normal"})
    got, _ = item_of(record, WikidataConfig())
    assert got.p31 == ("Q5",) and got.label == "Seven"


SURROGATE_FIELDS = {
    "label": _set(("labels", "en", "value"), "Sev\ud800en"),
    "title": _set(("sitelinks", "enwiki", "title"), "Sev\udfffen"),
    "description": _set(("descriptions", "en", "value"), "a \ud800 number"),
    "alias": _set(("aliases", "en"), [{"value": "VII\udc00"}]),
}


@pytest.mark.hostile("crashes that block a run")
@pytest.mark.parametrize("field", sorted(SURROGATE_FIELDS))
def test_lone_surrogate_escape_is_a_coded_error_or_is_counted(tmp_path, field):
    """Issue 71, defect 10: ``"\\ud800"`` is valid JSON that decodes to a string UTF-8 cannot write."""
    record = item("Q7", "Seven", "Seven", ["Q5"], "a number", ["VII"])
    SURROGATE_FIELDS[field](record)
    line = json.dumps(record).encode()  # ensure_ascii: the surrogate is written as an escape, as in a dump
    assert b"\\ud" in line
    path = _with_bad_line(tmp_path, line + b",")
    with pytest.raises(DumpFormatError, match="E324") as err:
        read_all(path)
    assert f"{path}, line 3" in str(err.value)
    result = read_all(path, skip_bad=True)
    assert [i.qid for i in result.items] == ["Q1", "Q2"] and result.bad.total == 1
    for kept in result.items:  # everything kept can be written
        json.dumps(list(kept), ensure_ascii=False).encode("utf8")


def test_surrogate_pairs_and_unused_languages_are_kept(tmp_path):
    record = item("Q7", "Seven \U0001F600", "Seven", ["Q5"])
    record["labels"]["de"] = {"language": "de", "value": "Sieben\ud800"}  # a language the build does not read
    path = _with_bad_line(tmp_path, json.dumps(record).encode() + b",")
    result = read_all(path)
    assert [i.label for i in result.items] == ["A", "Seven \U0001F600", "B"] and result.bad.total == 0

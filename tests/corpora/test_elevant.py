"""ELEVANT JSONL converter on an invented toy benchmark."""

import json
import shutil
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_el.corpora import CorpusFormatError, doc_annotations
from spacy_el.corpora.char_spans import make_doc_with_boundaries
from spacy_el.corpora.elevant import elevant_kb_id, read_elevant

TOY = Path(__file__).parents[1] / "fixtures" / "corpora" / "elevant" / "toy.benchmark.jsonl"


@pytest.fixture(scope="module")
def docs(nlp):
    return read_elevant(TOY, nlp=nlp)


def test_kb_id_mapping():
    assert elevant_kb_id("Q90") == "Q90"
    assert [elevant_kb_id(x) for x in ("<NIL>", "<NO_MAPPING>", "Unknown")] == ["NIL"] * 3
    assert elevant_kb_id("Paris") is None and elevant_kb_id(None) is None


def test_labels_ents_and_nesting(docs):
    doc = docs[0]
    labels = [(s.text, s.label_, s.kb_id_, s._.qid) for s in doc.spans["elevant_labels"]]
    assert labels == [
        ("Alice Smith", "Q215627", "NIL", None),
        ("Acme Corp", "Q43229", "NIL", None),
        ("Paris", "Q27096213|Q43229", "Q90", "Q90"),
        ("Paris", "Q27096213|Q43229", "Q90", "Q90"),  # inside "Parisians": the token is split
        ("Eiffel Tower", "OTHER", "Q243", "Q243"),
        ("Eiffel", "Q215627", "Q20882", "Q20882"),  # nested: span group only
    ]
    assert [e.text for e in doc.ents] == ["Alice Smith", "Acme Corp", "Paris", "Paris", "Eiffel Tower"]
    assert doc.text == json.loads(TOY.read_text().splitlines()[0])["text"]
    assert [t.text for t in doc[9:12]] == ["Paris", "ians", "love"]
    assert doc.user_data["doc_id"] == "0" and doc.user_data["title"] == "toy1.txt"
    raw = [label["entity_id"] for label in doc.user_data["elevant_labels"]]
    assert raw[:2] == ["<NIL>", "<NO_MAPPING>"]  # the NIL / NO_MAPPING distinction is kept


def test_old_style_document(docs):
    doc = docs[1]
    assert doc.user_data["doc_id"] == "1"  # id -1 -> line index
    assert [(e.text, e.kb_id_) for e in doc.ents] == [("Berlin", "Q64"), ("Unknownville", "NIL")]


def test_round_trip(docs):
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    loaded = list(DocBin().from_bytes(data).get_docs(spacy.blank("en").vocab))
    assert [doc_annotations(d) for d in loaded] == [doc_annotations(d) for d in docs]
    assert loaded[0].user_data["elevant_labels"][5]["parent"] == 4


def test_make_doc_with_boundaries(nlp):
    doc = make_doc_with_boundaries(nlp, "Parisians  love U.S.-made cars", [0, 5, 16, 20])
    assert doc.text == "Parisians  love U.S.-made cars"
    assert doc.char_span(0, 5).text == "Paris" and doc.char_span(16, 20).text == "U.S."


def test_limit(nlp):
    assert len(read_elevant(TOY, nlp=nlp, limit=1)) == 1


def _write(tmp_path, labels, text="Alice met Bob ."):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": 0, "text": text, "labels": labels}) + "\n")
    return path


@pytest.mark.parametrize(
    "labels,message",
    [
        ([{"id": 0, "span": [0, 99], "entity_id": "Q1"}], "E650"),
        ([{"id": 0, "span": [0, 5], "entity_id": "Alice"}], "E651"),
        ([{"id": 0, "entity_id": "Q1"}], "E649"),
    ],
)
def test_bad_labels(tmp_path, nlp, labels, message):
    with pytest.raises(CorpusFormatError, match=rf"{message}\] .*bad\.jsonl:1: "):
        read_elevant(_write(tmp_path, labels), nlp=nlp)


def test_misaligned_labels_are_expanded_and_counted(tmp_path, nlp):
    # a span starting on whitespace cannot be split off; it is expanded, and the warning counts it
    path = _write(tmp_path, [{"id": 0, "span": [5, 9], "entity_id": "Q1", "type": "OTHER"}])
    with pytest.warns(UserWarning, match="W604"):
        docs = read_elevant(path, nlp=nlp)
    assert [e.text for e in docs[0].ents] == ["met"]


def test_overlapping_top_level_labels_are_counted(tmp_path, nlp):
    labels = [{"id": 0, "span": [0, 9], "entity_id": "Q1"}, {"id": 1, "span": [6, 13], "entity_id": "Q2"}]
    with pytest.warns(UserWarning, match="W605"):
        docs = read_elevant(_write(tmp_path, labels), nlp=nlp)
    assert len(docs[0].ents) == 1 and len(docs[0].spans["elevant_labels"]) == 2


def test_invalid_json(tmp_path, nlp):
    path = tmp_path / "broken.jsonl"
    shutil.copy(TOY, path)
    with path.open("a") as f:
        f.write("{not json\n")
    with pytest.raises(CorpusFormatError, match=r"E646\] .*broken\.jsonl:3: "):
        read_elevant(path, nlp=nlp)
    with pytest.raises(FileNotFoundError, match="E605"):
        read_elevant(tmp_path / "missing.jsonl", nlp=nlp)

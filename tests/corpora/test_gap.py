"""GAP converter on invented rows."""

import shutil
from pathlib import Path

import pytest
from spacy.tokens import DocBin

from spacy_el.corpora import CorpusFormatError, doc_annotations, get_clusters
from spacy_el.corpora.gap import read_gap

from .conftest import replace_once

TOY = Path(__file__).parents[1] / "fixtures" / "corpora" / "gap" / "gap-toy.tsv"


@pytest.fixture(scope="module")
def docs(nlp):
    return read_gap(TOY, nlp=nlp)


def test_spans_and_clusters(docs):
    assert [d.user_data["doc_id"] for d in docs] == ["toy-1", "toy-2", "toy-3"]
    first = docs[0]
    assert [(s.text, s.label_) for s in first.spans["gap"]] == [
        ("She", "PRONOUN"),
        ("Alice Smith", "A"),
        ("Carol Jones", "B"),
    ]
    assert [[first[s:e].text for s, e in c] for c in get_clusters(first)] == [["Alice Smith", "She"]]
    second = docs[1]
    assert [[second[s:e].text for s, e in c] for c in get_clusters(second)] == [["Tom", "him"]]
    assert get_clusters(docs[2]) == []  # neither name is coreferent
    assert docs[2].user_data["gap"] == {
        "A-coref": False,
        "B-coref": False,
        "url": "http://en.wikipedia.org/wiki/Toy_page",
    }
    assert first.text.startswith("Alice Smith met Carol Jones")


def test_round_trip(docs, nlp):
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    loaded = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    assert [doc_annotations(d) for d in loaded] == [doc_annotations(d) for d in docs]


def _bad_copy(tmp_path, old: str, new: str) -> Path:
    path = tmp_path / "gap-bad.tsv"
    shutil.copyfile(TOY, path)
    return replace_once(path, old, new)


@pytest.mark.parametrize(
    "old,new,line,message",
    [
        ("\tShe\t38\t", "\tShe\t37\t", 2, "E658"),
        ("\tShe\t38\t", "\tShe\tx\t", 2, "E657"),
        ("\tTRUE\tCarol", "\tMAYBE\tCarol", 2, "E660"),
        ("\thttp://en.wikipedia.org/wiki/Toy_page\n", "\n", 2, "E632"),
        ("Pronoun-offset", "PronounOffset", 1, "E656"),
    ],
)
def test_errors_name_file_and_line(tmp_path, nlp, old, new, line, message):
    with pytest.raises(CorpusFormatError, match=rf"{message}\] .*gap-bad\.tsv:{line}: "):
        read_gap(_bad_copy(tmp_path, old, new), nlp=nlp)


def test_limit(nlp):
    assert len(read_gap(TOY, nlp=nlp, limit=2)) == 2

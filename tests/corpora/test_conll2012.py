"""CoNLL-2012-style coreference files (LitBank, multi-document files) and LitBank entities."""

from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_el.corpora import CorpusFormatError, corpus_stats, doc_annotations, get_clusters
from spacy_el.corpora.conll2012 import read_conll2012, read_conll2012_dir
from spacy_el.corpora.coref_column import parse_coref_column
from spacy_el.corpora.litbank_entities import read_litbank_entities
from spacy_el.corpora.splits import load_splits

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpora"
LITBANK = FIXTURES / "litbank"
LITBANK_SPLITS = LITBANK / "splits.json"


@pytest.mark.parametrize(
    "value,expected",
    [
        ("_", []),
        ("-", []),
        ("(12", [("open", "12")]),
        ("12)", [("close", "12")]),
        ("(3)", [("single", "3")]),
        ("(1(2)", [("open", "1"), ("single", "2")]),
        ("(0)|(5", [("single", "0"), ("open", "5")]),
        ("1)4)", [("close", "1"), ("close", "4")]),
        ("(abstract-1(person-3-Lord_Byron)", [("open", "abstract-1"), ("single", "person-3-Lord_Byron")]),
    ],
)
def test_parse_coref_column(value, expected):
    assert parse_coref_column(value) == expected


@pytest.mark.parametrize("value", ["((1", "1", "(1)x", "()"])
def test_parse_coref_column_rejects(value):
    with pytest.raises(ValueError):
        parse_coref_column(value)


def test_splits_files_are_checked(tmp_path):
    (tmp_path / "splits.json").write_text('["train"]')
    with pytest.raises(CorpusFormatError, match=r"E609\] .*splits\.json: .*list"):
        load_splits(tmp_path / "splits.json")
    with pytest.raises(ValueError, match="E610"):
        load_splits(tmp_path / "splits.txt")


def test_litbank_document():
    assert load_splits(LITBANK_SPLITS) == {
        "train": ["toy_a_brat"],
        "dev": ["toy_b_brat"],
        "test": ["toy_c_brat"],
    }
    doc = read_conll2012_dir(LITBANK / "coref" / "conll", "train", splits_path=LITBANK_SPLITS)[0]
    assert doc.user_data["doc_id"] == "toy_a_brat"
    assert [t.is_sent_start for t in doc][6:8] == [False, True]
    clusters = [[doc[s:e].text for s, e in c] for c in get_clusters(doc)]
    assert clusters == [["The old sailor", "his", "He"], ["his story"], ["the captain of Dover"], ["Dover"]]
    assert [m.text for m in doc.spans["mentions"]] == [
        "The old sailor",
        "his story",
        "his",
        "He",
        "the captain of Dover",
        "Dover",
    ]


def test_litbank_counts_and_round_trip():
    keys = ("docs", "tokens", "mentions", "clusters", "clusters_2plus")
    for split, expected in zip(
        ("train", "dev", "test"), [(1, 15, 6, 4, 1), (1, 6, 2, 1, 1), (1, 3, 0, 0, 0)]
    ):
        docs = read_conll2012_dir(LITBANK / "coref" / "conll", split, splits_path=LITBANK_SPLITS)
        assert tuple(corpus_stats(docs)[k] for k in keys) == expected
        data = DocBin(docs=docs, store_user_data=True).to_bytes()
        loaded = list(DocBin().from_bytes(data).get_docs(Vocab()))
        assert [doc_annotations(d) for d in loaded] == [doc_annotations(d) for d in docs]


def test_several_documents_in_one_file():
    parsed = read_conll2012(FIXTURES / "conll2012" / "multi_doc.conll")
    assert [p.name for p in parsed] == ["toy/multi", "toy/multi-part1"]
    docs = read_conll2012_dir(FIXTURES / "conll2012")
    assert [len(d) for d in docs] == [4, 9]
    assert get_clusters(docs[0]) == [[(0, 1), (2, 3)]]
    assert get_clusters(docs[1]) == [[(0, 2)], [(3, 4)], [(6, 7)]]
    assert [t.is_sent_start for t in docs[1]][5:7] == [False, True]


def _write(tmp_path, body: str) -> Path:
    path = tmp_path / "bad.conll"
    path.write_text("#begin document (bad); part 0\n" + body + "#end document\n")
    return path


@pytest.mark.parametrize(
    "body,line,message",
    [
        ("bad\t0\t0\tA\t(1\nbad\t0\t1\tB\t_\n", 2, "E629"),
        ("bad\t0\t0\tA\t1)\n", 2, "E630"),
        ("bad\t0\t0\tA\t(1\nbad\t0\t1\tB\t1)x\n", 3, "E628"),
    ],
)
def test_errors_name_file_and_line(tmp_path, body, line, message):
    with pytest.raises(CorpusFormatError, match=rf"{message}\] .*bad\.conll:{line}: "):
        read_conll2012(_write(tmp_path, body))


def test_empty_token_is_replaced_with_warning(tmp_path):
    path = tmp_path / "empty.conll"
    path.write_text("# begin document \n0\tA\t(1)\n1\t\t_\n2\tB\t(1)\n# end document\n")
    with pytest.warns(UserWarning, match="W603"):
        parsed = read_conll2012(path)
    assert parsed[0].words == ["A", "_", "B"] and parsed[0].name == "empty"


def test_litbank_entities():
    docs = read_litbank_entities(LITBANK / "entities" / "tsv", "train", splits_path=LITBANK_SPLITS)
    doc = docs[0]
    assert [(s.text, s.label_) for s in doc.spans["entities"]] == [
        ("The old sailor", "PER"),
        ("his", "PER"),
        ("He", "PER"),
        ("the captain of Dover", "PER"),
        ("Dover", "GPE"),
    ]
    assert [e.text for e in doc.ents] == ["The old sailor", "his", "He", "the captain of Dover"]  # outermost
    coref = read_conll2012_dir(LITBANK / "coref" / "conll", "train", splits_path=LITBANK_SPLITS)[0]
    assert [t.text for t in doc] == [t.text for t in coref]


def test_split_needs_splits_file():
    with pytest.raises(ValueError, match="E611"):
        read_conll2012_dir(LITBANK / "coref" / "conll", "train")

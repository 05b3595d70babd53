"""AIDA CoNLL-YAGO converters on hand-written toy files (invented text, no Reuters material)."""

import shutil
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_el.corpora import CorpusFormatError, corpus_stats, doc_annotations
from spacy_el.corpora.aida_tsv import read_aida_tsv
from spacy_el.corpora.conll2003 import read_conll2003
from spacy_el.corpora.conll2003_aida import (
    conll2003_to_docs,
    read_aida,
    read_aida_annotations,
    read_aida_split,
)
from spacy_el.corpora.titles import decode_aida_title

from .conftest import replace_once

AIDA = Path(__file__).parents[1] / "fixtures" / "corpora" / "aida"


@pytest.fixture
def aida_copy(tmp_path):
    target = tmp_path / "aida"
    shutil.copytree(AIDA, target)
    return target


def _ents(doc):
    return [(e.text, e.label_, e.kb_id_) for e in doc.ents]


def test_decode_aida_title():
    assert decode_aida_title("People\\u0027s_Republic") == "People's_Republic"
    assert decode_aida_title("C\\u00f4te_d\\u0027Ivoire") == "Côte_d'Ivoire"
    assert decode_aida_title("\\ud83d\\ude00_x") == "\U0001f600_x"  # surrogate pair
    assert decode_aida_title("Lord_Byron") == "Lord_Byron"


def test_read_conll2003_documents_and_sentences():
    docs = read_conll2003(AIDA / "train.txt")
    assert len(docs) == 2
    assert docs[0].words[:4] == ["Alice", "Smith", "visited", "Paris"]
    assert [i for i, s in enumerate(docs[0].sent_starts) if s] == [0, 5]
    assert [(e.start, e.end, e.label) for e in docs[0].entities] == [
        (0, 2, "PER"),
        (3, 4, "LOC"),
        (7, 8, "PER"),
        (10, 12, "LOC"),
    ]
    assert docs[0].tags[0] == "NNP"


def test_read_aida_annotations():
    anns = read_aida_annotations(AIDA / "AIDA-YAGO2-annotations.tsv")
    assert [(a.doc_id, a.split, a.first_word) for a in anns] == [
        ("1", "train", "Alice"),
        ("2", "train", "Rain"),
        ("3", "dev", "Bob"),
        ("4", "test", "Carol"),
    ]
    assert anns[0].links[0][0] is None and anns[0].links[3][0] == "Paris"
    assert anns[1].links[3][0] == "Côte_d'Ivoire"


def test_read_aida_splits():
    parts = read_aida(AIDA)
    train, dev, test = parts["train"], parts["dev"], parts["test"]
    assert [d.user_data["doc_id"] for d in train + dev + test] == ["1", "2", "3", "4"]
    assert _ents(train[0]) == [
        ("Alice Smith", "PER", "NIL"),
        ("Paris", "LOC", "Paris"),
        ("Bob", "PER", "NIL"),
        ("Louvre Museum", "LOC", "Louvre"),
    ]
    # an NER entity without AIDA annotation is kept with an empty kb_id
    assert _ents(train[1]) == [
        ("Cote d'Ivoire", "LOC", "Côte_d'Ivoire"),
        ("Saint Mary's Church", "LOC", "Saint_Mary's_Church,_Example"),
        ("FC Example", "ORG", ""),
    ]
    assert [t.is_sent_start for t in train[0]][:6] == [True, False, False, False, False, True]
    assert train[0][0].tag_ == "NNP"
    assert all(t.ent_iob_ in ("B", "I", "O") for t in train[0])  # O, not missing, outside entities
    stats = {split: corpus_stats(docs) for split, docs in parts.items()}
    assert [
        (s["docs"], s["tokens"], s["ents"], s["ents_annotated"], s["ents_linked"], s["ents_nil"])
        for s in stats.values()
    ] == [
        (2, 28, 7, 6, 4, 2),
        (1, 9, 3, 3, 2, 1),
        (1, 6, 3, 3, 2, 1),
    ]


def test_aida_docbin_round_trip():
    docs = read_aida_split(AIDA, "train")
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    loaded = list(DocBin().from_bytes(data).get_docs(Vocab()))
    assert [doc_annotations(d) for d in loaded] == [doc_annotations(d) for d in docs]


def test_title_to_qid_sets_qid():
    docs = read_aida_split(AIDA, "test", title_to_qid={"Berlin": "Q64"})
    assert [(e.kb_id_, e._.qid) for e in docs[0].ents] == [
        ("NIL", None),
        ("French_language", None),
        ("Berlin", "Q64"),
    ]


def test_plain_conll_without_annotations():
    docs = conll2003_to_docs(AIDA / "valid.txt")
    assert docs[0].user_data["doc_id"] == "valid-1"
    assert [e.kb_id_ for e in docs[0].ents] == ["", "", ""]


def test_crlf_annotations(aida_copy):
    path = aida_copy / "AIDA-YAGO2-annotations.tsv"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert _ents(read_aida_split(aida_copy, "dev")[0]) == _ents(read_aida_split(AIDA, "dev")[0])


def test_aida_tsv_matches_conll_join():
    from_tsv = read_aida_tsv(AIDA / "AIDA-YAGO2-dataset.tsv", conll_dir=AIDA)
    from_conll = read_aida(AIDA)
    for split in ("train", "dev", "test"):
        assert [doc_annotations(d) for d in from_tsv[split]] == [
            doc_annotations(d) for d in from_conll[split]
        ]


def test_aida_tsv_without_conll_labels_ent():
    parts = read_aida_tsv(AIDA / "AIDA-YAGO2-dataset.tsv")
    assert [len(parts[s]) for s in ("train", "dev", "test")] == [2, 1, 1]
    assert _ents(parts["train"][1]) == [
        ("Cote d'Ivoire", "ENT", "Côte_d'Ivoire"),
        ("Saint Mary's Church", "ENT", "Saint_Mary's_Church,_Example"),
    ]
    assert [t.is_sent_start for t in parts["dev"][0]] == [True] + [False] * 8


@pytest.mark.parametrize(
    "old,new,line,message",
    [
        ("7\t--NME--", "8\t--NME--", 4, "E624"),
        ("7\t--NME--", "70\t--NME--", 4, "E623"),
        ("7\t--NME--", "x7\t--NME--", 4, "E618"),
        ("-DOCSTART- (3testa Bob)", "-DOCSTART- (3testa Rob)", 11, "E622.*'Rob'"),
        ("-DOCSTART- (3testa Bob)", "-DOCSTART- 3testa Bob", 11, "E617"),
        ("0\t--NME--\n3\tParis", "0\t--NME--\n0\tParis", 3, "E620"),
    ],
)
def test_annotation_errors_name_file_and_line(aida_copy, old, new, line, message):
    replace_once(aida_copy / "AIDA-YAGO2-annotations.tsv", old, new)
    with pytest.raises(CorpusFormatError, match=message) as err:
        read_aida(aida_copy)
    assert err.value.line == line and err.value.path.name == "AIDA-YAGO2-annotations.tsv"
    assert f"AIDA-YAGO2-annotations.tsv:{line}:" in str(err.value)


def test_conll_errors(aida_copy):
    replace_once(aida_copy / "test.txt", "Berlin NNP B-NP B-LOC", "Berlin NNP B-NP X-LOC")
    with pytest.raises(CorpusFormatError, match=r"E614\] .*test\.txt:7: "):
        read_aida_split(aida_copy, "test")


def test_ill_formed_iob_is_repaired_with_warning(aida_copy):
    replace_once(aida_copy / "test.txt", "Berlin NNP B-NP B-LOC", "Berlin NNP B-NP I-LOC")
    with pytest.warns(UserWarning, match="W602"):
        docs = read_aida_split(aida_copy, "test")
    assert _ents(docs[0])[-1] == ("Berlin", "LOC", "Berlin")


def test_document_count_mismatch(aida_copy):
    replace_once(aida_copy / "AIDA-YAGO2-annotations.tsv", "-DOCSTART- (2 Rain)", "-DOCSTART- (2testa Rain)")
    with pytest.raises(ValueError, match="E621"):
        read_aida_split(aida_copy, "train")


def test_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="E605.*nope"):
        read_aida_split(tmp_path / "nope", "train")
    with pytest.raises(FileNotFoundError, match="E605.*AIDA-YAGO2-annotations.tsv"):
        read_aida_split(tmp_path, "train")
    with pytest.raises(ValueError, match="E021.*'valid'"):
        read_aida_split(AIDA, "valid")

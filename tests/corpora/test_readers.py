"""The registered spaCy corpus readers (spacy-el.*Reader.v1) on the toy fixtures."""

from pathlib import Path

import pytest
import spacy
from spacy.training import Example
from spacy.util import registry

import spacy_el.corpora.readers  # noqa: F401  (registers the readers without entry points)
from spacy_el.corpora import get_clusters

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpora"

READERS = [
    ("spacy-el.AidaConllReader.v1", {"path": FIXTURES / "aida", "split": "train"}, 2),
    ("spacy-el.AidaTsvReader.v1", {"path": FIXTURES / "aida" / "AIDA-YAGO2-dataset.tsv", "split": "dev"}, 1),
    ("spacy-el.ElevantReader.v1", {"path": FIXTURES / "elevant" / "toy.benchmark.jsonl"}, 2),
    ("spacy-el.GumReader.v1", {"path": FIXTURES / "gum", "split": "train"}, 1),
    ("spacy-el.GumConllReader.v1", {"path": FIXTURES / "gum", "split": "dev"}, 1),
    (
        "spacy-el.CorefConllReader.v1",
        {
            "path": FIXTURES / "litbank" / "coref" / "conll",
            "split": "train",
            "splits_path": FIXTURES / "litbank" / "splits.json",
        },
        1,
    ),
    (
        "spacy-el.LitBankEntitiesReader.v1",
        {
            "path": FIXTURES / "litbank" / "entities" / "tsv",
            "split": "dev",
            "splits_path": FIXTURES / "litbank" / "splits.json",
        },
        1,
    ),
    ("spacy-el.GapReader.v1", {"path": FIXTURES / "gap" / "gap-toy.tsv"}, 3),
]


@pytest.mark.parametrize("name,args,n_docs", READERS, ids=[r[0] for r in READERS])
def test_reader_yields_examples(nlp, name, args, n_docs):
    config = {"corpus": {"@readers": name, **{k: str(v) for k, v in args.items()}}}
    reader = registry.resolve(config)["corpus"]
    examples = list(reader(nlp))
    assert len(examples) == n_docs
    assert all(isinstance(eg, Example) for eg in examples)
    for eg in examples:
        assert eg.predicted.text == eg.reference.text
        assert eg.predicted.vocab is nlp.vocab and eg.reference.vocab is nlp.vocab
    assert list(reader(nlp))[0].reference is examples[0].reference  # converted once, cached
    limited = registry.resolve({"corpus": {**config["corpus"], "limit": 1}})["corpus"]
    assert len(list(limited(nlp))) == 1


def test_aida_reader_gold(nlp):
    reader = registry.readers.get("spacy-el.AidaConllReader.v1")(FIXTURES / "aida", "test", gold_preproc=True)
    eg = next(iter(reader(nlp)))
    assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
    assert [(e.text, e.kb_id_) for e in eg.reference.ents] == [
        ("Carol", "NIL"),
        ("French", "French_language"),
        ("Berlin", "Berlin"),
    ]
    assert eg.reference.user_data["doc_id"] == "4"


def test_gum_reader_clusters(nlp):
    reader = registry.readers.get("spacy-el.GumReader.v1")(FIXTURES / "gum", "train")
    eg = next(iter(reader(nlp)))
    assert len(get_clusters(eg.reference)) == 3
    # entity annotation aligns with the predicted tokenisation
    assert eg.get_aligned_ner()[0] == "B-person"


def test_skip_masked_leaves_out_the_text_masked_documents_and_says_so():
    from spacy_el.corpora.readers import CachedDocReader

    nlp = spacy.blank("en")
    docs = [nlp("Byron wrote ."), nlp("_____ ____ _"), nlp("He left .")]
    with pytest.warns(UserWarning, match="W601"):
        kept = [eg.reference.text for eg in CachedDocReader(lambda _: docs, skip_masked=True)(nlp)]
    assert kept == ["Byron wrote .", "He left ."]
    assert len(list(CachedDocReader(lambda _: docs)(nlp))) == 3  # kept by default


@pytest.mark.parametrize("name", ["spacy-el.GumReader.v1", "spacy-el.GumConllReader.v1", "spacy-el.CorefConllReader.v1"])
def test_the_gum_and_conll_readers_take_skip_masked(name):
    args = next(kwargs for reader, kwargs, _ in READERS if reader == name)
    reader = registry.readers.get(name)(**args, skip_masked=True)
    assert reader.skip_masked

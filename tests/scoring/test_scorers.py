"""Tests for the spaCy scorers in spacy_el.scoring.scorers, on small Example objects."""
import pickle

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.scoring import scorers as scorer_module

WORDS = "Barack Obama visited Paris . He liked Paris and Obama .".split()
#        0      1     2       3     4 5  6     7     8   9     10


def make_doc(nlp, ents, clusters=()):
    """Doc over WORDS with ents = [(start, end, label, kb_id)], clusters = [[(start, end, kb)]]."""
    doc = Doc(nlp.vocab, words=WORDS)
    doc.ents = [Span(doc, s, e, label=label, kb_id=kb) for s, e, label, kb in ents]
    for number, cluster in enumerate(clusters, start=1):
        doc.spans[f"coref_clusters_{number}"] = [Span(doc, s, e, kb_id=kb) for s, e, kb in cluster]
    return doc


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


@pytest.fixture(scope="module")
def example(nlp):
    reference = make_doc(
        nlp,
        [(0, 2, "PERSON", "Q76"), (3, 4, "GPE", "Q90"), (7, 8, "GPE", "Q90"),
         (9, 10, "PERSON", "Q76")],
        [[(0, 2, "Q76"), (5, 6, ""), (9, 10, "")], [(3, 4, ""), (7, 8, "")]],
    )
    predicted = make_doc(
        nlp,
        [(0, 2, "PERSON", "Q76"), (3, 4, "GPE", "Q90"), (7, 8, "GPE", "Q167646"),
         (9, 10, "ORG", "NIL")],
        [[(0, 2, ""), (5, 6, "")], [(3, 4, ""), (7, 8, "")]],
    )
    return Example(predicted, reference)


def get_scorer(name, **cfg):
    return spacy.registry.scorers.get(name)(**cfg)


def test_el_scorer(example):
    scores = get_scorer("spacy-el.el_scorer.v1")([example])
    # InKB gold: Q76, Q90, Q90, Q76; predicted InKB: Q76 right, Q90 right, Q167646 wrong
    assert scores["el_micro_p"] == pytest.approx(2 / 3)
    assert scores["el_micro_r"] == pytest.approx(1 / 2)
    assert scores["el_micro_f"] == pytest.approx(4 / 7)
    assert scores["el_macro_f"] == pytest.approx(4 / 7)  # one document
    assert scores["ed_accuracy"] == pytest.approx(2 / 4)


def test_ner_scorer(example):
    scores = get_scorer("spacy-el.ner_scorer.v1")([example])
    assert scores["ner_f"] == pytest.approx(3 / 4)
    assert scores["ner_per_type"]["PERSON"] == pytest.approx({"p": 1.0, "r": 0.5, "f": 2 / 3})
    assert scores["ner_per_type"]["ORG"]["p"] == 0.0


def test_coref_scorer(example):
    scores = get_scorer("spacy-el.coref_scorer.v1")([example])
    # key {Obama, He, Obama'} {Paris, Paris'}; response {Obama, He} {Paris, Paris'}
    assert scores["coref_muc_r"] == pytest.approx(2 / 3)
    assert scores["coref_muc_p"] == pytest.approx(1.0)
    assert scores["coref_b3_r"] == pytest.approx((2 / 3 + 2 / 3 + 0 + 1 + 1) / 5)
    assert scores["coref_b3_p"] == pytest.approx(1.0)
    assert 0 < scores["coref_avg_f"] < 1
    assert 0 < scores["coref_lea_f"] < 1


def test_cluster_el_scorer(example):
    scores = get_scorer("spacy-el.cluster_el_scorer.v1")([example])
    # gold mentions: Obama, He, Obama' -> Q76 (He inherits the cluster link), Paris x2 -> Q90.
    # predicted: Obama, He -> Q76 (kb_id from doc.ents); Paris Q90 and Paris' Q167646 in one
    # cluster (inconsistent); Obama' is a NIL entity outside the clusters.
    assert scores["elm_p"] == pytest.approx(3 / 4)
    assert scores["elm_r"] == pytest.approx(3 / 5)
    assert scores["elh_p"] == 0.0  # {Obama, He} is not the gold cluster; Paris is inconsistent
    assert scores["elh_r"] == 0.0


def test_cluster_el_scorer_uses_entities_as_singleton_clusters(nlp):
    doc = make_doc(nlp, [(3, 4, "GPE", "Q90")])
    example = Example(make_doc(nlp, [(3, 4, "GPE", "Q90")]), doc)
    assert get_scorer("spacy-el.cluster_el_scorer.v1")([example])["elh_f"] == 1.0
    no_singletons = get_scorer("spacy-el.cluster_el_scorer.v1", ents_as_singletons=False)
    assert no_singletons([example])["elh_f"] == 0.0


def test_cluster_groups_are_numbered_and_filtered(nlp):
    doc = Doc(nlp.vocab, words=WORDS)
    doc.spans["coref_clusters_10"] = [Span(doc, 9, 10)]
    doc.spans["coref_clusters_2"] = [Span(doc, 7, 8)]
    doc.spans["coref_clusters_head_1"] = [Span(doc, 0, 1)]
    doc.spans["coref_clusters"] = [Span(doc, 1, 2)]
    doc.spans["other"] = [Span(doc, 2, 3)]
    offsets = [(doc[i].idx, doc[i].idx + len(doc[i])) for i in (7, 9)]
    assert scorer_module.doc_clusters(doc) == [[offsets[0]], [offsets[1]]]


def test_coref_scorer_options(example, nlp):
    with pytest.raises(ValueError, match="E021.*on_overlap"):
        get_scorer("spacy-el.coref_scorer.v1", on_overlap="merge")
    doc = make_doc(nlp, [], [[(0, 2, "")], [(0, 2, ""), (5, 6, "")]])
    overlapping = Example(doc, make_doc(nlp, [], [[(0, 2, ""), (5, 6, "")]]))
    with pytest.raises(ValueError, match="E047"):
        get_scorer("spacy-el.coref_scorer.v1")([overlapping])
    scores = get_scorer("spacy-el.coref_scorer.v1", on_overlap="first")([overlapping])
    assert scores["coref_muc_r"] == 0.0  # {Obama} kept, He alone in the second cluster


def test_empty_examples_and_empty_docs(nlp):
    empty = Example(Doc(nlp.vocab, words=WORDS), Doc(nlp.vocab, words=WORDS))
    el = get_scorer("spacy-el.el_scorer.v1")([empty])
    assert el["el_micro_f"] == 1.0  # GERBIL: nothing to find, nothing found
    assert el["ed_accuracy"] == 0.0
    for name in ("coref_scorer", "cluster_el_scorer", "ner_scorer"):
        scores = get_scorer(f"spacy-el.{name}.v1")([empty])
        assert all(v == 0.0 for v in scores.values() if isinstance(v, float))
    assert get_scorer("spacy-el.el_scorer.v1")([])["el_micro_f"] == 0.0


def test_spans_key_option(nlp):
    reference = Doc(nlp.vocab, words=WORDS)
    reference.spans["mentions"] = [Span(reference, 3, 4, label="GPE", kb_id="Q90")]
    predicted = Doc(nlp.vocab, words=WORDS)
    predicted.spans["mentions"] = [Span(predicted, 3, 4, label="GPE", kb_id="Q90")]
    example = Example(predicted, reference)
    assert get_scorer("spacy-el.el_scorer.v1", spans_key="mentions")([example])["el_micro_f"] == 1
    assert get_scorer("spacy-el.ner_scorer.v1", spans_key="mentions")([example])["ner_f"] == 1
    assert get_scorer("spacy-el.ner_scorer.v1", spans_key="absent")([example])["ner_f"] == 0


def test_scorers_are_picklable():
    for name in ("el_scorer", "coref_scorer", "cluster_el_scorer", "ner_scorer"):
        scorer = get_scorer(f"spacy-el.{name}.v1")
        assert pickle.loads(pickle.dumps(scorer)).func is scorer.func


class _ParisLinker:
    """Test component: links every "Paris" token to Q90 and clusters them."""

    def __init__(self, scorer):
        self.scorer = scorer

    def __call__(self, doc: Doc) -> Doc:
        paris = [t.i for t in doc if t.text == "Paris"]
        spans = [Span(doc, i, i + 1, label="GPE", kb_id="Q90") for i in paris]
        doc.ents = spans
        doc.spans["coref_clusters_1"] = spans
        return doc

    def score(self, examples, **kwargs):
        return self.scorer(examples, **kwargs)


@Language.factory(
    "spacy_el_test_paris_linker",
    default_config={"scorer": {"@scorers": "spacy-el.el_scorer.v1"}},
)
def _make_paris_linker(nlp, name, scorer):
    return _ParisLinker(scorer)


@pytest.mark.parametrize(
    "scorer,key,value",
    [
        ("spacy-el.el_scorer.v1", "el_micro_p", 1.0),
        ("spacy-el.ner_scorer.v1", "ner_r", 2 / 4),
        ("spacy-el.coref_scorer.v1", "coref_muc_p", 1.0),
        ("spacy-el.cluster_el_scorer.v1", "elm_r", 2 / 5),
    ],
)
def test_scorer_through_language_evaluate(example, scorer, key, value):
    nlp = spacy.blank("en")
    nlp.add_pipe("spacy_el_test_paris_linker", config={"scorer": {"@scorers": scorer}})
    scores = nlp.evaluate([Example(Doc(nlp.vocab, words=WORDS), example.reference)])
    assert scores[key] == pytest.approx(value)


@pytest.mark.parametrize("gold_date_link", ["", "NIL"])
def test_an_unlinkable_entity_predicted_nil_is_not_scored(nlp, gold_date_link):
    """A DATE entity that a linker leaves NIL ("not_linkable_label", docs/drop_in.md) changes no EL figure:
    NIL predictions are not predictions, and gold mentions without a KB id are ignored."""
    words = "Ada Mercer painted Mercer in 1990 .".split()

    def doc(ents):
        d = Doc(nlp.vocab, words=words)
        d.ents = [Span(d, s, e, label=label, kb_id=kb) for s, e, label, kb in ents]
        return d

    gold = [(0, 2, "PERSON", "Ada_Mercer"), (3, 4, "GPE", "Mercer_(town)")]
    pred = [(0, 2, "PERSON", "Ada_Mercer"), (3, 4, "GPE", "Velda")]  # one right, one wrong
    date_gold, date_pred = (5, 6, "DATE", gold_date_link), (5, 6, "DATE", "NIL")
    without = [Example(doc(pred), doc(gold))]
    with_date = [Example(doc(pred + [date_pred]), doc(gold + [date_gold]))]
    for name in ("spacy-el.el_scorer.v1", "spacy-el.cluster_el_scorer.v1"):
        scorer = get_scorer(name)
        assert scorer(with_date) == scorer(without), name
    assert get_scorer("spacy-el.el_scorer.v1")(with_date)["el_micro_p"] == 0.5

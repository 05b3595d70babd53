"""Tests for spacy_el.scoring.cluster_el (ELm and ELh)."""
import pytest

from spacy_el.scoring.cluster_el import (
    INCONSISTENT,
    cluster_el_counts,
    cluster_el_scores,
    cluster_link,
)
from spacy_el.scoring.prf import Counts


def linked(link, *mentions):
    """A cluster whose mentions all carry `link`."""
    return [(mention, link) for mention in mentions]


GOLD = [
    # the link is annotated on two of three mentions; the third inherits it
    [((0, 1), "Q1"), ((5, 6), ""), ((9, 10), "Q1")],
    linked("Q2", (20, 21)),
    linked("NIL", (30, 31), (35, 36)),
]
PRED = [
    linked("Q1", (0, 1), (5, 6)),  # ELh: mention set differs from gold -> FP; ELm: 2 TP
    linked("Q1", (9, 10)),  # ELh FP; ELm TP
    linked("Q2", (20, 21)),  # ELh TP; ELm TP
    linked("Q3", (30, 31), (35, 36)),  # gold is NIL: ELh FP; ELm 2 FP
]


def test_hand_computed_document():
    elm, elh = cluster_el_counts(GOLD, PRED)
    assert elm == Counts(tp=4, fp=2, fn=0)
    assert elh == Counts(tp=1, fp=3, fn=1)
    scores = cluster_el_scores([(GOLD, PRED)])
    assert scores["elm_p"] == pytest.approx(4 / 6)
    assert scores["elm_r"] == pytest.approx(1.0)
    assert scores["elm_f"] == pytest.approx(4 / 5)
    assert scores["elh_p"] == pytest.approx(1 / 4)
    assert scores["elh_r"] == pytest.approx(1 / 2)
    assert scores["elh_f"] == pytest.approx(1 / 3)


def test_exact_cluster_with_wrong_link_is_not_a_true_positive():
    gold = [linked("Q1", (0, 1), (5, 6))]
    elm, elh = cluster_el_counts(gold, [linked("Q2", (0, 1), (5, 6))])
    assert elh == Counts(tp=0, fp=1, fn=1)
    assert elm == Counts(tp=0, fp=2, fn=2)


def test_inconsistent_predicted_cluster_counts_as_wrong_linked_cluster():
    gold = [linked("Q1", (0, 1), (5, 6))]
    pred = [[((0, 1), "Q1"), ((5, 6), "Q2")]]
    elm, elh = cluster_el_counts(gold, pred)
    assert elh == Counts(tp=0, fp=1, fn=1)
    assert elm == Counts(tp=1, fp=1, fn=1)  # mentions keep their own ids


def test_inconsistent_gold_cluster_raises():
    with pytest.raises(ValueError, match="E044"):
        cluster_el_counts([[((0, 1), "Q1"), ((5, 6), "NIL")]], [])


def test_cluster_link_rules():
    assert cluster_link(["", None], gold=True) is None
    assert cluster_link(["Q1", "", "Q1"], gold=True) == "Q1"
    assert cluster_link(["NIL"], gold=False) == "NIL"
    assert cluster_link(["Q1", "Q2"], gold=False) is INCONSISTENT


def test_nil_clusters_are_ignored_on_both_sides():
    doc = ([linked("NIL", (0, 1), (2, 3))], [linked("NIL", (0, 1), (2, 3)), linked("", (4, 5))])
    assert cluster_el_counts(*doc) == (Counts(), Counts())
    assert set(cluster_el_scores([doc]).values()) == {0.0}


def test_no_predictions_no_gold_and_empty_documents():
    gold = [linked("Q1", (0, 1))]
    assert cluster_el_counts(gold, []) == (Counts(fn=1), Counts(fn=1))
    assert cluster_el_counts([], gold) == (Counts(fp=1), Counts(fp=1))
    assert set(cluster_el_scores([([], []), ([[]], [])]).values()) == {0.0}
    assert set(cluster_el_scores([]).values()) == {0.0}


def test_duplicate_mentions_in_a_cluster_collapse():
    gold = [linked("Q1", (0, 1), (5, 6))]
    pred = [linked("Q1", (0, 1), (5, 6), (0, 1))]
    assert cluster_el_counts(gold, pred) == (Counts(tp=2), Counts(tp=1))


def test_mention_in_two_clusters_raises():
    with pytest.raises(ValueError, match="E043"):
        cluster_el_counts([], [linked("Q1", (0, 1)), linked("Q1", (0, 1), (3, 4))])


def test_malformed_cluster_raises():
    with pytest.raises(ValueError, match="E042"):
        cluster_el_counts([[(0, 1)]], [])


def test_scores_sum_over_documents():
    doc_a = ([linked("Q1", (0, 1))], [linked("Q1", (0, 1))])
    doc_b = ([linked("Q2", (0, 1)), linked("Q3", (2, 3))], [])
    scores = cluster_el_scores([doc_a, doc_b])
    assert scores["elh_r"] == pytest.approx(1 / 3)
    assert scores["elh_p"] == pytest.approx(1.0)

"""Tests for spacy_el.scoring.el (GERBIL micro/macro InKB EL, ED accuracy)."""
import pytest

from spacy_el.extensions import is_linked
from spacy_el.scoring.el import ed_accuracy, el_counts, el_scores
from spacy_el.scoring.prf import Counts

# doc 1: one correct link, one wrong id, a link predicted where gold is NIL, a NIL prediction
# where gold has no link, and a spurious link.   tp 1, fp 3, fn 1 -> P 1/4, R 1/2, F 1/3
DOC1 = (
    [(0, 5, "Q1"), (10, 15, "Q2"), (20, 25, "NIL"), (30, 35, "")],
    [(0, 5, "Q1"), (10, 15, "Q3"), (20, 25, "Q4"), (30, 35, "NIL"), (40, 45, "Q5")],
)
# doc 2: only a NIL gold mention and no prediction: empty for InKB -> GERBIL P = R = F1 = 1
DOC2 = ([(0, 3, "NIL")], [])
# doc 3: right id, wrong boundary (strong matching) -> tp 0, fp 1, fn 1 -> 0, 0, 0
DOC3 = ([(0, 3, "Q1")], [(0, 4, "Q1")])


def test_document_counts():
    assert el_counts(*DOC1) == Counts(tp=1, fp=3, fn=1)
    assert el_counts(*DOC2) == Counts()
    assert el_counts(*DOC3) == Counts(tp=0, fp=1, fn=1)


def test_micro_and_macro_hand_computed():
    scores = el_scores([DOC1, DOC2, DOC3])
    # micro: tp 1, fp 4, fn 2
    assert scores["el_micro_p"] == pytest.approx(1 / 5)
    assert scores["el_micro_r"] == pytest.approx(1 / 3)
    assert scores["el_micro_f"] == pytest.approx(1 / 4)
    # macro: mean of per-document (P, R, F1) = (1/4, 1/2, 1/3), (1, 1, 1), (0, 0, 0)
    assert scores["el_macro_p"] == pytest.approx(5 / 12)
    assert scores["el_macro_r"] == pytest.approx(1 / 2)
    assert scores["el_macro_f"] == pytest.approx(4 / 9)
    # GERBIL averages document F1s: not the F1 of macro P and R (which would be 5/11)
    assert scores["el_macro_f"] != pytest.approx(5 / 11)


def test_gerbil_empty_document_rule():
    # Only empty documents: nothing to find and nothing found -> 1.0 (GERBIL).
    scores = el_scores([([], []), ([(0, 1, "NIL")], [(0, 1, "NIL")])])
    assert set(scores.values()) == {1.0}
    # Adding one document with a miss: macro averages 1, 1 and 0.
    scores = el_scores([([], []), ([], []), ([(0, 1, "Q1")], [])])
    assert scores["el_macro_f"] == pytest.approx(2 / 3)
    assert scores["el_micro_f"] == 0.0


def test_no_documents_scores_zero():
    scores = el_scores([])
    assert set(scores) == {f"el_{a}_{m}" for a in ("micro", "macro") for m in "prf"}
    assert set(scores.values()) == {0.0}
    assert ed_accuracy([]) == 0.0


def test_no_predictions_and_no_gold():
    assert el_scores([([(0, 1, "Q1")], [])])["el_micro_r"] == 0.0
    no_gold = el_scores([([], [(0, 1, "Q1")])])
    assert (no_gold["el_micro_p"], no_gold["el_macro_f"]) == (0.0, 0.0)


def test_duplicates_collapse():
    scores = el_scores([([(0, 5, "Q1"), (0, 5, "Q1")], [(0, 5, "Q1"), (0, 5, "Q1")])])
    assert scores["el_micro_p"] == scores["el_micro_r"] == 1.0


@pytest.mark.parametrize(
    "gold,pred",
    [
        ([(0, 5, "Q1"), (0, 5, "Q2")], []),
        ([], [(0, 5, "Q1"), (0, 5, "NIL")]),
    ],
)
def test_conflicting_links_for_one_span_raise(gold, pred):
    with pytest.raises(ValueError, match="E041"):
        el_scores([(gold, pred)])


def test_malformed_mention_raises():
    with pytest.raises(ValueError, match="E040"):
        el_scores([([(0, 5)], [])])


def test_custom_nil_id():
    doc = ([(0, 5, "--NME--"), (6, 8, "Q1")], [(0, 5, "--NME--"), (6, 8, "Q1")])
    assert el_counts(*doc, nil_id="--NME--") == Counts(tp=1)
    assert el_counts(*doc) == Counts(tp=2)  # with the default, "--NME--" is a KB id


def test_is_in_kb():
    assert is_linked("Q1")
    assert not is_linked("NIL")
    assert not is_linked("")
    assert not is_linked(None)


def test_ed_accuracy_hand_computed():
    # InKB gold: doc1 Q1 (right), Q2 (predicted Q3); doc3 Q1 (no prediction at that span)
    assert ed_accuracy([DOC1, DOC2, DOC3]) == pytest.approx(1 / 3)


def test_ed_accuracy_nil_or_missing_prediction_is_wrong():
    gold = [(0, 5, "Q1"), (6, 9, "Q2"), (10, 12, "NIL")]
    pred = [(0, 5, "NIL"), (10, 12, "Q7"), (20, 22, "Q8")]
    assert ed_accuracy([(gold, pred)]) == 0.0
    assert ed_accuracy([(gold, [(0, 5, "Q1"), (6, 9, "Q2")])]) == 1.0
    assert ed_accuracy([([(0, 1, "NIL")], [(0, 1, "Q1")])]) == 0.0  # no InKB gold

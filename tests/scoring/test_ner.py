"""Tests for spacy_el.scoring.ner."""
import pytest

from spacy_el.scoring.ner import ner_scores

GOLD = [(0, 5, "PER"), (10, 15, "ORG"), (20, 25, "LOC")]
# PER right (listed twice), ORG span labelled LOC, a spurious LOC, the gold LOC missed
PRED = [(0, 5, "PER"), (10, 15, "LOC"), (30, 35, "LOC"), (0, 5, "PER")]


def test_hand_computed_micro_and_per_type():
    scores = ner_scores([(GOLD, PRED)])
    # tp 1, fp 2, fn 2
    assert scores["ner_p"] == pytest.approx(1 / 3)
    assert scores["ner_r"] == pytest.approx(1 / 3)
    assert scores["ner_f"] == pytest.approx(1 / 3)
    per_type = scores["ner_per_type"]
    assert per_type["PER"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert per_type["ORG"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert per_type["LOC"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert list(per_type) == ["LOC", "ORG", "PER"]


def test_counts_are_summed_over_documents():
    docs = [([(0, 1, "PER")], [(0, 1, "PER")]), ([(0, 1, "PER"), (2, 3, "PER")], [])]
    scores = ner_scores(docs)
    assert scores["ner_p"] == 1.0
    assert scores["ner_r"] == pytest.approx(1 / 3)
    assert scores["ner_per_type"]["PER"]["r"] == pytest.approx(1 / 3)


def test_same_span_two_labels_is_two_entities():
    scores = ner_scores([([(0, 1, "PER"), (0, 1, "ORG")], [(0, 1, "PER")])])
    assert scores["ner_p"] == 1.0
    assert scores["ner_r"] == pytest.approx(1 / 2)


def test_no_predictions_no_gold_empty():
    assert ner_scores([(GOLD, [])])["ner_r"] == 0.0
    no_gold = ner_scores([([], PRED)])
    assert no_gold["ner_p"] == 0.0
    assert no_gold["ner_per_type"]["LOC"]["p"] == 0.0
    empty = ner_scores([([], []), ([], [])])
    assert (empty["ner_p"], empty["ner_r"], empty["ner_f"]) == (0.0, 0.0, 0.0)
    assert empty["ner_per_type"] == {}
    assert ner_scores([])["ner_f"] == 0.0


def test_bad_input_raises():
    with pytest.raises(ValueError, match="E038"):
        ner_scores([([(0, 1)], [])])
    with pytest.raises(ValueError, match="E039"):
        ner_scores([([], [(0, 1, "")])])

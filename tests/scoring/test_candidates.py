"""Tests for spacy_el.scoring.candidates (recall@k)."""
import pytest

from spacy_el.scoring.candidates import candidate_recall_at_k

RANKED = [
    ["Q1", "Q9", "Q8"],  # gold at rank 1
    ["Q7", "Q6", "Q2", "Q2"],  # gold at rank 3 (first occurrence counts)
    ["Q4", "Q5"],  # gold missing
    ["Q1"],  # NIL gold: skipped
    [],  # no gold annotation: skipped
]
GOLD = ["Q1", "Q2", "Q3", "NIL", ""]


def test_hand_computed():
    scores = candidate_recall_at_k(RANKED, GOLD, ks=(1, 2, 3, 50))
    assert scores == pytest.approx(
        {
            "cand_recall_at_1": 1 / 3,
            "cand_recall_at_2": 1 / 3,
            "cand_recall_at_3": 2 / 3,
            "cand_recall_at_50": 2 / 3,
        }
    )


def test_default_ks():
    assert set(candidate_recall_at_k(RANKED, GOLD)) == {
        "cand_recall_at_1",
        "cand_recall_at_10",
        "cand_recall_at_30",
        "cand_recall_at_100",
    }


def test_no_in_kb_gold_and_empty_input():
    assert candidate_recall_at_k([["Q1"]], ["NIL"], ks=[1]) == {"cand_recall_at_1": 0.0}
    assert candidate_recall_at_k([], [], ks=[5]) == {"cand_recall_at_5": 0.0}


def test_no_candidates_means_miss():
    assert candidate_recall_at_k([[], []], ["Q1", "Q2"], ks=[10]) == {"cand_recall_at_10": 0.0}


@pytest.mark.parametrize("ks", [[0], [-1], [1.5], [True]])
def test_bad_k_raises(ks):
    with pytest.raises(ValueError, match="E049"):
        candidate_recall_at_k([["Q1"]], ["Q1"], ks=ks)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="E051"):
        candidate_recall_at_k([["Q1"], ["Q2"]], ["Q1"])
    with pytest.raises(TypeError, match="E052"):
        candidate_recall_at_k(["Q1"], ["Q1"])
    with pytest.raises(TypeError, match="E050"):
        candidate_recall_at_k("Q1", ["Q1"])

"""Tests for spacy_el.scoring.coref (MUC, B-cubed, CEAF-e, CoNLL average, LEA)."""
import itertools
import pickle
import random

import numpy as np
import pytest

from spacy_el.scoring.assignment import max_weight_assignment
from spacy_el.scoring.coref import b_cubed, ceafe, coref_scores, lea, muc, normalize_clusters

METRICS = {"muc": muc, "b3": b_cubed, "ceafe": ceafe, "lea": lea}


def clusters(*groups: str):
    """Clusters written as strings of one-character mention names: clusters("a", "bc").

    Mention `c` is the span (ord(c), ord(c) + 1), so equal letters are the same mention
    (a duplicate) and different letters are different spans. In TC-A-5/6 the reference writes
    the mention overlapping `b` as `B`; it is simply a different span here, which is all the
    metrics look at.
    """
    return [[(ord(ch), ord(ch) + 1) for ch in group] for group in groups]


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


# Reference cases of the CoNLL-2012 scorer (github.com/conll/reference-coreference-scorers):
# * test/TestCases.README, commit 7e1b64d80245473a38adf483e32b3daaa2b226e4 (key/response
#   clusters and expected recall/precision for MUC, B3, CEAF-e and LEA), and
# * test/CorefMetricTestConfig.pm, commit b40fae4493b80d08b024a85073294032edf12054 (expected
#   [recall, precision, F1] for MUC, B3 and CEAF-e; CEAF-e values are rounded to 5 decimals).
# The same README is in ns-moosavi/coval tests/TestCases.README (commit 6de39136...).
# Expected values: metric -> (recall, precision) or (recall, precision, F1).
# For TC-A-7..9 the reference de-duplicates mentions; we use on_overlap="first" for them.
TC_A_KEY = clusters("a", "bc", "def")
TC_DE_KEY = clusters("12345", "67", "89ABC")
TC_M_KEY = clusters("abcdef")
TC_N_KEY = clusters("a", "b", "c", "d", "e", "f")
A4_LIKE = {
    "muc": (1 / 3, 1 / 3),
    "b3": (5 / 9, 17 / 42),
    "ceafe": (0.73333, 0.55, 0.62857),
    "lea": (1 / 2, 2 / 7),
}
REFERENCE_CASES = {
    "TC-A-1": (TC_A_KEY, clusters("a", "bc", "def"), {
        "muc": (1, 1), "b3": (1, 1), "ceafe": (1, 1), "lea": (1, 1)}),
    "TC-A-2": (TC_A_KEY, clusters("a", "de"), {
        "muc": (1 / 3, 1, 0.5),
        "b3": (7 / 18, 1, 14 / 25),
        "ceafe": (0.6, 0.9, 0.72),
        "lea": ((1 + 3 * (1 / 3)) / 6, 1)}),
    "TC-A-3": (TC_A_KEY, clusters("a", "bcx", "defy", "z"), {
        "muc": (1, 3 / 5, 0.75),
        "b3": (1, (4 + 7 / 12) / 9, 110 / 163),
        "ceafe": (0.88571, 0.66429, 0.75918),
        "lea": (1, (1 + 3 * (1 / 3) + 4 * (3 / 6)) / 9)}),
    "TC-A-4": (TC_A_KEY, clusters("a", "bcx", "dy", "z"), A4_LIKE),
    "TC-A-5": (TC_A_KEY, clusters("a", "bcxB", "dy", "z"), {
        "muc": (1 / 3, 1 / 4, 2 / 7),
        "b3": (5 / 9, 5 / 16),
        "ceafe": (0.68889, 0.51667, 0.59048),
        "lea": (1 / 2, (1 + 4 * (1 / 6)) / 8)}),
    "TC-A-6": (TC_A_KEY, clusters("a", "bcx", "dy", "Bz"), {
        "muc": (1 / 3, 1 / 4, 2 / 7),
        "b3": (5 / 9, 17 / 48),
        "ceafe": (0.73333, 0.55, 0.62857),
        "lea": (1 / 2, (1 + 3 / 3) / 8)}),
    # duplicate b in the same cluster, in another cluster, and ten times in another cluster
    "TC-A-7": (TC_A_KEY, clusters("a", "bcxb", "dy", "z"), A4_LIKE),
    "TC-A-8": (TC_A_KEY, clusters("a", "bcx", "dy", "bz"), A4_LIKE),
    "TC-A-9": (TC_A_KEY, clusters("a", "bcx", "dy", "b" * 10 + "z"), A4_LIKE),
    "TC-A-10": (TC_A_KEY, clusters("a", "b", "c", "d", "e", "f"), {
        "muc": (0, 0, 0), "b3": (3 / 6, 1, 2 / 3), "lea": (1 / 6, 1 / 6)}),
    "TC-A-11": (TC_A_KEY, clusters("abcdef"), {
        "muc": (1, 3 / 5, 6 / 8), "b3": (1, 7 / 18, 14 / 25), "lea": (5 / 6, 4 / 15)}),
    "TC-A-12": (TC_A_KEY, clusters("a", "x", "y", "c", "d", "e", "z"), {
        "muc": (0, 0, 0), "b3": (13 / 36, 4 / 7), "lea": (1 / 6, 1 / 7)}),
    "TC-A-13": (TC_A_KEY, clusters("axycdez"), {
        "muc": (1 / 3, 1 / 6, 2 / 9), "b3": (17 / 36, 6 / 49), "lea": (1 / 6, 1 / 21)}),
    "TC-B-1": (clusters("ab", "cde"), clusters("bcx", "de"), {
        "lea": ((2 * 0 + 3 / 3) / 5, (3 * 0 + 2) / 5)}),
    "TC-C-1": (clusters("ab", "cde", "fg"), clusters("bcx", "de", "fg"), {
        "lea": ((2 * 0 + 3 / 3 + 2) / 7, (3 * 0 + 2 + 2) / 7)}),
    "TC-D-1": (TC_DE_KEY, clusters("12345", "6789ABC"), {
        "muc": (1, 9 / 10), "b3": (1, 16 / 21), "lea": (1, (5 + 7 * (11 / 21)) / 12)}),
    "TC-E-1": (TC_DE_KEY, clusters("1234589ABC", "67"), {
        "muc": (1, 9 / 10), "b3": (1, 7 / 12), "lea": (1, (10 * (20 / 45) + 2) / 12)}),
    "TC-F-1": (clusters("ABCD"), clusters("AB", "CD"), {
        "muc": (2 / 3, 1), "lea": (4 * (2 / 6) / 4, 1)}),
    "TC-G-1": (clusters("AB", "CD"), clusters("ABCD"), {
        "muc": (1, 2 / 3), "lea": (1, (4 * 2 / 6) / 4)}),
    "TC-H-1": (clusters("ABCD"), clusters("ABCD"), {"muc": (1, 1), "lea": (1, 1)}),
    "TC-J-1": (clusters("ABC"), clusters("AC"), {"muc": (1 / 2, 1), "lea": (1 / 3, 1)}),
    "TC-K-1": (clusters("BCDEGHJ"), clusters("ABC", "DEF", "GHI"), {
        "muc": (3 / 6, 3 / 6), "lea": ((7 * 3 / 21) / 7, 3 / 9)}),
    "TC-L-1": (clusters("ABC", "DEFG"), clusters("AB", "CD", "FGH"), {
        "muc": (2 / 5, 2 / 4), "lea": ((3 * 1 / 3 + 4 * 1 / 6) / 7, (2 + 2 * 0 + 3 / 3) / 7)}),
    "TC-M-1": (TC_M_KEY, clusters("abcdef"), {
        "muc": (1, 1), "b3": (1, 1), "ceafe": (1, 1), "lea": (1, 1)}),
    "TC-M-2": (TC_M_KEY, clusters("a", "b", "c", "d", "e", "f"), {
        "muc": (0, 0), "lea": (0, 0)}),
    "TC-M-3": (TC_M_KEY, clusters("ab", "cde", "f"), {"lea": (4 / 15, 5 / 6)}),
    "TC-M-4": (TC_M_KEY, clusters("abcxyz"), {"lea": (3 / 15, 3 / 15)}),
    "TC-M-5": (TC_M_KEY, clusters("a", "b", "c", "x", "y", "z"), {
        "muc": (0, 0), "lea": (0, 0)}),
    "TC-M-6": (TC_M_KEY, clusters("ab", "cxy", "z"), {"lea": (1 / 15, 2 / 6)}),
    "TC-N-1": (TC_N_KEY, clusters("a", "b", "c", "d", "e", "f"), {
        "muc": (0, 0), "b3": (1, 1), "ceafe": (1, 1), "lea": (1, 1)}),
    "TC-N-2": (TC_N_KEY, clusters("abcdef"), {"lea": (0, 0)}),
    "TC-N-3": (TC_N_KEY, clusters("ab", "cde", "f"), {"lea": (1 / 6, 1 / 6)}),
    "TC-N-4": (TC_N_KEY, clusters("a", "b", "c", "x", "y", "z"), {
        "muc": (0, 0), "lea": (1 / 2, 1 / 2)}),
    "TC-N-5": (TC_N_KEY, clusters("abcxyz"), {"lea": (0, 0)}),
    "TC-N-6": (TC_N_KEY, clusters("ab", "cxy", "z"), {"lea": (0, 0)}),
}
DEDUP_CASES = {"TC-A-7", "TC-A-8", "TC-A-9"}


def _reference_params():
    for case_id, (key, response, expected) in REFERENCE_CASES.items():
        for metric, values in expected.items():
            yield pytest.param(case_id, metric, values, id=f"{case_id}-{metric}")


@pytest.mark.parametrize("case_id,metric,values", list(_reference_params()))
def test_reference_scorer_cases(case_id, metric, values):
    key, response, _ = REFERENCE_CASES[case_id]
    policy = "first" if case_id in DEDUP_CASES else "error"
    key = normalize_clusters(key, on_overlap=policy)
    response = normalize_clusters(response, on_overlap=policy)
    counts = METRICS[metric](key, response)
    recall, precision = values[0], values[1]
    tolerance = 1e-5 if metric == "ceafe" else 1e-9  # CEAF-e expectations are rounded
    assert counts.recall == pytest.approx(recall, abs=tolerance)
    assert counts.precision == pytest.approx(precision, abs=tolerance)
    expected_f = values[2] if len(values) == 3 else f1(precision, recall)
    assert counts.f1 == pytest.approx(expected_f, abs=tolerance)


def test_duplicate_in_other_cluster_is_an_error_by_default():
    with pytest.raises(ValueError, match="E047"):
        muc(TC_A_KEY, clusters("a", "bcx", "dy", "bz"))


def test_duplicate_in_same_cluster_is_collapsed():
    assert normalize_clusters(clusters("bcxb")) == [frozenset(clusters("bcx")[0])]


def test_ceafe_hand_computed_all_singletons_response():
    # TC-A-10 has no CEAF-e expectation in the reference; by hand: {a}-{a} 1, {bc}-{b} 2/3,
    # {def}-{d} 2/4 -> 13/6 over 3 key and 6 response entities.
    counts = ceafe(TC_A_KEY, clusters("a", "b", "c", "d", "e", "f"))
    assert counts.recall == pytest.approx(13 / 18)
    assert counts.precision == pytest.approx(13 / 36)


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_no_response_scores_zero(metric):
    counts = METRICS[metric](clusters("ab", "c"), [])
    assert (counts.precision, counts.recall, counts.f1) == (0.0, 0.0, 0.0)
    assert counts.p_den == 0  # nothing predicted


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_no_key_scores_zero(metric):
    counts = METRICS[metric]([], clusters("ab", "c"))
    assert (counts.precision, counts.recall, counts.f1) == (0.0, 0.0, 0.0)
    assert counts.p_den > 0  # the response was counted (MUC: the one link of {ab})


def test_coref_scores_empty_documents_are_zero():
    scores = coref_scores([([], []), ([[]], [[]])])
    assert all(value == 0.0 for value in scores.values())
    assert set(scores) == {
        f"coref_{m}_{s}" for m in ("muc", "b3", "ceafe", "lea", "avg", "mention") for s in "prf"
    }


def test_coref_scores_sum_counts_over_documents():
    # doc 1 perfect, doc 2 misses its only link: MUC recall (1 + 0) / (1 + 1), precision 1/1.
    docs = [(clusters("ab"), clusters("ab")), (clusters("cd"), clusters("c", "d"))]
    scores = coref_scores(docs)
    assert scores["coref_muc_r"] == pytest.approx(1 / 2)
    assert scores["coref_muc_p"] == pytest.approx(1.0)
    # B3 recall: (1 + 1 + 1/2 + 1/2) / 4 mentions
    assert scores["coref_b3_r"] == pytest.approx(3 / 4)
    # CEAF-e: doc 1 aligns 1, doc 2 aligns {cd}-{c} 2/3; 2 key and 3 response entities
    assert scores["coref_ceafe_r"] == pytest.approx((1 + 2 / 3) / 2)
    assert scores["coref_ceafe_p"] == pytest.approx((1 + 2 / 3) / 3)
    conll = ("muc", "b3", "ceafe")
    assert scores["coref_avg_f"] == pytest.approx(sum(scores[f"coref_{m}_f"] for m in conll) / 3)


def test_mention_detection_ignores_clusters_and_sums_over_documents():
    # doc 1: key a b c, response a b x (2 of 3 found, 2 of 3 right) in other clusters; doc 2: key d, response none.
    docs = [(clusters("ab", "c"), clusters("a", "bx")), (clusters("d"), [])]
    scores = coref_scores(docs)
    assert scores["coref_mention_r"] == pytest.approx(2 / 4)
    assert scores["coref_mention_p"] == pytest.approx(2 / 3)
    # Without singletons the key is {ab}, the response {bx}: b found.
    without = coref_scores(docs, keep_singletons=False)
    assert without["coref_mention_r"] == pytest.approx(1 / 2)
    assert without["coref_mention_p"] == pytest.approx(1 / 2)


def test_keep_singletons_false_drops_singletons_on_both_sides():
    docs = [(clusters("a", "bc"), clusters("a", "b", "c"))]
    with_singletons = coref_scores(docs)
    assert with_singletons["coref_b3_r"] == pytest.approx((1 + 1 / 2 + 1 / 2) / 3)
    assert with_singletons["coref_b3_p"] == pytest.approx(1.0)
    without = coref_scores(docs, keep_singletons=False)
    # key is {bc}, the response is empty once its singletons are dropped
    assert without["coref_b3_r"] == 0.0
    assert without["coref_b3_p"] == 0.0


def test_on_overlap_first_is_applied_by_coref_scores():
    docs = [(TC_A_KEY, clusters("a", "bcx", "dy", "bz"))]
    with pytest.raises(ValueError):
        coref_scores(docs)
    scores = coref_scores(docs, on_overlap="first")
    assert scores["coref_b3_p"] == pytest.approx(17 / 42)


def test_invalid_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="E021.*on_overlap"):
        normalize_clusters([], on_overlap="merge")
    with pytest.raises(TypeError, match="E046"):
        normalize_clusters([[[0, 1]]])
    with pytest.raises(TypeError, match="E045"):
        normalize_clusters(["ab"])


def test_empty_clusters_are_dropped():
    assert normalize_clusters([[], [(0, 1)], []]) == [frozenset({(0, 1)})]


def test_results_are_picklable_plain_floats():
    scores = coref_scores([(TC_A_KEY, clusters("a", "bcx", "dy", "z"))])
    assert all(isinstance(v, float) for v in scores.values())
    assert pickle.loads(pickle.dumps(scores)) == scores


def _brute_force_best(weights: np.ndarray) -> float:
    rows, cols = weights.shape
    if rows > cols:
        weights = weights.T
        rows, cols = cols, rows
    return max(
        sum(weights[i, j] for i, j in zip(range(rows), perm))
        for perm in itertools.permutations(range(cols), rows)
    )


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5), (5, 2), (4, 4), (0, 3)])
def test_pure_python_assignment_matches_brute_force_and_scipy(shape):
    rng = random.Random(sum(shape))
    for _ in range(20):
        weights = np.array(
            [[rng.choice([0.0, 0.25, 0.5, 2 / 3, 1.0]) for _ in range(shape[1])]
             for _ in range(shape[0])]
        ).reshape(shape)
        rows, cols = max_weight_assignment(weights, use_scipy=False)
        assert len(set(rows.tolist())) == len(rows) == min(shape)
        assert len(set(cols.tolist())) == len(cols)
        best = weights[rows, cols].sum()
        if weights.size:
            assert best == pytest.approx(_brute_force_best(weights))
            scipy_rows, scipy_cols = max_weight_assignment(weights)
            assert best == pytest.approx(weights[scipy_rows, scipy_cols].sum())


def test_assignment_rejects_non_matrix():
    with pytest.raises(ValueError, match="E048"):
        max_weight_assignment(np.zeros(3))

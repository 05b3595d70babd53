"""Reciprocal-rank fusion: its arrays equal the fusion done item by item, ties broken by first appearance."""
import random
from typing import Dict, List, Sequence, Tuple

import numpy as np
import pytest

from spacy_el.algorithms.rank_fusion import reciprocal_rank_fusion


def fused_one_by_one(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: float) -> Tuple[List[int], List[float]]:
    """The definition, item by item (a dict keeps first appearance; sorted is stable)."""
    scores: Dict[int, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda item: -scores[item])
    return order, [scores[item] for item in order]


def test_shared_ids_add_up_and_ties_keep_first_appearance():
    ids, scores = reciprocal_rank_fusion([[7, 3, 5], [3, 9]], [1.0, 1.0], k=0.0)
    # 3: 1/2 + 1/1; 7: 1/1; then 5 (1/3) and 9 (1/2): 9 first.
    assert ids.tolist() == [3, 7, 9, 5] and scores.tolist() == [1.5, 1.0, 0.5, 1 / 3]
    tied, _ = reciprocal_rank_fusion([[4], [8]], [1.0, 1.0])  # equal scores: the alias list's first
    assert tied.tolist() == [4, 8] and ids.dtype == np.int64 and scores.dtype == np.float64


def test_equals_the_fusion_done_item_by_item_to_the_last_bit():
    rng = random.Random(0)
    for _ in range(300):
        rankings = [rng.sample(range(60), rng.randint(0, 30)) for _ in range(rng.randint(1, 3))]
        weights = [rng.choice([0.0, 0.5, 1.0, 2.0]) for _ in rankings]
        k = rng.choice([0.0, 1.0, 60.0])
        expected_ids, expected_scores = fused_one_by_one(rankings, weights, k)
        ids, scores = reciprocal_rank_fusion(rankings, weights, k)
        assert ids.tolist() == expected_ids and scores.tolist() == expected_scores


def test_empty_lists_and_bad_arguments():
    ids, scores = reciprocal_rank_fusion([[], np.zeros(0, dtype=np.int64)], [1.0, 1.0])
    assert ids.shape == scores.shape == (0,)
    with pytest.raises(ValueError, match="E009"):
        reciprocal_rank_fusion([[1], [2]], [1.0])
    with pytest.raises(ValueError, match="E010"):
        reciprocal_rank_fusion([[1]], [1.0], k=-1.0)

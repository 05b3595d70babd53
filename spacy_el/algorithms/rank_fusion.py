"""Reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) of several ranked candidate lists."""
from typing import Dict, List, Sequence, Tuple


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], weights: Sequence[float], k: float = 60.0
) -> Tuple[List[int], List[float]]:
    """Fuse ranked lists of ids: ``score(e) = sum_i weights[i] / (k + rank_i(e))``, ranks from 1.

    An id missing from a list gets nothing from it. Ties keep the order in which the ids first appear
    (list by list), so the fusion is deterministic. RETURNS ``(ids, scores)``, best first.
    """
    if len(rankings) != len(weights):
        raise ValueError(f"[spacy_el] {len(rankings)} rankings but {len(weights)} weights.")
    if k < 0:
        raise ValueError(f"[spacy_el] The rank-fusion constant k must be >= 0, got {k}.")
    scores: Dict[int, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = sorted(scores, key=lambda item: -scores[item])  # stable: first appearance breaks ties
    return order, [scores[item] for item in order]


__all__ = ["reciprocal_rank_fusion"]

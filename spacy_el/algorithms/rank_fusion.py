"""Fusing several ranked candidate lists: reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009), and
round-robin interleaving."""
from typing import Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar

Item = TypeVar("Item", bound=Hashable)


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


def round_robin(rankings: Sequence[Sequence[Item]], limit: Optional[int] = None) -> List[Item]:
    """Interleave ranked lists: every list's first item, then every list's second, and so on, in list order;
    an item already taken is skipped. So each item sits at its best rank in any list (ties: the earlier
    list first), and a short list is read as deep as a long one's top. RETURNS at most ``limit`` items (all for
    None)."""
    merged: List[Item] = []
    seen = set()
    depth = max((len(r) for r in rankings), default=0)
    for rank in range(depth):
        for ranking in rankings:
            if rank < len(ranking) and ranking[rank] not in seen:
                seen.add(ranking[rank])
                merged.append(ranking[rank])
                if limit is not None and len(merged) >= limit:
                    return merged
    return merged


__all__ = ["reciprocal_rank_fusion", "round_robin"]

"""Fusing several ranked candidate lists: reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009), and
round-robin interleaving."""
from typing import Hashable, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from ..errors import Errors

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], weights: Sequence[float], k: float = 60.0
) -> Tuple[np.ndarray, np.ndarray]:
    """Fuse ranked lists of integer ids: ``score(e) = sum_i weights[i] / (k + rank_i(e))``, ranks from 1.

    An id missing from a list gets nothing from it. Ties keep the order in which the ids first appear
    (list by list), so the fusion is deterministic. Each id's terms are added in list order, so the scores
    are those of adding them one by one. RETURNS ``(ids, scores)``: int64 (U,) and float64 (U,) over the
    U distinct ids, best first.
    """
    if len(rankings) != len(weights):
        raise ValueError(Errors.E009.format(n_rankings=len(rankings), n_weights=len(weights)))
    if k < 0:
        raise ValueError(Errors.E010.format(k=k))
    lists = [np.asarray(ranking, dtype=np.int64).reshape(-1) for ranking in rankings]
    if not sum(len(ids) for ids in lists):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    ids = np.concatenate(lists)
    terms = np.concatenate([weight / (k + np.arange(1, len(ranked) + 1, dtype=np.float64))
                            for ranked, weight in zip(lists, weights)])
    distinct, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    scores = np.bincount(inverse.reshape(-1), weights=terms, minlength=len(distinct))  # adds in list order
    order = np.lexsort((first, -scores))  # best first; ties: first appearance
    return distinct[order], scores[order]


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

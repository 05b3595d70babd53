"""Gold-candidate dropout: training mentions that must reach their entity through a cluster mate.

Why: when a KB's aliases are counted from the training annotations (as ``kb/eval``'s are), every
training mention has its gold entity among its own candidates. A joint coreference + linking model
then never meets the case of the paper's Table 4 (a mention whose own candidates lack the gold
entity while a mate's have it) until test time, and nothing teaches it to pass a link along a
coreference edge. Zaporojets et al. (2022) train on Kolitsas et al.'s candidates, counted from
Wikipedia, which miss the gold entity for some training mentions too. Hiding the gold entity from
some mentions of a training cluster, while at least one mate keeps it, makes those cases part of
training.
"""
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import Errors

Offsets = Tuple[int, int]
#: One gold cluster: its mentions' ``(start, end)`` token offsets and its KB row (``None``: NIL).
GoldCluster = Tuple[Sequence[Offsets], Optional[int]]


def hidden_gold_candidates(
    gold: Sequence[GoldCluster],
    has_candidate: Callable[[Offsets, int], bool],
    rate: float,
    rng: np.random.Generator,
) -> Dict[Offsets, int]:
    """The mentions whose gold entity is hidden from their candidates in one training step.

    For every linked cluster of two or more mentions, each mention that has the cluster's entity
    among its own candidates (``has_candidate(mention, row)``) loses it with probability ``rate``,
    except that at least one of them always keeps it (when all are drawn, a random one is spared),
    so the cluster can still reach its entity. NIL clusters and singletons are left alone.

    Returns:
        ``{mention offsets: KB row to hide}``.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(Errors.E004.format(rate=rate))
    hidden: Dict[Offsets, int] = {}
    if rate == 0.0:
        return hidden
    for mentions, row in gold:
        if row is None or len(mentions) < 2:
            continue
        holders = [m for m in mentions if has_candidate(m, row)]
        if len(holders) < 2:
            continue
        drawn = [m for m in holders if rng.random() < rate]
        if len(drawn) == len(holders):
            drawn.pop(int(rng.integers(len(drawn))))
        hidden.update((m, row) for m in drawn)
    return hidden


def hide_candidates(
    rows: np.ndarray, vectors: np.ndarray, priors: np.ndarray, hide: Mapping[int, int]
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Remove KB row ``hide[i]`` from the candidates of span ``i``; the rest move left, in order.

    Args:
        rows: ``(K, C)`` int64 KB rows, ``-1`` padding at the end of each row.
        vectors: ``(K, C, E)`` float32 candidate vectors.
        priors: ``(K, C)`` float32 priors.
        hide: ``{span index: KB row}``; a row the span does not list is ignored.

    Returns:
        New ``(rows, vectors, priors)`` of the same shapes (the inputs are not modified).
    """
    rows, vectors, priors = rows.copy(), vectors.copy(), priors.copy()
    for i, row in hide.items():
        if not (rows[i] == row).any():
            continue
        keep = (rows[i] >= 0) & (rows[i] != row)
        n = int(keep.sum())
        rows[i, :n], vectors[i, :n], priors[i, :n] = rows[i, keep], vectors[i, keep], priors[i, keep]
        rows[i, n:], vectors[i, n:], priors[i, n:] = -1, 0.0, 0.0
    return rows, vectors, priors


__all__ = ["hidden_gold_candidates", "hide_candidates"]

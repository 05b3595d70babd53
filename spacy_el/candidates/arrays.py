"""Many mentions' candidates as padded arrays: what the torch linkers score."""
from typing import Sequence, Tuple

import numpy as np

from ..kb import ElKnowledgeBase
from .types import MentionCandidates

#: ``(R, C)`` int64 KB rows (``-1`` padding), ``(R, C, width)`` float32 vectors, ``(R, C)`` float32 priors.
PaddedCandidates = Tuple[np.ndarray, np.ndarray, np.ndarray]


def padded_candidates(kb: ElKnowledgeBase, lists: Sequence[MentionCandidates], width: int) -> PaddedCandidates:
    """Rows, entity vectors and alias priors of ``lists`` (at least one column; zeros on padding, and as
    vectors when ``width`` is 0, i.e. the model reads no KB vectors)."""
    columns = max(1, max((len(found) for found in lists), default=0))
    rows = np.full((len(lists), columns), -1, dtype=np.int64)
    vectors = np.zeros((len(lists), columns, width), dtype=np.float32)
    priors = np.zeros((len(lists), columns), dtype=np.float32)
    for i, found in enumerate(lists):
        n = len(found)
        rows[i, :n] = found.rows
        priors[i, :n] = found.prior
        if width and n:
            vectors[i, :n] = kb.entities.vectors[found.rows]
    return rows, vectors, priors


def padded_similarities(lists: Sequence[MentionCandidates], columns: int) -> Tuple[np.ndarray, np.ndarray]:
    """The generator's mention-entity similarities of ``lists`` in ``columns`` columns, as
    :func:`padded_candidates` lays the rows out: ``(R, C)`` float32 similarities (0 where there is none)
    and ``(R, C)`` float32 flags (1 where there is one; 0 on padding and where the generator computed none)."""
    dense = np.zeros((len(lists), columns), dtype=np.float32)
    known = np.zeros((len(lists), columns), dtype=np.float32)
    for i, found in enumerate(lists):
        n = len(found)
        has = ~np.isnan(found.dense)
        dense[i, :n] = np.where(has, found.dense, 0.0)
        known[i, :n] = has
    return dense, known


__all__ = ["PaddedCandidates", "padded_candidates", "padded_similarities"]

"""Alias-table candidates of many mentions as padded arrays: what the torch components score."""
from typing import Dict, Sequence, Tuple

import numpy as np

from .knowledge_base import ElKnowledgeBase

#: ``(R, C)`` int64 KB rows (``-1`` padding), ``(R, C, width)`` float32 vectors, ``(R, C)`` float32 priors.
PaddedCandidates = Tuple[np.ndarray, np.ndarray, np.ndarray]


class CandidateLookup:
    """``kb.lookup`` of mention texts (top ``top_k``), cached per text for the lifetime of the object.

    A prior is the alias prior x the match score of its tier, as ``kb.lookup`` ranks them. The cache
    belongs to one KB: make a new lookup when the KB changes (``lookup.kb is not kb``)."""

    def __init__(self, kb: ElKnowledgeBase, top_k: int, fuzzy: bool = False) -> None:
        self.kb = kb
        self.top_k = top_k
        self.fuzzy = fuzzy
        self._cache: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}

    def hits(self, text: str) -> Tuple[np.ndarray, np.ndarray]:
        """``(rows, priors)`` of one mention text; empty arrays without candidates or with an empty KB."""
        if text not in self._cache:
            found = [] if self.kb.is_empty() else self.kb.lookup(text, top_k=self.top_k, fuzzy=self.fuzzy)
            self._cache[text] = (
                np.asarray([h.entity_row for h in found], dtype=np.int64),
                np.asarray([h.prior * h.score for h in found], dtype=np.float32),
            )
        return self._cache[text]

    def arrays(self, texts: Sequence[str], width: int) -> PaddedCandidates:
        """Padded candidates of ``texts`` (at least one column); vectors are zeros when ``width`` is 0."""
        per_text = [self.hits(text) for text in texts]
        columns = max(1, max((len(rows) for rows, _ in per_text), default=0))
        rows = np.full((len(texts), columns), -1, dtype=np.int64)
        vectors = np.zeros((len(texts), columns, width), dtype=np.float32)
        priors = np.zeros((len(texts), columns), dtype=np.float32)
        for i, (r, p) in enumerate(per_text):
            rows[i, : len(r)] = r
            priors[i, : len(r)] = p
            if width and len(r):
                vectors[i, : len(r)] = self.kb.entities.vectors[r]
        return rows, vectors, priors


__all__ = ["CandidateLookup", "PaddedCandidates"]

"""What a candidate generator returns: per mention, ranked KB rows with the features linkers score."""
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence

import numpy as np

from ..kb.alias_table import MATCH_EXACT, MATCH_FUZZY, MATCH_NORMALIZED

if TYPE_CHECKING:
    from spacy.tokens import Span

    from ..kb import ElKnowledgeBase
    from ..kb.alias_table import AliasCounts

#: ``tier`` codes: the alias table's match tiers, best first, and "not proposed by the alias table".
TIER_EXACT, TIER_NORMALIZED, TIER_FUZZY, TIER_NONE = 0, 1, 2, -1
TIER_CODES = {MATCH_EXACT: TIER_EXACT, MATCH_NORMALIZED: TIER_NORMALIZED, MATCH_FUZZY: TIER_FUZZY}


@dataclass(slots=True)  # no __dict__: a batch makes one per distinct mention, and fewer objects for the collector
class MentionCandidates:
    """A mention's candidates, best first. Every array has shape (C,).

    rows: int64 KB entity rows.
    prior: float32 alias prior x match score (the alias table's p(e|m)); 0 where the alias table did
        not propose the entity.
    tier: int8 alias match tier (``TIER_*``; ``TIER_NONE`` = not from the alias table).
    dense: float32 cosine similarity of the mention's and the entity's vectors; NaN where the generator
        computed none (the alias generator, or a KB without vectors).
    score: float32 the generator's ranking score (alias: the prior, ranked within tiers; dense: the
        similarity; hybrid: the fused score), non-increasing along the list except for the alias
        generator, whose earlier tiers outrank later ones whatever their priors.
    query: float32 (dim,), the mention's vector in the KB's vector space where the generator encoded the
        mention (dense; hybrid, unless it skipped the encoder), else None. A linker that scores entities
        outside the list (training negatives, an injected gold) computes their ``dense`` with
        :meth:`similarity`.
    """

    rows: np.ndarray
    prior: np.ndarray
    tier: np.ndarray
    dense: np.ndarray
    score: np.ndarray
    query: Optional[np.ndarray] = None

    @classmethod
    def empty(cls) -> "MentionCandidates":
        return cls.from_lists([], [], [], [], [])

    @classmethod
    def from_lists(
        cls, rows: Sequence[int], prior: Sequence[float], tier: Sequence[int], dense: Sequence[float],
        score: Sequence[float], query: Optional[np.ndarray] = None,
    ) -> "MentionCandidates":
        return cls(
            rows=np.asarray(rows, dtype=np.int64).reshape(-1),
            prior=np.asarray(prior, dtype=np.float32).reshape(-1),
            tier=np.asarray(tier, dtype=np.int8).reshape(-1),
            dense=np.asarray(dense, dtype=np.float32).reshape(-1),
            score=np.asarray(score, dtype=np.float32).reshape(-1),
            query=query,
        )

    def __len__(self) -> int:
        return len(self.rows)

    def top(self, k: Optional[int]) -> "MentionCandidates":
        """The first ``k`` candidates (all of them for None)."""
        if k is None:
            return self
        return MentionCandidates(self.rows[:k], self.prior[:k], self.tier[:k], self.dense[:k], self.score[:k], self.query)

    def select(self, positions: Sequence[int]) -> "MentionCandidates":
        """The candidates at ``positions``, in that order."""
        idx = np.asarray(positions, dtype=np.int64)
        return MentionCandidates(self.rows[idx], self.prior[idx], self.tier[idx], self.dense[idx], self.score[idx],
                                 self.query)

    def similarity(self, kb: "ElKnowledgeBase", rows: Sequence[int]) -> np.ndarray:
        """float32 (len(rows),): the cosine similarity of the mention's vector and each entity's, as
        ``dense``; NaN throughout where the list has no ``query`` or the KB no vectors."""
        vectors = kb.entities.vectors
        if self.query is None or vectors is None or not len(rows):
            return np.full(len(rows), np.nan, dtype=np.float32)
        return (vectors[np.asarray(rows, dtype=np.int64)] @ self.query).astype(np.float32)

    def ids(self, kb: "ElKnowledgeBase") -> List[str]:
        """The candidates' KB ids."""
        return [kb.entities.ids[int(r)] for r in self.rows]

    def from_alias(self) -> np.ndarray:
        """float32 (C,): 1 where the alias table proposed the entity, else 0."""
        return (self.tier != TIER_NONE).astype(np.float32)


class CandidateGenerator:
    """The interface every generator implements: batched, over mention spans of any documents.

    ``generator(kb, mentions)`` returns one :class:`MentionCandidates` per span, in order. An empty or
    whitespace-only mention, a mention without any match and an empty KB give an empty list, never an
    error. ``top_k`` is how many candidates a mention keeps at most.

    ``held_out`` (training only; see :mod:`spacy_el.candidates.held_out`): per mention, the alias counts
    its own document contributed to the KB (or None), which a generator that reads the alias table takes
    out of its priors first (``ElKnowledgeBase.lookup(held_out=)``); one that does not ignores it.
    """

    name = "base"
    top_k: Optional[int] = None

    def __call__(
        self, kb: "ElKnowledgeBase", mentions: Sequence["Span"], held_out: Optional[Sequence[Optional["AliasCounts"]]] = None,
    ) -> List[MentionCandidates]:
        raise NotImplementedError


__all__ = [
    "MentionCandidates", "CandidateGenerator", "TIER_EXACT", "TIER_NORMALIZED", "TIER_FUZZY", "TIER_NONE",
    "TIER_CODES",
]

"""``spacy-el.HybridCandidates.v1``: the union of the alias table's and the dense index's candidates,
ranked by reciprocal-rank fusion.

Every candidate gets every feature: the alias prior and tier where the alias table proposed it (0 and
``TIER_NONE`` elsewhere), and its dense similarity to the mention whichever list it came from (the
entity's vector is in the KB, so the similarity costs one dot product).
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Span

from ..algorithms.rank_fusion import reciprocal_rank_fusion
from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts
from .alias import AliasCandidates
from .dense import DenseCandidates
from .types import TIER_EXACT, TIER_NONE, CandidateGenerator, MentionCandidates


class HybridCandidates(CandidateGenerator):
    """Alias and dense candidates fused by weighted reciprocal rank: ``sum_i w_i / (rrf_k + rank_i)``.

    top_k: candidates kept after fusion (None: the whole union of the two lists, as the alias generator's
    None keeps all its matches). alias, dense: the two generators (their own ``top_k`` is how deep each
    list is read). rrf_k, alias_weight, dense_weight: the fusion. skip_dense_above: when set,
    a mention whose best alias candidate is an exact match with at least this prior skips the encoder
    (its alias list alone is ranked): faster, at the cost of the dense list for confident aliases.
    """

    name = "hybrid"

    def __init__(
        self,
        alias: AliasCandidates,
        dense: DenseCandidates,
        top_k: Optional[int] = 30,
        rrf_k: float = 60.0,
        alias_weight: float = 1.0,
        dense_weight: float = 1.0,
        skip_dense_above: Optional[float] = None,
    ) -> None:
        if top_k is not None and (isinstance(top_k, bool) or int(top_k) < 1):
            raise ValueError(Errors.E410.format(top_k=top_k))
        if alias_weight < 0 or dense_weight < 0 or alias_weight + dense_weight == 0:
            raise ValueError(Errors.E411)
        if skip_dense_above is not None and not 0.0 <= float(skip_dense_above) <= 1.0:
            raise ValueError(Errors.E412.format(skip_dense_above=skip_dense_above))
        self.alias, self.dense = alias, dense
        self.top_k = None if top_k is None else int(top_k)
        self.rrf_k, self.alias_weight, self.dense_weight = float(rrf_k), float(alias_weight), float(dense_weight)
        self.skip_dense_above = skip_dense_above

    def __call__(
        self, kb: ElKnowledgeBase, mentions: Sequence[Span], held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        if not mentions:
            return []
        alias_lists = self.alias(kb, mentions, held_out)
        if kb.is_empty():
            return alias_lists
        need = self.needs_dense(mentions, alias_lists)
        vectors = np.zeros((len(mentions), kb.entities.vector_dim or 1), dtype=np.float32)
        if need:
            vectors[need] = self.dense.encode(kb, [mentions[i] for i in need])
        return self.fuse(kb, alias_lists, vectors, need)

    def needs_dense(self, mentions: Sequence[Span], alias_lists: Sequence[MentionCandidates]) -> List[int]:
        """Positions of the mentions the encoder reads (non-blank, and not skipped by ``skip_dense_above``)."""
        return [i for i, (span, found) in enumerate(zip(mentions, alias_lists))
                if span.text.strip() and not self._confident(found)]

    def fuse(
        self, kb: ElKnowledgeBase, alias_lists: Sequence[MentionCandidates], vectors: np.ndarray, need: Sequence[int],
    ) -> List[MentionCandidates]:
        """The fused lists, given the alias lists and the mention vectors (float32 (M, dim); only the rows
        in ``need`` are read)."""
        rows = np.full((len(alias_lists), 0), -1, dtype=np.int64)
        if need:
            _, found_rows = self.dense.search(kb, vectors[list(need)], self.dense.top_k)
            rows = np.full((len(alias_lists), found_rows.shape[1]), -1, dtype=np.int64)
            rows[list(need)] = found_rows
        needed = set(need)
        entity_vectors = kb.entities.vectors
        out = []
        for i, found in enumerate(alias_lists):
            if i not in needed:  # no dense list: the fusion keeps the alias order
                out.append(self._alias_only(found))
                continue
            fused_rows, scores = reciprocal_rank_fusion(
                [found.rows, rows[i][rows[i] >= 0]], [self.alias_weight, self.dense_weight], self.rrf_k
            )
            if self.top_k is not None:
                fused_rows, scores = fused_rows[: self.top_k], scores[: self.top_k]
            prior, tier = alias_features(found, fused_rows)
            if entity_vectors is not None and len(fused_rows):
                sims = entity_vectors[fused_rows] @ vectors[i]
            else:
                sims = np.full(len(fused_rows), np.nan, dtype=np.float32)
            out.append(MentionCandidates.from_lists(fused_rows, prior, tier, sims, scores, vectors[i]))
        return out

    def _alias_only(self, found: MentionCandidates) -> MentionCandidates:
        """The fused list of a mention the encoder did not read: what :func:`reciprocal_rank_fusion` gives
        for the alias list alone (its order, scores ``alias_weight / (rrf_k + rank)``), without building it
        item by item; no dense similarity (NaN) and no query vector."""
        kept = found.top(self.top_k)
        ranks = np.arange(1, len(kept) + 1, dtype=np.float64)
        return MentionCandidates.from_lists(
            kept.rows, kept.prior, kept.tier, np.full(len(kept), np.nan, dtype=np.float32),
            self.alias_weight / (self.rrf_k + ranks),
        )

    def _confident(self, found: MentionCandidates) -> bool:
        """Whether the alias list alone is trusted (``skip_dense_above``)."""
        return (
            self.skip_dense_above is not None and len(found) > 0 and int(found.tier[0]) == TIER_EXACT
            and float(found.prior[0]) >= self.skip_dense_above
        )


def alias_features(found: MentionCandidates, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The alias prior and tier of each of ``rows`` (int64 (C,)) in the alias list ``found``: float32 (C,) and
    int8 (C,), 0 and ``TIER_NONE`` where the alias table did not propose the entity."""
    prior = np.zeros(len(rows), dtype=np.float32)
    tier = np.full(len(rows), TIER_NONE, dtype=np.int8)
    if len(found) and len(rows):
        order = np.argsort(found.rows, kind="stable")
        at = np.minimum(np.searchsorted(found.rows[order], rows), len(order) - 1)
        listed = found.rows[order][at] == rows
        prior[listed] = found.prior[order][at][listed]
        tier[listed] = found.tier[order][at][listed]
    return prior, tier


__all__ = ["HybridCandidates", "alias_features"]

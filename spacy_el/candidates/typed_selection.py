"""Candidate sets of the ner_constrained_linker: type-aware selection (NER4EL contribution 2) among
the candidates of its generator, and training negatives, uniform and same-type (contribution 3)."""
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from ..kb import ElKnowledgeBase
from ..kb.type_index import select_typed_first
from .types import MentionCandidates

LOG_PRIOR_FLOOR = float(np.log(1e-4))
NEIGHBOURS = 32  # same-type negatives are drawn among the gold's NEIGHBOURS nearest same-type entities


@dataclass
class CandidateSet:
    """KB rows with their features. rows: int64 (C,); log_prior, from_alias: float32 (C,); dense: float32
    (C,), the generator's mention-entity cosine similarity (NaN where it computed none: the alias
    generator); gold: index of the gold entity in ``rows`` (training only, else None)."""

    rows: np.ndarray
    log_prior: np.ndarray
    from_alias: np.ndarray
    dense: np.ndarray
    gold: Optional[int] = None

    def __len__(self) -> int:
        return len(self.rows)


def _log_prior(prior: float) -> float:
    return max(float(np.log(max(prior, 1e-12))), LOG_PRIOR_FLOOR)


class CandidateSelector:
    """Cuts and (for training) extends the candidate lists the component's generator gives mentions.

    type_probs: float32 (n_entities, T), each entity's type distribution (kept in the KB).
    top_k: candidates kept per mention. type_aware: keep candidates compatible with the mention's
        type first when cutting to ``top_k``; compatible means ``type_probs[row, t] >= min_type_prob``.
    """

    def __init__(
        self, kb: ElKnowledgeBase, type_probs: np.ndarray, top_k: int, type_aware: bool, min_type_prob: float
    ) -> None:
        self.kb = kb
        self.type_probs = type_probs
        self.top_k = top_k
        self.type_aware = type_aware
        self.min_type_prob = min_type_prob
        self._type_pools: Optional[List[np.ndarray]] = None
        self._neighbours: Dict[int, np.ndarray] = {}

    def compatible(self, rows: np.ndarray, mention_type: int) -> np.ndarray:
        """bool (len(rows),): which entities may have the mention's type."""
        return self.type_probs[rows, mention_type] >= self.min_type_prob

    def select(self, found: MentionCandidates, mention_type: Optional[int]) -> CandidateSet:
        """The mention's generated candidates cut to ``top_k``: in rank order, or with type-aware selection
        those compatible with the mention's type first."""
        if len(found) > self.top_k:
            if self.type_aware and mention_type is not None:
                found = found.select(select_typed_first(
                    found.rows.tolist(), self.compatible(found.rows, mention_type).tolist(), self.top_k
                ))
            else:
                found = found.top(self.top_k)
        return CandidateSet(
            rows=found.rows.astype(np.int64),
            log_prior=np.asarray([_log_prior(p) for p in found.prior.tolist()], dtype=np.float32),
            from_alias=found.from_alias(),
            dense=found.dense.astype(np.float32),
        )

    def training_set(
        self,
        found: MentionCandidates,
        mention_type: Optional[int],
        gold_row: int,
        rng: np.random.Generator,
        n_random: int,
        n_same_type: int,
    ) -> CandidateSet:
        """Selected candidates + the gold (if the cut lost it) + uniform and same-type negatives.

        Negatives come from outside the alias candidates, so they carry the floor log-prior and
        ``from_alias = 0``; same-type negatives share the gold entity's most probable type and are
        among its nearest such entities (``same_type_neighbours``). The added rows' ``dense`` is their
        similarity to the generator's mention vector (NaN without one), as the generated rows', so that
        the feature does not tell the added rows from the others.
        """
        selected = self.select(found, mention_type)
        rows = selected.rows.tolist()
        log_prior = selected.log_prior.tolist()
        from_alias = selected.from_alias.tolist()
        if gold_row not in rows:
            rows.append(gold_row)
            log_prior.append(LOG_PRIOR_FLOOR)
            from_alias.append(0.0)
        taken = set(rows)
        extra: List[int] = []
        if n_same_type > 0:
            extra += _sample(self.same_type_neighbours(gold_row), n_same_type, rng, taken)
        if n_random > 0:
            extra += _sample(np.arange(self.kb.n_entities), n_random, rng, taken)
        rows += extra
        log_prior += [LOG_PRIOR_FLOOR] * len(extra)
        from_alias += [0.0] * len(extra)
        added = rows[len(selected):]
        dense = np.concatenate([selected.dense, found.similarity(self.kb, added)]).astype(np.float32)
        return CandidateSet(
            rows=np.asarray(rows, dtype=np.int64),
            log_prior=np.asarray(log_prior, dtype=np.float32),
            from_alias=np.asarray(from_alias, dtype=np.float32),
            dense=dense,
            gold=rows.index(gold_row),
        )

    def same_type_neighbours(self, row: int) -> np.ndarray:
        """The ``NEIGHBOURS`` entities of ``row``'s most probable type nearest to it in the KB's vector
        space (cached per entity). A uniformly drawn same-type entity is almost always trivially far
        from the gold (tens of thousands share a coarse type), so the type negatives are drawn among
        the gold's close same-type neighbours, the confusable ones. Without vectors: the whole pool."""
        if row not in self._neighbours:
            pool = self.type_pools()[int(np.argmax(self.type_probs[row]))]
            pool = pool[pool != row]
            vectors = self.kb.entities.vectors
            if vectors is not None and len(pool) > NEIGHBOURS:
                similarity = vectors[pool] @ vectors[row]
                pool = pool[np.argpartition(-similarity, NEIGHBOURS)[:NEIGHBOURS]]
            self._neighbours[row] = pool
        return self._neighbours[row]

    def type_pools(self) -> List[np.ndarray]:
        """Entity rows by most probable type (derived once from ``type_probs``)."""
        if self._type_pools is None:
            best = np.argmax(self.type_probs, axis=1) if len(self.type_probs) else np.zeros(0, dtype=np.int64)
            self._type_pools = [np.flatnonzero(best == t) for t in range(self.type_probs.shape[1])]
        return self._type_pools


def _sample(pool: np.ndarray, n: int, rng: np.random.Generator, taken: set) -> List[int]:
    """Up to ``n`` distinct rows of ``pool`` not in ``taken`` (which is updated)."""
    out: List[int] = []
    if len(pool) == 0:
        return out
    # Draws with replacement and skips repeats: O(n) per mention, where choice(replace=False) would
    # permute the whole pool (tens of thousands of rows) for every mention.
    for row in pool[rng.integers(0, len(pool), size=2 * n + len(taken))].tolist():
        if row not in taken:
            taken.add(row)
            out.append(row)
            if len(out) == n:
                break
    return out

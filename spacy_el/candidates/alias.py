"""``spacy-el.AliasCandidates.v1``: the alias table's exact -> normalised -> fuzzy tiers (``kb.lookup``)."""
from typing import Dict, List, Optional, Sequence

import numpy as np
from spacy.tokens import Span

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts
from ..kb.fast_lookup import TIER_NAMES, BatchMatches
from .types import TIER_CODES, CandidateGenerator, MentionCandidates

#: The candidates' tier code of each of the batch look-up's.
_TIERS = np.array([TIER_CODES[name] for name in TIER_NAMES], dtype=np.int8)

NAN = float("nan")


class AliasCandidates(CandidateGenerator):
    """Candidates from the KB's alias table, ranked as ``ElKnowledgeBase.lookup`` ranks them (``matches``): earlier
    tiers first, then by prior x match score.

    top_k: candidates kept per mention (None: all). fuzzy: whether the trigram tier runs when the exact
    and normalised tiers find nothing.
    """

    name = "alias"

    def __init__(self, top_k: Optional[int] = 30, fuzzy: bool = True) -> None:
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ValueError(Errors.E408.format(top_k=top_k))
        self.top_k = top_k
        self.fuzzy = fuzzy

    def lookup_texts(
        self, kb: ElKnowledgeBase, texts: Sequence[str], held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        """Candidates of mention strings, in one batch look-up (``kb.matches_batch``: each distinct string, with
        its held-out counts, is looked up once, and equal ones share their list)."""
        if held_out is not None and len(held_out) != len(texts):
            raise ValueError(Errors.E409.format(n_held=len(held_out), n_texts=len(texts)))
        # An empty KB and a blank mention give an empty list, never a look-up.
        asked = [] if kb.is_empty() else [i for i, text in enumerate(texts) if text.strip()]
        if not asked:
            return [MentionCandidates.empty() for _ in texts]
        every = len(asked) == len(texts)
        found = kb.matches_batch(
            texts if every else [texts[i] for i in asked], top_k=self.top_k, fuzzy=self.fuzzy,
            held_out=None if held_out is None else [held_out[i] or None for i in asked],
        )
        lists = candidate_lists(found)
        picked = [lists[u] for u in found.which.tolist()]
        if every:
            return picked
        out = [MentionCandidates.empty() for _ in texts]
        for i, found_list in zip(asked, picked):
            out[i] = found_list
        return out

    def __call__(
        self, kb: ElKnowledgeBase, mentions: Sequence[Span], held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        return self.lookup_texts(kb, [span.text for span in mentions], held_out)


def candidate_lists(found: BatchMatches) -> List[MentionCandidates]:
    """One ``MentionCandidates`` per distinct text of a batch look-up, its arrays views of the batch's: the prior
    is p(e|alias) x match score (as float32 of the float64 product, as ``from_lists`` of Python floats makes it),
    the score is the prior (one read-only array for both) and the dense similarity NaN (one read-only array per
    length): a list is made in about a microsecond, a few slices, so that a batch stays an array operation."""
    prior = (found.priors.astype(np.float64) * found.scores).astype(np.float32)
    prior.flags.writeable = False
    tier = _TIERS[found.tiers]
    rows = found.entity_rows
    offsets = found.offsets.tolist()
    out, nans = [], _NANS
    for s, e in zip(offsets[:-1], offsets[1:]):
        p = prior[s:e]
        nan = nans.get(e - s)
        out.append(MentionCandidates(rows[s:e], p, tier[s:e], _nan(e - s) if nan is None else nan, p))
    return out


_NANS: Dict[int, np.ndarray] = {}


def _nan(n: int) -> np.ndarray:
    """A read-only float32 (n,) array of NaN, shared."""
    found = _NANS.get(n)
    if found is None:
        found = np.full(n, NAN, dtype=np.float32)
        found.flags.writeable = False
        if n <= 1024:
            _NANS[n] = found
    return found


__all__ = ["AliasCandidates"]

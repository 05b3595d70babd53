"""``spacy-el.AliasCandidates.v1``: the alias table's exact -> normalised -> fuzzy tiers (``kb.lookup``)."""
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Span

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts
from .types import TIER_CODES, CandidateGenerator, MentionCandidates

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
        """Candidates of mention strings (each distinct string, with its held-out counts, looked up once)."""
        held = held_out if held_out is not None else [None] * len(texts)
        if len(held) != len(texts):
            raise ValueError(Errors.E409.format(n_held=len(held), n_texts=len(texts)))
        found: Dict[Tuple[str, int], MentionCandidates] = {}
        keys = [(text, id(counts)) for text, counts in zip(texts, held)]
        for key, text, counts in zip(keys, texts, held):
            if key not in found:
                found[key] = self._lookup(kb, text, counts)
        return [found[key] for key in keys]

    def __call__(
        self, kb: ElKnowledgeBase, mentions: Sequence[Span], held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        return self.lookup_texts(kb, [span.text for span in mentions], held_out)

    def _lookup(self, kb: ElKnowledgeBase, text: str, held_out: Optional[AliasCounts] = None) -> MentionCandidates:
        if kb.is_empty() or not text.strip():
            return MentionCandidates.empty()
        found = kb.matches(text, top_k=self.top_k, fuzzy=self.fuzzy, held_out=held_out or None)
        priors = [m.prior * m.score for m in found]
        return MentionCandidates.from_lists(
            [m.entity_row for m in found], priors, [TIER_CODES[m.match] for m in found], [NAN] * len(found), priors
        )


__all__ = ["AliasCandidates"]

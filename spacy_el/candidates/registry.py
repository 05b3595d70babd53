"""The registered candidate generators, for any linker's config, and the one adapter that gives spaCy's own
``entity_linker`` their candidates (its ``get_candidates`` and ``get_candidates_batch``).

In a spacy_el linker's config::

    [components.joint_coref_linker.candidates]
    @misc = "spacy-el.HybridCandidates.v1"
    top_k = 16
    encoder = null   # the mention encoder the KB carries

In spaCy's own ``entity_linker``::

    [components.entity_linker.get_candidates]
    @misc = "spacy-el.SpacyCandidates.v1"

    [components.entity_linker.get_candidates.generator]
    @misc = "spacy-el.HybridCandidates.v1"

(``spacy-el.AliasCandidates.v1`` as the generator gives the KB's alias-table candidates, as its
``ElKnowledgeBase.get_candidates`` does for spaCy's default generator, but with the generator's ``top_k``.)
"""
from pathlib import Path
from typing import Callable, Iterable, List, Optional

from spacy.kb import Candidate, KnowledgeBase
from spacy.tokens import Span
from spacy.util import registry

from ..kb import ElKnowledgeBase
from ..kb.errors import KBErrors
from .alias import AliasCandidates
from .dense import DenseCandidates
from .hybrid import HybridCandidates
from .types import CandidateGenerator, MentionCandidates


@registry.misc("spacy-el.AliasCandidates.v1")
def alias_candidates(top_k: Optional[int] = 30, fuzzy: bool = True) -> AliasCandidates:
    """The alias table's exact, normalised and fuzzy tiers."""
    return AliasCandidates(top_k=top_k, fuzzy=fuzzy)


@registry.misc("spacy-el.DenseCandidates.v1")
def dense_candidates(top_k: int = 30, encoder: Optional[Path] = None, cache_size: int = 20000) -> DenseCandidates:
    """The mention encoder's nearest entities in the KB's dense index (encoder: a folder, or null for the
    one the KB carries; cache_size: mention vectors kept across calls)."""
    return DenseCandidates(top_k=top_k, encoder=encoder, cache_size=cache_size)


@registry.misc("spacy-el.HybridCandidates.v1")
def hybrid_candidates(
    top_k: Optional[int] = 30,
    alias_top_k: Optional[int] = 30,
    dense_top_k: int = 30,
    fuzzy: bool = True,
    encoder: Optional[Path] = None,
    rrf_k: float = 60.0,
    alias_weight: float = 1.0,
    dense_weight: float = 1.0,
    skip_dense_above: Optional[float] = None,
    cache_size: int = 20000,
) -> HybridCandidates:
    """Alias and dense candidates fused by reciprocal rank (top_k: kept after fusion; alias_top_k,
    dense_top_k: how deep each list is read; null for top_k or alias_top_k: all of them, as the alias
    generator's null)."""
    return HybridCandidates(
        AliasCandidates(alias_top_k, fuzzy), DenseCandidates(dense_top_k, encoder, cache_size), top_k=top_k, rrf_k=rrf_k,
        alias_weight=alias_weight, dense_weight=dense_weight, skip_dense_above=skip_dense_above,
    )


def check_el_kb(kb: KnowledgeBase, user: str) -> ElKnowledgeBase:
    """``kb`` as an ``ElKnowledgeBase``, or an error telling spaCy's entity_linker user (``user``, the
    registered function that needs it) how to configure one."""
    if not isinstance(kb, ElKnowledgeBase):
        raise ValueError(KBErrors.E174.format(user=user, kb_type=type(kb).__name__))
    return kb


def spacy_candidates_of(kb: ElKnowledgeBase, span: Span, found: MentionCandidates) -> List[Candidate]:
    """spaCy ``Candidate`` objects; prior_prob is the alias prior (0 for a candidate only the encoder found,
    which then competes on the entity_linker's own similarity)."""
    return [kb.spacy_candidate(row, prior, span.text) for row, prior in zip(found.rows.tolist(), found.prior.tolist())]


@registry.misc("spacy-el.SpacyCandidates.v1")
def spacy_candidates(generator: CandidateGenerator) -> Callable[[KnowledgeBase, Span], List[Candidate]]:
    """spaCy ``entity_linker``'s ``get_candidates`` from any spacy_el generator."""

    def get_candidates(kb: KnowledgeBase, mention: Span) -> List[Candidate]:
        kb = check_el_kb(kb, "spacy-el.SpacyCandidates.v1")
        return spacy_candidates_of(kb, mention, generator(kb, [mention])[0])

    return get_candidates


@registry.misc("spacy-el.SpacyCandidatesBatch.v1")
def spacy_candidates_batch(
    generator: CandidateGenerator,
) -> Callable[[KnowledgeBase, Iterable[Span]], List[List[Candidate]]]:
    """spaCy ``entity_linker``'s ``get_candidates_batch``: one generator call for a doc's mentions (the
    dense encoder then reads each context window once)."""

    def get_candidates_batch(kb: KnowledgeBase, mentions: Iterable[Span]) -> List[List[Candidate]]:
        kb = check_el_kb(kb, "spacy-el.SpacyCandidatesBatch.v1")
        mentions = list(mentions)
        return [spacy_candidates_of(kb, span, found) for span, found in zip(mentions, generator(kb, mentions))]

    return get_candidates_batch


__all__ = ["alias_candidates", "dense_candidates", "hybrid_candidates", "spacy_candidates", "spacy_candidates_batch"]

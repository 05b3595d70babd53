"""Candidate generation, one subsystem shared by every linker: alias, dense and hybrid generators.

A generator is called with a KB and a batch of mention spans and returns, per span, a
:class:`MentionCandidates`: ranked KB rows with their alias prior, match tier, dense similarity and
the generator's score. Linkers take a generator in their config (``spacy-el.AliasCandidates.v1``,
``spacy-el.DenseCandidates.v1``, ``spacy-el.HybridCandidates.v1``) and read the features they need.
"""
from .alias import AliasCandidates
from .dense import DenseCandidates, attach_mention_encoder, mention_encoder_of
from .hybrid import HybridCandidates
from .memo import CandidateMemo
from .registry import alias_candidates, dense_candidates, hybrid_candidates, spacy_candidates, spacy_candidates_batch
from .types import TIER_EXACT, TIER_FUZZY, TIER_NONE, TIER_NORMALIZED, CandidateGenerator, MentionCandidates

__all__ = [
    "AliasCandidates", "DenseCandidates", "HybridCandidates", "CandidateGenerator", "MentionCandidates", "CandidateMemo",
    "attach_mention_encoder", "mention_encoder_of", "alias_candidates", "dense_candidates", "hybrid_candidates",
    "spacy_candidates", "spacy_candidates_batch", "TIER_EXACT", "TIER_NORMALIZED", "TIER_FUZZY", "TIER_NONE",
]

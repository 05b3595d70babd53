"""Registered functions that let spaCy's built-in ``entity_linker`` use an ``ElKnowledgeBase``.

Config for spaCy's entity_linker::

    [components.entity_linker]
    factory = "entity_linker"
    generate_empty_kb = {"@misc": "spacy-el.EmptyKB.v1"}
    get_candidates = {"@misc": "spacy-el.CandidateGenerator.v1", "top_k": 30}

    [initialize.components.entity_linker.kb_loader]
    @misc = "spacy-el.KBFromDisk.v1"
    path = "kb/demo"
"""
from pathlib import Path
from typing import Callable, Iterable, List, Optional

from spacy.kb import Candidate, KnowledgeBase
from spacy.tokens import Span
from spacy.util import registry
from spacy.vocab import Vocab

from .errors import KBErrors
from .knowledge_base import ElKnowledgeBase


@registry.misc("spacy-el.KBFromDisk.v1")
def kb_from_disk(path: Path, mmap: bool = False, verify: bool = True) -> Callable[[Vocab], ElKnowledgeBase]:
    """Load a spacy_el KB directory for a pipeline's vocab (use as ``kb_loader`` in [initialize])."""

    def load(vocab: Vocab) -> ElKnowledgeBase:
        return ElKnowledgeBase.load(path, vocab, mmap=mmap, verify=verify)

    return load


@registry.misc("spacy-el.EmptyKB.v1")
def empty_kb() -> Callable[[Vocab, int], ElKnowledgeBase]:
    """An empty KB that ``from_disk``/``from_bytes`` fill when a trained pipeline is loaded
    (use as the entity_linker's ``generate_empty_kb``)."""

    def create(vocab: Vocab, entity_vector_length: int) -> ElKnowledgeBase:
        return ElKnowledgeBase(vocab, entity_vector_length)

    return create


def check_el_kb(kb: KnowledgeBase, user: str = "spacy-el.CandidateGenerator.v1") -> ElKnowledgeBase:
    """``kb`` as an ``ElKnowledgeBase``, or an error telling spaCy's entity_linker user (``user``, the
    registered function that needs it) how to configure one."""
    if not isinstance(kb, ElKnowledgeBase):
        raise ValueError(KBErrors.E174.format(user=user, kb_type=type(kb).__name__))
    return kb


@registry.misc("spacy-el.CandidateGenerator.v1")
def candidate_generator(top_k: Optional[int] = None) -> Callable[[KnowledgeBase, Span], List[Candidate]]:
    """spaCy-compatible candidate generator that keeps the ``top_k`` candidates by prior."""

    def get_candidates(kb: KnowledgeBase, mention: Span) -> List[Candidate]:
        return check_el_kb(kb).get_candidates(mention, top_k=top_k)

    return get_candidates


@registry.misc("spacy-el.CandidateBatchGenerator.v1")
def candidate_batch_generator(
    top_k: Optional[int] = None,
) -> Callable[[KnowledgeBase, Iterable[Span]], List[List[Candidate]]]:
    single = candidate_generator(top_k)

    def get_candidates_batch(kb: KnowledgeBase, mentions: Iterable[Span]) -> List[List[Candidate]]:
        return [single(kb, mention) for mention in mentions]

    return get_candidates_batch

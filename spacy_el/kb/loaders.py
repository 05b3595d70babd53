"""Registered functions that give spaCy's built-in ``entity_linker`` an ``ElKnowledgeBase``.

Config for spaCy's entity_linker (its candidates from any spacy_el generator: ``spacy_el.candidates.registry``)::

    [components.entity_linker]
    factory = "entity_linker"
    generate_empty_kb = {"@misc": "spacy-el.EmptyKB.v1"}

    [components.entity_linker.get_candidates]
    @misc = "spacy-el.SpacyCandidates.v1"
    generator = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 30}

    [initialize.components.entity_linker.kb_loader]
    @misc = "spacy-el.KBFromDisk.v1"
    path = "kb/demo"
"""
from pathlib import Path
from typing import Callable

from spacy.util import registry
from spacy.vocab import Vocab

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

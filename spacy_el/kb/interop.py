"""Conversion between ``ElKnowledgeBase`` and spaCy's ``InMemoryLookupKB``."""
from typing import Optional

import numpy as np
from spacy.kb import InMemoryLookupKB
from spacy.vocab import Vocab

from .builder import KBBuilder
from .knowledge_base import ElKnowledgeBase


def from_in_memory_lookup_kb(spacy_kb: InMemoryLookupKB, vocab: Optional[Vocab] = None, fuzzy: bool = True) -> ElKnowledgeBase:
    """Import entities, vectors and aliases (with priors) from a spaCy ``InMemoryLookupKB``.

    spaCy's KB stores no names, descriptions or types, so names default to the entity id and the other
    fields are empty. Entity frequencies are only exposed through candidates, so an entity that no
    alias points to gets frequency 0.
    """
    builder = KBBuilder()
    entity_ids = sorted(spacy_kb.get_entity_strings())
    frequency = {}
    alias_rows = []
    for alias in sorted(spacy_kb.get_alias_strings()):
        candidates = spacy_kb.get_alias_candidates(alias)
        for c in candidates:
            frequency[c.entity_] = c.entity_freq
        alias_rows.append((alias, [c.entity_ for c in candidates], [c.prior_prob for c in candidates]))
    has_vectors = spacy_kb.entity_vector_length > 0
    for entity_id in entity_ids:
        vector = spacy_kb.get_vector(entity_id) if has_vectors else None
        builder.add_entity(entity_id, frequency=frequency.get(entity_id, 0.0), vector=vector)
    for alias, ids, priors in alias_rows:
        builder.add_alias(alias, ids, priors)
    return builder.build(vocab if vocab is not None else spacy_kb.vocab, fuzzy=fuzzy)


def to_in_memory_lookup_kb(kb: ElKnowledgeBase, vocab: Optional[Vocab] = None) -> InMemoryLookupKB:
    """Export to a spaCy ``InMemoryLookupKB`` (entities, frequencies, vectors, aliases with priors).

    spaCy requires an alias's priors to sum to at most 1, so priors that sum to more (possible when
    alias sources were merged with ``on_duplicate="max"``) are divided by their sum. A KB without
    vectors is exported with vectors of length 0. Names, descriptions and types have no place in spaCy's
    KB and are not exported.
    """
    dim = kb.entities.vector_dim
    spacy_kb = InMemoryLookupKB(vocab if vocab is not None else kb.vocab, entity_vector_length=dim)
    vectors = kb.entities.vectors if kb.entities.vectors is not None else np.zeros((kb.n_entities, 0), np.float32)
    spacy_kb.set_entities(
        entity_list=kb.entities.ids.to_list(),
        freq_list=kb.entities.frequencies.tolist(),
        vector_list=[list(v) for v in vectors.tolist()],
    )
    table = kb.aliases
    for row in range(len(table)):
        entity_rows, priors = table.candidates_of(row)
        priors = priors.astype(np.float64)
        if priors.sum() > 1.0:
            priors = priors / priors.sum()
        spacy_kb.add_alias(
            alias=table.aliases[row],
            entities=[kb.entities.ids[int(r)] for r in entity_rows],
            probabilities=priors.tolist(),
        )
    return spacy_kb

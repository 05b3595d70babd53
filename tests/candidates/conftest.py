import pytest
import spacy

from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.build_steps import attach_dense_index, compute_entity_vectors
from spacy_el.kb.encoder import encoder_fingerprint

from ..conftest import build_toy_kb


@pytest.fixture(scope="session")
def nlp():
    return spacy.blank("en")


@pytest.fixture(scope="session")
def minilm_toy_kb() -> ElKnowledgeBase:
    """The toy KB with the packaged MiniLM's vectors of "name. description" and a Flat index (the
    recorded encoder included), as ``kb build --vectors compute --index Flat`` makes them."""
    kb = build_toy_kb()
    kb.set_vectors(compute_entity_vectors(kb, progress=False), encoder=encoder_fingerprint())
    attach_dense_index(kb, "Flat")
    return kb


@pytest.fixture(scope="session")
def minilm_encoder():
    from spacy_el.candidates.mention_encoder import MentionEncoder

    return MentionEncoder.from_base()


def span_of(nlp, text: str, mention: str):
    """The first occurrence of ``mention`` in ``text`` as a Span of a new doc."""
    doc = nlp(text)
    start = text.index(mention)
    span = doc.char_span(start, start + len(mention))
    assert span is not None, (text, mention)
    return span


@pytest.fixture(scope="session")
def tiny_mention_encoder(tiny_encoder):
    """An untrained mention encoder over the 1-layer test BERT (32-d): fast, for the structural tests."""
    from spacy_el.candidates.mention_encoder import MentionEncoder

    return MentionEncoder.from_base(tiny_encoder)


@pytest.fixture
def tiny_toy_kb(tiny_encoder) -> ElKnowledgeBase:
    """The toy KB with the test BERT's 32-d vectors, their encoder recorded, and a Flat index."""
    kb = build_toy_kb()
    kb.set_vectors(compute_entity_vectors(kb, encoder=tiny_encoder, progress=False), encoder=encoder_fingerprint(tiny_encoder))
    attach_dense_index(kb, "Flat")
    return kb

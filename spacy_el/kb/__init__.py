"""The shared knowledge base: entity store, alias table with priors, dense index, spaCy interop."""
from .alias_table import CandidateHit
from .builder import KBBuilder
from .knowledge_base import ElKnowledgeBase, EntityInfo, LookupSettings, Match
from .normalize import normalize_alias
from .serialization import KBFormatError

__all__ = [
    "CandidateHit",
    "DenseIndex",
    "TextEncoder",
    "entity_text",
    "ElKnowledgeBase",
    "EntityInfo",
    "KBBuilder",
    "KBFormatError",
    "LookupSettings",
    "Match",
    "normalize_alias",
]


def __getattr__(name: str):
    # Imported on first use: dense_index loads faiss (and sets its BLAS threshold process-wide), and
    # encoder loads transformers; neither should be paid by `import spacy_el.kb`.
    if name == "DenseIndex":
        from .dense_index import DenseIndex

        return DenseIndex
    if name in ("TextEncoder", "entity_text"):
        from . import encoder

        return getattr(encoder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

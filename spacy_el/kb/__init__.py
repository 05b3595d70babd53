"""The shared knowledge base: entity store, alias table with priors, dense index, spaCy interop."""
from .alias_table import CandidateHit
from .builder import KBBuilder
from .knowledge_base import ElKnowledgeBase, EntityInfo, LookupSettings
from .normalize import normalize_alias
from .serialization import KBFormatError

__all__ = [
    "CandidateHit",
    "ElKnowledgeBase",
    "EntityInfo",
    "KBBuilder",
    "KBFormatError",
    "LookupSettings",
    "normalize_alias",
]

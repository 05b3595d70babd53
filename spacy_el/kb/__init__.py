"""The shared knowledge base: entity store, alias table with priors, dense index, spaCy interop."""
from importlib import import_module

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

# Each name is imported from its module on first use, so that `import spacy_el.kb` costs nothing:
# ``spacy_el.errors`` (which the pure modules import) reads ``spacy_el.kb.errors`` and must not pull in
# spaCy; dense_index loads faiss (and sets its BLAS threshold process-wide), and encoder transformers.
_MODULE_OF = {
    "CandidateHit": "alias_table",
    "DenseIndex": "dense_index",
    "TextEncoder": "encoder",
    "entity_text": "encoder",
    "ElKnowledgeBase": "knowledge_base",
    "EntityInfo": "knowledge_base",
    "KBBuilder": "builder",
    "KBFormatError": "serialization",
    "LookupSettings": "knowledge_base",
    "Match": "knowledge_base",
    "normalize_alias": "normalize",
}


def __getattr__(name: str):
    if name in _MODULE_OF:
        return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

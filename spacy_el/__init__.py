"""spacy_el: entity linking, NER and coreference components for spaCy.

Importing the package is cheap: heavy modules (torch, faiss, transformers) are imported by the
submodules that need them. spaCy finds the registered functions through the entry points in setup.cfg.
"""
from .about import __version__

__all__ = ["__version__"]

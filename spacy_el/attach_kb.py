"""Moved to :mod:`spacy_el.package.attach_kb`. This re-export goes once tests/pipeline/test_attach_kb.py imports
from there."""
from .package.attach_kb import META_KEY, attach_kb, kb_components

__all__ = ["META_KEY", "attach_kb", "kb_components"]

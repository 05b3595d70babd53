"""Moved: the ``ner_constrained_linker``'s model is :mod:`spacy_el.ml.ner_constrained_linker`.

A temporary alias, kept only while modules this rename could not edit still import the old path
(``tests/kb/test_type_inventory.py``, ``benchmarks/ner_constrained_linker.py``: ``entity_typing``); delete this
folder once they import ``spacy_el.ml.ner_constrained_linker.entity_typing``.
"""
import sys

from ..ner_constrained_linker import entity_typing

sys.modules[f"{__name__}.entity_typing"] = entity_typing  # ``spacy_el.ml.ner4el.entity_typing`` resolves too

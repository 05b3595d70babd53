"""Moved: the mention encoder is in :mod:`spacy_el.candidates.mention_encoder`.

A temporary alias, kept only while modules this move could not edit still import the old path
(``spacy_el/candidates/dense.py``, ``spacy_el/cli/candidates.py``, ``tests/candidates/``,
``benchmarks/candidates.py``); delete this folder once they import ``spacy_el.candidates.mention_encoder``.
"""
import sys

from ...candidates.mention_encoder import MentionEncoder, MentionEncoderModule, inputs, model, runtime, training

for _module in (inputs, model, runtime, training):  # ``spacy_el.ml.mention_encoder.runtime`` etc. resolve too
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module

__all__ = ["MentionEncoder", "MentionEncoderModule"]

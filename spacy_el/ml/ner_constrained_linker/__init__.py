"""NER4EL (Tedeschi et al. 2021), the model of the ``ner_constrained_linker`` component
(``spacy-el.NerConstrainedLinker.v1``).

* ``model``: the Thinc glue (the registered architecture, the lazily built torch layer, numpy predictions).
* ``inputs``: the numpy inputs (marked mention windows, padded candidate arrays, :class:`Ner4elBatch`).
* ``modules``: the PyTorch candidate scorer and mention-typing head.
* ``entity_typing``: the entity-typing classifier that gives every KB entity a type distribution.

The component computes the losses itself (cross-entropy over the candidates and mention typing, in numpy).
"""
from .entity_typing import entity_type_distributions, train_type_classifier
from .inputs import CandidateFeatures, MentionSlot, Ner4elBatch, encode_mentions, make_batch, window_chunks
from .model import build_ner_constrained_linker, build_torch_layer
from .modules import Ner4elScorer

__all__ = [
    "CandidateFeatures", "MentionSlot", "Ner4elBatch", "Ner4elScorer", "build_ner_constrained_linker", "build_torch_layer",
    "encode_mentions", "entity_type_distributions", "make_batch", "train_type_classifier", "window_chunks",
]

"""The Stack-LSTM joint NER + EL model (Martins et al., 2019), the model of the ``ner_stack_lstm`` component
(``spacy-el.NerStackLstm.v1``).

* ``model``: the Thinc glue (the registered architecture: a tok2vec chained with the lazily built torch layer).
* ``inputs``: the numpy inputs (sentence segments, padding, teacher-forcing arrays, :class:`StackLstmBatch`).
* ``modules``: the PyTorch modules (the transition-based parser and linker, and its entry point that
  returns the loss and numpy :class:`StackLstmOutput`).
* ``losses``: ``L_NER + L_EL + L_NIL``.
"""
from .inputs import TASKS, CandidateArrays, Chunk, Segment, StackLstmBatch, gold_actions, pad_segments, segment_doc
from .losses import compute_losses
from .model import build_ner_stack_lstm, build_torch_layer, set_learned_entities
from .modules import GoldActions, StackLstmNerEl, StackLstmOutput, StackLstmSizes

__all__ = [
    "TASKS", "CandidateArrays", "Chunk", "GoldActions", "Segment", "StackLstmBatch", "StackLstmNerEl", "StackLstmOutput",
    "StackLstmSizes", "build_ner_stack_lstm", "build_torch_layer", "compute_losses", "gold_actions", "pad_segments",
    "segment_doc", "set_learned_entities",
]

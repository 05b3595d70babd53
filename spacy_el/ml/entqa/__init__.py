"""EntQA (Zhang et al., ICLR 2022), the models of the ``entity_retriever`` (``spacy-el.EntityRetriever.v1``)
and ``entqa_reader`` (``spacy-el.EntQAReader.v1``) components.

* ``model``: the Thinc glue (the two registered architectures, the lazily built torch layers, numpy predictions).
* ``inputs``: the numpy inputs (question sides, retriever passages, reader (passage, entity) rows, the batches).
* ``modules``: the PyTorch modules (the retriever's passage encoder, the reader's cross-encoder, the
  single-pass joint reader).
* ``losses``: the retriever's multi-label NCE (eq. (1)) and the reader's objective (eq. (2)).
"""
from .inputs import JointReaderArrays, ReaderArrays, ReaderBatch, RetrieverBatch
from .losses import multi_label_nce_loss, reader_loss
from .model import build_entity_retriever, build_entqa_reader, build_torch_layer
from .modules import JointReaderModule, PassageEncoder, ReaderModule

__all__ = [
    "JointReaderArrays", "JointReaderModule", "PassageEncoder", "ReaderArrays", "ReaderBatch", "ReaderModule", "RetrieverBatch", "build_entity_retriever",
    "build_entqa_reader", "build_torch_layer", "multi_label_nce_loss", "reader_loss",
]

"""Thinc-wrapped PyTorch models, one subpackage per model, each split the same way: ``model`` (the Thinc
glue: the registered architecture, the lazily built torch layer, numpy predictions), ``inputs`` (the numpy
inputs and the encoder's tokenizer), ``modules`` (the torch modules), ``losses`` (and ``decoding`` where
the model has its own).

* ``joint_coref_linker``: ``joint_coref_linker`` (``spacy-el.JointCorefLinker.v1``).
* ``ner_stack_lstm``: ``ner_stack_lstm`` (``spacy-el.NerStackLstm.v1``).
* ``ner_constrained_linker``: ``ner_constrained_linker`` (``spacy-el.NerConstrainedLinker.v1``).
* ``entqa``: ``entity_retriever`` and ``entqa_reader`` (``spacy-el.EntityRetriever.v1``, ``spacy-el.EntQAReader.v1``).

Shared: ``autocast`` (the encoders' ``encoder_dtype``), ``torch_io`` (encoders, tokenizers, shims,
safetensors), ``encoder_reference`` (an unchanged encoder saved as its name and weights checksum) and
``thinc_glue`` (the torch layer's forward, the scalar-loss pattern, numpy outputs), ``threads`` (a forked process
computes with one torch thread: spaCy's ``nlp.pipe(n_process=N)`` hung without it).
"""
from .threads import register_fork_handler

register_fork_handler()

"""Resumable training: spaCy's training loop with checkpoints (``python -m spacy_el train``).

:mod:`~spacy_el.training.checkpoint` writes and reads a checkpoint (weights, optimizer state, RNG states, the
loop's position), :mod:`~spacy_el.training.batches` is spaCy's batch stream with a state, and
:mod:`~spacy_el.training.resume` runs spaCy's ``train_while_improving`` with both.
"""
from .checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from .resume import train, train_nlp

__all__ = ["Checkpoint", "read_checkpoint", "write_checkpoint", "train", "train_nlp"]

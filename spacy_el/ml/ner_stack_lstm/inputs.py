"""Numpy inputs of the Stack-LSTM model (the ``ner_stack_lstm`` component): :class:`StackLstmBatch`, sentence
segments, padding, and the teacher-forcing arrays.

No torch here: the torch module (:class:`~spacy_el.ml.ner_stack_lstm.modules.StackLstmForward`) turns these
arrays into tensors.

Segments: the model reads one sentence at a time. A document's sentences come from its sentence
boundaries (``doc.sents`` when set, else the whole document is one sentence) and any sentence
longer than ``max_length`` tokens is cut into pieces of at most ``max_length`` tokens: the step loop
and the attention are linear in the sentence length, but a 50k-token "sentence" must not become
one parser state. In training, cuts never fall inside a gold entity, and sentences that a gold
entity crosses are joined first (a mis-segmented entity stays one chunk).
"""
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc, Span

from ...algorithms.transition_system import OUT, SHIFT, TransitionSystem
from ...errors import Errors

Chunk = Tuple[int, int, str]  # (start, end exclusive, label) in sentence offsets
TASKS = ("joint", "ner", "el")


@dataclass
class Segment:
    """Tokens ``start .. end`` (exclusive) of document ``doc`` in the batch."""

    doc: int
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


def sentence_ranges(doc: Doc) -> List[Tuple[int, int]]:
    """Sentence token ranges: ``doc.sents`` when boundaries are set, else the whole document."""
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        return [(sent.start, sent.end) for sent in doc.sents]
    return [(0, len(doc))]


def segment_doc(doc: Doc, max_length: int, protected: Sequence[Tuple[int, int]] = ()) -> List[Tuple[int, int]]:
    """Token ranges the model reads for ``doc``: sentences joined where a ``protected`` span
    (a gold entity) crosses a boundary, then cut to at most ``max_length`` tokens, never inside a
    protected span unless that span alone is longer than ``max_length``."""
    if max_length < 1:
        raise ValueError(Errors.E922.format(name="max_sentence_length", expected=">= 1", value=max_length))
    inside = np.zeros(len(doc) + 1, dtype=bool)  # inside[i]: a cut before token i would split a span
    for start, end in protected:
        inside[start + 1 : end] = True
    ranges: List[Tuple[int, int]] = []
    for start, end in sentence_ranges(doc):
        if ranges and inside[start]:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    pieces: List[Tuple[int, int]] = []
    for start, end in ranges:
        while end - start > max_length:
            cut = start + max_length
            while cut > start + 1 and inside[cut]:
                cut -= 1
            if inside[cut]:  # one span longer than max_length: cut it rather than loop forever
                cut = start + max_length
            pieces.append((start, cut))
            start = cut
        pieces.append((start, end))
    return pieces


def pad_segments(segments: Sequence[Segment], doc_offsets: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """``(B, L)`` indices into the batch's concatenated token vectors (0 on padding) and ``(B,)`` lengths."""
    lengths = np.asarray([len(s) for s in segments], dtype=np.int64)
    width = int(lengths.max()) if len(segments) else 0
    index = np.zeros((len(segments), width), dtype=np.int64)
    for b, seg in enumerate(segments):
        index[b, : len(seg)] = np.arange(seg.start, seg.end) + doc_offsets[seg.doc]
    return index, lengths


def gold_actions(system: TransitionSystem, chunks: Sequence[Sequence[Chunk]], lengths: np.ndarray) -> Dict[str, np.ndarray]:
    """The teacher-forcing arrays of ``stack_lstm.GoldActions`` for sentences of ``lengths`` with
    gold ``chunks`` (sentence offsets). Gold chunks are numbered in sentence, then position, order."""
    B = len(lengths)
    L = int(lengths.max()) if B else 0
    per_sentence = []
    config_sentence, config_chunk, config_start, config_length = list(range(B)), [-1] * B, [0] * B, [0] * B
    chunk_rows: List[Tuple[int, int, int, int, int, int]] = []
    for b, (n, sentence_chunks) in enumerate(zip(lengths.tolist(), chunks)):
        ordered = sorted(sentence_chunks, key=lambda c: (c[0], c[1]))
        actions = system.oracle_actions(n, ordered)
        steps = []  # (action, buf, config, out_count)
        items: List[int] = []
        buf = stack_length = 0
        chunk_iter = iter(ordered)
        first_config = 0
        for t, action in enumerate(actions):
            config = b if stack_length == 0 else first_config + stack_length - 1
            steps.append((action, buf, config, len(items)))
            if action == SHIFT:
                if stack_length == 0:  # a new chunk starts: register its prefix configurations
                    start, end, _ = next(chunk_iter)
                    first_config = len(config_sentence)
                    for length in range(1, end - start + 1):
                        config_sentence.append(b)
                        config_chunk.append(len(chunk_rows))
                        config_start.append(start)
                        config_length.append(length)
                stack_length += 1
                buf += 1
            elif action == OUT:
                items.append(b * L + buf)
                buf += 1
            else:
                k = len(chunk_rows)
                chunk_rows.append((b, buf - stack_length, buf, action, t, first_config + stack_length - 1))
                items.append(B * L + k)
                stack_length = 0
        per_sentence.append((steps, items))
    T = max((len(steps) for steps, _ in per_sentence), default=0)
    I = max((len(items) for _, items in per_sentence), default=0)
    arrays = {
        "actions": np.full((B, T), -1, dtype=np.int64),
        "buf": np.zeros((B, T), dtype=np.int64),
        "step_config": np.repeat(np.arange(B, dtype=np.int64)[:, None], T, 1),
        "out_count": np.zeros((B, T), dtype=np.int64),
        "items": np.full((B, I), -1, dtype=np.int64),
        "n_items": np.zeros(B, dtype=np.int64),
    }
    for b, (steps, items) in enumerate(per_sentence):
        if steps:
            a, bf, cf, oc = zip(*steps)
            arrays["actions"][b, : len(a)] = a
            arrays["buf"][b, : len(a)] = bf
            arrays["step_config"][b, : len(a)] = cf
            arrays["out_count"][b, : len(a)] = oc
        arrays["items"][b, : len(items)] = items
        arrays["n_items"][b] = len(items)
    for name, values in (("config_sentence", config_sentence), ("config_chunk", config_chunk),
                         ("config_start", config_start), ("config_length", config_length)):
        arrays[name] = np.asarray(values, dtype=np.int64)
    chunk_array = np.asarray(chunk_rows, dtype=np.int64).reshape(-1, 6)
    for i, name in enumerate(("chunk_sentence", "chunk_start", "chunk_end", "chunk_action", "chunk_step", "chunk_config")):
        arrays[name] = np.ascontiguousarray(chunk_array[:, i])
    return arrays


@dataclass
class CandidateArrays:
    """Candidates of ``R`` mentions: rows ``(R, C)`` int64 KB rows (-1 padding), vectors
    ``(R, C, nE)`` float32, priors ``(R, C)`` float32 (0 on padding); dense, has_dense ``(R, C)`` float32:
    the generator's mention-entity similarity and where it gave one (None: it gave none)."""

    rows: np.ndarray
    vectors: np.ndarray
    priors: np.ndarray
    dense: Optional[np.ndarray] = None
    has_dense: Optional[np.ndarray] = None

    def gold_positions(self, gold_rows: Sequence[Optional[int]]) -> np.ndarray:
        """``(R,)`` the position of each gold KB row among its mention's candidates, -1 if absent or None."""
        positions = np.full(len(gold_rows), -1, dtype=np.int64)
        for i, row in enumerate(gold_rows):
            if row is not None:
                hit = np.nonzero(self.rows[i] == row)[0]
                if hit.size:
                    positions[i] = hit[0]
        return positions


#: mention spans -> their candidates
CandidateFn = Callable[[List[Span]], CandidateArrays]


@dataclass
class StackLstmBatch:
    """docs: the documents; segments: what is read as one sentence each; token_index ``(B, L)`` and
    lengths ``(B,)``: see :func:`pad_segments`. gold: the teacher-forcing arrays (training,
    or linking given mentions), None for greedy parsing. gold_candidates, gold_candidate ``(K,)`` and
    linkable ``(K,)``: the gold chunks' candidates, the gold's position among them (-1: none) and
    whether the chunk has a KB entity (training only). candidates: the look-up for predicted chunks
    (None: do not link). tasks: which losses count. use_nil: run the NIL classifier. space: whitespace
    tokens ``(B, L)``, which greedy parsing never starts an entity with. similarity_weight: at prediction, this
    times the generator's similarity joins each candidate's score before the softmax (the component's setting)."""

    docs: List[Doc]
    segments: List[Segment]
    token_index: np.ndarray
    lengths: np.ndarray
    gold: Optional[dict] = None
    gold_candidates: Optional[CandidateArrays] = None
    gold_candidate: Optional[np.ndarray] = None
    linkable: Optional[np.ndarray] = None
    candidates: Optional[CandidateFn] = None
    tasks: str = "joint"
    use_nil: bool = True
    space: Optional[np.ndarray] = None  # (B, L) bool, whitespace tokens (greedy parsing)
    similarity_weight: float = 0.0

    @property
    def with_loss(self) -> bool:
        return self.gold_candidate is not None


__all__ = [
    "Segment", "sentence_ranges", "segment_doc", "pad_segments", "gold_actions", "CandidateArrays", "CandidateFn", "Chunk",
    "StackLstmBatch", "TASKS",
]

"""Numpy inputs of the NER4EL scorer (the ``ner_constrained_linker`` component): marked windows for the
mentions (:func:`encode_mentions`, with the encoder's tokenizer,
:func:`spacy_el.ml.torch_io.tokenizer_of`) and padded candidate
arrays (:func:`make_batch`), in a :class:`Ner4elBatch`."""
from dataclasses import dataclass, replace
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...algorithms.marked_mentions import MentionSlot, marked_windows, wordpiece_ranges
from ...errors import Errors

__all__ = [
    "MARKERS", "CandidateFeatures", "MentionSlot", "Ner4elBatch", "encode_mentions", "make_batch", "marker_ids",
    "window_chunks",
]

MARKERS = ("[unused0]", "[unused1]")


@dataclass
class CandidateFeatures:
    """The scorer's features of one mention's candidates. vectors: (C, E); type_probs: (C, T); log_prior,
    from_alias: (C,); dense: (C,), the candidate generator's mention-entity similarity, NaN where it gave none
    (None: NaN for all)."""

    vectors: np.ndarray
    type_probs: np.ndarray
    log_prior: np.ndarray
    from_alias: np.ndarray
    dense: Optional[np.ndarray] = None


@dataclass
class Ner4elBatch:
    """Everything the scorer needs for M mentions in P windows of length L with at most C candidates.

    input_ids, attention_mask: int64 (P, L). window, marker: int64 (M,). span_weights: float32 (M, L).
    cand_vectors: float32 (M, C, E); cand_type_probs: float32 (M, C, T);
    cand_log_prior, cand_from_alias: float32 (M, C); cand_mask: bool (M, C), False on padding;
    cand_dense: float32 (M, C), the generator's similarity (0 where it gave none); cand_has_dense: float32
    (M, C), 1 where it gave one.
    """

    input_ids: np.ndarray
    attention_mask: np.ndarray
    window: np.ndarray
    marker: np.ndarray
    span_weights: np.ndarray
    cand_vectors: np.ndarray
    cand_type_probs: np.ndarray
    cand_log_prior: np.ndarray
    cand_from_alias: np.ndarray
    cand_mask: np.ndarray
    cand_dense: np.ndarray
    cand_has_dense: np.ndarray

    @property
    def n_mentions(self) -> int:
        return int(self.window.shape[0])


def marker_ids(tokenizer: Any) -> Tuple[int, int]:
    """Ids of the opening and closing mention markers in ``tokenizer``'s vocabulary: BERT's unused
    :data:`MARKERS`; in a vocabulary without them (RoBERTa, DeBERTa), its mask and unknown tokens, two special
    tokens that no text is tokenized into, so the embeddings stay as they are and the markers are learnt."""
    vocab = tokenizer.get_vocab()
    missing = [m for m in MARKERS if m not in vocab]
    if not missing:
        return vocab[MARKERS[0]], vocab[MARKERS[1]]
    fallback = [getattr(tokenizer, name, None) for name in ("mask_token", "unk_token")]
    if all(t is not None and t in vocab for t in fallback) and fallback[0] != fallback[1]:
        return vocab[fallback[0]], vocab[fallback[1]]
    raise ValueError(Errors.E926.format(missing=missing))


def encode_mentions(
    docs: Sequence[Tuple[str, Sequence[Tuple[int, int]]]], tokenizer: Any, max_length: int
) -> Tuple[np.ndarray, np.ndarray, List[MentionSlot]]:
    """Marked windows for the mentions of several documents.

    docs: (text, [(start_char, end_char), ...]) per document.
    RETURNS: input_ids and attention_mask, int64 (P, L) with L the longest window, and one slot per
        mention in input order, with ``window`` indexing the returned rows.
    """
    open_id, close_id = marker_ids(tokenizer)
    rows: List[List[int]] = []
    all_slots: List[MentionSlot] = []
    for text, spans in docs:
        if not spans:
            continue
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets = encoded["offset_mapping"]
        ranges = wordpiece_ranges(offsets, spans)
        windows, slots = marked_windows(
            encoded["input_ids"], ranges, max_length=max_length, cls_id=tokenizer.cls_token_id,
            sep_id=tokenizer.sep_token_id, open_id=open_id, close_id=close_id,
        )
        for slot in slots:
            slot.window += len(rows)
        rows.extend(w.input_ids for w in windows)
        all_slots.extend(slots)
    length = max((len(r) for r in rows), default=0)
    input_ids = np.full((len(rows), length), tokenizer.pad_token_id, dtype=np.int64)
    attention_mask = np.zeros((len(rows), length), dtype=np.int64)
    for i, ids in enumerate(rows):
        input_ids[i, : len(ids)] = ids
        attention_mask[i, : len(ids)] = 1
    return input_ids, attention_mask, all_slots


def window_chunks(
    slots: Sequence[MentionSlot], n_windows: int, size: int
) -> Iterator[Tuple[slice, np.ndarray, List[MentionSlot]]]:
    """Split the mentions of ``encode_mentions`` into chunks of at most ``size`` consecutive windows, so
    that a long document is scored a bounded number of windows at a time (every mention lies in one window).

    slots: one per mention (``window`` indexing rows 0..n_windows-1).
    RETURNS per chunk with mentions: its rows of input_ids/attention_mask, the indices (into ``slots``,
        int64 (m,), in input order) of its mentions, and their slots with ``window`` relative to the chunk.
    """
    if size < 1:
        raise ValueError(Errors.E922.format(name="the chunk size", expected=">= 1", value=size))
    windows = np.fromiter((s.window for s in slots), dtype=np.int64, count=len(slots))
    for lo in range(0, n_windows, size):
        members = np.flatnonzero((windows >= lo) & (windows < lo + size))
        if len(members):
            yield slice(lo, lo + size), members, [replace(slots[i], window=slots[i].window - lo) for i in members]


def make_batch(
    input_ids: np.ndarray,
    attention_mask: np.ndarray,
    slots: Sequence[MentionSlot],
    candidates: Sequence[CandidateFeatures],
    entity_dim: int,
    n_types: int,
) -> Ner4elBatch:
    """Pad the candidates of each mention (``slots[i]`` and ``candidates[i]`` describe mention i)."""
    m = len(slots)
    length = input_ids.shape[1]
    c = max((len(cands.log_prior) for cands in candidates), default=0)
    c = max(c, 1)  # keep a candidate axis even when no mention has candidates
    batch = Ner4elBatch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        window=np.fromiter((s.window for s in slots), dtype=np.int64, count=m),
        marker=np.fromiter((s.marker for s in slots), dtype=np.int64, count=m),
        span_weights=np.zeros((m, length), dtype=np.float32),
        cand_vectors=np.zeros((m, c, entity_dim), dtype=np.float32),
        cand_type_probs=np.zeros((m, c, n_types), dtype=np.float32),
        cand_log_prior=np.zeros((m, c), dtype=np.float32),
        cand_from_alias=np.zeros((m, c), dtype=np.float32),
        cand_mask=np.zeros((m, c), dtype=bool),
        cand_dense=np.zeros((m, c), dtype=np.float32),
        cand_has_dense=np.zeros((m, c), dtype=np.float32),
    )
    for i, (slot, cands) in enumerate(zip(slots, candidates)):
        batch.span_weights[i, slot.start : slot.end] = 1.0 / (slot.end - slot.start)
        k = len(cands.log_prior)
        batch.cand_vectors[i, :k] = cands.vectors
        batch.cand_type_probs[i, :k] = cands.type_probs
        batch.cand_log_prior[i, :k] = cands.log_prior
        batch.cand_from_alias[i, :k] = cands.from_alias
        batch.cand_mask[i, :k] = True
        if cands.dense is not None:
            known = ~np.isnan(cands.dense)
            batch.cand_dense[i, :k] = np.where(known, cands.dense, 0.0)
            batch.cand_has_dense[i, :k] = known
    return batch

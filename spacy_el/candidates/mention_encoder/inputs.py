"""Batched inputs of the mention encoder: the context windows of a batch of mentions as wordpiece tensors.

A mention is given as ``(doc, start, end)`` token offsets. The windows come from
:func:`~spacy_el.algorithms.mention_windows.assign_windows`; each window's text is tokenized once with
character offsets, and a mention's wordpieces are those whose characters overlap its own.
"""
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch

from ...algorithms.mention_windows import assign_windows

#: A mention: its document and its ``(start, end)`` token span there.
Mention = Tuple[Any, int, int]


@dataclass
class MentionBatch:
    """input_ids, attention_mask: int64 (W, T). mention_window: int64 (M,). mention_mask: float32 (M, T)."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    mention_window: torch.Tensor
    mention_mask: torch.Tensor

    def to(self, device: Any) -> "MentionBatch":
        return MentionBatch(*(t.to(device) for t in (self.input_ids, self.attention_mask, self.mention_window, self.mention_mask)))


def mention_batch(
    tokenizer: Any, mentions: Sequence[Mention], window_tokens: int, max_length: int, stride: Optional[int] = None,
) -> MentionBatch:
    """Windows and masks of ``mentions`` (in input order; several documents may be mixed). Each window
    is tokenized once, however many mentions are read in it. stride: see ``assign_windows``."""
    by_doc: Dict[int, List[int]] = {}
    docs: Dict[int, Any] = {}
    for i, (doc, _, _) in enumerate(mentions):
        by_doc.setdefault(id(doc), []).append(i)
        docs[id(doc)] = doc
    texts: List[str] = []
    window_chars: List[int] = []  # character offset of each window in its doc
    mention_window = np.zeros(len(mentions), dtype=np.int64)
    mention_chars: List[Tuple[int, int]] = [(0, 0)] * len(mentions)  # relative to the window's first character
    for key, indices in by_doc.items():
        doc = docs[key]
        spans = [(mentions[i][1], mentions[i][2]) for i in indices]
        windows, assignment = assign_windows(len(doc), spans, window_tokens, stride)
        first = len(texts)
        for start, end in windows:
            span = doc[start:end]
            texts.append(span.text)
            window_chars.append(span.start_char)
        for i, w in zip(indices, assignment):
            mention_window[i] = first + w
            span = doc[mentions[i][1] : mentions[i][2]]
            offset = window_chars[first + w]
            mention_chars[i] = (span.start_char - offset, span.end_char - offset)
    encoded = tokenizer(
        texts or [""], padding=True, truncation=True, max_length=max_length, return_offsets_mapping=True,
        return_tensors="np",
    )
    offsets = encoded["offset_mapping"]  # (W, T, 2); special tokens and padding are (0, 0)
    n_tokens = offsets.shape[1]
    mask = np.zeros((len(mentions), n_tokens), dtype=np.float32)
    for i, (start, end) in enumerate(mention_chars):
        piece_start, piece_end = offsets[mention_window[i], :, 0], offsets[mention_window[i], :, 1]
        mask[i] = (piece_end > piece_start) & (piece_start < end) & (piece_end > start)
    return MentionBatch(
        input_ids=torch.from_numpy(encoded["input_ids"].astype(np.int64)),
        attention_mask=torch.from_numpy(encoded["attention_mask"].astype(np.int64)),
        mention_window=torch.from_numpy(mention_window),
        mention_mask=torch.from_numpy(mask),
    )


def window_batches(batch: MentionBatch, windows_per_batch: int) -> Iterator[Tuple[np.ndarray, MentionBatch]]:
    """``batch`` cut into forward passes of at most ``windows_per_batch`` windows, grouped by length so
    that little padding is computed: windows sorted by their number of wordpieces, each pass cut to its
    longest window. Yields ``(mention_indices, sub_batch)``: the positions in ``batch`` of the mentions
    read in that pass (every mention is in exactly one) and the pass's tensors."""
    lengths = batch.attention_mask.sum(dim=1)  # (W,)
    order = torch.argsort(lengths, stable=True)
    window_of_mention = batch.mention_window
    for first in range(0, len(order), windows_per_batch):
        windows = order[first : first + windows_per_batch]  # (w,)
        width = max(int(lengths[windows].max()), 1)
        new_index = torch.full((len(order),), -1, dtype=torch.int64)
        new_index[windows] = torch.arange(len(windows))
        mentions = torch.nonzero(new_index[window_of_mention] >= 0).squeeze(1)  # (m,)
        if not len(mentions):
            continue
        yield mentions.numpy(), MentionBatch(
            input_ids=batch.input_ids[windows, :width],
            attention_mask=batch.attention_mask[windows, :width],
            mention_window=new_index[window_of_mention[mentions]],
            mention_mask=batch.mention_mask[mentions, :width],
        )


def truncated_mentions(batch: MentionBatch) -> np.ndarray:
    """bool (M,): mentions none of whose wordpieces survived the window's truncation (or with no
    wordpieces at all, e.g. whitespace): their vector would be the window's alone."""
    return batch.mention_mask.sum(dim=1).numpy() == 0


__all__ = ["Mention", "MentionBatch", "mention_batch", "window_batches", "truncated_mentions"]

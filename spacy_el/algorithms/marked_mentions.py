"""Context windows with marked mentions, for encoding many mentions of a document in few passes.

NER4EL's scorer encodes "left context, marked mention, right context". Encoding one window per
mention costs a transformer pass per mention, which a CPU cannot afford at hundreds of mentions per
second. Instead, the document's wordpieces are cut into windows of at most ``max_length`` pieces,
each holding as many consecutive mentions as fit with their context, and every mention inside a
window is wrapped in marker pieces (``[unused0]`` before, ``[unused1]`` after in BERT vocabularies):

    [CLS] ... left context [M] mention one [/M] middle [M] mention two [/M] right context ... [SEP]

Each mention is thus marked in its own context, and one pass encodes all the mentions of a window.
Nested or overlapping mentions are allowed (their markers interleave).

Pure Python + numpy: wordpieces are given as character offsets from a fast tokenizer.
"""
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

import numpy as np

from ..errors import Errors

__all__ = ["MarkedWindow", "MentionSlot", "wordpiece_range", "wordpiece_ranges", "marked_windows"]


@dataclass
class MentionSlot:
    """Where one mention sits in its window (positions index ``MarkedWindow.input_ids``).

    window: index of the window; marker: position of the opening marker;
    start, end: positions of the mention's first wordpiece and one past its last (``end > start``).
    """

    window: int
    marker: int
    start: int
    end: int


@dataclass
class MarkedWindow:
    input_ids: List[int] = field(default_factory=list)


def wordpiece_range(offsets: Sequence[Tuple[int, int]], start_char: int, end_char: int) -> Tuple[int, int]:
    """[first, last + 1) of the wordpieces overlapping the character span [start_char, end_char).

    offsets: (start, end) character offsets of the document's wordpieces, in order.
    A span that overlaps no wordpiece (characters the tokenizer drops) gets the first wordpiece at
    or after it, so every mention keeps a position; an empty document gives (0, 0).
    """
    return wordpiece_ranges(offsets, [(start_char, end_char)])[0]


def wordpiece_ranges(
    offsets: Sequence[Tuple[int, int]], spans: Sequence[Tuple[int, int]]
) -> List[Tuple[int, int]]:
    """:func:`wordpiece_range` of every character span in ``spans``, with the offsets read once: a
    document's mentions cost one pass over its wordpieces, not one pass each (which made long
    documents quadratic)."""
    n = len(offsets)
    if n == 0:
        return [(0, 0)] * len(spans)
    starts = np.fromiter((s for s, _ in offsets), dtype=np.int64, count=n)
    ends = np.fromiter((e for _, e in offsets), dtype=np.int64, count=n)
    span_starts = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
    span_ends = np.fromiter((e for _, e in spans), dtype=np.int64, count=len(spans))
    firsts = np.searchsorted(ends, span_starts, side="right")
    lasts = np.searchsorted(starts, span_ends, side="left")
    ranges = []
    for first, last in zip(firsts.tolist(), lasts.tolist()):
        if first >= last:
            first = min(first, n - 1)
            last = first + 1
        ranges.append((first, last))
    return ranges


def marked_windows(
    piece_ids: Sequence[int],
    mention_ranges: Sequence[Tuple[int, int]],
    *,
    max_length: int,
    cls_id: int,
    sep_id: int,
    open_id: int,
    close_id: int,
) -> Tuple[List[MarkedWindow], List[MentionSlot]]:
    """Pack mentions into marked windows of at most ``max_length`` ids ([CLS] and [SEP] included).

    piece_ids: the document's wordpiece ids (no special tokens).
    mention_ranges: [first, end) wordpiece range of each mention (see ``wordpiece_range``).
    RETURNS: the windows and one slot per mention, in the order of ``mention_ranges``. A mention
        longer than a window is cut to its first ``max_length - 4`` wordpieces. Mentions are
        grouped in order of their first wordpiece; a window's context is split evenly around its
        mentions, the rest of the budget going right.
    """
    if max_length < 5:
        raise ValueError(Errors.E005.format(max_length=max_length))
    n = len(piece_ids)
    if n == 0:
        # Nothing to encode (the tokenizer kept no piece): every mention is represented by a bare
        # marker pair, so callers still get one slot per mention.
        window = MarkedWindow([cls_id, open_id, close_id, sep_id])
        return ([window] if mention_ranges else []), [MentionSlot(0, 1, 1, 2) for _ in mention_ranges]
    budget = max_length - 2  # without [CLS] and [SEP]
    order = sorted(range(len(mention_ranges)), key=lambda i: (mention_ranges[i][0], -mention_ranges[i][1]))
    ranges = [(s, min(e, s + budget - 2)) for s, e in mention_ranges]
    windows: List[MarkedWindow] = []
    slots: List[MentionSlot] = [MentionSlot(0, 0, 0, 0) for _ in mention_ranges]
    i = 0
    while i < len(order):
        group = [order[i]]
        lo, hi = ranges[order[i]]
        j = i + 1
        while j < len(order):
            s, e = ranges[order[j]]
            if max(hi, e) - lo + 2 * (len(group) + 1) > budget:
                break
            group.append(order[j])
            hi = max(hi, e)
            j += 1
        free = budget - 2 * len(group) - (hi - lo)
        left = min(lo, free // 2)
        right = min(n - hi, free - left)
        left = min(lo, free - right)  # a document end on the right gives its budget to the left
        _fill_window(windows, slots, piece_ids, ranges, group, lo - left, hi + right, cls_id, sep_id, open_id, close_id)
        i = j
    return windows, slots


def _fill_window(
    windows: List[MarkedWindow],
    slots: List[MentionSlot],
    piece_ids: Sequence[int],
    ranges: Sequence[Tuple[int, int]],
    group: Sequence[int],
    start: int,
    end: int,
    cls_id: int,
    sep_id: int,
    open_id: int,
    close_id: int,
) -> None:
    """Write pieces [start, end) with the group's markers as a new window and fill the slots."""
    window_index = len(windows)
    opens = {}
    closes = {}
    for m in group:
        s, e = ranges[m]
        opens.setdefault(s, []).append(m)
        closes.setdefault(e - 1, []).append(m)
    ids = [cls_id]
    for p in range(start, end):
        for m in opens.get(p, ()):
            slots[m] = MentionSlot(window_index, len(ids), len(ids) + 1, 0)
            ids.append(open_id)
        # Mentions opening here start after all the markers of this position.
        for m in opens.get(p, ()):
            slots[m].start = len(ids)
        ids.append(int(piece_ids[p]))
        for m in closes.get(p, ()):
            slots[m].end = len(ids)
        for _ in closes.get(p, ()):
            ids.append(close_id)
    ids.append(sep_id)
    windows.append(MarkedWindow(ids))

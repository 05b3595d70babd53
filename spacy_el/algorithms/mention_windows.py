"""Context windows for encoding many mentions of a document with few encoder passes.

A dense mention encoder reads each mention in its context. Encoding one window per mention costs one
transformer pass per mention; here the document is cut into windows of ``window`` tokens, every
``stride`` tokens, and each mention is read in the window where it sits most centrally, so one pass
serves every mention of its window. A mention that fits no grid window (it crosses a boundary, or is
longer than the overlap) gets a window of its own, centred on it.

The stride trades context for work: ``window // 2`` (the default) reads every token twice and gives
each mention at least a quarter window of context on both sides; ``stride = window`` reads every token
once, and a mention near a boundary sees context on one side only.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import Errors

Span = Tuple[int, int]


def grid_windows(n_tokens: int, window: int, stride: Optional[int] = None) -> List[Span]:
    """``(start, end)`` token windows covering ``n_tokens`` tokens, one every ``stride`` tokens
    (None: ``window // 2``).

    The last window ends at ``n_tokens``; a document shorter than ``window`` is one window.
    """
    stride = check_window(window, stride)
    if n_tokens <= window:
        return [(0, n_tokens)]
    starts = list(range(0, n_tokens - window, stride)) + [n_tokens - window]
    return [(start, start + window) for start in starts]


def check_window(window: int, stride: Optional[int] = None) -> int:
    """The stride of ``window``-token windows (None: half a window), after checking both."""
    if window < 2:
        raise ValueError(Errors.E006.format(window=window))
    stride = window // 2 if stride is None else int(stride)
    if not 1 <= stride <= window:
        raise ValueError(Errors.E007.format(window=window, stride=stride))
    return stride


def assign_windows(
    n_tokens: int, mentions: Sequence[Span], window: int, stride: Optional[int] = None,
) -> Tuple[List[Span], List[int]]:
    """The windows to encode and, per mention, the index of the window it is read in.

    mentions: ``(start, end)`` token spans, ``0 <= start < end <= n_tokens``. RETURNS ``(windows,
    assignment)``: only windows that hold at least one mention, in document order (own windows of
    long mentions after the grid ones), and ``assignment[i]`` indexes ``windows``.
    """
    grid = grid_windows(n_tokens, window, stride)
    for start, end in mentions:
        if not 0 <= start < end <= n_tokens:
            raise ValueError(Errors.E008.format(start=start, end=end, n_tokens=n_tokens))
    central, _ = most_central_windows(grid, np.asarray(mentions, dtype=np.int64).reshape(-1, 2))
    chosen: Dict[Span, int] = {}
    windows: List[Span] = []
    assignment: List[int] = []
    for (start, end), which in zip(mentions, central.tolist()):
        best = grid[which] if which >= 0 else None
        if best is None:
            pad = max(0, (window - (end - start)) // 2)
            best = (max(0, start - pad), min(n_tokens, end + pad))
        if best not in chosen:
            chosen[best] = len(windows)
            windows.append(best)
        assignment.append(chosen[best])
    order = sorted(range(len(windows)), key=lambda i: windows[i])
    new_index = {old: new for new, old in enumerate(order)}
    return [windows[i] for i in order], [new_index[a] for a in assignment]


def most_central_windows(
    windows: Sequence[Span], spans: np.ndarray, n_total: Optional[int] = None,
) -> Tuple[np.ndarray, np.ndarray]:
    """For every span, the window that contains it with the most context on its shorter side, vectorised.

    The margin of span ``[s, e)`` in window ``[ws, we)`` is ``min(s - ws, we - e)``; the window with the largest
    margin wins, the first of equals (the earlier window). With ``n_total`` (the length of the whole sequence),
    a window edge at ``0`` or at ``n_total`` counts as infinitely far: a span there has all the context there is
    on that side (the rule of the ``joint_coref_linker`` encoder's wordpieces); without it every edge counts.

    Args:
        windows: ``(start, end)`` windows (end exclusive), starts ascending and ends non-decreasing (a grid).
        spans: int ``(N, 2)`` ``(start, end exclusive)`` spans.
        n_total: the sequence length for the edge rule, or None (no edge rule).

    Returns:
        ``(which, margin)``: int64 ``(N,)`` index into ``windows`` (``-1`` where no window contains the span) and
        float64 ``(N,)`` margins (``inf`` under the edge rule, ``-1`` where none contains it).
    """
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    which = np.full(len(spans), -1, dtype=np.int64)
    best = np.full(len(spans), -1.0)
    if not len(windows) or not len(spans):
        return which, best
    grid = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
    starts, ends = grid[:, 0], grid[:, 1]
    longest = int((ends - starts).max())
    # Only windows starting in [e - longest, s] can contain [s, e): a few per span, looked at side by side.
    first = np.searchsorted(starts, spans[:, 1] - longest, side="left")
    last = np.searchsorted(starts, spans[:, 0], side="right")
    for k in range(int((last - first).max(initial=0))):
        index = first + k
        live = index < last
        w = np.minimum(index, len(grid) - 1)
        left = (spans[:, 0] - starts[w]).astype(np.float64)
        right = (ends[w] - spans[:, 1]).astype(np.float64)
        if n_total is not None:
            left[starts[w] == 0] = np.inf
            right[ends[w] == n_total] = np.inf
        margin = np.minimum(left, right)
        better = live & (left >= 0) & (right >= 0) & (margin > best)  # strict: the earlier of equals stays
        which[better], best[better] = index[better], margin[better]
    return which, best


__all__ = ["grid_windows", "assign_windows", "check_window", "most_central_windows"]

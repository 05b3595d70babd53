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
from bisect import bisect_left, bisect_right
from typing import Dict, List, Optional, Sequence, Tuple

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
    grid_starts = [w_start for w_start, _ in grid]
    chosen: Dict[Span, int] = {}
    windows: List[Span] = []
    assignment: List[int] = []
    for start, end in mentions:
        if not 0 <= start < end <= n_tokens:
            raise ValueError(Errors.E008.format(start=start, end=end, n_tokens=n_tokens))
        best = _most_central(grid, grid_starts, window, start, end)
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


def _most_central(
    grid: Sequence[Span], grid_starts: Sequence[int], window: int, start: int, end: int,
) -> "Span | None":
    """The grid window that contains ``[start, end)`` with the most context on its shorter side (the
    first of equals). grid_starts: the windows' starts, ascending; no window is longer than ``window``
    tokens, so only those starting in ``[end - window, start]`` can contain the mention and are looked at."""
    first, last = bisect_left(grid_starts, end - window), bisect_right(grid_starts, start)
    best, best_margin = None, -1
    for w_start, w_end in grid[first:last]:
        if w_start <= start and end <= w_end:
            margin = min(start - w_start, w_end - end)
            if margin > best_margin:
                best, best_margin = (w_start, w_end), margin
    return best


__all__ = ["grid_windows", "assign_windows", "check_window"]

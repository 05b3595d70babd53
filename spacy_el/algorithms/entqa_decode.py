"""EntQA inference (Zhang et al. 2022, section 2.3), pure numpy.

For one passage with ``K`` candidates:

1. ``p_rerank(e_k)``: softmax of the rerank logits over the ``K`` candidates;
2. for each candidate, ``p_span(s, t) = p_start(s) * p_end(t)`` (softmax over the allowed positions,
   ``[CLS]`` = position 0 included); the ``P`` most probable spans with ``1 <= s <= t < s + max_length``;
3. spans less probable than the "no mention" span ``(0, 0)`` are dropped;
4. ``(s, t, e_k)`` is kept when ``p_rerank(e_k) * p_span(s, t) > threshold`` (γ).

:func:`merge_predictions` then unites the passages of a document (the same mention and entity found
in two overlapping passages is kept once, with its best score) and :func:`best_non_overlapping` picks
the spans for ``doc.ents``.
"""
from bisect import bisect_left
from typing import Dict, List, Sequence, Tuple

import numpy as np

from ..errors import Errors

__all__ = ["SpanPrediction", "log_softmax", "passage_predictions", "merge_predictions", "best_non_overlapping"]

# (first wordpiece position s, last position t, candidate column k, score)
SpanPrediction = Tuple[int, int, int, float]


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=axis, keepdims=True))


def passage_predictions(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    rerank_logits: np.ndarray,
    span_mask: np.ndarray,
    candidate_mask: np.ndarray,
    top_p: int,
    max_length: int,
    threshold: float,
) -> List[SpanPrediction]:
    """Predictions of one passage.

    start_logits / end_logits: ``[K, T]``; rerank_logits: ``[K]``; span_mask: ``[K, T]`` bool, True on
    positions a mention may start/end on (never 0); candidate_mask: ``[K]`` bool.
    top_p: ``P`` spans per candidate; max_length: longest span in positions; threshold: γ.
    RETURNS: ``(s, t, k, p_rerank * p_span)`` with positions as in the inputs.
    """
    if top_p < 1 or max_length < 1:
        raise ValueError(Errors.E037.format(top_p=top_p, max_length=max_length))
    valid = candidate_mask.astype(bool)
    if not valid.any():
        return []
    rerank = np.where(valid, rerank_logits, -np.inf)
    log_rerank = log_softmax(rerank)
    allowed = span_mask.astype(bool).copy()
    allowed[:, 0] = True
    log_start = log_softmax(np.where(allowed, start_logits, -np.inf), axis=1)
    log_end = log_softmax(np.where(allowed, end_logits, -np.inf), axis=1)
    length = start_logits.shape[1]
    # Span scores [K, T, W]: start s, width w (t = s + w), -inf where the span is not allowed.
    offsets = np.arange(max_length)
    ends = np.arange(length)[:, None] + offsets[None, :]  # [T, W]
    in_range = ends < length
    ends_c = np.minimum(ends, length - 1)
    span_lp = log_start[:, :, None] + log_end[:, ends_c]  # [K, T, W]
    ok = allowed[:, :, None] & allowed[:, ends_c] & in_range[None] & span_mask.astype(bool)[:, :, None]
    span_lp = np.where(ok, span_lp, -np.inf)
    null_lp = log_start[:, 0] + log_end[:, 0]  # [K]
    log_gamma = np.log(threshold) if threshold > 0 else -np.inf
    out: List[SpanPrediction] = []
    flat = span_lp.reshape(span_lp.shape[0], -1)
    p = min(top_p, flat.shape[1])
    for k in np.nonzero(valid)[0]:
        best = np.argpartition(-flat[k], p - 1)[:p]
        for index in best[np.argsort(-flat[k][best], kind="stable")]:
            lp = flat[k, index]
            if not np.isfinite(lp) or lp < null_lp[k]:
                continue
            score = lp + log_rerank[k]
            if score <= log_gamma:
                continue
            s, w = divmod(int(index), max_length)
            out.append((s, s + w, int(k), float(np.exp(score))))
    return out


def merge_predictions(predictions: Sequence[Tuple[int, int, str, float]]) -> List[Tuple[int, int, str, float]]:
    """``(start_char, end_char, kb_id, score)`` from all passages -> one per (span, entity), best score
    kept, sorted by position then descending score."""
    best: Dict[Tuple[int, int, str], float] = {}
    for start, end, kb_id, score in predictions:
        key = (start, end, kb_id)
        if score > best.get(key, -1.0):
            best[key] = score
    return sorted(((s, e, k, v) for (s, e, k), v in best.items()), key=lambda x: (x[0], x[1], -x[3], x[2]))


def best_non_overlapping(predictions: Sequence[Tuple[int, int, str, float]]) -> List[Tuple[int, int, str, float]]:
    """Greedy by descending score: each prediction is kept unless it overlaps one already kept (one
    entity per span). Ties go to the earlier, then longer span. RETURNS: the kept ones by position.

    The kept spans are disjoint, so sorted by start their ends are sorted too: one bisection finds the
    only kept span that can overlap a new one (the last that starts before it ends), and a document's
    predictions cost O(n log n), not O(n^2) (a 20,000-token document has tens of thousands of them).
    An empty span (``start >= end``, which the reader never gives) overlaps a kept span that strictly
    contains its position, as before; it is checked against every kept span."""
    order = sorted(predictions, key=lambda x: (-x[3], x[0], -(x[1] - x[0]), x[2]))
    kept: List[Tuple[int, int, str, float]] = []
    starts: List[int] = []  # of the kept non-empty spans, sorted
    spans: List[Tuple[int, int]] = []  # (start, end) of the kept non-empty spans, by start
    empty: List[Tuple[int, int]] = []  # kept empty spans
    for pred in order:
        start, end = pred[0], pred[1]
        if start >= end:
            if any(s < start < e for s, e in spans) or any(start < s < end for s, _ in empty):
                continue
            empty.append((start, end))
            kept.append(pred)
            continue
        i = bisect_left(starts, end)  # kept spans [0, i) start before this one ends
        if i and spans[i - 1][1] > start:
            continue
        if any(start < s < end for s, _ in empty):
            continue
        starts.insert(i, start)
        spans.insert(i, (start, end))
        kept.append(pred)
    return sorted(kept, key=lambda x: (x[0], x[1]))

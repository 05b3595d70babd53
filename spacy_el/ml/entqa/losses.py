"""Training objectives of EntQA (Zhang et al., ICLR 2022), eqs. (1) and (2): the losses of the
``entity_retriever`` and ``entqa_reader`` components.

* :func:`multi_label_nce_loss` -- the retriever's multi-label NCE, eq. (1): every gold entity of a
  passage is its own NCE instance whose normaliser contains the gold score and the *negatives
  only* (the other gold entities of the passage are excluded).
* :func:`reader_loss` / :func:`reader_loss_terms` -- the reader's objective, eq. (2): each
  candidate's start/end distributions are trained to its gold mention spans, or to the ``[CLS]``
  span (position 0, the paper's 1-based ``(1, 1)``) when the candidate is not in the passage,
  plus the rerank log-probabilities of the gold candidates under one softmax over the K
  candidates.

All functions return *losses* (negated log-likelihoods, ``>= 0``) and work in log space
(``logsumexp`` / ``log_softmax``), so logits of magnitude ``1e4`` neither overflow nor produce
NaN gradients; masked entries are replaced *before* the log-space reductions (a ``-inf`` that
survives into an unused ``torch.where`` branch still poisons the gradient with ``0 * inf``).
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch
from torch import Tensor

from ...errors import Errors

__all__ = ["multi_label_nce_loss", "reader_loss", "reader_loss_terms", "Span"]

Span = Tuple[int, int]
_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(Errors.E021.format(what="reduction", name=reduction, known=_REDUCTIONS))


def multi_label_nce_loss(
    scores: Tensor,
    gold_mask: Tensor,
    candidate_mask: Optional[Tensor] = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label NCE loss of the EntQA retriever, eq. (1), negated.

    For passage ``b`` with gold set ``G_b`` and negatives ``N_b`` (valid non-gold candidates)::

        loss_b = sum_{g in G_b} -log( exp(s_bg) / (exp(s_bg) + sum_{n in N_b} exp(s_bn)) )
               = sum_{g in G_b} [ logaddexp(s_bg, logsumexp_{n in N_b} s_bn) - s_bg ]

    Args:
        scores: ``[B, C]`` retrieval scores ``score_retr(p_b, x, e_c)`` of the ``C = G + N``
            candidates of each passage (gold and negatives in any order).
        gold_mask: ``[B, C]`` bool, True where candidate ``c`` is a gold entity of passage ``b``.
        candidate_mask: optional ``[B, C]`` bool, False for padding candidates (ignored both as
            gold and as negatives). Default: all valid.
        reduction: ``"mean"`` (default) -- average over all gold terms of the batch (the number
            of valid gold ``(b, g)`` pairs), so passages with many gold entities weigh more,
            exactly as the per-example objective sums its ``|E(p)|`` NCE instances; passages
            without gold contribute 0 and do not count. ``"sum"`` -- sum over all gold terms
            (eq. (1) summed over the batch). ``"none"`` -- ``[B]`` per-passage sums (0 for
            passages without gold).

    Returns:
        A scalar (``"mean"``/``"sum"``) or ``[B]`` (``"none"``) tensor, ``>= 0``. With no gold
        term at all the result is ``0`` and still attached to the graph (zero gradient).
    """
    _check_reduction(reduction)
    if scores.dim() != 2 or gold_mask.shape != scores.shape:
        raise ValueError(Errors.E922.format(name="scores and gold_mask", expected="[B, C] tensors of one shape",
                                            value=f"{tuple(scores.shape)} and {tuple(gold_mask.shape)}"))
    gold = gold_mask.bool()
    if candidate_mask is not None:
        if candidate_mask.shape != scores.shape:
            raise ValueError(Errors.E922.format(name="candidate_mask", expected=f"of the shape of scores {tuple(scores.shape)}",
                                                value=tuple(candidate_mask.shape)))
        valid = candidate_mask.bool()
        gold = gold & valid
    else:
        valid = torch.ones_like(gold)
    negative = valid & ~gold

    # log sum_{n in N_b} exp(s_bn), [B]; -inf for passages without negatives. Rows without any
    # negative are computed on zeros and then replaced, so logsumexp never sees an all -inf row
    # (its backward would be exp(-inf - -inf) = NaN).
    has_negative = negative.any(dim=1)
    neg_scores = scores.masked_fill(~negative, float("-inf"))
    neg_scores = torch.where(has_negative.unsqueeze(1), neg_scores, torch.zeros_like(scores))
    lse_negative = torch.logsumexp(neg_scores, dim=1)
    lse_negative = torch.where(has_negative, lse_negative, torch.full_like(lse_negative, float("-inf")))

    # Gold scores, with non-gold entries (possibly -inf padding) replaced by 0 so the unused
    # branch stays finite. The normaliser of gold g is {g} + negatives: other golds excluded.
    gold_scores = torch.where(gold, scores, torch.zeros_like(scores))
    per_term = torch.logaddexp(gold_scores, lse_negative.unsqueeze(1)) - gold_scores  # [B, C]
    per_term = torch.where(gold, per_term, torch.zeros_like(per_term))

    if reduction == "none":
        return per_term.sum(dim=1)
    total = per_term.sum()
    if reduction == "sum":
        return total
    return total / gold.sum().clamp(min=1).to(total.dtype)


def _span_index(
    gold_spans: Sequence[Sequence[Sequence[Span]]], batch: int, k: int, length: int, device: torch.device
) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Pad the ragged gold spans into ``[B, K, M]`` start/end indices plus a validity mask.

    Empty span lists become the single ``[CLS]`` span ``(0, 0)`` (the paper's ``M(p, e) =
    {(1, 1)}`` for an entity absent from the passage). Also returns the ``[B, K]`` bool mask of
    candidates that had gold spans (``e_k in E(p)``).
    """
    if len(gold_spans) != batch or any(len(row) != k for row in gold_spans):
        raise ValueError(Errors.E922.format(name="gold_spans", expected=f"a [B={batch}][K={k}] nested list of span lists",
                                            value=f"{len(gold_spans)} rows of {[len(row) for row in gold_spans][:8]}"))
    width = max([1] + [len(spans) for row in gold_spans for spans in row])
    starts = torch.zeros(batch, k, width, dtype=torch.long)
    ends = torch.zeros(batch, k, width, dtype=torch.long)
    span_valid = torch.zeros(batch, k, width, dtype=torch.bool)
    is_gold = torch.zeros(batch, k, dtype=torch.bool)
    for b, row in enumerate(gold_spans):
        for c, spans in enumerate(row):
            spans = list(spans) or [(0, 0)]
            is_gold[b, c] = spans != [(0, 0)]
            if is_gold[b, c] and any(tuple(span) == (0, 0) for span in spans):
                raise ValueError(Errors.E933.format(c=c, b=b))
            for m, (s, t) in enumerate(spans):
                s, t = int(s), int(t)
                if not 0 <= s <= t < length:
                    raise ValueError(Errors.E934.format(s=s, t=t, b=b, c=c, length=length))
                if (s == 0) != (t == 0):
                    # Half-[CLS] spans are meaningless: (0, 0) means "not in the passage".
                    raise ValueError(Errors.E935.format(s=s, t=t))
                starts[b, c, m], ends[b, c, m], span_valid[b, c, m] = s, t, True
    return starts.to(device), ends.to(device), span_valid.to(device), is_gold.to(device)


def _masked_log_softmax(logits: Tensor, mask: Tensor, dim: int) -> Tensor:
    """``log_softmax`` over ``dim`` with ``mask`` False entries at probability 0.

    Rows that are entirely masked are computed on zeros (finite, uniform) instead of producing
    NaN; callers must ignore them.
    """
    row_ok = mask.any(dim=dim, keepdim=True)
    safe = torch.where(row_ok, logits.masked_fill(~mask, float("-inf")), torch.zeros_like(logits))
    return torch.log_softmax(safe, dim=dim)


def reader_loss_terms(
    start_logits: Tensor,
    end_logits: Tensor,
    rerank_logits: Tensor,
    gold_spans: Sequence[Sequence[Sequence[Span]]],
    token_mask: Optional[Tensor] = None,
    candidate_mask: Optional[Tensor] = None,
    span_reduction: str = "sum",
) -> Tuple[Tensor, Tensor]:
    """Per-candidate negative log-likelihood terms of eq. (2).

    Args:
        start_logits: ``[B, K, T]`` ``w_start^T H^k_i`` for passage ``b``, candidate ``k`` and
            input position ``i``; position 0 is ``[CLS]`` (the "no mention" span).
        end_logits: ``[B, K, T]`` ``w_end^T H^k_i``.
        rerank_logits: ``[B, K]`` ``w_rerank^T H^k_1``.
        gold_spans: ``gold_spans[b][k]`` is the list of gold mention spans ``(s, t)`` (0-based,
            *inclusive*, positions in the reader input, so ``[CLS]`` is 0) of candidate ``k`` in
            passage ``b``; an empty list means the candidate is not a gold entity of the passage
            and is trained to ``(0, 0)``. Candidates with spans are the gold set ``E(p)``.
        token_mask: optional ``[B, K, T]`` bool, False at positions that can never be a span
            boundary (padding, entity-side tokens). Position 0 is always allowed.
        candidate_mask: optional ``[B, K]`` bool, False for padding candidates; they get zero
            loss and are excluded from the rerank softmax.
        span_reduction: how several gold spans of one candidate combine. ``"sum"`` (default, as
            written in eq. (2)): ``sum_{(s,t) in M} -log p_span(s, t)``, every mention is its own
            target. ``"marginal"``: ``-log sum_{(s,t) in M} p_span(s, t)``, the usual
            multi-answer QA marginal likelihood (any one gold mention suffices).

    Returns:
        ``(span_nll, rerank_nll)``, both ``[B, K]`` and ``>= 0``: the span term of every valid
        candidate and the rerank term ``-log p_rerank(e_k | ...)`` of the valid *gold*
        candidates (0 elsewhere).
    """
    if span_reduction not in ("sum", "marginal"):
        raise ValueError(Errors.E021.format(what="span_reduction", name=span_reduction, known=("sum", "marginal")))
    if start_logits.dim() != 3 or end_logits.shape != start_logits.shape:
        raise ValueError(Errors.E922.format(name="start_logits and end_logits", expected="[B, K, T] tensors of one shape",
                                            value=f"{tuple(start_logits.shape)} and {tuple(end_logits.shape)}"))
    batch, k, length = start_logits.shape
    if rerank_logits.shape != (batch, k):
        raise ValueError(Errors.E922.format(name="rerank_logits", expected=f"[B={batch}, K={k}]", value=tuple(rerank_logits.shape)))
    device = start_logits.device
    cand = (
        torch.ones(batch, k, dtype=torch.bool, device=device)
        if candidate_mask is None
        else candidate_mask.bool().to(device)
    )
    positions = torch.ones(batch, k, length, dtype=torch.bool, device=device)
    if token_mask is not None:
        if token_mask.shape != start_logits.shape:
            raise ValueError(Errors.E922.format(name="token_mask", expected=f"[B, K, T] = {tuple(start_logits.shape)}",
                                                value=tuple(token_mask.shape)))
        positions = token_mask.bool().to(device).clone()
    positions[..., 0] = True  # [CLS] must stay reachable: it is the target of absent candidates

    starts, ends, span_valid, is_gold = _span_index(gold_spans, batch, k, length, device)
    # A gold span on a masked position would have probability 0 -> infinite loss; fail loudly.
    bad = span_valid & cand.unsqueeze(-1) & ~(positions.gather(2, starts) & positions.gather(2, ends))
    if bad.any():
        raise ValueError(Errors.E936)

    log_p_start = _masked_log_softmax(start_logits, positions, dim=2)  # [B, K, T]
    log_p_end = _masked_log_softmax(end_logits, positions, dim=2)
    # log p_span(s, t) = log p_start(s) + log p_end(t): the paper's independent factorisation.
    span_lp = log_p_start.gather(2, starts) + log_p_end.gather(2, ends)  # [B, K, M]
    if span_reduction == "sum":
        span_ll = torch.where(span_valid, span_lp, torch.zeros_like(span_lp)).sum(dim=2)
    else:
        # Every (b, k) has >= 1 valid span (padding lists get (0, 0)), so no all -inf row.
        span_ll = torch.logsumexp(span_lp.masked_fill(~span_valid, float("-inf")), dim=2)
    span_nll = torch.where(cand, -span_ll, torch.zeros_like(span_ll))

    # Rerank: ONE softmax over the K candidates; each gold candidate adds its log-probability
    # (eq. (2)'s indicator term), so, unlike eq. (1), other gold candidates stay in the
    # normaliser.
    log_p_rerank = _masked_log_softmax(rerank_logits, cand, dim=1)  # [B, K]
    gold = is_gold & cand
    rerank_nll = torch.where(gold, -log_p_rerank, torch.zeros_like(log_p_rerank))
    return span_nll, rerank_nll


def reader_loss(
    start_logits: Tensor,
    end_logits: Tensor,
    rerank_logits: Tensor,
    gold_spans: Sequence[Sequence[Sequence[Span]]],
    token_mask: Optional[Tensor] = None,
    candidate_mask: Optional[Tensor] = None,
    span_reduction: str = "sum",
    rerank_weight: float = 1.0,
    reduction: str = "mean",
) -> Tensor:
    """EntQA reader loss, eq. (2) negated (see :func:`reader_loss_terms` for the arguments).

    Per passage ``b``::

        loss_b = sum_k [ sum_{(s,t) in M(p_b, e_k)} -log p_span(s, t | p_b, e_k)
                         + rerank_weight * 1(e_k in E(p_b)) * -log p_rerank(e_k | p_b, e_1:K) ]

    Args:
        rerank_weight: multiplies the rerank term (1.0 = the paper's unweighted sum).
        reduction: ``"mean"`` (default) -- mean of ``loss_b`` over the ``B`` passages, i.e.
            the per-example objective averaged over the batch (the sum over candidates is kept,
            as in the paper); ``"sum"``; ``"none"`` -- ``[B]``.

    Returns:
        Scalar (or ``[B]``) loss, ``>= 0``.
    """
    _check_reduction(reduction)
    span_nll, rerank_nll = reader_loss_terms(
        start_logits, end_logits, rerank_logits, gold_spans, token_mask, candidate_mask, span_reduction
    )
    per_passage = (span_nll + rerank_weight * rerank_nll).sum(dim=1)  # [B]
    if reduction == "none":
        return per_passage
    if reduction == "sum":
        return per_passage.sum()
    return per_passage.mean() if per_passage.numel() else per_passage.sum()

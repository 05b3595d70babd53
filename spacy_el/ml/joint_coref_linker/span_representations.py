"""Candidate spans, span representations and mention pruning (Lee et al. 2017), pure PyTorch.

Input side of the ``joint_coref_linker`` component's scorer (seed paper "joint coreference resolution and
entity linking as spanning trees", section 2.1: "span representations ``g_i``", "keep only the
top-N spans based on the pruning score ``Phi_p``"). The paper takes ``g_i`` from SpanBERT as in
Lee et al. (2017); this module builds them from any contextual token vectors.

Conventions
-----------
* A span is ``(start, end)`` with ``end`` **exclusive**, in token offsets of the document; spans are
  ``LongTensor (S, 2)``. Every function that returns spans returns them sorted by
  ``(start, end)`` -- document order, which is the mention order the scorer
  (:mod:`spacy_el.ml.joint_coref_linker.scorer`) relies on for "preceding" antecedents.
* Span representation (Lee et al. 2017, section 4.1)::

      g_i = [x_START(i); x_END(i); x_hat_i; phi(width_i)]
      alpha_t = w_alpha . FFNN_alpha(x_t)
      a_{i,t} = exp(alpha_t) / sum_{k = START(i)}^{END(i)} exp(alpha_k)     (tokens of span i only)
      x_hat_i = sum_{t = START(i)}^{END(i)} a_{i,t} x_t

  with ``x_END(i)`` the span's *last* token (``end - 1``) and ``phi(width)`` a learned width
  embedding (widths ``1..max_width``). Lee et al. attend with BiLSTM outputs over word
  embeddings; here both are the given token vectors. Output width
  ``3 * width_in + width_emb`` (:attr:`SpanEmbedder.out_width`).
* Pruning (Lee et al. 2017, section 5): spans by decreasing ``Phi_p``, greedily, skipping a span
  that *crosses* an accepted one (partial overlap; nesting is allowed), until ``n_keep`` are kept.
  The caller chooses ``n_keep`` (Lee et al.: ``ratio * n_tokens``, ``ratio = 0.4``).
"""
from typing import Any, Iterator, List, Optional, Tuple

import torch
from torch import Tensor, nn

from ...errors import Errors

__all__ = ["SpanEmbedder", "enumerate_spans", "prune_spans"]


def _check_spans(spans: Tensor, n_tokens: Optional[int] = None) -> None:
    if not isinstance(spans, Tensor) or spans.dim() != 2 or spans.shape[1] != 2:
        shape = tuple(spans.shape) if isinstance(spans, Tensor) else type(spans).__name__
        raise ValueError(Errors.E922.format(name="spans", expected="a (S, 2) tensor of (start, end exclusive)", value=shape))
    if spans.dtype not in (torch.int64, torch.int32):
        raise ValueError(Errors.E922.format(name="spans", expected="an integer tensor", value=spans.dtype))
    if spans.numel() == 0:
        return
    bad = (spans[:, 0] < 0) | (spans[:, 1] <= spans[:, 0])
    if n_tokens is not None:
        bad = bad | (spans[:, 1] > n_tokens)
    if bool(bad.any()):
        first = spans[bad][0].tolist()
        bound = f" <= n_tokens = {n_tokens}" if n_tokens is not None else ""
        raise ValueError(Errors.E941.format(span=tuple(first), bound=bound))


def enumerate_spans(
    n_tokens: int, max_width: int, sentence_ids: Optional[Tensor] = None, *, device=None
) -> Tensor:
    """All spans of ``1..max_width`` tokens, optionally not crossing sentence boundaries.

    Without ``sentence_ids`` there are ``sum_{w=1}^{min(W, T)} (T - w + 1)`` spans
    (``T = n_tokens``, ``W = max_width``).

    Args:
        n_tokens: ``T`` >= 0.
        max_width: ``W`` >= 1, the longest span in tokens.
        sentence_ids: optional ``(T,)`` integer sentence index of every token, non-decreasing
            (e.g. ``[0, 0, 0, 1, 1]``); spans whose first and last token lie in different
            sentences are dropped.
        device: device of the result (default: that of ``sentence_ids``, else CPU).

    Returns:
        ``LongTensor (S, 2)`` of ``(start, end)`` with ``end`` exclusive, sorted by
        ``(start, end)``.
    """
    if not isinstance(n_tokens, int) or isinstance(n_tokens, bool) or n_tokens < 0:
        raise ValueError(Errors.E922.format(name="n_tokens", expected="a non-negative int", value=repr(n_tokens)))
    if not isinstance(max_width, int) or isinstance(max_width, bool) or max_width < 1:
        raise ValueError(Errors.E922.format(name="max_width", expected="a positive int", value=repr(max_width)))
    if sentence_ids is not None:
        if sentence_ids.shape != (n_tokens,):
            raise ValueError(Errors.E922.format(name="sentence_ids", expected=f"({n_tokens},)", value=tuple(sentence_ids.shape)))
        if n_tokens > 1 and bool((sentence_ids[1:] < sentence_ids[:-1]).any()):
            raise ValueError(Errors.E942)
        if device is None:
            device = sentence_ids.device
    starts = torch.arange(n_tokens, device=device)[:, None]  # (T, 1)
    ends = starts + torch.arange(1, max_width + 1, device=device)[None, :]  # (T, W), exclusive
    valid = ends <= n_tokens
    if sentence_ids is not None:
        last = sentence_ids.to(device)[(ends - 1).clamp(max=max(n_tokens - 1, 0))]  # (T, W)
        valid &= last == sentence_ids.to(device)[:, None]
    starts = starts.expand_as(ends)
    # Row-major flattening of (start, width) is already (start, end) order.
    return torch.stack([starts[valid], ends[valid]], dim=1).long()


class SpanEmbedder(nn.Module):
    """Lee et al. (2017) span representations ``g_i = [x_start; x_end; x_hat_i; phi(width)]``.

    Args:
        width_in: ``d``, width of the token vectors.
        max_width: ``W``, the widest span that can be embedded (width embedding table size).
        width_emb: width of ``phi(width)``; 0 leaves the width feature out.
        ffnn: hidden width of ``FFNN_alpha``, the head-attention scorer
            (``alpha_t = w_alpha . ReLU(W x_t + b)``).
        dropout: dropout on the output ``g`` (0 disables).

    Attributes:
        out_width: ``D = 3 * width_in + width_emb``.
    """

    def __init__(self, width_in: int, max_width: int, width_emb: int = 20, ffnn: int = 150, dropout: float = 0.0):
        super().__init__()
        for name, value, low in (("width_in", width_in, 1), ("max_width", max_width, 1),
                                 ("width_emb", width_emb, 0), ("ffnn", ffnn, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(Errors.E922.format(name=name, expected=f"an int >= {low}", value=repr(value)))
        self.width_in = width_in
        self.max_width = max_width
        self.width_emb = width_emb
        self.out_width = 3 * width_in + width_emb
        self.head_scorer = nn.Sequential(nn.Linear(width_in, ffnn), nn.ReLU(), nn.Linear(ffnn, 1))
        self.width_embedding = nn.Embedding(max_width, width_emb) if width_emb else None
        self.dropout = nn.Dropout(dropout)

    def head_attention(self, token_vectors: Tensor, spans: Tensor) -> Tensor:
        """``a_{i,t}``: the head-attention weights of every span over its own tokens.

        Args:
            token_vectors: ``(T, d)``.
            spans: ``(S, 2)`` valid spans of at most ``max_width`` tokens.

        Returns:
            ``(S, W)`` weights; column ``k`` is token ``start_i + k``; exactly 0 for ``k >= width_i``,
            each row sums to 1.
        """
        alpha = self.head_scorer(token_vectors).squeeze(-1)  # (T,)
        return self._attention(alpha, spans)

    def _attention(self, alpha: Tensor, spans: Tensor) -> Tensor:
        """``(S, W)`` head-attention weights from the tokens' ``(T,)`` scores ``alpha_t``."""
        index, inside = self._token_index(spans, alpha.shape[0])
        logits = alpha[index].masked_fill(~inside, float("-inf"))  # (S, W)
        return torch.softmax(logits, dim=-1)

    def _token_index(self, spans: Tensor, n_tokens: int):
        offsets = torch.arange(self.max_width, device=spans.device)
        index = spans[:, :1] + offsets[None, :]  # (S, W) token of slot k
        inside = offsets[None, :] < (spans[:, 1:] - spans[:, :1])  # (S, W)
        return index.clamp(max=max(n_tokens - 1, 0)), inside

    def forward(self, token_vectors: Tensor, spans: Tensor) -> Tensor:
        """Embed ``spans``; vectorised over spans (no Python loop).

        Args:
            token_vectors: ``(T, d)`` contextual token vectors of one document.
            spans: ``(S, 2)`` ``(start, end exclusive)``, ``1 <= end - start <= max_width``.

        Returns:
            ``(S, D)`` span representations, ``D = out_width``. Tokens outside a span have no
            influence on its row (masked attention).
        """
        self._check_tokens(token_vectors)
        n_tokens = token_vectors.shape[0]
        spans = self._checked_spans(spans, n_tokens, token_vectors.device)
        if spans.shape[0] == 0:
            return token_vectors.new_zeros((0, self.out_width))
        widths = spans[:, 1] - spans[:, 0]  # (S,)
        weights = self.head_attention(token_vectors, spans)  # (S, W)
        index, _ = self._token_index(spans, n_tokens)
        # Outside slots carry weight exactly 0 (exp(-inf)); their clamped index reads a valid token.
        head = torch.einsum("sw,swd->sd", weights, token_vectors[index])  # (S, d)
        parts = [token_vectors[spans[:, 0]], token_vectors[spans[:, 1] - 1], head]
        if self.width_embedding is not None:
            parts.append(self.width_embedding(widths - 1))
        return self.dropout(torch.cat(parts, dim=-1))

    def token_rows(self, token_vectors: Tensor,
                   linear: nn.Linear) -> Tuple[Tensor, Tensor, Tensor, Tensor, Optional[Tensor]]:
        """``linear``'s weight split into the blocks that multiply ``x_start``, ``x_end``, ``x_hat`` and
        ``phi(width)`` of ``g``, each applied once per token (once per width), and the tokens' head scores.

        Args:
            token_vectors: ``(T, d)`` contextual token vectors of one document.
            linear: an ``nn.Linear`` whose ``in_features`` is :attr:`out_width`.

        Returns:
            ``(T, H)`` start, end and head rows (``W_start x_t``, ``W_end x_t``, ``W_hat x_t``), the ``(T,)``
            head scores ``alpha_t``, and the ``(W, H)`` width rows (None without a width embedding); ``linear``'s
            bias is not added.
        """
        self._check_tokens(token_vectors)
        if linear.in_features != self.out_width:
            raise ValueError(Errors.E922.format(name="linear", expected=f"a layer taking the {self.out_width} features of g",
                                                value=f"one taking {linear.in_features}"))
        d, hidden = self.width_in, linear.out_features
        w_start, w_end, w_head, w_width = linear.weight.split([d, d, d, self.width_emb], dim=1)  # (H, d) x 3, (H, e)
        start_rows, end_rows, head_rows = (token_vectors @ torch.cat([w_start, w_end, w_head]).t()).split(hidden, dim=1)
        alpha = self.head_scorer(token_vectors).squeeze(-1)  # (T,)
        width_rows = None if self.width_embedding is None else self.width_embedding.weight @ w_width.t()  # (W, H)
        return start_rows, end_rows, head_rows, alpha, width_rows

    def rows_by_width(self, token_vectors: Tensor, linear: nn.Linear) -> Iterator[Tensor]:
        """``linear(g)`` of every span of a document, one width at a time, without building ``g``.

        ``linear``'s blocks are applied once per token (:meth:`token_rows`), since
        ``W_hat x_hat = sum_t a_t W_hat x_t``: for the mention score of every enumerated span (pruning), that is
        ``3 T d H`` multiply-adds for the tokens instead of ``S (3d + e) H`` for the spans, ``S`` being about
        ``W T``. The head part of the spans of width ``w + 1`` comes from that of width ``w`` by one step of a
        streaming softmax (each start's running maximum of ``alpha``, denominator and weighted sum of rows), so
        the ``(S, W, H)`` rows of every span's tokens are never gathered: ``W T H`` multiply-adds in all, where
        the gather moved ``W`` times as much memory (most of the pruning time at ``W = 16``). The same values as
        ``linear(self(token_vectors, spans))`` without dropout (eval mode), up to float rounding.

        Args:
            token_vectors: ``(T, d)`` contextual token vectors of one document.
            linear: an ``nn.Linear`` whose ``in_features`` is :attr:`out_width`.

        Yields:
            For ``w = 1 .. min(W, T)``, the ``(T - w + 1, H)`` rows of ``linear(g)`` of the spans ``[s, s + w)``,
            ``s = 0 .. T - w``; ``H = linear.out_features``. Memory stays ``O(T H)`` at any document length.
        """
        start_rows, end_rows, head_rows, alpha, width_rows = self.token_rows(token_vectors, linear)
        n_tokens = token_vectors.shape[0]
        # Running softmax state of the spans [s, s + w) for every start s: max of alpha, sum of exp(alpha - max)
        # and the sum of exp(alpha - max)-weighted head rows; at w = 1 a span is its one token.
        peak, denominator, numerator = alpha, torch.ones_like(alpha), head_rows  # (T,), (T,), (T, H)
        for width in range(1, min(self.max_width, n_tokens) + 1):
            n_spans = n_tokens - width + 1
            if width > 1:
                new_alpha = alpha[width - 1:]  # (n_spans,) the token each span adds: s + w - 1
                new_peak = torch.maximum(peak[:n_spans], new_alpha)
                old_scale, new_weight = torch.exp(peak[:n_spans] - new_peak), torch.exp(new_alpha - new_peak)
                denominator = denominator[:n_spans] * old_scale + new_weight
                numerator = numerator[:n_spans] * old_scale[:, None] + new_weight[:, None] * head_rows[width - 1:]
                peak = new_peak
            rows = start_rows[:n_spans] + end_rows[width - 1:] + numerator / denominator[:, None]  # (n_spans, H)
            if width_rows is not None:
                rows = rows + width_rows[width - 1]
            yield rows if linear.bias is None else rows + linear.bias

    def _check_tokens(self, token_vectors: Tensor) -> None:
        if token_vectors.dim() != 2 or token_vectors.shape[1] != self.width_in:
            raise ValueError(Errors.E922.format(name="token_vectors", expected=f"(T, {self.width_in})",
                                                value=tuple(token_vectors.shape)))

    def _checked_spans(self, spans: Tensor, n_tokens: int, device: Any) -> Tensor:
        """``spans`` as a long tensor on ``device``, refused when invalid or wider than ``max_width``."""
        _check_spans(spans, n_tokens)
        spans = spans.to(device=device, dtype=torch.long)
        if spans.shape[0] and bool(((spans[:, 1] - spans[:, 0]) > self.max_width).any()):
            raise ValueError(Errors.E943.format(max_width=self.max_width))
        return spans

    def extra_repr(self) -> str:
        return f"width_in={self.width_in}, max_width={self.max_width}, width_emb={self.width_emb}"


def prune_spans(mention_scores: Tensor, spans: Tensor, n_keep: int) -> Tensor:
    """Top-``n_keep`` spans by mention score ``Phi_p`` with no two crossing (Lee et al. 2017).

    Spans are visited by decreasing score (ties: lower index first); a span is skipped when it
    partially overlaps an accepted span (``s1 < s2 < e1 < e2`` in exclusive ends); nested and
    identical-boundary-sharing spans are allowed. Stops after ``n_keep`` acceptances, so fewer
    are returned only when fewer non-crossing spans exist. The crossing test looks up, for every
    token strictly inside the candidate, the earliest start among accepted spans ending there and
    the latest end among accepted spans starting there (Lee et al.'s implementation), so the cost
    is ``O(S log S + S * max_width)`` with one Python step per visited span.

    Args:
        mention_scores: ``(S,)`` float scores ``Phi_p``.
        spans: ``(S, 2)`` ``(start, end exclusive)``.
        n_keep: ``N`` (the caller's ``ratio * n_tokens``); ``<= 0`` keeps nothing.

    Returns:
        ``LongTensor (K,)``, ``K <= N``: indices into ``spans`` of the kept spans, sorted by their
        ``(start, end)`` (document order); gather with ``spans[idx]``, ``embeddings[idx]``.
    """
    if mention_scores.dim() != 1 or spans.dim() != 2 or spans.shape[0] != mention_scores.shape[0]:
        raise ValueError(Errors.E922.format(name="mention_scores and spans", expected="(S,) and (S, 2)",
                                            value=f"{tuple(mention_scores.shape)} and {tuple(spans.shape)}"))
    _check_spans(spans)
    device = spans.device
    if n_keep <= 0 or spans.shape[0] == 0:
        return torch.zeros(0, dtype=torch.long, device=device)
    order = torch.argsort(mention_scores.detach(), descending=True, stable=True).tolist()
    starts = spans[:, 0].tolist()
    ends = spans[:, 1].tolist()
    size = max(ends) + 1
    inf = size + 1
    earliest_start_by_end: List[int] = [inf] * size  # over accepted spans ending at that offset
    latest_end_by_start: List[int] = [-1] * size  # over accepted spans starting at that offset
    kept: List[int] = []
    for i in order:
        s, e = starts[i], ends[i]
        # Crossing: an accepted span ends strictly inside (s, e) but starts before s, or starts
        # strictly inside (s, e) but ends after e.
        if any(earliest_start_by_end[t] < s or latest_end_by_start[t] > e for t in range(s + 1, e)):
            continue
        kept.append(i)
        earliest_start_by_end[e] = min(earliest_start_by_end[e], s)
        latest_end_by_start[s] = max(latest_end_by_start[s], e)
        if len(kept) == n_keep:
            break
    kept.sort(key=lambda i: (starts[i], ends[i], i))
    return torch.tensor(kept, dtype=torch.long, device=device)

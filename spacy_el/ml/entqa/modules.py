"""PyTorch modules of EntQA (Zhang et al., ICLR 2022): the retriever's passage encoder (the ``entity_retriever``
component) and the reader (the ``entqa_reader`` component).

* :class:`PassageEncoder` -- ``score_retr(p, x, e) = s * <enc_P(p ⊕ topic), enc_E(e)>``. The entity side
  is the KB's vectors (title ⊕ description through the KB's text encoder, L2-normalised), so the
  passage vector is pooled the same way and L2-normalised too; ``s`` is a learned scale (a
  temperature: with unit vectors the raw inner product lies in [-1, 1], too flat for the NCE softmax).
  Ranking is unchanged by ``s``.
* :class:`ReaderModule` -- a cross-encoder over ``[CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]``
  with start / end heads on every position and a rerank head on ``[CLS]`` (section 2.2).
* :class:`JointReaderModule` -- the single-pass reader (``reader_mode = "joint"``): one encoder pass over
  ``[CLS] window ⊕ topic [SEP] [M] name_1 ... [M] name_K [SEP]``; candidate ``k``'s state ``m_k`` is the
  mean of the output states of its marker and name wordpieces (the marker's alone is nearly the same for
  every candidate early in training); its start (end) logit at window position ``i`` is a scaled dot
  product ``<Q m_k, K h_i> / sqrt(d)`` with the token state ``h_i``, its "no mention" (position 0)
  logits and its rerank logit are linear in ``m_k``. The outputs have the per-candidate reader's shapes, so eq. (2) and the decoding
  are the same.

Both run their transformer under torch autocast in ``encoder_dtype`` (:mod:`spacy_el.ml.autocast`:
``"auto"`` = bfloat16 where the hardware has it natively); the heads and losses stay float32.
"""
import math
from typing import Any, Callable, Optional, Tuple

import numpy as np
import torch
from torch import nn

from ..autocast import encoder_autocast
from .inputs import JointReaderArrays, ReaderArrays
from .losses import multi_label_nce_loss, reader_loss

__all__ = ["PassageEncoder", "ReaderModule", "JointReaderModule"]


def _device_of(module: nn.Module) -> torch.device:
    return next(module.parameters()).device


class _Reader(nn.Module):
    """What both readers share: the encoder, read ``encoder_batch`` rows a call in ``encoder_dtype``, and the dropout
    on its output; a reader adds its heads after ``super().__init__``."""

    def __init__(self, encoder: Any, encoder_dtype: str, encoder_batch: int, dropout: float):
        super().__init__()
        self.encoder = encoder
        self.encoder_dtype = encoder_dtype
        self.encoder_batch = encoder_batch
        self.dropout = nn.Dropout(dropout)

    def encode_rows(self, arrays: Any, device: torch.device) -> torch.Tensor:
        """The encoder over the input rows. arrays: ``input_ids``, ``token_type_ids``, ``attention_mask`` int
        (N, T). RETURNS: float32 (N, T, d) last hidden states."""
        ids = torch.as_tensor(arrays.input_ids, device=device)
        types = torch.as_tensor(arrays.token_type_ids, device=device)
        if getattr(self.encoder.config, "type_vocab_size", 2) < 2:  # RoBERTa: one segment type, no second segment
            types = torch.zeros_like(types)
        mask = torch.as_tensor(arrays.attention_mask, device=device)
        size = self.encoder_batch
        chunks = []
        with encoder_autocast(device, self.encoder_dtype):
            for i in range(0, ids.shape[0], size):
                out = self.encoder(input_ids=ids[i:i + size], token_type_ids=types[i:i + size],
                                   attention_mask=mask[i:i + size]).last_hidden_state
                chunks.append(out.float())
        return torch.cat(chunks)


class PassageEncoder(nn.Module):
    """Transformer + pooling ("mean" or "cls") + L2 norm, and the learned score scale ``s``."""

    def __init__(self, encoder: Any, pooling: str = "mean", init_scale: float = 20.0, encoder_dtype: str = "auto",
                 encoder_batch: int = 64):
        super().__init__()
        self.encoder = encoder
        self.pooling = pooling
        self.encoder_dtype = encoder_dtype
        self.encoder_batch = encoder_batch
        self.log_scale = nn.Parameter(torch.full((1,), math.log(init_scale)))  # (1,): Thinc optimizers need sized params

    def encode(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> torch.Tensor:
        """``[P, T]`` ids and mask -> ``[P, d]`` unit passage vectors (float32)."""
        device = _device_of(self)
        ids = torch.as_tensor(input_ids, device=device)
        mask = torch.as_tensor(attention_mask, device=device)
        pooled = []
        with encoder_autocast(device, self.encoder_dtype):
            for i in range(0, ids.shape[0], self.encoder_batch):
                chunk_mask = mask[i:i + self.encoder_batch]
                hidden = self.encoder(input_ids=ids[i:i + self.encoder_batch], attention_mask=chunk_mask).last_hidden_state.float()
                if self.pooling == "cls":
                    pooled.append(hidden[:, 0])
                else:  # pooled per chunk, so a very long document never holds all its hidden states at once
                    m = chunk_mask.unsqueeze(-1).to(hidden.dtype)
                    pooled.append((hidden * m).sum(1) / m.sum(1).clamp(min=1.0))
        pooled = torch.cat(pooled)  # [P, d]
        return nn.functional.normalize(pooled, dim=-1)

    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray,
                candidates_fn: Optional[Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]] = None) -> Tuple[Optional[torch.Tensor], torch.Tensor]:
        """Passage vectors, and with ``candidates_fn`` the multi-label NCE loss of eq. (1).

        candidates_fn: detached ``[P, d]`` passage vectors -> ``(vectors [P, C, d], gold [P, C] bool,
            valid [P, C] bool)``, the gold entities and the sampled negatives of each passage (the
            hard ones found with the vectors given, so always those of the current model).
        RETURNS: ``(loss or None, [P, d] vectors)``.
        """
        vectors = self.encode(input_ids, attention_mask)
        if candidates_fn is None:
            return None, vectors
        entity_vectors, gold, valid = candidates_fn(vectors.detach().cpu().numpy())
        device = vectors.device
        entities = torch.as_tensor(entity_vectors, device=device, dtype=vectors.dtype)  # [P, C, d]
        scores = self.log_scale.exp() * torch.einsum("pd,pcd->pc", vectors, entities)  # [P, C]
        loss = multi_label_nce_loss(scores, torch.as_tensor(gold, device=device), torch.as_tensor(valid, device=device))
        return loss, vectors


class ReaderModule(_Reader):
    """Cross-encoder reader: ``forward(arrays, gold_spans)`` -> ``(loss or None, start, end, rerank)``.

    start / end: ``[B, K, T]`` logits (``-inf``-free; masked positions are set to a large negative
    number); rerank: ``[B, K]`` logits.
    """

    def __init__(self, encoder: Any, encoder_dtype: str = "auto", encoder_batch: int = 64, dropout: float = 0.1):
        super().__init__(encoder, encoder_dtype, encoder_batch, dropout)
        hidden = int(encoder.config.hidden_size)
        self.start = nn.Linear(hidden, 1)
        self.end = nn.Linear(hidden, 1)
        self.rerank = nn.Linear(hidden, 1)

    def forward(self, arrays: ReaderArrays, gold_spans: Optional[list] = None, span_reduction: str = "sum"):
        device = _device_of(self)
        b, k = arrays.shape
        hidden = self.dropout(self.encode_rows(arrays, device))  # [B*K, T, d]
        length = hidden.shape[1]
        span_mask = torch.as_tensor(arrays.span_mask, device=device).clone()
        span_mask[:, 0] = True  # [CLS]: the "no mention" span (0, 0)
        start = self.start(hidden).squeeze(-1).masked_fill(~span_mask, -1e4).view(b, k, length)
        end = self.end(hidden).squeeze(-1).masked_fill(~span_mask, -1e4).view(b, k, length)
        rerank = self.rerank(hidden[:, 0]).squeeze(-1).view(b, k)
        if gold_spans is None:
            return None, start, end, rerank
        candidate_mask = torch.as_tensor(arrays.candidate_mask, device=device)
        loss = reader_loss(start, end, rerank, gold_spans, token_mask=span_mask.view(b, k, length),
                           candidate_mask=candidate_mask, span_reduction=span_reduction)
        return loss, start, end, rerank


class JointReaderModule(_Reader):
    """Single-pass reader: ``forward(arrays, gold_spans)`` -> ``(loss or None, start, end, rerank)`` with
    start / end ``[B, K, 1 + W]`` logits (position 0: "no mention"; masked positions a large negative
    number) and rerank ``[B, K]`` logits, as :class:`ReaderModule`'s."""

    def __init__(self, encoder: Any, encoder_dtype: str = "auto", encoder_batch: int = 64, dropout: float = 0.1):
        super().__init__(encoder, encoder_dtype, encoder_batch, dropout)
        hidden = int(encoder.config.hidden_size)
        self.start_query = nn.Linear(hidden, hidden)
        self.start_key = nn.Linear(hidden, hidden)
        self.end_query = nn.Linear(hidden, hidden)
        self.end_key = nn.Linear(hidden, hidden)
        self.null = nn.Linear(hidden, 2)  # start / end logits of the "no mention" span, from the marker
        self.rerank = nn.Linear(hidden, 1)

    def forward(self, arrays: JointReaderArrays, gold_spans: Optional[list] = None, span_reduction: str = "sum"):
        device = _device_of(self)
        b, k = arrays.shape
        hidden = self.dropout(self.encode_rows(arrays, device))  # [B*R, T, d]
        width = arrays.span_mask.shape[2]  # 1 + the longest window
        d = hidden.shape[-1]
        first = torch.as_tensor(arrays.marker_positions, device=device)  # [B*R, C]
        after = torch.as_tensor(arrays.candidate_ends, device=device)
        # Mean of each candidate's states (marker + name), from prefix sums over the row.
        sums = torch.cat([hidden.new_zeros(hidden.shape[0], 1, d), hidden.cumsum(1)], dim=1)  # [B*R, T + 1, d]
        total = sums.gather(1, after.unsqueeze(-1).expand(-1, -1, d)) - sums.gather(1, first.unsqueeze(-1).expand(-1, -1, d))
        markers = total / (after - first).clamp(min=1).unsqueeze(-1).to(total.dtype)  # [B*R, C, d]
        tokens = hidden[:, 1:width]  # [B*R, W, d]
        scale = d ** -0.5
        start_tokens = torch.einsum("rcd,rtd->rct", self.start_query(markers), self.start_key(tokens)) * scale
        end_tokens = torch.einsum("rcd,rtd->rct", self.end_query(markers), self.end_key(tokens)) * scale
        null = self.null(markers)  # [B*R, C, 2]
        start = torch.cat([null[..., :1], start_tokens], dim=-1)  # [B*R, C, 1 + W]
        end = torch.cat([null[..., 1:], end_tokens], dim=-1)
        rerank = self.rerank(markers).squeeze(-1)  # [B*R, C]
        # The rows of window b are consecutive and hold its candidates in order: [B, R*C, ...] -> the first K.
        start = start.reshape(b, -1, width)[:, :k]
        end = end.reshape(b, -1, width)[:, :k]
        rerank = rerank.reshape(b, -1)[:, :k]
        span_mask = torch.as_tensor(arrays.span_mask, device=device).clone()
        span_mask[..., 0] = True
        start = start.masked_fill(~span_mask, -1e4)
        end = end.masked_fill(~span_mask, -1e4)
        if gold_spans is None:
            return None, start, end, rerank
        candidate_mask = torch.as_tensor(arrays.candidate_mask, device=device)
        loss = reader_loss(start, end, rerank, gold_spans, token_mask=span_mask, candidate_mask=candidate_mask,
                           span_reduction=span_reduction)
        return loss, start, end, rerank

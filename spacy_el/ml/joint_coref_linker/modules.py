"""The PyTorch module of joint coreference + entity linking (the ``joint_coref_linker`` component).

:class:`JointCorefModule` is

    Hugging Face encoder -> token vectors -> :class:`~spacy_el.ml.joint_coref_linker.span_representations.SpanEmbedder`
    -> pruning by ``Phi_p`` (:func:`~spacy_el.ml.joint_coref_linker.span_representations.prune_spans`)
    -> :class:`~spacy_el.ml.joint_coref_linker.scorer.JointCorefScorer` (eqs. (1)-(6), optional refinement)
    -> :func:`~spacy_el.ml.joint_coref_linker.losses.compute_loss` (``mode``) when training.

Token vectors ("convolutional" encoding, Entity-Equalization paper section 4)
---------------------------------------------------------------------------
The document text is split into wordpieces by the encoder's fast tokenizer once, without
truncation. Windows of ``window`` wordpieces (``[CLS]`` + ``window - 2`` content wordpieces +
``[SEP]``) start every ``stride`` content wordpieces until the last one reaches the end, so
consecutive windows overlap by ``window - 2 - stride`` wordpieces and no document is truncated.
Each wordpiece takes its vector from the window where it is most central: the one maximising its
distance to the nearer window edge (an edge at the start or end of the document counts as
infinitely far, since the wordpiece there has all the context there is); ties go to the earlier
window. A spaCy token's vector is the mean of the wordpieces whose character offsets
(``offset_mapping``) overlap the token's characters; a token without wordpieces (whitespace) gets
a zero vector; a LayerNorm then brings the token vectors to unit scale. Windows of all documents
of a batch are encoded together, ``encoder_batch`` at a time, under torch autocast in
``encoder_dtype``. At prediction the windows are streamed: each chunk's states are added to the token
vectors and dropped, so a book's thousands of windows are never held at once.

Prediction (``sparse``): the coreference scores are the kept mentions' edges to their ``max_antecedents``
antecedents (:class:`~spacy_el.ml.joint_coref_linker.scorer.CorefEdges`), and the candidates' KB vectors are read
and scored :data:`LINK_BLOCK` mentions at a time: memory linear in the document's length.

Loss: the module computes it itself (``mode``'s loss, plus ``mention_loss_weight`` x a binary
cross-entropy of ``Phi_p`` on the kept spans against "is a gold mention", averaged over the documents
that have spans) and returns it as its first output (the scalar-loss pattern of
:mod:`spacy_el.ml.thinc_glue`); the other outputs, one :class:`DocOutput` per document, are detached.

Span pruning in training: ``Phi_p`` of all enumerated spans is computed without gradient (in
chunks, so memory is bounded by ``S x D`` per chunk), the top ``n_keep`` non-crossing spans are
kept, and the gold mentions are added to them (common practice, e.g. Lee et al.'s and the paper
authors' code feed gold spans in training) so every gold mention is scored; the kept spans are then
embedded again with gradient.
"""
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from ..autocast import encoder_autocast, resolve_encoder_dtype
from ..dropout import set_dropout_masks
from ..encoder_reference import check_encoder_reference, encoder_reference
from ...errors import Errors
from .frozen_encoder import LowerLayerCache, split_encode
from .inputs import DocInputs
from .losses import GoldMentionCluster, compute_loss
from .scorer import JointCorefScorer, JointScores
from .span_representations import SpanEmbedder, prune_spans

__all__ = ["JointCorefModule", "DocOutput", "PRIOR_FLOOR", "ENCODER_PREFIX"]

PRIOR_FLOOR = 1e-6  # priors are clamped here before the log (a prior of 0 must not give -inf)
LINK_BLOCK = 4096  # mentions whose candidates' KB vectors are looked up and scored at a time, at prediction
ENCODER_PREFIX = "encoder."  # the encoder's keys in the module's state dict


@dataclass
class DocOutput:
    """spans: int64 ``(K, 2)`` kept spans in document order; candidate_rows: int64 ``(K, C)`` KB rows
    (``-1`` padding); scores: detached CPU :class:`JointScores` over the ``K`` spans (``None`` when K = 0)."""

    spans: np.ndarray
    candidate_rows: np.ndarray
    scores: Any


class JointCorefModule(nn.Module):
    """Encoder + SpanEmbedder + JointCorefScorer; ``forward(docs, with_loss, mode, mention_loss_weight)`` -> (loss, outputs)."""

    def __init__(self, encoder: Any, entity_width: int, attrs: dict):
        super().__init__()
        self.encoder = encoder
        self.encoder_batch = attrs["encoder_batch"]
        self.encoder_dtype = attrs["encoder_dtype"]
        hidden = int(encoder.config.hidden_size)
        # Sentence-embedding encoders such as MiniLM have small outputs (mean |x| about 0.14): a
        # LayerNorm brings the token vectors to unit scale, so the freshly initialised FFNNs above
        # start with usable signal instead of the base rate alone.
        self.token_norm = nn.LayerNorm(hidden)
        self.span_embedder = SpanEmbedder(hidden, attrs["max_span_width"], attrs["width_emb"], attrs["ffnn"], attrs["dropout"])
        self.scorer = JointCorefScorer(
            self.span_embedder.out_width, entity_width, ffnn=attrs["ffnn"], ffnn_depth=attrs["ffnn_depth"],
            distance_width=attrs["distance_width"], entity_proj=attrs["entity_proj"], dropout=attrs["dropout"],
            refinement=attrs["refinement"], nil_score=attrs["nil_score"], distance=attrs["distance"],
            score_bound=attrs["score_bound"], max_antecedents=attrs["max_antecedents"],
            prior_feature=attrs["prior_feature"],
            antecedent_pruning=attrs["antecedent_pruning"],
        )
        # The encoder's dropout layers and the heads': torch's masks, or uniform draws (spacy_el.ml.dropout)
        self.dropout_masks: str = attrs["dropout_masks"]
        set_dropout_masks(self, self.dropout_masks)
        # Training with frozen lower encoder layers: their outputs per document (not state: never saved)
        self.lower_cache = LowerLayerCache()
        # Where the encoder comes from ("" = the packaged MiniLM), and whether its weights are saved (the
        # component's save_encoder) or only a reference to them (spacy_el.ml.encoder_reference).
        self.encoder_source: str = attrs["encoder"]
        self.save_encoder = True

    def state_references(self) -> Dict[str, Dict[str, Any]]:
        """What :func:`~spacy_el.ml.torch_io.serialize_state` saves as references instead of tensors: the
        encoder, when ``save_encoder`` is off (raises when training changed its weights)."""
        if self.save_encoder:
            return {}
        return {ENCODER_PREFIX: encoder_reference(self.encoder, self.encoder_source, "joint_coref_linker")}

    def check_state_references(self, references: Dict[str, Any], component: str) -> None:
        """Accept a weights file that refers to this module's encoder (as built from the config) by checksum."""
        unknown = sorted(set(references) - {ENCODER_PREFIX})
        if unknown:
            raise ValueError(Errors.E909.format(component=component, unknown=unknown))
        check_encoder_reference(self.encoder, references[ENCODER_PREFIX], component)

    def _device(self) -> Any:
        return next(self.parameters()).device

    def token_vectors(self, docs: Sequence[DocInputs], frozen_layers: int = 0, cache_mb: float = 0.0,
                      checkpointing: bool = False, streamed: bool = False) -> List[Any]:
        """``(T, d)`` token vectors per document (zeros for documents with nothing to encode). In training,
        ``frozen_layers > 0`` freezes the encoder's embeddings and lowest layers, whose outputs are cached
        per document up to ``cache_mb`` MB (:mod:`~spacy_el.ml.joint_coref_linker.frozen_encoder`). ``checkpointing``
        (training, gradients on): each chunk of ``encoder_batch`` windows keeps only its input and output, and
        its activations are recomputed in the backward pass (``torch.utils.checkpoint``, same dropout masks
        and autocast): the same gradients for less memory and one more encoder forward pass. ``streamed`` (without
        gradients): the windows' states are added to the token vectors chunk by chunk (:meth:`_streamed_token_vectors`)."""
        device = self._device()
        hidden = int(self.encoder.config.hidden_size)
        todo = [d for d in docs if d.input_ids.shape[0]]
        states = None
        if todo and self.training and frozen_layers > 0:
            states = split_encode(
                self.encoder, todo, frozen_layers, self.encoder_batch, device,
                lambda: encoder_autocast(device, self.encoder_dtype), self.lower_cache, cache_mb,
                resolve_encoder_dtype(self.encoder_dtype, device),
            )
        elif todo and streamed and not torch.is_grad_enabled():
            return self._streamed_token_vectors(docs, todo)
        elif todo:
            length = max(d.input_ids.shape[1] for d in todo)
            ids = np.concatenate([np.pad(d.input_ids, ((0, 0), (0, length - d.input_ids.shape[1]))) for d in todo])
            mask = np.concatenate([np.pad(d.attention_mask, ((0, 0), (0, length - d.attention_mask.shape[1]))) for d in todo])
            ids_t = torch.as_tensor(ids, device=device)
            mask_t = torch.as_tensor(mask, device=device)
            recompute = checkpointing and self.training and torch.is_grad_enabled()

            def encode(ids: Any, mask: Any) -> Any:  # (B, L) wordpiece ids and mask -> (B, L, d) states
                return self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state

            with encoder_autocast(device, self.encoder_dtype):
                chunks = [
                    checkpoint(encode, ids_t[i:i + self.encoder_batch], mask_t[i:i + self.encoder_batch], use_reentrant=False)
                    if recompute else encode(ids_t[i:i + self.encoder_batch], mask_t[i:i + self.encoder_batch])
                    for i in range(0, ids.shape[0], self.encoder_batch)
                ]
            states = torch.cat(chunks, dim=0).float()  # (P_total, L, d)
        result = []
        first = 0
        for d in docs:
            vectors = torch.zeros((d.n_tokens, hidden), device=device, dtype=torch.float32)
            if d.input_ids.shape[0]:
                window = torch.as_tensor(d.wp_window + first, device=device)
                position = torch.as_tensor(d.wp_position, device=device)
                first += d.input_ids.shape[0]
                if len(d.pair_token):
                    pieces = states[window, position]  # (N, d)
                    tokens = torch.as_tensor(d.pair_token, device=device)
                    vectors = vectors.to(pieces.dtype).index_add(0, tokens, pieces[torch.as_tensor(d.pair_wordpiece, device=device)])
                    counts = torch.bincount(tokens, minlength=d.n_tokens).clamp(min=1).to(pieces.dtype)
                    vectors = vectors / counts[:, None]
            result.append(self.token_norm(vectors))
        return result

    def _streamed_token_vectors(self, docs: Sequence[DocInputs], todo: Sequence[DocInputs]) -> List[Any]:
        """:meth:`token_vectors` without gradients, the windows streamed: each chunk of ``encoder_batch`` windows
        adds its wordpieces to their tokens' sums and is dropped, so memory holds ``(T, d)`` token sums and one
        chunk's states, not the ``(P, L, d)`` states of every window (a book has thousands). The same vectors:
        a token's wordpieces are added in the same order (a wordpiece's window never precedes an earlier
        wordpiece's), with the windows padded to the batch's longest, as the whole-batch encoding pads them."""
        device = self._device()
        hidden = int(self.encoder.config.hidden_size)
        length = max(d.input_ids.shape[1] for d in todo)
        sums = [torch.zeros((d.n_tokens, hidden), device=device, dtype=torch.float32) for d in docs]
        # Per document with windows: its first window in the batch, and its (token, wordpiece) pairs' batch windows.
        first, pair_windows = [], []
        offset = 0
        for d in docs:
            first.append(offset)
            pair_windows.append(d.wp_window[d.pair_wordpiece] + offset if len(d.pair_token) else np.zeros(0, np.int64))
            offset += d.input_ids.shape[0]
        owners = np.repeat(np.arange(len(docs)), [d.input_ids.shape[0] for d in docs])
        for start in range(0, offset, self.encoder_batch):
            end = min(offset, start + self.encoder_batch)
            chunk = [(docs[i], w - first[i]) for i, w in zip(owners[start:end].tolist(), range(start, end))]
            ids = np.stack([np.pad(d.input_ids[w], (0, length - d.input_ids.shape[1])) for d, w in chunk])
            mask = np.stack([np.pad(d.attention_mask[w], (0, length - d.attention_mask.shape[1])) for d, w in chunk])
            with encoder_autocast(device, self.encoder_dtype):
                states = self.encoder(input_ids=torch.as_tensor(ids, device=device),
                                      attention_mask=torch.as_tensor(mask, device=device)).last_hidden_state
            states = states.float()  # (B, L, d)
            for i in sorted(set(owners[start:end].tolist())):
                d = docs[i]
                here = np.flatnonzero((pair_windows[i] >= start) & (pair_windows[i] < end))
                if not len(here):
                    continue
                pieces = d.pair_wordpiece[here]
                rows = torch.as_tensor(pair_windows[i][here] - start, device=device)
                positions = torch.as_tensor(d.wp_position[pieces], device=device)
                tokens = torch.as_tensor(d.pair_token[here], device=device)
                sums[i] = sums[i].index_add(0, tokens, states[rows, positions])
        result = []
        for d, vectors in zip(docs, sums):
            if d.input_ids.shape[0] and len(d.pair_token):
                counts = torch.bincount(torch.as_tensor(d.pair_token, device=device), minlength=d.n_tokens).clamp(min=1)
                vectors = vectors / counts.to(vectors.dtype)[:, None]
            result.append(self.token_norm(vectors))
        return result

    def _link_logits_in_blocks(self, doc: DocInputs, spans: np.ndarray, g: Any):
        """The candidates of the kept ``spans`` ``(K, 2)`` and their ``Phi_l`` (eq. (6)), :data:`LINK_BLOCK` mentions at
        a time, so that the ``(K, C, nE)`` KB vectors of a book's mentions are never held at once.

        Returns:
            ``(K, C)`` int64 KB rows (``-1`` padding), ``(K, C)`` link logits (0 on padding, which the scorer
            masks) and ``(K, C)`` float32 priors, ``C`` the widest block's candidate count.
        """
        device = g.device
        blocks = []
        for start in range(0, len(spans), LINK_BLOCK):
            rows, vectors, priors = doc.candidates(spans[start:start + LINK_BLOCK])
            vectors = torch.as_tensor(vectors, device=device, dtype=g.dtype)
            mask = torch.as_tensor(rows >= 0, device=device)
            logits = self.scorer.link_logits(g[start:start + LINK_BLOCK], vectors.masked_fill(~mask[..., None], 0.0))
            blocks.append((rows, logits, priors))
        width = max(rows.shape[1] for rows, _, _ in blocks)
        pad = [width - rows.shape[1] for rows, _, _ in blocks]
        rows = np.concatenate([np.pad(r, ((0, 0), (0, n)), constant_values=-1) for (r, _, _), n in zip(blocks, pad)])
        logits = torch.cat([torch.nn.functional.pad(x, (0, n)) for (_, x, _), n in zip(blocks, pad)])
        priors = np.concatenate([np.pad(p, ((0, 0), (0, n))) for (_, _, p), n in zip(blocks, pad)])
        return rows, logits, priors

    def pruning_scores(self, vectors: Any, spans: Any) -> Any:
        """``(S,)`` ``Phi_p`` of every span of ``spans`` ``(S, 2)`` (valid, at most ``max_width`` tokens) over token
        vectors ``(T, d)``. ``Phi_p``'s first layer is applied per token, not per span, one width at a time
        (:meth:`SpanEmbedder.rows_by_width`): no span's ``g`` is built. Every start and width is scored, in a
        ``(T, W)`` grid, and ``spans`` (those within one sentence) read from it."""
        first, tail = self.scorer.mention_ffnn[0], self.scorer.mention_ffnn[1]
        grid = vectors.new_full((vectors.shape[0], self.span_embedder.max_width), float("nan"))  # (T, W)
        for width, rows in enumerate(self.span_embedder.rows_by_width(vectors, first), start=1):
            grid[: rows.shape[0], width - 1] = tail(rows).squeeze(-1)
        spans = torch.as_tensor(spans, device=grid.device, dtype=torch.long)
        return grid[spans[:, 0], spans[:, 1] - spans[:, 0] - 1]

    def _kept(self, vectors: Any, spans: Any, doc: DocInputs) -> Any:
        """Indices into ``doc.spans`` of the pruned spans plus the forced ones, in document order.

        The pruning scores take no gradient, so they are computed without dropout, in training too: the spans
        are pruned as in prediction, and no dropout mask is drawn over every enumerated span."""
        with torch.no_grad(), _without_dropout(self.scorer.mention_ffnn):
            scores = self.pruning_scores(vectors, spans)
        kept = prune_spans(scores, spans, doc.n_keep)
        if len(doc.forced):
            kept = torch.unique(torch.cat([kept, torch.as_tensor(doc.forced, device=kept.device)]))
        return torch.sort(kept).values  # spans are sorted by (start, end): index order is document order

    def forward(self, docs: List[DocInputs], with_loss: bool = False, mode: str = "global", mention_loss_weight: float = 0.0,
                frozen_layers: int = 0, cache_mb: float = 0.0, max_antecedents: Optional[int] = None,
                checkpointing: bool = False, sparse: bool = False):
        """``max_antecedents``: the scorer's antecedents per mention for this call only (training's early budget,
        prediction's ``predict_max_antecedents``; None: the model's).
        ``checkpointing``: recompute the encoder's activations in the backward pass (:meth:`token_vectors`).
        ``sparse`` (prediction, without loss): the scores' coreference edges come as
        :class:`~spacy_el.ml.joint_coref_linker.scorer.CorefEdges`, in memory linear in the document's length."""
        device = self._device()
        losses = []
        outputs: List[DocOutput] = []
        streamed = sparse and not with_loss
        for d, vectors in zip(docs, self.token_vectors(docs, frozen_layers, cache_mb, checkpointing, streamed)):
            if not len(d.spans):
                outputs.append(DocOutput(np.zeros((0, 2), np.int64), np.zeros((0, 1), np.int64), None))
                continue
            spans = torch.as_tensor(d.spans, device=device)
            kept = self._kept(vectors, spans, d)
            kept_np = kept.cpu().numpy()
            kept_spans = spans[kept]
            g = self.span_embedder(vectors, kept_spans)
            if sparse and not with_loss:
                rows, link_logits, priors = self._link_logits_in_blocks(d, d.spans[kept_np], g)
                cand_vectors = None
            else:
                rows, cand_vectors, priors = d.candidates(d.spans[kept_np])
                cand_vectors, link_logits = torch.as_tensor(cand_vectors, device=device, dtype=g.dtype), None
            rows_t = torch.as_tensor(rows, device=device, dtype=torch.long)
            log_prior = torch.log(torch.as_tensor(priors, device=device, dtype=g.dtype).clamp(min=PRIOR_FLOOR))
            scores = self.scorer(
                g, kept_spans[:, 0], cand_vectors, rows_t >= 0, rows_t,
                log_prior, max_antecedents=max_antecedents, sparse=sparse and not with_loss, link_logits=link_logits,
            )
            if with_loss and d.gold is not None:
                position = {int(i): k for k, i in enumerate(kept_np.tolist())}
                gold = [GoldMentionCluster(tuple(position[i] for i in mentions), row) for mentions, row in d.gold]
                loss = compute_loss(scores, gold, mode)
                if mention_loss_weight > 0:
                    target = torch.zeros(len(kept_np), device=device, dtype=scores.mention_scores.dtype)
                    target[[position[i] for i in d.forced.tolist()]] = 1.0
                    loss = loss + mention_loss_weight * torch.nn.functional.binary_cross_entropy_with_logits(
                        scores.mention_scores, target, reduction="sum"
                    )
                losses.append(loss)
            outputs.append(DocOutput(d.spans[kept_np], rows, _detached(scores)))
        if losses:
            loss = torch.stack([x.reshape(()).float() for x in losses]).mean()
        else:
            loss = torch.zeros((), device=device)
        return loss, outputs


@contextmanager
def _without_dropout(*modules: nn.Module) -> Iterator[None]:
    """The modules' dropout layers switched off (eval mode) inside the block; each module's own mode after."""
    dropouts = [m for module in modules for m in module.modules() if isinstance(m, nn.Dropout)]
    modes = [m.training for m in dropouts]
    for m in dropouts:
        m.eval()
    try:
        yield
    finally:
        for m, mode in zip(dropouts, modes):
            m.train(mode)


def _detached(scores: Any) -> Any:
    return JointScores(
        mention_scores=scores.mention_scores.detach().cpu(),
        coref_scores=None if scores.coref_scores is None else scores.coref_scores.detach().cpu(),
        link_scores=scores.link_scores.detach().cpu(), nil_scores=scores.nil_scores.detach().cpu(),
        candidate_mask=scores.candidate_mask.detach().cpu(),
        candidate_entity_ids=None if scores.candidate_entity_ids is None else scores.candidate_entity_ids.detach().cpu(),
        coref_edges=None if scores.coref_edges is None else scores.coref_edges.detach_cpu(),
    )

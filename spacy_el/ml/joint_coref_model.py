"""Thinc glue for joint coreference + entity linking: ``spacy-el.JointCorefLinker.v1``.

The model of the ``joint_coref_linker`` component (issue 6; seed papers
``joint-coref-el-spanning-trees.txt`` and ``entity-equalization-coref.txt``). Its PyTorch module
(:class:`JointCorefModule`) is

    Hugging Face encoder -> token vectors -> :class:`~spacy_el.ml.span_representations.SpanEmbedder`
    -> pruning by ``Phi_p`` (:func:`~spacy_el.ml.span_representations.prune_spans`)
    -> :class:`~spacy_el.ml.joint_coref_scorer.JointCorefScorer` (eqs. (1)-(6), optional refinement)
    -> :func:`~spacy_el.ml.joint_coref_scorer.compute_loss` (``mode``) when training.

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
``encoder_dtype``.

Inputs and outputs
------------------
Input: :class:`JointCorefBatch`, one :class:`DocInputs` of numpy arrays per document
(:func:`make_doc_inputs`): the windows, the wordpiece -> (window, position) and token <->
wordpiece maps, the enumerated spans, how many to keep, the spans that must be kept (gold
mentions in training), a candidate look-up callable and, in training, the gold clusters.
Candidates are looked up *after* pruning (``DocInputs.candidates`` maps the kept ``(K, 2)`` spans
to ``(K, C)`` KB rows, ``(K, C, nE)`` vectors and ``(K, C)`` priors), so the alias table is queried for ``0.4 T``
spans rather than every enumerated one.

Output: ``(loss, outputs)``: ``loss`` a ``(1,)`` float array (``0`` without gold), ``outputs``
one :class:`DocOutput` per document (kept spans, candidate KB rows, detached
:class:`~spacy_el.ml.joint_coref_scorer.JointScores`).

Loss and backpropagation (the scalar-loss pattern)
--------------------------------------------------
The Global loss (matrix-tree theorem) is a log-determinant: its gradient is easiest to get from
torch autograd, not from a Thinc ``get_loss`` over score arrays. So the torch module computes the
loss itself (``mode``'s loss, plus ``mention_loss_weight`` x a binary cross-entropy of ``Phi_p``
on the kept spans against "is a gold mention", averaged over the documents that have spans) and
returns it as its first output. ``_convert_outputs`` hands it to Thinc as a ``(1,)`` array; the
component's ``get_loss`` returns ``d_loss = 1`` and the Thinc backprop callback calls
``torch.autograd.backward(loss, grad_tensors=d_loss)`` (``PyTorchWrapper_v3``'s
``convert_for_torch_backward``). That is how spacy-transformers and Thinc's own examples pass a
custom gradient through ``PyTorchWrapper``; the difference is only that the gradient given is
that of the identity on the loss. The other outputs are detached and carry no gradient.

Span pruning in training: ``Phi_p`` of all enumerated spans is computed without gradient (in
chunks, so memory is bounded by ``S x D`` per chunk), the top ``n_keep`` non-crossing spans are
kept, and the gold mentions are added to them (common practice, e.g. Lee et al.'s and the paper
authors' code feed gold spans in training) so every gold mention is scored; the kept spans are then
embedded again with gradient.

Serialisation: the PyTorch layer is built lazily from ``nE`` (KB vector width); a component saves
``nE`` in its cfg and calls :func:`build_torch_layer` before loading weights, which are stored with
safetensors (never pickled). The encoder's architecture and tokenizer come from its local path.
"""
import math
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, Optimizer, torch2xp, xp2torch

import torch
from torch import nn

from .autocast import ENCODER_DTYPES, encoder_autocast
from .entity_equalization import REFINEMENTS
from .joint_coref_scorer import MODES, GoldMentionCluster, JointCorefScorer, JointScores, compute_loss
from .span_representations import SpanEmbedder, enumerate_spans, prune_spans
from .torch_io import EvalModeShim, load_encoder, shared_tokenizer, torch_layer

#: ``(K, 2)`` kept spans -> ``(K, C)`` int64 KB rows (``-1`` padding), ``(K, C, nE)`` float32 vectors
#: and ``(K, C)`` float32 alias-table priors (0 on padding).
CandidateFn = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]
#: One gold cluster in span indexing: (indices into ``DocInputs.spans``, KB row or None for NIL).
GoldClusterIdx = Tuple[Tuple[int, ...], Optional[int]]

PRUNE_CHUNK = 4096  # spans scored at once in the pruning pass
PRIOR_FLOOR = 1e-6  # priors are clamped here before the log (a prior of 0 must not give -inf)


@dataclass
class DocInputs:
    """Numpy inputs of one document (see the module docstring).

    input_ids, attention_mask: int64 ``(P, L)`` windows (``L <= window``). wp_window, wp_position:
    int64 ``(N,)``, the window and the position in it that give wordpiece ``n`` its vector.
    pair_token, pair_wordpiece: int64 ``(Q,)``, the (token, wordpiece) overlap pairs. n_tokens: ``T``.
    spans: int64 ``(S, 2)`` ``(start, end exclusive)`` sorted by ``(start, end)``. n_keep: spans kept
    by pruning. forced: int64 ``(F,)`` indices into ``spans`` always kept (gold mentions in
    training, mentions given by an upstream component). candidates: the candidate look-up. gold: gold clusters or None (prediction).
    """

    input_ids: np.ndarray
    attention_mask: np.ndarray
    wp_window: np.ndarray
    wp_position: np.ndarray
    pair_token: np.ndarray
    pair_wordpiece: np.ndarray
    n_tokens: int
    spans: np.ndarray
    n_keep: int
    candidates: CandidateFn
    forced: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    gold: Optional[List[GoldClusterIdx]] = None


@dataclass
class JointCorefBatch:
    """The documents of a batch; ``mode`` and ``mention_loss_weight`` are filled in from the model's
    attrs by :func:`forward` (loss settings, not part of the weights)."""

    docs: List[DocInputs]
    mode: str = "global"
    mention_loss_weight: float = 0.0

    @property
    def has_gold(self) -> bool:
        return any(d.gold is not None and len(d.spans) for d in self.docs)


@dataclass
class DocOutput:
    """spans: int64 ``(K, 2)`` kept spans in document order; candidate_rows: int64 ``(K, C)`` KB rows
    (``-1`` padding); scores: detached CPU :class:`JointScores` over the ``K`` spans (``None`` when K = 0)."""

    spans: np.ndarray
    candidate_rows: np.ndarray
    scores: Any


def _check(name: str, ok: bool, expected: str, value: Any) -> None:
    if not ok:
        raise ValueError(f"[spacy_el] JointCorefLinker: {name} must be {expected}, got {value!r}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@registry.architectures("spacy-el.JointCorefLinker.v1")
def build_joint_coref_linker(
    encoder: str = "",
    max_span_width: int = 5,
    span_ratio: float = 0.4,
    top_k_candidates: int = 16,
    mode: str = "global",
    refinement: str = "none",
    window: int = 128,
    stride: int = 64,
    ffnn: int = 150,
    ffnn_depth: int = 2,
    width_emb: int = 20,
    distance_width: int = 20,
    entity_proj: int = 150,
    dropout: float = 0.1,
    nil_score: str = "learned",
    distance: str = "spans",
    score_bound: Optional[float] = 10.0,
    mention_loss_weight: float = 1.0,
    encoder_batch: int = 32,
    max_antecedents: Optional[int] = 50,
    encoder_dtype: str = "float32",
    prior_feature: bool = False,
    encoder_lr_scale: float = 1.0,
) -> Model:
    """encoder: local Hugging Face encoder path ("" = packaged MiniLM). max_span_width: longest span
    in tokens (paper: 5). span_ratio: spans kept per token after pruning (Lee et al.: 0.4).
    top_k_candidates: alias-table candidates per span (paper: 16). mode: "global" | "local" |
    "coref" | "link" (joint Global/Local, Standalone coref/EL). refinement: "none" |
    "antecedent_averaging" | "entity_equalization". window / stride: wordpieces per encoder
    window (with [CLS]/[SEP]) and the step between windows. ffnn, ffnn_depth, width_emb,
    distance_width, entity_proj, dropout, nil_score, distance, score_bound: JointCorefScorer /
    SpanEmbedder settings. mention_loss_weight: weight of the mention BCE on Phi_p (0 = off; also
    decides whether NIL singletons are output). encoder_batch: windows per encoder call.
    max_antecedents: antecedent window K (Lee et al. 2017/2018): only mention pairs at most K apart
    in mention order get a coreference edge, so scoring is O(M K) (null = all pairs).
    encoder_dtype: "float32" | "bfloat16" | "auto": the encoder runs under torch autocast in this dtype,
    in training and prediction; "auto" is bfloat16 where the hardware computes it natively (GPUs, CPUs
    with AVX512-BF16/AMX) and float32 elsewhere (:mod:`spacy_el.ml.autocast`); its weights and
    everything after it stay float32. prior_feature: add a learned multiple of the
    log alias-table prior to Phi_l (Kolitsas et al. 2018; not in the paper's Phi_l, off by default).
    encoder_lr_scale: the encoder's learning rate is the optimizer's times this (0 = frozen encoder)."""
    _check("encoder", isinstance(encoder, str), "a string (local path or \"\")", encoder)
    _check("max_span_width", _is_int(max_span_width) and max_span_width >= 1, "an int >= 1", max_span_width)
    _check("span_ratio", isinstance(span_ratio, (int, float)) and 0 < span_ratio <= 5, "a number in (0, 5]", span_ratio)
    _check("top_k_candidates", _is_int(top_k_candidates) and top_k_candidates >= 1, "an int >= 1", top_k_candidates)
    _check("mode", mode in MODES, f"one of {MODES}", mode)
    _check("refinement", refinement in REFINEMENTS, f"one of {REFINEMENTS}", refinement)
    _check("window", _is_int(window) and window >= 4, "an int >= 4", window)
    _check("stride", _is_int(stride) and 1 <= stride <= window - 2, f"an int in [1, window - 2 = {window - 2}]", stride)
    for name, value in (("ffnn", ffnn), ("ffnn_depth", ffnn_depth), ("distance_width", distance_width),
                        ("entity_proj", entity_proj), ("encoder_batch", encoder_batch)):
        _check(name, _is_int(value) and value >= 1, "an int >= 1", value)
    _check("width_emb", _is_int(width_emb) and width_emb >= 0, "an int >= 0", width_emb)
    _check("dropout", isinstance(dropout, (int, float)) and 0 <= dropout < 1, "a number in [0, 1)", dropout)
    _check("nil_score", nil_score in ("learned", "zero"), "'learned' or 'zero'", nil_score)
    _check("distance", distance in ("spans", "tokens"), "'spans' or 'tokens'", distance)
    _check("score_bound", score_bound is None or (isinstance(score_bound, (int, float)) and score_bound > 0),
           "a positive number or null", score_bound)
    _check("max_antecedents", max_antecedents is None or (_is_int(max_antecedents) and max_antecedents >= 1),
           "an int >= 1 or null", max_antecedents)
    _check("encoder_lr_scale", isinstance(encoder_lr_scale, (int, float)) and not isinstance(encoder_lr_scale, bool)
           and encoder_lr_scale >= 0, "a number >= 0", encoder_lr_scale)
    _check("prior_feature", isinstance(prior_feature, bool), "true or false", prior_feature)
    _check("encoder_dtype", encoder_dtype in ENCODER_DTYPES, f"one of {ENCODER_DTYPES}", encoder_dtype)
    _check("mention_loss_weight", isinstance(mention_loss_weight, (int, float)) and mention_loss_weight >= 0,
           "a number >= 0", mention_loss_weight)
    return Model(
        "joint_coref_linker",
        forward,
        init=init,
        dims={"nE": None},
        attrs={
            "encoder": encoder, "max_span_width": max_span_width, "span_ratio": float(span_ratio),
            "top_k_candidates": top_k_candidates, "mode": mode, "refinement": refinement, "window": window,
            "stride": stride, "ffnn": ffnn, "ffnn_depth": ffnn_depth, "width_emb": width_emb,
            "distance_width": distance_width, "entity_proj": entity_proj, "dropout": float(dropout),
            "nil_score": nil_score, "distance": distance, "score_bound": score_bound,
            "mention_loss_weight": float(mention_loss_weight), "encoder_batch": encoder_batch,
            "max_antecedents": max_antecedents, "encoder_dtype": encoder_dtype,
            "prior_feature": prior_feature, "encoder_lr_scale": float(encoder_lr_scale),
        },
    )


def tokenizer_of(model: Model) -> Any:
    """The encoder's fast tokenizer (thread-safe, one copy per thread; it comes from the encoder path and
    is kept out of the model's attrs, so that it is never part of the serialised model)."""
    return shared_tokenizer(model.attrs["encoder"], "joint_coref_linker")


def build_torch_layer(model: Model) -> None:
    """Create the PyTorch layer from the model's dims and attrs (idempotent)."""
    if model.layers:
        return
    a = model.attrs
    encoder = load_encoder(a["encoder"])
    max_positions = getattr(encoder.config, "max_position_embeddings", None)
    if max_positions is not None and a["window"] > max_positions:
        raise ValueError(
            f"[spacy_el] JointCorefLinker: window must be <= the encoder's max_position_embeddings "
            f"({max_positions}), got {a['window']}."
        )
    module = JointCorefModule(encoder, model.get_dim("nE"), a)
    # PyTorchWrapper_v3, with a shim that updates the encoder at its own learning rate.
    model.layers.append(
        torch_layer(module, _convert_inputs, _convert_outputs, "joint_coref_linker", shim_class=EncoderLRShim,
                    encoder_lr_scale=a.get("encoder_lr_scale", 1.0))
    )


class EncoderLRShim(EvalModeShim):
    """An :class:`~spacy_el.ml.torch_io.EvalModeShim` (thread-safe prediction) whose ``finish_update``
    scales the learning rate of the ``encoder.*`` parameters by ``encoder_lr_scale`` (Thinc's optimizer
    ``lr_scale``): the usual recipe of a pretrained encoder fine-tuned about ten times slower than the
    freshly initialised layers above it (Lee et al. 2018 / Joshi et al. 2019: 1e-5 to 2e-5 for BERT,
    2e-4 for the task layers)."""

    def __init__(self, model: Any, *, encoder_lr_scale: float = 1.0, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.encoder_lr_scale = float(encoder_lr_scale)

    def finish_update(self, optimizer: Optimizer) -> None:
        for name, torch_data in self._model.named_parameters():
            if torch_data.grad is None:
                continue
            frozen = self.encoder_lr_scale == 0 and name.startswith("encoder.")
            if not frozen and not self._grad_scaler.found_inf:  # as PyTorchShim: skip overflowed steps
                scale = self.encoder_lr_scale if name.startswith("encoder.") else 1.0
                param, _ = optimizer(
                    (self.id, name), torch2xp(torch_data.data), torch2xp(torch_data.grad), lr_scale=scale,
                )
                torch_data.data = xp2torch(param, requires_grad=True, device=torch_data.device)
            torch_data.grad.zero_()
        self._grad_scaler.update()


def init(model: Model, X: Optional[JointCorefBatch] = None, Y: Optional[Any] = None) -> None:
    if not model.has_dim("nE"):
        raise ValueError("[spacy_el] Set the JointCorefLinker dim nE (KB entity vector width) first.")
    build_torch_layer(model)


def forward(model: Model, X: JointCorefBatch, is_train: bool) -> Tuple[Tuple[Any, List[DocOutput]], Callable]:
    X.mode = model.attrs["mode"]
    X.mention_loss_weight = model.attrs["mention_loss_weight"]
    (loss, outputs), backprop_torch = model.layers[0](X, is_train)

    def backprop(dY: Tuple[Any, Any]) -> JointCorefBatch:
        """dY: ``(d_loss, _)``, the gradient of the ``(1,)`` loss (the outputs take none)."""
        backprop_torch(dY)
        return X

    return (loss, outputs), backprop


def _convert_inputs(model: Model, X: JointCorefBatch, is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    # Numpy arrays go to the module as they are (it moves them to its device); nothing to give back.
    kwargs = {"with_loss": bool(is_train and X.has_gold), "mode": X.mode, "mention_loss_weight": X.mention_loss_weight}
    return ArgsKwargs(args=(X.docs,), kwargs=kwargs), lambda d: X


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """The scalar loss -> a (1,) array; the backward call gets d_loss as its gradient (scalar-loss pattern)."""
    _, (loss, outputs) = inputs_outputs

    def convert_for_torch_backward(dY: Any) -> ArgsKwargs:
        d_loss = xp2torch(model.ops.asarray(dY[0]), device=loss.device).reshape(()).to(loss.dtype)
        return ArgsKwargs(args=((loss,),), kwargs={"grad_tensors": (d_loss,)})

    return (torch2xp(loss.detach().reshape(1)), outputs), convert_for_torch_backward


# --------------------------------------------------------------------------------------------
# Numpy inputs
# --------------------------------------------------------------------------------------------


def encoder_windows(n_wordpieces: int, window: int, stride: int) -> List[Tuple[int, int]]:
    """``(start, end)`` content ranges (wordpiece offsets, end exclusive) of the windows covering
    ``n_wordpieces``; each holds at most ``window - 2`` wordpieces, starts are ``stride`` apart."""
    if n_wordpieces <= 0:
        return []
    width = window - 2
    ranges = [(0, min(width, n_wordpieces))]
    while ranges[-1][1] < n_wordpieces:
        start = ranges[-1][0] + stride
        ranges.append((start, min(start + width, n_wordpieces)))
    return ranges


def most_central_window(ranges: Sequence[Tuple[int, int]], n_wordpieces: int) -> Tuple[np.ndarray, np.ndarray]:
    """Per wordpiece: the window where it is most central and its content offset in that window."""
    best = np.full(n_wordpieces, -1.0)
    which = np.zeros(n_wordpieces, dtype=np.int64)
    offset = np.zeros(n_wordpieces, dtype=np.int64)
    for p, (start, end) in enumerate(ranges):
        idx = np.arange(start, end)
        left = np.where(start == 0, np.inf, idx - start)
        right = np.where(end == n_wordpieces, np.inf, end - 1 - idx)
        centrality = np.minimum(left, right)
        better = centrality > best[start:end]
        best[start:end][better] = centrality[better]
        which[start:end][better] = p
        offset[start:end][better] = (idx - start)[better]
    return which, offset


def token_wordpiece_pairs(doc: Doc, offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(token, wordpiece) pairs whose character ranges overlap. offsets: ``(N, 2)`` wordpiece chars."""
    if len(doc) == 0 or len(offsets) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts = np.fromiter((t.idx for t in doc), dtype=np.int64, count=len(doc))
    ends = starts + np.fromiter((len(t) for t in doc), dtype=np.int64, count=len(doc))
    # Wordpieces are in character order: the first ending after the token start, the last starting before its end.
    lo = np.searchsorted(offsets[:, 1], starts, side="right")
    hi = np.searchsorted(offsets[:, 0], ends, side="left")
    counts = np.maximum(hi - lo, 0)
    tokens = np.repeat(np.arange(len(doc)), counts)
    pieces = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi) if b > a]) if counts.sum() else np.zeros(0, np.int64)
    keep = offsets[pieces, 1] > offsets[pieces, 0]  # drop zero-width pieces
    return tokens[keep].astype(np.int64), pieces[keep].astype(np.int64)


def candidate_spans(doc: Doc, max_width: int) -> np.ndarray:
    """All spans of up to ``max_width`` tokens, within a sentence when ``doc`` has sentence
    boundaries (else over the whole doc), whose first and last tokens are not whitespace."""
    n = len(doc)
    sentence_ids = None
    if n and doc.has_annotation("SENT_START"):
        sentence_ids = torch.as_tensor(np.cumsum([1 if t.is_sent_start else 0 for t in doc]) - 1, dtype=torch.long)
        sentence_ids[sentence_ids < 0] = 0
    spans = enumerate_spans(n, max_width, sentence_ids).numpy()
    if len(spans):
        space = np.fromiter((t.is_space for t in doc), dtype=bool, count=n)
        spans = spans[~space[spans[:, 0]] & ~space[spans[:, 1] - 1]]
    return spans.astype(np.int64).reshape(-1, 2)


def make_doc_inputs(
    model: Model,
    doc: Doc,
    candidates: CandidateFn,
    gold: Optional[Sequence[Tuple[Sequence[Tuple[int, int]], Optional[int]]]] = None,
    *,
    given: Sequence[Tuple[int, int]] = (),
    enumerate_all: bool = True,
) -> DocInputs:
    """Numpy inputs of ``doc`` (module docstring). gold: clusters of ``(start, end)`` token spans of
    ``doc`` with a KB row or None. given: mentions found upstream (e.g. ``doc.ents``). Gold and given
    spans are added to the enumerated ones and always kept, if not wider than ``max_span_width``
    (wider ones cannot be embedded: they are dropped from the gold, and the caller reports the given
    ones). enumerate_all=False: only gold and given spans are scored (no pruning)."""
    a = model.attrs
    width = a["max_span_width"]
    spans = candidate_spans(doc, width) if enumerate_all else np.zeros((0, 2), dtype=np.int64)
    gold_idx: Optional[List[GoldClusterIdx]] = None
    if gold is not None:
        gold = [([(int(s), int(e)) for s, e in mentions if 0 < e - s <= width], row) for mentions, row in gold]
        gold = [(mentions, row) for mentions, row in gold if mentions]
    forced_spans = [(int(s), int(e)) for s, e in given if 0 < e - s <= width]
    forced_spans += [m for mentions, _ in gold or [] for m in mentions]
    extra = np.array(forced_spans, dtype=np.int64).reshape(-1, 2)
    spans = np.unique(np.concatenate([spans, extra]), axis=0) if len(extra) else spans
    position = {(int(s), int(e)): i for i, (s, e) in enumerate(spans.tolist())}
    if gold is not None:
        gold_idx = [(tuple(sorted({position[m] for m in mentions})), row) for mentions, row in gold]
    forced = np.array(sorted({position[m] for m in forced_spans}), dtype=np.int64)
    n_keep = min(len(spans), max(1, math.ceil(a["span_ratio"] * len(doc)))) if len(spans) and enumerate_all else 0
    empty = np.zeros(0, dtype=np.int64)
    inputs = DocInputs(
        input_ids=np.zeros((0, 0), dtype=np.int64), attention_mask=np.zeros((0, 0), dtype=np.int64),
        wp_window=empty, wp_position=empty, pair_token=empty, pair_wordpiece=empty, n_tokens=len(doc),
        spans=spans, n_keep=n_keep, candidates=candidates, forced=forced, gold=gold_idx,
    )
    if not len(spans):
        return inputs  # nothing to score: no need to encode
    tokenizer = tokenizer_of(model)
    encoded = tokenizer(doc.text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    ids = np.asarray(encoded["input_ids"], dtype=np.int64)
    offsets = np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    ranges = encoder_windows(len(ids), a["window"], a["stride"])
    if not ranges:
        return inputs
    length = max(end - start for start, end in ranges) + 2
    inputs.input_ids = np.full((len(ranges), length), tokenizer.pad_token_id or 0, dtype=np.int64)
    inputs.attention_mask = np.zeros((len(ranges), length), dtype=np.int64)
    for p, (start, end) in enumerate(ranges):
        row = [tokenizer.cls_token_id, *ids[start:end].tolist(), tokenizer.sep_token_id]
        inputs.input_ids[p, : len(row)] = row
        inputs.attention_mask[p, : len(row)] = 1
    which, offset = most_central_window(ranges, len(ids))
    inputs.wp_window, inputs.wp_position = which, offset + 1  # + 1: [CLS]
    inputs.pair_token, inputs.pair_wordpiece = token_wordpiece_pairs(doc, offsets)
    return inputs


# --------------------------------------------------------------------------------------------
# The PyTorch module
# --------------------------------------------------------------------------------------------


class JointCorefModule(nn.Module):
    """Encoder + SpanEmbedder + JointCorefScorer; ``forward(docs, with_loss, mode, mention_loss_weight)`` -> (loss, outputs)."""

    def __init__(self, encoder: Any, entity_width: int, attrs: dict):
        super().__init__()
        self.encoder = encoder
        self.encoder_batch = attrs["encoder_batch"]
        self.encoder_dtype = attrs.get("encoder_dtype", "float32")
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
            score_bound=attrs["score_bound"], max_antecedents=attrs.get("max_antecedents"),
            prior_feature=attrs.get("prior_feature", False),
        )

    def _device(self) -> Any:
        return next(self.parameters()).device

    def token_vectors(self, docs: Sequence[DocInputs]) -> List[Any]:
        """``(T, d)`` token vectors per document (zeros for documents with nothing to encode)."""
        device = self._device()
        hidden = int(self.encoder.config.hidden_size)
        todo = [d for d in docs if d.input_ids.shape[0]]
        states = None
        if todo:
            length = max(d.input_ids.shape[1] for d in todo)
            ids = np.concatenate([np.pad(d.input_ids, ((0, 0), (0, length - d.input_ids.shape[1]))) for d in todo])
            mask = np.concatenate([np.pad(d.attention_mask, ((0, 0), (0, length - d.attention_mask.shape[1]))) for d in todo])
            ids_t = torch.as_tensor(ids, device=device)
            mask_t = torch.as_tensor(mask, device=device)
            with encoder_autocast(device, self.encoder_dtype):
                chunks = [
                    self.encoder(input_ids=ids_t[i:i + self.encoder_batch], attention_mask=mask_t[i:i + self.encoder_batch]).last_hidden_state
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

    def _kept(self, vectors: Any, spans: Any, doc: DocInputs) -> Any:
        """Indices into ``doc.spans`` of the pruned spans plus the forced ones, in document order."""
        with torch.no_grad():
            scores = torch.cat([
                self.scorer.mention_ffnn(self.span_embedder(vectors, chunk)).squeeze(-1)
                for chunk in spans.split(PRUNE_CHUNK)
            ])
        kept = prune_spans(scores, spans, doc.n_keep)
        if len(doc.forced):
            kept = torch.unique(torch.cat([kept, torch.as_tensor(doc.forced, device=kept.device)]))
        return torch.sort(kept).values  # spans are sorted by (start, end): index order is document order

    def forward(self, docs: List[DocInputs], with_loss: bool = False, mode: str = "global", mention_loss_weight: float = 0.0):
        device = self._device()
        losses = []
        outputs: List[DocOutput] = []
        for d, vectors in zip(docs, self.token_vectors(docs)):
            if not len(d.spans):
                outputs.append(DocOutput(np.zeros((0, 2), np.int64), np.zeros((0, 1), np.int64), None))
                continue
            spans = torch.as_tensor(d.spans, device=device)
            kept = self._kept(vectors, spans, d)
            kept_np = kept.cpu().numpy()
            kept_spans = spans[kept]
            rows, cand_vectors, priors = d.candidates(d.spans[kept_np])
            rows_t = torch.as_tensor(rows, device=device, dtype=torch.long)
            g = self.span_embedder(vectors, kept_spans)
            log_prior = torch.log(torch.as_tensor(priors, device=device, dtype=g.dtype).clamp(min=PRIOR_FLOOR))
            scores = self.scorer(
                g, kept_spans[:, 0], torch.as_tensor(cand_vectors, device=device, dtype=g.dtype), rows_t >= 0, rows_t,
                log_prior,
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

def _detached(scores: Any) -> Any:
    return JointScores(
        mention_scores=scores.mention_scores.detach().cpu(), coref_scores=scores.coref_scores.detach().cpu(),
        link_scores=scores.link_scores.detach().cpu(), nil_scores=scores.nil_scores.detach().cpu(),
        candidate_mask=scores.candidate_mask.detach().cpu(),
        candidate_entity_ids=None if scores.candidate_entity_ids is None else scores.candidate_entity_ids.detach().cpu(),
    )


__all__ = [
    "build_joint_coref_linker", "build_torch_layer", "tokenizer_of", "make_doc_inputs", "JointCorefBatch",
    "DocInputs", "DocOutput", "JointCorefModule", "encoder_windows", "most_central_window", "candidate_spans",
]

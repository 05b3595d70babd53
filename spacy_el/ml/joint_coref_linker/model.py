"""Thinc glue for joint coreference + entity linking: ``spacy-el.JointCorefLinker.v1``.

The model of the ``joint_coref_linker`` component (seed papers ``joint-coref-el-spanning-trees.txt``
and ``entity-equalization-coref.txt``): :func:`build_joint_coref_linker` checks the settings, and the
PyTorch layer (:class:`~spacy_el.ml.joint_coref_linker.modules.JointCorefModule`, with an
:class:`~spacy_el.ml.torch_io.EncoderLRShim`) is built lazily by :func:`build_torch_layer`.

Input: a :class:`~spacy_el.ml.joint_coref_linker.inputs.JointCorefBatch` of numpy arrays
(:mod:`spacy_el.ml.joint_coref_linker.inputs`). Output: ``(loss, outputs)``, ``loss`` a ``(1,)`` float array
(``0`` without gold). In training ``outputs`` are the module's
:class:`~spacy_el.ml.joint_coref_linker.modules.DocOutput` (detached scores); at prediction they are one
numpy :class:`DocPrediction` per document, decoded here in the model's ``mode``
(:func:`~spacy_el.ml.joint_coref_linker.decoding.decode`), so the component never handles a tensor.

Loss and backpropagation: the scalar-loss pattern (:mod:`spacy_el.ml.thinc_glue`). The Global loss
(matrix-tree theorem) is a log-determinant: its gradient is easiest to get from torch autograd, not
from a Thinc ``get_loss`` over score arrays, so the torch module computes the loss itself and the
component's ``get_loss`` returns ``d_loss = 1``.

Serialisation: the PyTorch layer is built lazily from ``nE`` (KB vector width); a component saves
``nE`` in its cfg and calls :func:`build_torch_layer` before loading weights, which are stored with
safetensors (never pickled). The encoder's architecture and tokenizer come from its hub name or path. With
:func:`set_save_encoder` off (the component's ``save_encoder = false``), the weights file holds the trained
heads only and refers to the encoder by name and checksum (:mod:`spacy_el.ml.encoder_reference`).
"""
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, List, Literal, Optional, Tuple, Union

import numpy as np
import torch
from spacy.util import registry
from thinc.api import ArgsKwargs, Model

from ..arguments import Arguments, argument
from ...errors import Errors
from ..autocast import ENCODER_DTYPES
from ..dropout import DROPOUT_MASKS
from ..thinc_glue import scalar_loss_outputs, torch_layer_forward, torch_to_numpy
from ..torch_io import EncoderLRShim, check_position_limit, load_encoder, torch_layer
from .decoding import JointDecoding, decode
from .entity_equalization import REFINEMENTS
from .frozen_encoder import encoder_layers
from .inputs import DocInputs, JointCorefBatch
from .modules import DocOutput, JointCorefModule
from .scorer import ANTECEDENT_PRUNINGS, MODES

__all__ = [
    "JointCorefArguments", "build_joint_coref_linker", "build_torch_layer", "predicted", "DocPrediction", "set_save_encoder",
    "encoder_depth",
]


@dataclass
class DocPrediction:
    """What the model predicts for one document (numpy). spans: int64 ``(K, 2)`` kept spans in document
    order; candidate_rows: int64 ``(K, C)`` KB rows (``-1`` padding); mention_scores ``(K,)`` (``Phi_p``),
    nil_scores ``(K,)`` and link_scores ``(K, C)``: float32, those of
    :class:`~spacy_el.ml.joint_coref_linker.scorer.JointScores`; decoding: the clusters and links of the model's
    ``mode`` (``None`` when K = 0)."""

    spans: np.ndarray
    candidate_rows: np.ndarray
    mention_scores: np.ndarray
    nil_scores: np.ndarray
    link_scores: np.ndarray
    decoding: Optional[JointDecoding]


@dataclass(frozen=True)
class JointCorefArguments(Arguments):
    """The arguments of ``spacy-el.JointCorefLinker.v1``, their defaults and ranges (documented on
    :func:`build_joint_coref_linker`)."""

    owner: ClassVar[str] = "JointCorefLinker"
    encoder: str = ""
    max_span_width: int = argument(5, low=1)
    span_ratio: float = argument(0.4, low=0.0, low_open=True, high=5.0)
    mode: Literal[MODES] = "global"  # type: ignore[valid-type]
    refinement: Literal[REFINEMENTS] = "none"  # type: ignore[valid-type]
    window: int = argument(128, low=4)
    stride: int = argument(64, low=1)
    ffnn: int = argument(150, low=1)
    ffnn_depth: int = argument(2, low=1)
    width_emb: int = argument(20, low=0)
    distance_width: int = argument(20, low=1)
    entity_proj: int = argument(150, low=1)
    dropout: float = argument(0.1, low=0.0, high=1.0, high_open=True)
    dropout_masks: Literal[DROPOUT_MASKS] = "uniform"  # type: ignore[valid-type]
    nil_score: Literal["learned", "zero"] = "learned"
    distance: Literal["spans", "tokens"] = "spans"
    score_bound: Optional[float] = argument(10.0, low=0.0, low_open=True)
    mention_loss_weight: float = argument(1.0, low=0.0)
    encoder_batch: int = argument(32, low=1)
    max_antecedents: Optional[int] = argument(50, low=1)
    encoder_dtype: Literal[ENCODER_DTYPES] = "auto"  # type: ignore[valid-type]
    prior_feature: bool = False
    encoder_lr_scale: float = argument(1.0, low=0.0)
    antecedent_pruning: Literal[ANTECEDENT_PRUNINGS] = "nearest"  # type: ignore[valid-type]

    def check(self) -> None:
        if self.stride > self.window - 2:
            raise self.invalid("stride", f"an int in [1, window - 2 = {self.window - 2}]")


@registry.architectures("spacy-el.JointCorefLinker.v1")
def build_joint_coref_linker(
    *,
    encoder: str,
    max_span_width: int,
    span_ratio: float,
    mode: str,
    refinement: str,
    window: int,
    stride: int,
    ffnn: int,
    ffnn_depth: int,
    width_emb: int,
    distance_width: int,
    entity_proj: int,
    dropout: float,
    dropout_masks: str,
    nil_score: str,
    distance: str,
    score_bound: Optional[float],
    mention_loss_weight: float,
    encoder_batch: int,
    max_antecedents: Optional[int],
    encoder_dtype: str,
    prior_feature: bool,
    encoder_lr_scale: float,
    antecedent_pruning: str,
) -> Model:
    """The defaults and ranges are :class:`JointCorefArguments`'. encoder: Hugging Face hub name or local
    folder ("" = packaged MiniLM). max_span_width: longest span in tokens (paper: 5). span_ratio: spans kept per token
    after pruning (Lee et al.: 0.4). The candidates per span come from the component's generator (its ``top_k``;
    paper: 16). mode: "global" | "local" | "coref" | "link" (joint Global/Local, Standalone coref/EL): the loss
    trained and the decoding. refinement: "none" | "antecedent_averaging" | "entity_equalization". window /
    stride: wordpieces per encoder window (with [CLS]/[SEP]) and the step between windows. ffnn, ffnn_depth,
    width_emb, distance_width, entity_proj, dropout, nil_score, distance, score_bound: JointCorefScorer /
    SpanEmbedder settings. mention_loss_weight: weight of the mention BCE on Phi_p (0 = off; also decides whether
    NIL singletons are output). encoder_batch: windows per encoder call. max_antecedents: antecedent window K
    (Lee et al. 2017/2018): only mention pairs at most K apart in mention order get a coreference edge, so
    scoring is O(M K) (null = all pairs). antecedent_pruning: "nearest" (those K pairs, Lee et al. 2017) |
    "coarse" (each mention's K best earlier mentions by a learned coarse score, any distance back: Lee et al.
    2018's coarse-to-fine). encoder_dtype: "float32" | "bfloat16" | "auto": the encoder runs under torch autocast
    in this dtype, in training and prediction; "auto" is bfloat16 where the hardware computes it natively (GPUs,
    CPUs with AVX512-BF16/AMX) and float32 elsewhere (:mod:`spacy_el.ml.autocast`); its weights and everything
    after it stay float32. prior_feature: add a learned multiple of the log alias-table prior to Phi_l (Kolitsas
    et al. 2018; not in the paper's Phi_l). encoder_lr_scale: the encoder's learning rate is the optimizer's
    times this (0 = frozen encoder). dropout_masks: "bernoulli" (torch's nn.Dropout) | "uniform": how every
    dropout layer, the encoder's too, draws its masks in training; "uniform" draws the same masks in
    distribution more cheaply on CPU, with BERT's attention eager in training to use them too
    (:mod:`spacy_el.ml.dropout`)."""
    arguments = JointCorefArguments.from_arguments(locals())
    return Model("joint_coref_linker", forward, init=init, dims={"nE": None}, attrs=arguments.to_dict())


def build_torch_layer(model: Model) -> None:
    """Create the PyTorch layer from the model's dims and attrs (idempotent)."""
    if model.layers:
        return
    a = model.attrs
    encoder = load_encoder(a["encoder"])
    check_position_limit(encoder, "JointCorefLinker", "window", a["window"], name=a["encoder"])
    module = JointCorefModule(encoder, model.get_dim("nE"), a)
    # PyTorchWrapper_v3, with a shim that updates the encoder at its own learning rate.
    model.layers.append(
        torch_layer(module, _convert_inputs, _convert_outputs, "joint_coref_linker", shim_class=EncoderLRShim,
                    encoder_lr_scale=a["encoder_lr_scale"])
    )


def _module(model: Model) -> Optional[JointCorefModule]:
    """The model's torch module (None before the layer is built)."""
    return model.layers[0].shims[0]._model if model.layers else None


def set_save_encoder(model: Model, save: bool) -> None:
    """Whether the model's next serialisation holds the encoder's weights (``True``) or only the trained heads
    and a reference to the encoder (``False``; refused there when training changed the encoder)."""
    module = _module(model)
    if module is not None:
        module.save_encoder = bool(save)


def encoder_depth(model: Model) -> int:
    """The number of transformer layers of the built model's encoder (BERT-like encoders only)."""
    module = _module(model)
    if module is None:
        raise ValueError(Errors.E914.format(model="JointCorefLinker"))
    return len(encoder_layers(module.encoder)[1])


def init(model: Model, X: Optional[JointCorefBatch] = None, Y: Optional[Any] = None) -> None:
    if not model.has_dim("nE"):
        raise ValueError(Errors.E915.format(model="JointCorefLinker", dims="nE (KB entity vector width)"))
    build_torch_layer(model)


def forward(
    model: Model, X: JointCorefBatch, is_train: bool
) -> Tuple[Tuple[Any, Union[List[DocOutput], List[DocPrediction]]], Callable]:
    """``(loss, outputs)``: the module's :class:`DocOutput` in training, :class:`DocPrediction` at prediction.
    The backprop callback takes ``dY = (d_loss, _)``, the gradient of the ``(1,)`` loss (the outputs take none)."""
    X.mode = model.attrs["mode"]
    X.mention_loss_weight = model.attrs["mention_loss_weight"]
    (loss, outputs), backprop = torch_layer_forward(model, X, is_train)
    if not is_train:
        outputs = [predicted(with_similarity(out, d, X.similarity_weight), X.mode) for out, d in zip(outputs, X.docs)]
    return (loss, outputs), backprop


def with_similarity(out: DocOutput, inputs: DocInputs, weight: float) -> DocOutput:
    """``out`` with ``weight`` times the generator's mention-entity similarity added to each valid link score
    (``(K, C)``; the padding stays ``-inf``); ``out`` itself when the weight is 0 or there is nothing to add."""
    if not weight or out.scores is None or inputs.similarities is None or not out.candidate_rows.size:
        return out
    scores = out.scores
    similarity = torch.as_tensor(inputs.similarities(out.spans, out.candidate_rows.shape[1]),
                                 device=scores.link_scores.device, dtype=scores.link_scores.dtype)
    links = torch.where(scores.candidate_mask, scores.link_scores + weight * similarity, scores.link_scores)
    return replace(out, scores=replace(scores, link_scores=links))


def predicted(out: DocOutput, mode: str) -> DocPrediction:
    """The numpy prediction of one document: its scores and their decoding in ``mode``."""
    if out.scores is None:
        empty = np.zeros(0, dtype=np.float32)
        return DocPrediction(out.spans, out.candidate_rows, empty, empty, np.zeros((0, 1), np.float32), None)
    scores = out.scores
    return DocPrediction(
        out.spans, out.candidate_rows, torch_to_numpy(scores.mention_scores), torch_to_numpy(scores.nil_scores),
        torch_to_numpy(scores.link_scores), decode(scores, mode),
    )


def _convert_inputs(model: Model, X: JointCorefBatch, is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    # Numpy arrays go to the module as they are (it moves them to its device); nothing to give back.
    kwargs = {"with_loss": bool(is_train and X.has_gold), "mode": X.mode, "mention_loss_weight": X.mention_loss_weight,
              "frozen_layers": X.frozen_layers, "cache_mb": X.cache_mb, "max_antecedents": X.max_antecedents,
              "checkpointing": X.checkpointing, "sparse": not is_train and not X.dense_scores}
    return ArgsKwargs(args=(X.docs,), kwargs=kwargs), lambda d: X


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """The module's scalar loss -> a (1,) array, backpropagated with the gradient given (scalar-loss pattern)."""
    _, (loss, outputs) = inputs_outputs
    return scalar_loss_outputs(model, loss, outputs)

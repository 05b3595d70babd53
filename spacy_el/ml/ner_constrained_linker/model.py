"""Thinc glue for the NER4EL scorer: ``spacy-el.NerConstrainedLinker.v1``.

The model of the ``ner_constrained_linker`` component. It maps a
:class:`~spacy_el.ml.ner_constrained_linker.inputs.Ner4elBatch` to ``(scores (M, C), type_logits (M, T))``: numpy arrays at
prediction, and in training Thinc arrays whose gradients the component computes (``get_loss``) and
backpropagates into the torch module (:class:`~spacy_el.ml.ner_constrained_linker.modules.Ner4elScorer`). Its PyTorch
layer is built lazily: the entity-vector width ``nE`` and the type-inventory size ``nT`` come from the
KB at ``initialize``, and a component restores it (``build_torch_layer``) from its saved dims before
deserialising weights, as spacy-experimental's coref does. Weights are (de)serialised with
safetensors, so loading a model file never unpickles anything.
"""
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal, Optional, Tuple

import numpy as np
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d

from ..arguments import Arguments, argument
from ...errors import Errors
from ..autocast import ENCODER_DTYPES, encoder_autocast
from ..dropout import DROPOUT_MASKS, set_dropout_masks
from ..thinc_glue import torch_layer_forward, torch_to_numpy
from ..torch_io import check_position_limit, load_encoder, torch_layer
from .inputs import Ner4elBatch
from .modules import Ner4elScorer

__all__ = ["Ner4elArguments", "build_ner_constrained_linker", "build_torch_layer"]

Output = Tuple[Floats2d, Floats2d]


@dataclass(frozen=True)
class Ner4elArguments(Arguments):
    """The arguments of ``spacy-el.NerConstrainedLinker.v1``, their defaults and ranges (documented on
    :func:`build_ner_constrained_linker`)."""

    owner: ClassVar[str] = "NerConstrainedLinker"
    encoder: str = ""
    hidden_width: int = argument(256, low=1)
    max_length: int = argument(128, low=1)
    typed_entities: bool = False
    encoder_dtype: Literal[ENCODER_DTYPES] = "auto"  # type: ignore[valid-type]
    dense_feature: bool = False
    dropout_masks: Literal[DROPOUT_MASKS] = "uniform"  # type: ignore[valid-type]


@registry.architectures("spacy-el.NerConstrainedLinker.v1")
def build_ner_constrained_linker(
    *,
    encoder: str,
    hidden_width: int,
    max_length: int,
    typed_entities: bool,
    encoder_dtype: str,
    dense_feature: bool,
    dropout_masks: str,
) -> Model[Ner4elBatch, Output]:
    """The defaults and ranges are :class:`Ner4elArguments`'. encoder: a local Hugging Face encoder path or a
    model-hub name ("" = packaged MiniLM); hidden_width: comparison space width; max_length: wordpieces per marked
    window (at most the encoder's positions: checked when the encoder is built);
    typed_entities: NER4EL contribution 1; dense_feature: also score with the candidate generator's
    mention-entity similarity (for the dense and hybrid generators; with the alias generator the feature is
    absent for every candidate); encoder_dtype: "float32" | "bfloat16" | "auto", the torch autocast dtype of the
    encoder *at prediction* (training always runs in float32); "auto" is bfloat16 only where the device computes
    it natively (:mod:`spacy_el.ml.autocast`). bfloat16 is faster on CPUs with bf16 instructions and on GPUs,
    with slightly different scores. dropout_masks: "bernoulli" (torch's nn.Dropout) | "uniform": how the
    encoder's dropout layers draw their masks in training (:mod:`spacy_el.ml.dropout`: the same masks in
    distribution, cheaper on CPU)."""
    arguments = Ner4elArguments.from_arguments(locals())
    return Model("ner4el_scorer", forward, init=init, dims={"nE": None, "nT": None}, attrs=arguments.to_dict())


def build_torch_layer(model: Model) -> None:
    """Create the PyTorch layer from the model's dims (idempotent)."""
    if model.layers:
        return
    encoder = load_encoder(model.attrs["encoder"])
    # max_length counts the marked window's special tokens and markers: all of it must fit the encoder's positions
    check_position_limit(encoder, "NerConstrainedLinker", "max_length", model.attrs["max_length"],
                         name=model.attrs["encoder"])
    module = Ner4elScorer(
        encoder, model.get_dim("nE"), model.get_dim("nT"), model.attrs["hidden_width"], model.attrs["typed_entities"],
        model.attrs["dense_feature"],
    )
    set_dropout_masks(module, model.attrs["dropout_masks"])
    # Thread-safe prediction (EvalModeShim: never back to train mode mid-prediction of another thread).
    model.layers.append(torch_layer(module, _convert_inputs, _convert_outputs, "ner_constrained_linker"))


def init(model: Model, X: Optional[Ner4elBatch] = None, Y: Optional[Any] = None) -> None:
    if not model.has_dim("nE") or not model.has_dim("nT"):
        raise ValueError(Errors.E915.format(model="NerConstrainedLinker", dims="dims nE (entity vector width) and nT (number of types)"))
    build_torch_layer(model)


def forward(model: Model, X: Ner4elBatch, is_train: bool) -> Tuple[Output, Callable]:
    """The encoder runs under autocast in ``encoder_dtype`` at prediction, in float32 in training."""
    dtype = "float32" if is_train else model.attrs["encoder_dtype"]
    with encoder_autocast(model.layers[0].shims[0].device, dtype):
        return torch_layer_forward(model, X, is_train)


def _convert_inputs(model: Model, X: Ner4elBatch, is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    device = model.shims[0].device

    def tensor(array: np.ndarray) -> Any:
        return xp2torch(model.ops.asarray(array), device=device)

    kwargs = {
        name: tensor(getattr(X, name))
        for name in ("input_ids", "attention_mask", "window", "marker", "span_weights", "cand_vectors",
                     "cand_type_probs", "cand_log_prior", "cand_from_alias", "cand_dense", "cand_has_dense")
    }

    def convert_back(d_inputs: Any) -> Ner4elBatch:
        return X

    return ArgsKwargs(args=(), kwargs=kwargs), convert_back


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Output, Callable]:
    """(scores, type_logits) tensors -> numpy arrays at prediction, Thinc (xp) arrays in training, whose
    gradients go back to one torch backward call."""
    _, (scores, type_logits) = inputs_outputs

    def convert_for_torch_backward(dY: Output) -> ArgsKwargs:
        d_scores, d_types = (xp2torch(model.ops.asarray(d), device=scores.device) for d in dY)
        return ArgsKwargs(args=((scores, type_logits),), kwargs={"grad_tensors": (d_scores, d_types)})

    if not is_train:
        return (torch_to_numpy(scores), torch_to_numpy(type_logits)), convert_for_torch_backward
    return (torch2xp(scores), torch2xp(type_logits)), convert_for_torch_backward

"""Thinc glue for the NER4EL scorer: ``spacy-el.Ner4elScorer.v1``.

The returned Model maps a ``Ner4elBatch`` to ``(scores (M, C), type_logits (M, T))``. Its PyTorch
layer is built lazily: the entity-vector width ``nE`` and the type-inventory size ``nT`` come from the
KB at ``initialize``, and a component restores it (``build_torch_layer``) from its saved dims before
deserialising weights, as spacy-experimental's coref does. Weights are (de)serialised with
safetensors, so loading a model file never unpickles anything.
"""
from typing import Any, Callable, Optional, Tuple

import numpy as np
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d
from spacy.util import registry

from .autocast import ENCODER_DTYPES, encoder_autocast
from .ner4el_batch import Ner4elBatch
from .torch_io import resolve_encoder_path, shared_tokenizer, torch_layer

Output = Tuple[Floats2d, Floats2d]
INFERENCE_DTYPES = ENCODER_DTYPES


@registry.architectures("spacy-el.Ner4elScorer.v1")
def build_ner4el_scorer(
    encoder: str = "",
    hidden_width: int = 256,
    max_length: int = 128,
    typed_entities: bool = False,
    inference_dtype: str = "float32",
) -> Model[Ner4elBatch, Output]:
    """encoder: local Hugging Face encoder path ("" = packaged MiniLM); hidden_width: comparison space
    width; max_length: wordpieces per marked window; typed_entities: NER4EL contribution 1;
    inference_dtype: "float32", "bfloat16" to predict under torch autocast (training stays float32;
    faster on CPUs with bf16 instructions and on GPUs, with slightly different scores), or "auto" for
    bfloat16 only where the device computes it natively (:mod:`spacy_el.ml.autocast`)."""
    if inference_dtype not in INFERENCE_DTYPES:
        raise ValueError(f"[spacy_el] inference_dtype must be one of {INFERENCE_DTYPES}, got {inference_dtype!r}.")
    return Model(
        "ner4el_scorer",
        forward,
        init=init,
        dims={"nE": None, "nT": None},
        attrs={"encoder": encoder, "hidden_width": hidden_width, "max_length": max_length,
               "typed_entities": typed_entities, "inference_dtype": inference_dtype},
    )


def tokenizer_of(model: Model) -> Any:
    """The encoder's fast tokenizer (thread-safe, one copy per thread; kept out of the model's attrs, so
    that it is never part of the serialised model)."""
    return shared_tokenizer(model.attrs["encoder"], "ner_constrained_linker")


def build_torch_layer(model: Model) -> None:
    """Create the PyTorch layer from the model's dims (idempotent)."""
    if model.layers:
        return
    from transformers import AutoModel, logging as hf_logging

    from .ner4el_scorer import Ner4elScorer

    hf_logging.set_verbosity_error()
    encoder = AutoModel.from_pretrained(resolve_encoder_path(model.attrs["encoder"]), add_pooling_layer=False)
    module = Ner4elScorer(
        encoder, model.get_dim("nE"), model.get_dim("nT"), model.attrs["hidden_width"], model.attrs["typed_entities"]
    )
    # Thread-safe prediction (EvalModeShim: never back to train mode mid-prediction of another thread).
    model.layers.append(torch_layer(module, _convert_inputs, _convert_outputs, "ner_constrained_linker"))


def init(model: Model, X: Optional[Ner4elBatch] = None, Y: Optional[Any] = None) -> None:
    if not model.has_dim("nE") or not model.has_dim("nT"):
        raise ValueError("[spacy_el] Set the Ner4elScorer dims nE (entity vector width) and nT (number of types) first.")
    build_torch_layer(model)


def forward(model: Model, X: Ner4elBatch, is_train: bool) -> Tuple[Output, Callable]:
    dtype = "float32" if is_train else model.attrs.get("inference_dtype", "float32")
    with encoder_autocast(model.layers[0].shims[0].device, dtype):
        (scores, type_logits), backprop_torch = model.layers[0](X, is_train)

    def backprop(dY: Output) -> Ner4elBatch:
        backprop_torch(dY)
        return X

    return (scores, type_logits), backprop


def _convert_inputs(model: Model, X: Ner4elBatch, is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    device = model.shims[0].device

    def tensor(array: np.ndarray) -> Any:
        return xp2torch(model.ops.asarray(array), device=device)

    kwargs = {
        name: tensor(getattr(X, name))
        for name in ("input_ids", "attention_mask", "window", "marker", "span_weights", "cand_vectors",
                     "cand_type_probs", "cand_log_prior", "cand_from_alias")
    }

    def convert_back(d_inputs: Any) -> Ner4elBatch:
        return X

    return ArgsKwargs(args=(), kwargs=kwargs), convert_back


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Output, Callable]:
    """(scores, type_logits) tensors -> xp arrays; their gradients back to one torch backward call."""
    _, (scores, type_logits) = inputs_outputs

    def convert_for_torch_backward(dY: Output) -> ArgsKwargs:
        d_scores, d_types = (xp2torch(model.ops.asarray(d), device=scores.device) for d in dY)
        return ArgsKwargs(args=((scores, type_logits),), kwargs={"grad_tensors": (d_scores, d_types)})

    return (torch2xp(scores), torch2xp(type_logits)), convert_for_torch_backward


__all__ = ["build_ner4el_scorer", "build_torch_layer", "tokenizer_of"]

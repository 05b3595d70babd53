"""Thinc glue of EntQA: ``spacy-el.EntityRetriever.v1`` and ``spacy-el.EntQAReader.v1``.

The models of the ``entity_retriever`` and ``entqa_reader`` components. Each is a ``Model`` whose only
layer is a ``PyTorchWrapper``-style model around a torch module of :mod:`spacy_el.ml.entqa.modules`,
built lazily from the model's attrs and dim ``nE`` (the KB's vector width) so that a pipeline can be
deserialised without a KB first (spacy-experimental's coref pattern). Inputs are numpy batches
(:class:`~spacy_el.ml.entqa.inputs.RetrieverBatch`, :class:`~spacy_el.ml.entqa.inputs.ReaderBatch`);
the torch module returns its scalar loss, which the component backpropagates with gradient 1 (the
scalar-loss pattern, :mod:`spacy_el.ml.thinc_glue`). Outputs: ``(loss (1,) array or None, outputs)``,
``outputs`` a tuple of numpy arrays at prediction (retriever: ``([P, d] passage vectors,)``; reader:
``([B, K, T] start, [B, K, T] end, [B, K] rerank)`` logits), of detached tensors in training. The
encoder's learning rate is the optimizer's times ``encoder_lr_scale``. The reader's module is the
per-candidate cross-encoder unless the attr ``reader_mode`` is ``"joint"`` (the ``entqa_reader``
component sets it from its ``reader_mode`` setting before the layer is built, and only for the joint
mode, so a per-candidate model's attrs and bytes are those it always had). The encoder's learning rate
is set through :class:`~spacy_el.ml.torch_io.EncoderLRShim`.
"""
from typing import Any, Callable, Tuple

from spacy.util import registry
from thinc.api import ArgsKwargs, Model

from ..autocast import ENCODER_DTYPES
from ..dropout import DROPOUT_MASKS, set_dropout_masks
from ..thinc_glue import scalar_loss_outputs, torch_layer_forward, torch_to_numpy
from ..torch_io import EncoderLRShim, load_encoder, torch_layer
from .inputs import RetrieverBatch
from .modules import JointReaderModule, PassageEncoder, ReaderModule

__all__ = ["build_entity_retriever", "build_entqa_reader", "build_torch_layer"]

POOLINGS = ("mean", "cls")
TOPIC_MODES = ("first_token", "first_sentence", "none")


def _check(arch: str, name: str, ok: bool, expected: str, value: Any) -> None:
    if not ok:
        raise ValueError(f"[spacy_el] {arch}: {name} must be {expected}, got {value!r}.")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_common(arch: str, encoder: str, encoder_dtype: str, encoder_batch: int, encoder_lr_scale: float,
                  topic: str, max_topic: int, dropout_masks: str) -> None:
    _check(arch, "encoder", isinstance(encoder, str), "a string (local path or \"\")", encoder)
    _check(arch, "encoder_dtype", encoder_dtype in ENCODER_DTYPES, f"one of {ENCODER_DTYPES}", encoder_dtype)
    _check(arch, "dropout_masks", dropout_masks in DROPOUT_MASKS, f"one of {DROPOUT_MASKS}", dropout_masks)
    _check(arch, "encoder_batch", _is_int(encoder_batch) and encoder_batch >= 1, "an int >= 1", encoder_batch)
    _check(arch, "encoder_lr_scale", isinstance(encoder_lr_scale, (int, float)) and not isinstance(encoder_lr_scale, bool)
           and encoder_lr_scale >= 0, "a number >= 0", encoder_lr_scale)
    _check(arch, "topic", topic in TOPIC_MODES, f"one of {TOPIC_MODES}", topic)
    _check(arch, "max_topic", _is_int(max_topic) and max_topic >= 0, "an int >= 0", max_topic)


@registry.architectures("spacy-el.EntityRetriever.v1")
def build_entity_retriever(
    encoder: str = "",
    passage_length: int = 32,
    stride: int = 16,
    topic: str = "first_token",
    max_topic: int = 8,
    pooling: str = "mean",
    init_scale: float = 20.0,
    encoder_dtype: str = "auto",
    encoder_batch: int = 64,
    encoder_lr_scale: float = 1.0,
    dropout_masks: str = "uniform",
) -> Model:
    """EntQA's passage encoder. encoder: local Hugging Face path ("" = packaged MiniLM), the encoder the
    KB's entity vectors were computed with (the entity side of the dual encoder). passage_length /
    stride: L and S in wordpieces (paper 32 / 16). topic: "first_token" (paper) | "first_sentence" |
    "none"; max_topic: its wordpiece budget. pooling: "mean" | "cls" (use the KB encoder's). init_scale:
    initial score scale s. encoder_dtype: autocast dtype of the transformer. encoder_batch: passages per
    transformer call. encoder_lr_scale: the transformer's learning rate is the optimizer's times this.
    dropout_masks: "bernoulli" (torch's nn.Dropout) | "uniform": how the transformer's dropout layers draw their
    masks in training (:mod:`spacy_el.ml.dropout`: the same masks in distribution, cheaper on CPU)."""
    arch = "EntityRetriever"
    _check_common(arch, encoder, encoder_dtype, encoder_batch, encoder_lr_scale, topic, max_topic, dropout_masks)
    _check(arch, "passage_length", _is_int(passage_length) and passage_length >= 1, "an int >= 1", passage_length)
    _check(arch, "stride", _is_int(stride) and 1 <= stride <= passage_length if _is_int(passage_length) else False,
           f"an int in [1, passage_length = {passage_length}]", stride)
    _check(arch, "pooling", pooling in POOLINGS, f"one of {POOLINGS}", pooling)
    _check(arch, "init_scale", isinstance(init_scale, (int, float)) and init_scale > 0, "a positive number", init_scale)
    return Model(
        "entity_retriever", torch_layer_forward, init=init, dims={"nE": None},
        attrs={"kind": "retriever", "encoder": encoder, "passage_length": passage_length, "stride": stride,
               "topic": topic, "max_topic": max_topic, "pooling": pooling, "init_scale": float(init_scale),
               "encoder_dtype": encoder_dtype, "encoder_batch": encoder_batch,
               "encoder_lr_scale": float(encoder_lr_scale), "dropout_masks": dropout_masks},
    )


@registry.architectures("spacy-el.EntQAReader.v1")
def build_entqa_reader(
    encoder: str = "",
    max_passage_length: int = 48,
    max_entity_length: int = 32,
    topic: str = "first_token",
    max_topic: int = 8,
    dropout: float = 0.1,
    span_reduction: str = "sum",
    encoder_dtype: str = "auto",
    encoder_batch: int = 64,
    encoder_lr_scale: float = 1.0,
    dropout_masks: str = "uniform",
) -> Model:
    """EntQA's reader (cross-encoder). max_passage_length: wordpieces read of each retrieved passage.
    max_entity_length: wordpieces of title ⊕ description. topic / max_topic: as the retriever's.
    dropout: on the encoder output. span_reduction: "sum" (eq. 2) | "marginal" over a candidate's gold
    spans. encoder_*, dropout_masks: as the retriever's (dropout_masks covers the output dropout too)."""
    arch = "EntQAReader"
    _check_common(arch, encoder, encoder_dtype, encoder_batch, encoder_lr_scale, topic, max_topic, dropout_masks)
    for name, value in (("max_passage_length", max_passage_length), ("max_entity_length", max_entity_length)):
        _check(arch, name, _is_int(value) and value >= 1, "an int >= 1", value)
    _check(arch, "dropout", isinstance(dropout, (int, float)) and 0 <= dropout < 1, "a number in [0, 1)", dropout)
    _check(arch, "span_reduction", span_reduction in ("sum", "marginal"), "'sum' or 'marginal'", span_reduction)
    return Model(
        "entqa_reader", torch_layer_forward, init=init, dims={"nE": None},
        attrs={"kind": "reader", "encoder": encoder, "max_passage_length": max_passage_length,
               "max_entity_length": max_entity_length, "topic": topic, "max_topic": max_topic, "dropout": float(dropout),
               "span_reduction": span_reduction, "encoder_dtype": encoder_dtype, "encoder_batch": encoder_batch,
               "encoder_lr_scale": float(encoder_lr_scale), "dropout_masks": dropout_masks},
    )


def build_torch_layer(model: Model) -> None:
    """Create the torch module from the attrs and dim nE (idempotent)."""
    if model.layers:
        return
    a = model.attrs
    encoder = load_encoder(a["encoder"])
    hidden = int(encoder.config.hidden_size)
    if a["kind"] == "retriever":
        if hidden != model.get_dim("nE"):
            raise ValueError(
                f"[spacy_el] entity_retriever: the passage encoder's width ({hidden}) differs from the KB's entity "
                f"vectors ({model.get_dim('nE')}): build the KB's vectors with the same encoder (kb build --vectors compute)."
            )
        module = PassageEncoder(encoder, a["pooling"], a["init_scale"], a["encoder_dtype"], a["encoder_batch"])
    elif a.get("reader_mode", "per_candidate") == "joint":  # set by the entqa_reader component from its settings
        module = JointReaderModule(encoder, a["encoder_dtype"], a["encoder_batch"], a["dropout"])
    else:
        module = ReaderModule(encoder, a["encoder_dtype"], a["encoder_batch"], a["dropout"])
    set_dropout_masks(module, a["dropout_masks"])
    model.layers.append(
        torch_layer(module, _convert_inputs, _convert_outputs, model.name, shim_class=EncoderLRShim,
                    encoder_lr_scale=a["encoder_lr_scale"])
    )


def init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.has_dim("nE"):
        raise ValueError(f"[spacy_el] Set the {model.name} dim nE (KB entity vector width) first.")
    build_torch_layer(model)


def _convert_inputs(model: Model, X: Any, is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    if isinstance(X, RetrieverBatch):
        args = ArgsKwargs(args=(X.input_ids, X.attention_mask), kwargs={"candidates_fn": X.candidates_fn if is_train else None})
    else:
        args = ArgsKwargs(args=(X.arrays,), kwargs={"gold_spans": X.gold_spans if is_train else None, "span_reduction": X.span_reduction})
    return args, lambda d: X


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """The module's scalar loss -> a (1,) array (or None), backpropagated with the gradient given
    (scalar-loss pattern); the other outputs, detached, become numpy arrays at prediction."""
    _, result = inputs_outputs
    outputs = tuple(t.detach() if is_train else torch_to_numpy(t) for t in result[1:])
    return scalar_loss_outputs(model, result[0], outputs)

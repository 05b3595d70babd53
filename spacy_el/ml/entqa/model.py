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
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal, Tuple

from spacy.util import registry
from thinc.api import ArgsKwargs, Model

from ..arguments import Arguments, argument
from ...errors import Errors
from ..autocast import ENCODER_DTYPES
from ..dropout import DROPOUT_MASKS, set_dropout_masks
from ..thinc_glue import scalar_loss_outputs, torch_layer_forward, torch_to_numpy
from ..torch_io import EncoderLRShim, check_position_limit, load_encoder, torch_layer
from .inputs import RetrieverBatch
from .modules import JointReaderModule, PassageEncoder, ReaderModule

__all__ = ["EntityRetrieverArguments", "EntQAReaderArguments", "build_entity_retriever", "build_entqa_reader", "build_torch_layer"]

POOLINGS = ("mean", "cls")
TOPIC_MODES = ("first_token", "first_sentence", "none")


@dataclass(frozen=True)
class EntityRetrieverArguments(Arguments):
    """The arguments of ``spacy-el.EntityRetriever.v1``, their defaults and ranges (documented on
    :func:`build_entity_retriever`)."""

    owner: ClassVar[str] = "EntityRetriever"
    encoder: str = ""
    passage_length: int = argument(32, low=1)
    stride: int = argument(16, low=1)
    topic: Literal[TOPIC_MODES] = "first_token"  # type: ignore[valid-type]
    max_topic: int = argument(8, low=0)
    pooling: Literal[POOLINGS] = "mean"  # type: ignore[valid-type]
    init_scale: float = argument(20.0, low=0.0, low_open=True)
    encoder_dtype: Literal[ENCODER_DTYPES] = "auto"  # type: ignore[valid-type]
    encoder_batch: int = argument(64, low=1)
    encoder_lr_scale: float = argument(1.0, low=0.0)
    dropout_masks: Literal[DROPOUT_MASKS] = "uniform"  # type: ignore[valid-type]

    def check(self) -> None:
        if self.stride > self.passage_length:
            raise self.invalid("stride", f"an int in [1, passage_length = {self.passage_length}]")


@dataclass(frozen=True)
class EntQAReaderArguments(Arguments):
    """The arguments of ``spacy-el.EntQAReader.v1``, their defaults and ranges (documented on
    :func:`build_entqa_reader`)."""

    owner: ClassVar[str] = "EntQAReader"
    encoder: str = ""
    max_passage_length: int = argument(48, low=1)
    max_entity_length: int = argument(32, low=1)
    topic: Literal[TOPIC_MODES] = "first_token"  # type: ignore[valid-type]
    max_topic: int = argument(8, low=0)
    dropout: float = argument(0.1, low=0.0, high=1.0, high_open=True)
    span_reduction: Literal["sum", "marginal"] = "sum"
    encoder_dtype: Literal[ENCODER_DTYPES] = "auto"  # type: ignore[valid-type]
    encoder_batch: int = argument(64, low=1)
    encoder_lr_scale: float = argument(1.0, low=0.0)
    dropout_masks: Literal[DROPOUT_MASKS] = "uniform"  # type: ignore[valid-type]


@registry.architectures("spacy-el.EntityRetriever.v1")
def build_entity_retriever(
    *,
    encoder: str,
    passage_length: int,
    stride: int,
    topic: str,
    max_topic: int,
    pooling: str,
    init_scale: float,
    encoder_dtype: str,
    encoder_batch: int,
    encoder_lr_scale: float,
    dropout_masks: str,
) -> Model:
    """EntQA's passage encoder; the defaults and ranges are :class:`EntityRetrieverArguments`'. encoder: local
    Hugging Face path ("" = packaged MiniLM), the encoder the KB's entity vectors were computed with (the entity
    side of the dual encoder). passage_length / stride: L and S in wordpieces (paper 32 / 16). topic:
    "first_token" (paper) | "first_sentence" | "none"; max_topic: its wordpiece budget. pooling: "mean" | "cls"
    (use the KB encoder's). init_scale: initial score scale s. encoder_dtype: autocast dtype of the transformer.
    encoder_batch: passages per transformer call. encoder_lr_scale: the transformer's learning rate is the
    optimizer's times this. dropout_masks: "bernoulli" (torch's nn.Dropout) | "uniform": how the transformer's
    dropout layers draw their masks in training (:mod:`spacy_el.ml.dropout`: the same masks in distribution,
    cheaper on CPU)."""
    arguments = EntityRetrieverArguments.from_arguments(locals())
    return Model("entity_retriever", torch_layer_forward, init=init, dims={"nE": None},
                 attrs={"kind": "retriever", **arguments.to_dict()})


@registry.architectures("spacy-el.EntQAReader.v1")
def build_entqa_reader(
    *,
    encoder: str,
    max_passage_length: int,
    max_entity_length: int,
    topic: str,
    max_topic: int,
    dropout: float,
    span_reduction: str,
    encoder_dtype: str,
    encoder_batch: int,
    encoder_lr_scale: float,
    dropout_masks: str,
) -> Model:
    """EntQA's reader (cross-encoder); the defaults and ranges are :class:`EntQAReaderArguments`'.
    max_passage_length: wordpieces read of each retrieved passage. max_entity_length: wordpieces of title ⊕
    description. topic / max_topic: as the retriever's. dropout: on the encoder output. span_reduction: "sum"
    (eq. 2) | "marginal" over a candidate's gold spans. encoder_*, dropout_masks: as the retriever's
    (dropout_masks covers the output dropout too)."""
    arguments = EntQAReaderArguments.from_arguments(locals())
    return Model("entqa_reader", torch_layer_forward, init=init, dims={"nE": None},
                 attrs={"kind": "reader", **arguments.to_dict()})


def build_torch_layer(model: Model) -> None:
    """Create the torch module from the attrs and dim nE (idempotent)."""
    if model.layers:
        return
    a = model.attrs
    encoder = load_encoder(a["encoder"])
    hidden = int(encoder.config.hidden_size)
    # The most positions one row reads: the passage, its topic words and the special tokens (and, for the
    # reader, the entity's title and description as a second segment).
    topic = a["max_topic"] if a["topic"] != "none" else 0
    if a["kind"] == "retriever":
        check_position_limit(encoder, model.name, "passage_length", a["passage_length"], extra=topic + 2,
                             name=a["encoder"])
    else:
        check_position_limit(encoder, model.name, "max_passage_length", a["max_passage_length"],
                             extra=topic + a["max_entity_length"] + 3, name=a["encoder"])
    if a["kind"] == "retriever":
        if hidden != model.get_dim("nE"):
            raise ValueError(Errors.E916.format(hidden=hidden, width=model.get_dim("nE")))
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
        raise ValueError(Errors.E915.format(model=model.name, dims="nE (KB entity vector width)"))
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

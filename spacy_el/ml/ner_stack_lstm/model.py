"""Thinc glue for the Stack-LSTM joint NER + EL model: ``spacy-el.NerStackLstm.v1``.

The model of the ``ner_stack_lstm`` component. It chains a spaCy tok2vec sublayer (``List[Doc] ->
List[Floats2d]``, any width ``W``: a CNN with static vectors, a character embedding, or a transformer
listener) and the PyTorch module :class:`~spacy_el.ml.ner_stack_lstm.modules.StackLstmForward` (around
:class:`~spacy_el.ml.ner_stack_lstm.modules.StackLstmNerEl`), wrapped as ``PyTorchWrapper_v3`` wraps it but
with a shim whose prediction stays in eval mode (``torch_io.torch_layer``: thread-safe prediction). The
token vectors of the batch are concatenated, handed to torch, and their gradient comes back to the
tok2vec's backprop.

Input: a :class:`~spacy_el.ml.ner_stack_lstm.inputs.StackLstmBatch` (the documents, the segments read as
sentences, and either the teacher-forcing arrays or ``None`` for greedy parsing, plus the candidate
look-up). Output: ``(loss, StackLstmOutput)``. The torch module computes the loss itself
(:func:`~spacy_el.ml.ner_stack_lstm.losses.compute_losses` over the enabled tasks, divided by the number of
sentences) and returns it as a ``(1,)`` array (the scalar-loss pattern of :mod:`spacy_el.ml.thinc_glue`):
the component's ``get_loss`` gives ``d_loss = 1`` and the backprop runs torch autograd from the loss. The
other outputs are detached numpy arrays (:class:`~spacy_el.ml.ner_stack_lstm.modules.StackLstmOutput`).

The PyTorch layer is built lazily from the dims ``nW`` (tok2vec width), ``nA`` (actions), ``nE``
(KB vector width, 0 without a KB) and ``nL`` (learned entity embeddings); the component saves them and
calls :func:`build_torch_layer` before loading weights (safetensors, never pickled).
"""
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, List, Literal, Optional, Tuple

import numpy as np
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d

from ..arguments import Arguments, argument
from ...errors import Errors
from ..dropout import DROPOUT_MASKS, set_dropout_masks
from ..thinc_glue import scalar_loss_outputs
from ..torch_io import torch_layer
from .inputs import StackLstmBatch
from .modules import ENTITY_VECTORS, StackLstmForward, StackLstmNerEl, StackLstmOutput, StackLstmSizes

__all__ = ["StackLstmArguments", "build_ner_stack_lstm", "build_torch_layer", "set_learned_entities"]


@dataclass(frozen=True)
class StackLstmArguments(Arguments):
    """The arguments of ``spacy-el.NerStackLstm.v1`` but its ``tok2vec``, their defaults and ranges (documented
    on :func:`build_ner_stack_lstm`)."""

    owner: ClassVar[str] = "NerStackLstm"
    hidden_width: int = argument(100, low=1)
    action_width: int = argument(20, low=1)
    attention_width: int = argument(100, low=1)
    el_hidden_width: int = argument(256, low=1)
    nil_hidden_width: int = argument(100, low=1)
    entity_vectors: Literal[ENTITY_VECTORS] = "kb"  # type: ignore[valid-type]
    learned_width: int = argument(64, low=1)
    dropout: float = argument(0.3, low=0.0, high=1.0, high_open=True)
    use_sentence_rep: bool = True
    use_mention_rep: bool = True
    candidate_evidence: bool = False
    dropout_masks: Literal[DROPOUT_MASKS] = "uniform"  # type: ignore[valid-type]


@registry.architectures("spacy-el.NerStackLstm.v1")
def build_ner_stack_lstm(
    *,
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int,
    action_width: int,
    attention_width: int,
    el_hidden_width: int,
    nil_hidden_width: int,
    entity_vectors: str,
    learned_width: int,
    dropout: float,
    use_sentence_rep: bool,
    use_mention_rep: bool,
    candidate_evidence: bool,
    dropout_masks: str,
) -> Model[StackLstmBatch, Tuple[Any, StackLstmOutput]]:
    """The defaults and ranges are :class:`StackLstmArguments`'. tok2vec: the word features. hidden_width: every
    LSTM's width (the paper: 100). entity_vectors: "kb" (the KB's vectors), "learned" (an embedding per entity
    seen in training, others share one) or "kb+learned" (both, concatenated). use_sentence_rep /
    use_mention_rep: the paper's ablations. candidate_evidence: the candidate generator's similarity joins each
    candidate's features and the chunk's candidate evidence the NIL classifier's input (for the dense and hybrid
    generators; not in the paper; :mod:`~spacy_el.ml.ner_stack_lstm.modules`). dropout_masks: "bernoulli" (torch's
    nn.Dropout) | "uniform": how the dropout layers draw their masks in training (:mod:`spacy_el.ml.dropout`:
    the same masks in distribution, cheaper on CPU)."""
    arguments = StackLstmArguments.from_arguments(locals())
    return Model(
        "stack_lstm_ner_el", forward, init=init, layers=[tok2vec], refs={"tok2vec": tok2vec},
        dims={"nW": None, "nA": None, "nE": None, "nL": None}, attrs=arguments.to_dict(),
    )


def build_torch_layer(model: Model) -> None:
    """Create the PyTorch layer from the model's dims (idempotent)."""
    if len(model.layers) > 1:
        return
    a = model.attrs
    sizes = StackLstmSizes(
        word_width=model.get_dim("nW"), n_actions=model.get_dim("nA"), entity_width=model.get_dim("nE"),
        n_learned=model.get_dim("nL"), hidden_width=a["hidden_width"], action_width=a["action_width"],
        attention_width=a["attention_width"], el_hidden_width=a["el_hidden_width"], nil_hidden_width=a["nil_hidden_width"],
        learned_width=a["learned_width"], dropout=a["dropout"], use_sentence_rep=a["use_sentence_rep"],
        use_mention_rep=a["use_mention_rep"], entity_vectors=a["entity_vectors"],
        candidate_evidence=a["candidate_evidence"],
    )
    net = StackLstmForward(StackLstmNerEl(sizes))
    set_dropout_masks(net, a["dropout_masks"])
    model.layers.append(torch_layer(net, _convert_inputs, _convert_outputs, "ner_stack_lstm"))


def set_learned_entities(model: Model, rows: np.ndarray) -> None:
    """Give the entities of KB ``rows`` (sorted, unique) their own learned embedding (after build)."""
    net = model.layers[1].shims[0]._model.net
    if net.uses_learned:
        net.learned_rows.copy_(torch.as_tensor(rows, dtype=torch.long))


def init(model: Model, X: Optional[StackLstmBatch] = None, Y: Optional[Any] = None) -> None:
    tok2vec = model.get_ref("tok2vec")
    if X is not None and X.docs:
        tok2vec.initialize(X=X.docs)
    else:
        tok2vec.initialize()
    if not model.has_dim("nW"):
        model.set_dim("nW", tok2vec.get_dim("nO"))
    for name in ("nA", "nE", "nL"):
        if not model.has_dim(name):
            raise ValueError(Errors.E915.format(model="NerStackLstm", dims=f"dim {name}"))
    build_torch_layer(model)


def forward(model: Model, X: StackLstmBatch, is_train: bool) -> Tuple[Tuple[Any, StackLstmOutput], Callable]:
    if not X.segments:
        # Nothing to read (empty or whitespace-only documents): the tok2vec is not called, since some
        # tok2vecs fail on a batch without tokens (CharacterEmbed + MaxoutWindowEncoder: a blis shape
        # error), and its output would not be used.
        return (model.ops.alloc1f(1), StackLstmOutput.empty()), lambda dY: X
    tok2vec = model.get_ref("tok2vec")
    tokvecs, backprop_tok2vec = tok2vec(X.docs, is_train)
    doc_lengths = [len(t) for t in tokvecs]
    flat = model.ops.flatten(tokvecs)
    (loss, output), backprop_torch = model.layers[1]((flat, X), is_train)

    def backprop(dY: Any) -> StackLstmBatch:
        d_flat = backprop_torch(dY)
        backprop_tok2vec(model.ops.unflatten(d_flat, model.ops.asarray1i(doc_lengths)))
        return X

    return (loss, output), backprop


def _convert_inputs(model: Model, X: Tuple[Floats2d, StackLstmBatch], is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    flat, batch = X
    tokvecs = xp2torch(flat, requires_grad=is_train, device=model.shims[0].device)

    def convert_back(d_inputs: ArgsKwargs) -> Floats2d:
        grad = d_inputs.args[0]
        return model.ops.alloc2f(*flat.shape) if grad is None else torch2xp(grad)

    return ArgsKwargs(args=(tokvecs,), kwargs={"batch": batch}), convert_back


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """The module's scalar loss -> a (1,) array, backpropagated with the gradient given (scalar-loss pattern);
    the outputs are numpy already."""
    _, (loss, output) = inputs_outputs
    return scalar_loss_outputs(model, loss, output)

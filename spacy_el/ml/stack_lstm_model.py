"""Thinc glue for the Stack-LSTM joint NER + EL model: ``spacy-el.StackLstmNerEl.v1``.

The Model chains a spaCy tok2vec sublayer (``List[Doc] -> List[Floats2d]``, any width ``W``: a CNN
with static vectors, a character embedding, or a transformer listener) and the PyTorch module
:class:`~spacy_el.ml.stack_lstm.StackLstmNerEl`, wrapped as ``PyTorchWrapper_v3`` wraps it but with a
shim whose prediction stays in eval mode (``torch_io.torch_layer``: thread-safe prediction). The token
vectors of the batch are concatenated, handed to torch, and their gradient comes back to the
tok2vec's backprop.

Input: a :class:`StackLstmBatch` (the documents, the segments read as sentences, and either the
teacher-forcing arrays or ``None`` for greedy parsing, plus the candidate look-up). Output:
``(loss, StackLstmOutput)``. As in ``joint_coref_model`` the torch module computes the loss itself
(``L_NER + L_EL + L_NIL`` over the enabled tasks, divided by the number of sentences) and returns it
as a ``(1,)`` array; the component's ``get_loss`` gives ``d_loss = 1`` and the backprop runs torch
autograd from the loss. The other outputs are detached numpy arrays.

The PyTorch layer is built lazily from the dims ``nW`` (tok2vec width), ``nA`` (actions), ``nE``
(KB vector width, 0 without a KB) and ``nL`` (learned entity embeddings); the component saves them and
calls :func:`build_torch_layer` before loading weights (safetensors, never pickled).
"""
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from thinc.types import Floats2d

import torch
from torch import nn

from .stack_lstm import ENTITY_VECTORS, GoldActions, StackLstmNerEl, StackLstmSizes, losses
from .stack_lstm_batch import CandidateArrays, Segment
from .torch_io import torch_layer

TASKS = ("joint", "ner", "el")
#: mention texts -> their candidates
CandidateFn = Callable[[List[str]], CandidateArrays]


@dataclass
class StackLstmBatch:
    """docs: the documents; segments: what is read as one sentence each; token_index ``(B, L)`` and
    lengths ``(B,)``: see ``stack_lstm_batch.pad_segments``. gold: the teacher-forcing arrays (training,
    or linking given mentions), None for greedy parsing. gold_candidates, gold_candidate ``(K,)`` and
    linkable ``(K,)``: the gold chunks' candidates, the gold's position among them (-1: none) and
    whether the chunk has a KB entity (training only). candidates: the look-up for predicted chunks
    (None: do not link). tasks: which losses count. use_nil: run the NIL classifier. space: whitespace
    tokens ``(B, L)``, which greedy parsing never starts an entity with."""

    docs: List[Doc]
    segments: List[Segment]
    token_index: np.ndarray
    lengths: np.ndarray
    gold: Optional[dict] = None
    gold_candidates: Optional[CandidateArrays] = None
    gold_candidate: Optional[np.ndarray] = None
    linkable: Optional[np.ndarray] = None
    candidates: Optional[CandidateFn] = None
    tasks: str = "joint"
    use_nil: bool = True
    space: Optional[np.ndarray] = None  # (B, L) bool, whitespace tokens (greedy parsing)

    @property
    def with_loss(self) -> bool:
        return self.gold_candidate is not None


@dataclass
class StackLstmOutput:
    """Reduced chunks (``R``): segment ``(R,)``, start/end ``(R,)`` in segment offsets, action ``(R,)``;
    nil_prob ``(R,)`` (the NIL classifier's P(no KB entity); NaN when it is not used); candidate rows
    ``(R, C)`` (-1 padding) and probabilities ``(R, C)`` (softmax over the candidates)."""

    segment: np.ndarray
    start: np.ndarray
    end: np.ndarray
    action: np.ndarray
    nil_prob: np.ndarray
    candidate_rows: np.ndarray
    candidate_probs: np.ndarray

    @classmethod
    def empty(cls) -> "StackLstmOutput":
        long = np.zeros(0, dtype=np.int64)
        return cls(long, long, long, long, np.zeros(0, np.float32), np.zeros((0, 1), np.int64), np.zeros((0, 1), np.float32))


@registry.architectures("spacy-el.StackLstmNerEl.v1")
def build_stack_lstm_ner_el(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 100,
    action_width: int = 20,
    attention_width: int = 100,
    el_hidden_width: int = 256,
    nil_hidden_width: int = 100,
    entity_vectors: str = "kb",
    learned_width: int = 64,
    dropout: float = 0.3,
    use_sentence_rep: bool = True,
    use_mention_rep: bool = True,
) -> Model[StackLstmBatch, Tuple[Any, StackLstmOutput]]:
    """tok2vec: the word features. hidden_width: every LSTM's width (the paper: 100). entity_vectors:
    "kb" (the KB's vectors), "learned" (an embedding per entity seen in training, others share one)
    or "kb+learned" (both, concatenated). use_sentence_rep / use_mention_rep: the paper's ablations."""
    for name, value in (("hidden_width", hidden_width), ("action_width", action_width), ("attention_width", attention_width),
                        ("el_hidden_width", el_hidden_width), ("nil_hidden_width", nil_hidden_width), ("learned_width", learned_width)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"[spacy_el] StackLstmNerEl {name} must be a positive integer, got {value!r}.")
    if entity_vectors not in ENTITY_VECTORS:
        raise ValueError(f"[spacy_el] entity_vectors must be one of {ENTITY_VECTORS}, got {entity_vectors!r}.")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"[spacy_el] dropout must be in [0, 1), got {dropout}.")
    attrs = {
        "hidden_width": hidden_width, "action_width": action_width, "attention_width": attention_width,
        "el_hidden_width": el_hidden_width, "nil_hidden_width": nil_hidden_width, "entity_vectors": entity_vectors,
        "learned_width": learned_width, "dropout": dropout, "use_sentence_rep": use_sentence_rep,
        "use_mention_rep": use_mention_rep,
    }
    return Model(
        "stack_lstm_ner_el", forward, init=init, layers=[tok2vec], refs={"tok2vec": tok2vec},
        dims={"nW": None, "nA": None, "nE": None, "nL": None}, attrs=attrs,
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
    )
    model.layers.append(torch_layer(StackLstmForward(StackLstmNerEl(sizes)), _convert_inputs, _convert_outputs, "ner_stack_lstm"))


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
            raise ValueError(f"[spacy_el] Set the StackLstmNerEl dim {name} before initialising.")
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
    _, (loss, output) = inputs_outputs

    def convert_for_torch_backward(d_loss: Any) -> ArgsKwargs:
        grad = xp2torch(model.ops.asarray(d_loss), device=loss.device).to(loss.dtype)
        return ArgsKwargs(args=(loss,), kwargs={"grad_tensors": grad})

    return (torch2xp(loss.detach()), output), convert_for_torch_backward


class StackLstmForward(nn.Module):
    """The torch entry point: token vectors + batch -> (loss, numpy outputs)."""

    def __init__(self, net: StackLstmNerEl):
        super().__init__()
        self.net = net

    def forward(self, tokvecs: torch.Tensor, batch: StackLstmBatch) -> Tuple[torch.Tensor, StackLstmOutput]:
        net, device = self.net, self.net.device
        index = torch.as_tensor(batch.token_index, device=device)
        lengths = torch.as_tensor(batch.lengths, device=device)
        mask = (torch.arange(index.size(1), device=device)[None, :] < lengths[:, None]).to(tokvecs.dtype)
        words = tokvecs[index] * mask[..., None]
        enc = net.encode(words, lengths)
        if batch.space is not None:
            enc.space = torch.as_tensor(batch.space, device=device)
        if batch.gold is not None:
            gold = GoldActions(**{k: torch.as_tensor(v, device=device) for k, v in batch.gold.items()})
            logits, reductions = net.teacher_forced(enc, gold)
        else:
            gold, logits = None, None
            _, _, reductions = net.decode(enc)
        starts, ends = reductions.start.cpu().numpy(), reductions.end.cpu().numpy()
        segments = reductions.sentence.cpu().numpy()
        link = batch.tasks != "ner" and (batch.gold_candidates is not None or batch.candidates is not None)
        scores = nil = None
        candidates: Optional[CandidateArrays] = None
        if link and len(segments):
            if batch.gold_candidates is not None:
                candidates = batch.gold_candidates
            else:
                texts = [_segment_text(batch, s, a, b) for s, a, b in zip(segments.tolist(), starts.tolist(), ends.tolist())]
                candidates = batch.candidates(texts)
            rows = torch.as_tensor(candidates.rows, device=device)
            scores = net.candidate_scores(
                reductions.features, rows, torch.as_tensor(candidates.vectors, device=device), torch.as_tensor(candidates.priors, device=device)
            )
            if batch.use_nil:
                nil = net.nil_logits(reductions.stack_state)
        loss = tokvecs.new_zeros(1)
        if batch.with_loss and gold is not None:
            ner, el, nil_loss = losses(
                net, logits, gold.actions, scores, torch.as_tensor(batch.gold_candidate, device=device),
                nil, torch.as_tensor(batch.linkable, device=device, dtype=tokvecs.dtype),
            )
            wanted = {"joint": (ner, el, nil_loss), "ner": (ner,), "el": (el, nil_loss)}[batch.tasks]
            # "+ 0 x tokvecs": a batch without any gold chunk still has a graph to backpropagate.
            loss = (sum(wanted) / len(batch.segments) + 0.0 * tokvecs.sum()).reshape(1)
        output = _outputs(segments, starts, ends, reductions.action.cpu().numpy(), scores, nil, candidates)
        return loss, output


def _segment_text(batch: StackLstmBatch, segment: int, start: int, end: int) -> str:
    seg = batch.segments[segment]
    return batch.docs[seg.doc][seg.start + start : seg.start + end].text


def _outputs(segments: np.ndarray, starts: np.ndarray, ends: np.ndarray, actions: np.ndarray, scores: Optional[torch.Tensor],
             nil: Optional[torch.Tensor], candidates: Optional[CandidateArrays]) -> StackLstmOutput:
    R = len(segments)
    if scores is None or candidates is None:
        rows, probs = np.full((R, 1), -1, dtype=np.int64), np.zeros((R, 1), dtype=np.float32)
    else:
        rows = candidates.rows
        with torch.no_grad():
            # A mention without candidates has only -inf scores: its probabilities are 0, not NaN.
            probs_t = torch.softmax(scores.float().masked_fill(torch.isinf(scores).all(-1, keepdim=True), 0.0), -1)
            probs = (probs_t * (torch.as_tensor(rows, device=scores.device) >= 0)).cpu().numpy()
    if nil is None:
        nil_prob = np.full(R, np.nan, dtype=np.float32)
    else:
        nil_prob = (1.0 - torch.sigmoid(nil.detach().float())).cpu().numpy()
    return StackLstmOutput(segments, starts, ends, actions, nil_prob, rows, probs)


__all__ = ["build_stack_lstm_ner_el", "build_torch_layer", "set_learned_entities", "StackLstmBatch", "StackLstmOutput", "TASKS"]

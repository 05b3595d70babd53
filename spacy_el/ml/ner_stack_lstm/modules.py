"""The Stack-LSTM joint NER + EL model as a PyTorch module (the ``ner_stack_lstm`` component; no Thinc here:
:mod:`spacy_el.ml.ner_stack_lstm.model` is the glue).

Seed paper: ``stack-lstm-joint-ner-el.txt`` (Martins et al., 2019), building on Lample et al. (2016).
Notation: a batch holds ``B`` sentences of at most ``L`` tokens, word features of width ``W`` (from a
spaCy tok2vec), LSTM width ``H``. The transition system is ``spacy_el.algorithms.transition_system``.

Four LSTMs read the parser state, each started from a learned *guard* item (an empty structure is
the state after reading the guard alone):

* **buffer** - the words still to be read, pushed last word first; because SHIFT and OUT always
  take the next word, the buffer state with ``j`` words read is the LSTM over
  ``[guard, w_{n-1}, ..., w_j]``, computed once per sentence (:attr:`Encoded.buffer_states`);
* **stack** - the words of the entity being built. REDUCE pops the whole stack, so the stack is
  always the guard plus a run of SHIFTed words: push is one LSTM step and "pop all" resets to the
  guard state, both O(1) (no per-position history needs keeping when nothing pops a single item);
* **output** - OUT words and the composed representations of reduced chunks (a bi-LSTM over
  ``[label embedding, chunk words]``, as Lample et al.'s composition function);
* **action** - the embeddings of the actions taken so far.

The sentence representation ``v_t`` attends over the first bi-LSTM layer ``h1`` with the query
``q_t`` = the mean of ``h1`` over the stack's words: ``z_tw = u^T tanh(W1 h1_w + W2 q_t)``. The paper
prints the score without the ``tanh``; without a non-linearity ``u^T W2 q_t`` is the same for
every word and cancels in the softmax, so the query could not matter. ``d_t = [b_t; s_t; a_t; o_t;
v_t]`` -> affine -> softmax over the allowed actions.

At every REDUCE the chunk is linked: each candidate is ``[entity vector; prior; m; v_t; a_t]`` with
``m`` the mean of the second bi-LSTM layer ``h2`` over the chunk -> affine -> tanh -> affine ->
softmax over the candidates; a NIL classifier ``sigmoid(affine(tanh(affine(s_t))))`` on the stack
state says whether the chunk is linkable. The linking decision does not feed back into the parser
state, so at inference all chunks of a batch are linked in one pass after parsing.

``candidate_evidence`` (not in the paper; for the dense and hybrid generators, whose lists are never
empty where the alias table's would be): each candidate also carries the generator's mention-entity
similarity and a flag for "the generator gave one", and the NIL classifier also reads the chunk's
candidate evidence, ``[best similarity; any similarity; best prior; any candidate]``.

Training is teacher-forced (:meth:`StackLstmNerEl.teacher_forced`): with gold actions every state is
known in advance, so each LSTM runs once over whole sequences instead of step by step. Inference
(:meth:`StackLstmNerEl.decode`) steps all sentences of a batch together, greedily; given ``forced``
actions it follows them instead, and its scores then equal the teacher-forced ones (tested).
"""
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ...errors import Errors

from .inputs import CandidateArrays, StackLstmBatch
from .losses import compute_losses

SHIFT = 0
OUT = 1
FIRST_REDUCE = 2
ENTITY_VECTORS = ("kb", "learned", "kb+learned")
State = Tuple[torch.Tensor, torch.Tensor]


@dataclass
class StackLstmSizes:
    """Sizes and switches. word_width ``W``: tok2vec width; n_actions: 2 + entity labels; entity_width
    ``nE``: KB vector width; n_learned ``nL``: entities with a learned embedding (``entity_vectors``
    "learned" or "kb+learned"). The paper: H = 100, EL hidden 5000, NIL hidden 100, dropout 0.3."""

    word_width: int
    n_actions: int
    entity_width: int
    n_learned: int = 0
    hidden_width: int = 100
    action_width: int = 20
    attention_width: int = 100
    el_hidden_width: int = 256
    nil_hidden_width: int = 100
    learned_width: int = 64
    dropout: float = 0.3
    use_sentence_rep: bool = True
    use_mention_rep: bool = True
    entity_vectors: str = "kb"
    candidate_evidence: bool = False

    def __post_init__(self) -> None:
        if self.entity_vectors not in ENTITY_VECTORS:
            raise ValueError(Errors.E021.format(what="entity_vectors", name=self.entity_vectors, known=ENTITY_VECTORS))
        if self.n_actions < FIRST_REDUCE + 1:
            raise ValueError(Errors.E923)


@dataclass
class Encoded:
    """Per-sentence encodings. words: ``(B, L, W)``; h1, h2: ``(B, L, 2H)``; prefix1, prefix2:
    ``(B, L+1, 2H)`` prefix sums of h1/h2 (row ``i`` = sum of the first ``i`` words); keys:
    ``(B, L, A)`` = ``W1 h1``; mask: ``(B, L)`` bool; lengths: ``(B,)``; buffer_states: ``(B, L+1, H)``,
    row ``k`` = the buffer holding the last ``k`` words; space: see below."""

    words: torch.Tensor
    h1: torch.Tensor
    h2: torch.Tensor
    prefix1: torch.Tensor
    prefix2: torch.Tensor
    keys: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    buffer_states: torch.Tensor
    #: ``(B, L)`` bool: whitespace tokens, which the parser never starts an entity with (decoding only).
    space: Optional[torch.Tensor] = None


@dataclass
class Reductions:
    """The chunks reduced in a batch (``R`` of them) and what linking them needs.

    sentence, start, end, action: ``(R,)`` long; features: ``(R, F)`` = ``[m; v_t; a_t]`` (zeros where
    an ablation removes a part); stack_state: ``(R, H)``, ``s_t`` for the NIL classifier.
    """

    sentence: torch.Tensor
    start: torch.Tensor
    end: torch.Tensor
    action: torch.Tensor
    features: torch.Tensor
    stack_state: torch.Tensor


@dataclass
class GoldActions:
    """Teacher-forcing inputs, built by :func:`spacy_el.ml.ner_stack_lstm.inputs.gold_actions` (all long tensors).

    actions, buf, step_config: ``(B, T)`` per step: the gold action (-1 padding), the index of the
    first buffer word, and the stack configuration (index into the ``config_*`` arrays; sentence
    ``b``'s empty stack is configuration ``b``). config_sentence, config_chunk, config_length:
    ``(Q,)``: configuration ``q`` holds the first ``config_length[q]`` words of chunk
    ``config_chunk[q]`` (-1 and 0 for the empty ones). chunk_sentence, chunk_start, chunk_end,
    chunk_action, chunk_step, chunk_config: ``(K,)`` the gold chunks, their REDUCE step and full
    configuration. items: ``(B, I)`` the output sequence: ``i < B*L`` is word ``i % L`` of sentence
    ``i // L``, ``B*L + k`` is chunk ``k``; n_items: ``(B,)``; out_count: ``(B, T)`` items output
    before each step.
    """

    actions: torch.Tensor
    buf: torch.Tensor
    step_config: torch.Tensor
    out_count: torch.Tensor
    config_sentence: torch.Tensor
    config_chunk: torch.Tensor
    config_start: torch.Tensor
    config_length: torch.Tensor
    chunk_sentence: torch.Tensor
    chunk_start: torch.Tensor
    chunk_end: torch.Tensor
    chunk_action: torch.Tensor
    chunk_step: torch.Tensor
    chunk_config: torch.Tensor
    items: torch.Tensor
    n_items: torch.Tensor


class StackLstmNerEl(nn.Module):
    """The joint model; see the module docstring."""

    def __init__(self, sizes: StackLstmSizes):
        super().__init__()
        self.sizes = sizes
        W, H, A = sizes.word_width, sizes.hidden_width, sizes.attention_width
        self.dropout = nn.Dropout(sizes.dropout)
        self.bilstm1 = nn.LSTM(W, H, batch_first=True, bidirectional=True)
        self.bilstm2 = nn.LSTM(2 * H, H, batch_first=True, bidirectional=True)
        self.buffer_lstm = nn.LSTM(W, H, batch_first=True)
        self.stack_lstm = nn.LSTM(W, H, batch_first=True)
        self.output_lstm = nn.LSTM(W, H, batch_first=True)
        self.action_lstm = nn.LSTM(sizes.action_width, H, batch_first=True)
        # Guards: buffer, stack, output (width W); action (width action_width).
        self.word_guards = nn.Parameter(torch.randn(3, W) * 0.1)
        self.action_guard = nn.Parameter(torch.randn(sizes.action_width) * 0.1)
        self.action_embeddings = nn.Embedding(sizes.n_actions, sizes.action_width)
        self.label_embeddings = nn.Embedding(sizes.n_actions, W)  # rows of the REDUCE actions are used
        self.compose_lstm = nn.LSTM(W, H, batch_first=True, bidirectional=True)
        self.compose_out = nn.Linear(2 * H, W)
        self.attention_keys = nn.Linear(2 * H, A, bias=False)
        self.attention_query = nn.Linear(2 * H, A)
        self.attention_u = nn.Linear(A, 1, bias=False)
        self.action_scores = nn.Linear(4 * H + 2 * H, sizes.n_actions)
        uses_kb = sizes.entity_vectors in ("kb", "kb+learned")
        uses_learned = sizes.entity_vectors in ("learned", "kb+learned")
        entity_in = (sizes.entity_width if uses_kb else 0) + (sizes.learned_width if uses_learned else 0)
        self.uses_kb, self.uses_learned = uses_kb, uses_learned
        if uses_learned:
            # Row 0 is shared by every entity not seen in training.
            self.learned_entities = nn.Embedding(sizes.n_learned + 1, sizes.learned_width)
            self.register_buffer("learned_rows", torch.zeros(sizes.n_learned, dtype=torch.long))
        self.feature_width = 2 * H + 2 * H + H
        self.candidate_evidence = sizes.candidate_evidence
        evidence = 2 if sizes.candidate_evidence else 0  # per candidate: similarity, has-similarity
        self.el_hidden = nn.Linear(entity_in + 1 + evidence + self.feature_width, sizes.el_hidden_width)
        self.el_out = nn.Linear(sizes.el_hidden_width, 1)
        self.nil_hidden = nn.Linear(H + (NIL_EVIDENCE if sizes.candidate_evidence else 0), sizes.nil_hidden_width)
        self.nil_out = nn.Linear(sizes.nil_hidden_width, 1)

    # -- shared pieces -------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return self.action_guard.device

    def encode(self, words: torch.Tensor, lengths: torch.Tensor) -> Encoded:
        """words ``(B, L, W)`` padded word features, lengths ``(B,)`` (each >= 1)."""
        B, L, _ = words.shape
        words = self.dropout(words)
        mask = torch.arange(L, device=words.device)[None, :] < lengths[:, None]
        packed_lengths = lengths.cpu()
        h1 = _run_packed(self.bilstm1, words, packed_lengths, L)
        h2 = _run_packed(self.bilstm2, self.dropout(h1), packed_lengths, L)
        zeros = words.new_zeros(B, 1, h1.size(-1))
        prefix1 = torch.cat([zeros, h1.cumsum(1)], 1)
        prefix2 = torch.cat([zeros, h2.cumsum(1)], 1)
        # Buffer: [guard, w_{n-1}, ..., w_0]; padding after position n is never read.
        k = torch.arange(1, L + 1, device=words.device)[None, :]
        reversed_index = (lengths[:, None] - k).clamp(min=0)
        reversed_words = words.gather(1, reversed_index[..., None].expand(-1, -1, words.size(-1)))
        guard = self.word_guards[0].expand(B, 1, -1)
        buffer_states = _run_packed(self.buffer_lstm, torch.cat([guard, reversed_words], 1), packed_lengths + 1, L + 1)
        return Encoded(words, h1, h2, prefix1, prefix2, self.attention_keys(h1), mask, lengths, buffer_states)

    def attend(self, enc: Encoded, sentence: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """v for queries ``(Q, 2H)`` over the h1 of their sentences ``(Q,)``: ``(Q, 2H)``."""
        if not self.sizes.use_sentence_rep:
            return query.new_zeros(query.shape)
        z = self.attention_u(torch.tanh(enc.keys[sentence] + self.attention_query(query)[:, None, :])).squeeze(-1)
        z = z.masked_fill(~enc.mask[sentence], float("-inf"))
        return torch.einsum("ql,qld->qd", torch.softmax(z, -1), enc.h1[sentence])

    def stack_query(self, enc: Encoded, sentence: torch.Tensor, start: torch.Tensor, length: torch.Tensor) -> torch.Tensor:
        """q: the mean h1 over words ``start .. start+length`` of each sentence (zeros when empty): ``(Q, 2H)``."""
        total = enc.prefix1[sentence, start + length] - enc.prefix1[sentence, start]
        return total / length.clamp(min=1)[:, None].to(total.dtype)

    def mention_vectors(self, enc: Encoded, sentence: torch.Tensor, start: torch.Tensor, end: torch.Tensor) -> torch.Tensor:
        """m: the mean h2 over each chunk ``(R, 2H)``."""
        total = enc.prefix2[sentence, end] - enc.prefix2[sentence, start]
        return total / (end - start).clamp(min=1)[:, None].to(total.dtype)

    def guard_state(self, lstm: nn.LSTM, guard: torch.Tensor, batch: int) -> State:
        """The (h, c) of ``lstm`` after reading the guard, repeated: each ``(1, batch, H)``."""
        _, (h, c) = lstm(guard.view(1, 1, -1))
        return h.expand(1, batch, -1).contiguous(), c.expand(1, batch, -1).contiguous()

    def compose(self, enc: Encoded, sentence: torch.Tensor, start: torch.Tensor, end: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """The output item of each reduced chunk: bi-LSTM over ``[label, words]`` -> affine: ``(R, W)``."""
        lengths = end - start
        width = int(lengths.max())
        offsets = start[:, None] + torch.arange(width, device=start.device)[None, :]
        words = enc.words[sentence[:, None], offsets.clamp(max=enc.words.size(1) - 1)]
        sequence = torch.cat([self.label_embeddings(action)[:, None, :], words], 1)
        packed = pack_padded_sequence(sequence, (lengths + 1).cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.compose_lstm(packed)
        return torch.tanh(self.compose_out(torch.cat([h[0], h[1]], -1)))

    def action_logits(self, b: torch.Tensor, s: torch.Tensor, a: torch.Tensor, o: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.action_scores(self.dropout(torch.cat([b, s, a, o, v], -1)))

    def link_features(self, m: torch.Tensor, v: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        if not self.sizes.use_mention_rep:
            m = torch.zeros_like(m)
        return torch.cat([m, v, a], -1)

    @staticmethod
    def valid_actions(n_actions: int, buf: torch.Tensor, stack_length: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``(..., n_actions)`` bool: SHIFT needs a buffer word, OUT also an empty stack, REDUCE a stack."""
        buffer_left = buf < lengths
        stack_left = stack_length > 0
        valid = torch.empty(*buf.shape, n_actions, dtype=torch.bool, device=buf.device)
        valid[..., SHIFT] = buffer_left
        valid[..., OUT] = buffer_left & ~stack_left
        valid[..., FIRST_REDUCE:] = stack_left[..., None]
        return valid

    # -- linking -------------------------------------------------------------------------------
    def candidate_scores(self, features: torch.Tensor, rows: torch.Tensor, vectors: torch.Tensor, priors: torch.Tensor,
                         dense: Optional[torch.Tensor] = None, has_dense: Optional[torch.Tensor] = None) -> torch.Tensor:
        """features ``(R, F)``, candidate KB rows ``(R, C)`` (-1 padding), vectors ``(R, C, nE)``,
        priors ``(R, C)``; with ``candidate_evidence`` dense, has_dense ``(R, C)`` -> scores ``(R, C)``,
        ``-inf`` on padding."""
        parts = []
        if self.uses_kb:
            parts.append(vectors)
        if self.uses_learned:
            parts.append(self.learned_entities(self._learned_index(rows)))
        parts.append(priors[..., None])
        if self.candidate_evidence:
            parts += [_or_zeros(dense, priors)[..., None], _or_zeros(has_dense, priors)[..., None]]
        candidate_part = self.dropout(torch.cat(parts, -1))
        # The affine over [candidate; features] split in two, so the mention's share is computed once
        # per mention rather than once per candidate (same result as concatenating).
        n_candidate = candidate_part.size(-1)
        weight = self.el_hidden.weight
        hidden = F.linear(candidate_part, weight[:, :n_candidate], self.el_hidden.bias)
        hidden = hidden + F.linear(self.dropout(features), weight[:, n_candidate:])[:, None, :]
        return self.el_out(torch.tanh(hidden)).squeeze(-1).masked_fill(rows < 0, float("-inf"))

    def _learned_index(self, rows: torch.Tensor) -> torch.Tensor:
        """KB rows -> rows of ``learned_entities`` (0 for entities without one)."""
        known = self.learned_rows
        if known.numel() == 0:
            return torch.zeros_like(rows)
        position = torch.searchsorted(known, rows.clamp(min=0)).clamp(max=known.numel() - 1)
        return torch.where((known[position] == rows) & (rows >= 0), position + 1, torch.zeros_like(rows))

    def nil_logits(self, stack_state: torch.Tensor, evidence: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``(R,)``: the logit of "this chunk is linkable" (the paper's d before the sigmoid), from the stack
        state ``(R, H)`` and, with ``candidate_evidence``, the chunk's ``(R, NIL_EVIDENCE)`` :func:`nil_evidence`."""
        state = self.dropout(stack_state)
        if self.candidate_evidence:
            if evidence is None:
                raise ValueError(Errors.E924)
            state = torch.cat([state, evidence.to(state.dtype)], -1)
        return self.nil_out(torch.tanh(self.nil_hidden(state))).squeeze(-1)

    # -- training ------------------------------------------------------------------------------
    def teacher_forced(self, enc: Encoded, gold: GoldActions) -> Tuple[torch.Tensor, Reductions]:
        """Action logits ``(B, T, n_actions)`` (invalid actions at ``-inf``) for the gold states, and
        the gold chunks' link inputs."""
        B, L, W = enc.words.shape
        T = gold.actions.size(1)
        H = self.sizes.hidden_width
        has_chunks = gold.chunk_sentence.numel() > 0
        # Stack states per configuration: the stack LSTM over [guard, chunk words].
        stack_guard = self.guard_state(self.stack_lstm, self.word_guards[1], 1)[0].view(H)
        config_state = stack_guard.expand(gold.config_chunk.numel(), H)
        composed = enc.words.new_zeros(0, W)
        if has_chunks:
            chunk_length = gold.chunk_end - gold.chunk_start
            width = int(chunk_length.max())
            offsets = gold.chunk_start[:, None] + torch.arange(width, device=enc.words.device)[None, :]
            chunk_words = enc.words[gold.chunk_sentence[:, None], offsets.clamp(max=L - 1)]
            guard = self.word_guards[1].expand(chunk_words.size(0), 1, W)
            stack_states, _ = self.stack_lstm(torch.cat([guard, chunk_words], 1))  # (K, width+1, H)
            in_chunk = gold.config_chunk >= 0
            config_state = torch.where(
                in_chunk[:, None], stack_states[gold.config_chunk.clamp(min=0), gold.config_length], config_state
            )
            composed = self.compose(enc, gold.chunk_sentence, gold.chunk_start, gold.chunk_end, gold.chunk_action)
        query = self.stack_query(enc, gold.config_sentence, gold.config_start, gold.config_length)
        config_v = self.attend(enc, gold.config_sentence, query)
        # Output states: [guard, items...].
        table = torch.cat([enc.words.reshape(B * L, W), composed], 0)
        items = table[gold.items.clamp(min=0)]
        output_states, _ = self.output_lstm(torch.cat([self.word_guards[2].expand(B, 1, W), items], 1))
        # Action states: [guard, a_0, ..., a_{T-2}].
        history = self.action_embeddings(gold.actions[:, :-1].clamp(min=0))
        action_states, _ = self.action_lstm(torch.cat([self.action_guard.expand(B, 1, -1), history], 1))
        rows = torch.arange(B, device=enc.words.device)[:, None].expand(B, T)
        b_t = enc.buffer_states[rows, (enc.lengths[:, None] - gold.buf).clamp(min=0)]
        s_t = config_state[gold.step_config.clamp(min=0)]
        v_t = config_v[gold.step_config.clamp(min=0)]
        o_t = output_states[rows, gold.out_count]
        logits = self.action_logits(b_t, s_t, action_states, o_t, v_t)
        stack_length = gold.config_length[gold.step_config.clamp(min=0)]
        valid = self.valid_actions(self.sizes.n_actions, gold.buf, stack_length, enc.lengths[:, None])
        logits = logits.masked_fill(~valid, float("-inf"))
        # Link inputs at each gold REDUCE.
        k = gold.chunk_sentence
        m = self.mention_vectors(enc, k, gold.chunk_start, gold.chunk_end)
        a_at = action_states[k, gold.chunk_step]
        reductions = Reductions(
            k, gold.chunk_start, gold.chunk_end, gold.chunk_action,
            self.link_features(m, config_v[gold.chunk_config], a_at), config_state[gold.chunk_config],
        )
        return logits, reductions

    # -- inference -----------------------------------------------------------------------------
    def decode(self, enc: Encoded, forced: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor, Reductions]:
        """Greedy parsing of all sentences together (or following ``forced`` ``(B, T)`` actions).

        Each step computes only what changes: the rows of sentences still parsing; attention only
        for those with a non-empty stack (an empty stack's query is 0, so its ``v`` is computed once
        per sentence); each LSTM push only for the rows whose action pushes to that LSTM. Inference
        only (states are updated in place): call it under ``torch.no_grad()``.

        RETURNS: the actions ``(B, T)`` (-1 after a sentence ends), the logits ``(B, T, n_actions)``
        (invalid at ``-inf``) and the reduced chunks with their link inputs.
        """
        B, L, W = enc.words.shape
        device = enc.words.device
        n_actions = self.sizes.n_actions
        lengths = enc.lengths
        all_rows = torch.arange(B, device=device)
        buf = torch.zeros(B, dtype=torch.long, device=device)
        stack_length = torch.zeros_like(buf)
        stack_guard = self.guard_state(self.stack_lstm, self.word_guards[1], B)
        stack = tuple(x.clone() for x in stack_guard)
        output = self.guard_state(self.output_lstm, self.word_guards[2], B)
        history = self.guard_state(self.action_lstm, self.action_guard, B)
        v_empty = self.attend(enc, all_rows, enc.words.new_zeros(B, enc.h1.size(-1)))
        actions: List[torch.Tensor] = []
        all_logits: List[torch.Tensor] = []
        reduced: List[Tuple[torch.Tensor, ...]] = []
        t = 0
        active = (lengths > 0).nonzero().squeeze(-1)
        while active.numel():
            n, b, k = lengths[active], buf[active], stack_length[active]
            v_t = v_empty[active].clone()
            stacked = k > 0
            if bool(stacked.any()):
                rows = active[stacked]
                v_t[stacked] = self.attend(enc, rows, self.stack_query(enc, rows, b[stacked] - k[stacked], k[stacked]))
            s_h, a_h = stack[0][0, active], history[0][0, active]
            logits = self.action_logits(enc.buffer_states[active, n - b], s_h, a_h, output[0][0, active], v_t)
            valid = self.valid_actions(n_actions, b, k, n)
            if enc.space is not None:  # an entity never starts with a whitespace token
                valid[:, SHIFT] &= ~((k == 0) & enc.space[active, b.clamp(max=L - 1)])
            logits = logits.masked_fill(~valid, float("-inf"))
            if forced is None:
                action = logits.argmax(-1)
            elif t < forced.size(1):
                action = forced[active, t]
            else:
                raise ValueError(Errors.E925)
            step_actions = torch.full((B,), -1, dtype=torch.long, device=device)
            step_actions[active] = action
            step_logits = enc.words.new_full((B, n_actions), float("-inf"))
            step_logits[active] = logits
            actions.append(step_actions)
            all_logits.append(step_logits)
            shift, out, reduce = action == SHIFT, action == OUT, action >= FIRST_REDUCE
            word = enc.words[active, b.clamp(max=L - 1)]
            item = word
            if bool(reduce.any()):
                r = active[reduce]
                chunk_start, chunk_end, chunk_action = b[reduce] - k[reduce], b[reduce], action[reduce]
                m = self.mention_vectors(enc, r, chunk_start, chunk_end)
                features = self.link_features(m, v_t[reduce], a_h[reduce])
                reduced.append((r, chunk_start, chunk_end, chunk_action, features, s_h[reduce]))
                item = word.clone()
                item[reduce] = self.compose(enc, r, chunk_start, chunk_end, chunk_action)
                _assign(stack, r, (stack_guard[0][:, r], stack_guard[1][:, r]))
            if bool(shift.any()):
                rows = active[shift]
                _assign(stack, rows, _lstm_step(self.stack_lstm, word[shift], (stack[0][:, rows], stack[1][:, rows])))
            outputs = out | reduce
            if bool(outputs.any()):
                rows = active[outputs]
                _assign(output, rows, _lstm_step(self.output_lstm, item[outputs], (output[0][:, rows], output[1][:, rows])))
            _assign(history, active, _lstm_step(self.action_lstm, self.action_embeddings(action), (history[0][:, active], history[1][:, active])))
            stack_length[active] = torch.where(shift, k + 1, torch.where(reduce, 0, k))
            buf[active] = b + (shift | out).long()
            still = (buf[active] < n) | (stack_length[active] > 0)
            active = active[still]
            t += 1
        if not actions:
            empty = torch.zeros(B, 0, dtype=torch.long, device=device)
            return empty, enc.words.new_zeros(B, 0, n_actions), self._reductions([], enc)
        return torch.stack(actions, 1), torch.stack(all_logits, 1), self._reductions(reduced, enc)

    def _reductions(self, parts: List[Tuple[torch.Tensor, ...]], enc: Encoded) -> Reductions:
        if not parts:
            long = torch.zeros(0, dtype=torch.long, device=enc.words.device)
            H = self.sizes.hidden_width
            return Reductions(long, long, long, long, enc.words.new_zeros(0, self.feature_width), enc.words.new_zeros(0, H))
        columns = list(zip(*parts))
        sentence, start, end, action, features, stack_state = (torch.cat(c, 0) for c in columns)
        # Sentence order, then position: the order teacher forcing lists gold chunks in.
        order = torch.argsort(sentence * (enc.words.size(1) + 1) + start)
        return Reductions(sentence[order], start[order], end[order], action[order], features[order], stack_state[order])


def _run_packed(lstm: nn.LSTM, inputs: torch.Tensor, lengths: torch.Tensor, total_length: int) -> torch.Tensor:
    """An LSTM over padded sequences ``(B, total_length, X)``, packed: no work on padding, and a
    backward direction starts at each sequence's true end. Padding positions come back as zeros."""
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    outputs, _ = lstm(packed)
    return pad_packed_sequence(outputs, batch_first=True, total_length=total_length)[0]


def _lstm_step(lstm: nn.LSTM, inputs: torch.Tensor, state: State) -> State:
    """One push: ``inputs`` ``(B, X)`` read from ``state`` -> the new (h, c), each ``(1, B, H)``."""
    _, new_state = lstm(inputs[:, None, :], state)
    return new_state


def _assign(state: State, rows: torch.Tensor, values: State) -> None:
    """state[rows] = values, in place, for an (h, c) pair of ``(1, B, H)`` tensors."""
    state[0][:, rows] = values[0]
    state[1][:, rows] = values[1]


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
                spans = [_segment_span(batch, s, a, b) for s, a, b in zip(segments.tolist(), starts.tolist(), ends.tolist())]
                candidates = batch.candidates(spans)
            rows = torch.as_tensor(candidates.rows, device=device)
            priors = torch.as_tensor(candidates.priors, device=device)
            dense, has_dense = (None if a is None else torch.as_tensor(a, device=device)
                                for a in (candidates.dense, candidates.has_dense))
            scores = net.candidate_scores(
                reductions.features, rows, torch.as_tensor(candidates.vectors, device=device), priors, dense, has_dense,
            )
            if batch.use_nil:
                evidence = nil_evidence(rows, priors, dense, has_dense) if net.candidate_evidence else None
                nil = net.nil_logits(reductions.stack_state, evidence)
        loss = tokvecs.new_zeros(1)
        if batch.with_loss and gold is not None:
            ner, el, nil_loss = compute_losses(
                net, logits, gold.actions, scores, torch.as_tensor(batch.gold_candidate, device=device),
                nil, torch.as_tensor(batch.linkable, device=device, dtype=tokvecs.dtype),
            )
            wanted = {"joint": (ner, el, nil_loss), "ner": (ner,), "el": (el, nil_loss)}[batch.tasks]
            # "+ 0 x tokvecs": a batch without any gold chunk still has a graph to backpropagate.
            loss = (sum(wanted) / len(batch.segments) + 0.0 * tokvecs.sum()).reshape(1)
        output = _outputs(segments, starts, ends, reductions.action.cpu().numpy(), scores, nil, candidates,
                          batch.similarity_weight)
        return loss, output


#: Width of :func:`nil_evidence`.
NIL_EVIDENCE = 4


def nil_evidence(rows: torch.Tensor, priors: torch.Tensor, dense: Optional[torch.Tensor],
                 has_dense: Optional[torch.Tensor]) -> torch.Tensor:
    """What a chunk's candidate list says about whether it is linkable: ``(R, 4)`` = best similarity (0
    without any), any similarity, best prior, any candidate; from rows ``(R, C)`` (-1 padding), priors,
    dense and has_dense ``(R, C)`` (None: the generator gave no similarity)."""
    valid = rows >= 0
    dense, has_dense = _or_zeros(dense, priors), _or_zeros(has_dense, priors)
    known = valid & (has_dense > 0)
    best_dense = torch.where(known, dense, torch.full_like(dense, -1.0)).max(-1).values
    any_dense = known.any(-1)
    best_dense = torch.where(any_dense, best_dense, torch.zeros_like(best_dense))
    best_prior = torch.where(valid, priors, torch.zeros_like(priors)).max(-1).values
    return torch.stack([best_dense, any_dense.to(priors.dtype), best_prior, valid.any(-1).to(priors.dtype)], -1)


def _or_zeros(values: Optional[torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if values is None else values.to(like.dtype)


def _segment_span(batch: StackLstmBatch, segment: int, start: int, end: int) -> Any:
    """The document span of tokens ``start:end`` of a segment (the generator reads it in its context)."""
    seg = batch.segments[segment]
    return batch.docs[seg.doc][seg.start + start : seg.start + end]


def _outputs(segments: np.ndarray, starts: np.ndarray, ends: np.ndarray, actions: np.ndarray, scores: Optional[torch.Tensor],
             nil: Optional[torch.Tensor], candidates: Optional[CandidateArrays], similarity_weight: float = 0.0) -> StackLstmOutput:
    """The numpy outputs; with ``similarity_weight``, that times the generator's similarity (0 where it gave
    none) is added to each candidate's score before the softmax (prediction only: the loss has its scores)."""
    R = len(segments)
    if scores is None or candidates is None:
        rows, probs = np.full((R, 1), -1, dtype=np.int64), np.zeros((R, 1), dtype=np.float32)
    else:
        rows = candidates.rows
        if similarity_weight and candidates.dense is not None:
            scores = scores + similarity_weight * torch.as_tensor(candidates.dense, device=scores.device, dtype=scores.dtype)
        with torch.no_grad():
            # A mention without candidates has only -inf scores: its probabilities are 0, not NaN.
            probs_t = torch.softmax(scores.float().masked_fill(torch.isinf(scores).all(-1, keepdim=True), 0.0), -1)
            probs = (probs_t * (torch.as_tensor(rows, device=scores.device) >= 0)).cpu().numpy()
    if nil is None:
        nil_prob = np.full(R, np.nan, dtype=np.float32)
    else:
        nil_prob = (1.0 - torch.sigmoid(nil.detach().float())).cpu().numpy()
    return StackLstmOutput(segments, starts, ends, actions, nil_prob, rows, probs)


__all__ = [
    "StackLstmNerEl", "StackLstmForward", "StackLstmOutput", "StackLstmSizes", "Encoded", "Reductions", "GoldActions",
    "ENTITY_VECTORS", "SHIFT", "OUT", "FIRST_REDUCE",
]

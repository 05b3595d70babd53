"""The Stack-LSTM NER transition system (Lample et al., 2016) used by the joint NER+EL model.

Actions, as in the seed paper (Stack-LSTM joint NER and EL, section 3.1):

* ``SHIFT``          next buffer token -> stack (the token is part of an entity);
* ``OUT``            next buffer token -> output (the token is outside any entity);
* ``REDUCE-<label>`` the whole stack -> output as one chunk typed ``<label>``.

Constraints: OUT only with an empty stack, REDUCE only with a non-empty stack, SHIFT only with a
non-empty buffer; a state is final when stack and buffer are both empty.

Because SHIFT always takes the *next* buffer token and REDUCE empties the whole stack, the stack
is always a contiguous token range just before the buffer, and everything before the stack is
output. A state is therefore two indices (plus the chunks produced), never copies of token lists:

    tokens:  [0 ........ stack_start) [stack_start .. buffer_start) [buffer_start .. n_tokens)
              output (OUT words and    stack                          buffer
              reduced chunks)

Entity linking: every REDUCE is where the joint model detects a mention and links it (the paper
scores the candidates of the reduced chunk with the mention representation, the sentence
representation and the action-LSTM state, after a NIL classifier on the stack-LSTM state). The
transition system does not link; after :meth:`TransitionSystem.apply` the state's
``last_chunk`` is the chunk the REDUCE just produced (``None`` after SHIFT/OUT), so a caller
attaches the EL step there. The tokens of that chunk are ``range(chunk.start, chunk.end)``,
which is what the mention representation averages over.

Pure Python/numpy on purpose: the same code drives training (oracle) and batched inference.
"""
from operator import index
from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..errors import Errors

SHIFT = 0
OUT = 1
REDUCE_PREFIX = "REDUCE-"
# The first REDUCE id: REDUCE-<labels[i]> has id N_FIXED_ACTIONS + i.
N_FIXED_ACTIONS = 2


class Chunk(NamedTuple):
    """A typed chunk (entity mention) in token offsets of the processed sequence; end exclusive."""

    start: int
    end: int
    label: str


class State:
    """A parser state over ``n_tokens`` tokens; mutated in place by :meth:`TransitionSystem.apply`.

    Use :meth:`copy` when the previous state must survive (e.g. beam search).
    """

    __slots__ = ("n_tokens", "stack_start", "buffer_start", "chunks", "last_chunk")

    def __init__(self, n_tokens: int) -> None:
        n_tokens = index(n_tokens)
        if n_tokens < 0:
            raise ValueError(Errors.E017.format(n_tokens=n_tokens))
        self.n_tokens = n_tokens
        self.stack_start = 0
        self.buffer_start = 0
        self.chunks: List[Chunk] = []
        # The chunk produced by the latest action if it was a REDUCE: the hook for the EL step.
        self.last_chunk: Optional[Chunk] = None

    @property
    def stack(self) -> range:
        """Token indices on the stack, bottom first."""
        return range(self.stack_start, self.buffer_start)

    @property
    def buffer(self) -> range:
        """Token indices still in the buffer, next token first."""
        return range(self.buffer_start, self.n_tokens)

    @property
    def stack_empty(self) -> bool:
        return self.stack_start == self.buffer_start

    @property
    def buffer_empty(self) -> bool:
        return self.buffer_start == self.n_tokens

    def copy(self) -> "State":
        new = State.__new__(State)
        new.n_tokens = self.n_tokens
        new.stack_start = self.stack_start
        new.buffer_start = self.buffer_start
        new.chunks = list(self.chunks)
        new.last_chunk = self.last_chunk
        return new

    def __repr__(self) -> str:
        return (
            f"State(n_tokens={self.n_tokens}, stack=[{self.stack_start}, {self.buffer_start}), "
            f"buffer=[{self.buffer_start}, {self.n_tokens}), chunks={len(self.chunks)})"
        )


class TransitionSystem:
    """Action inventory, constraints, transitions and static oracle for a fixed label set.

    Action ids: ``SHIFT`` = 0, ``OUT`` = 1, ``REDUCE-<labels[i]>`` = 2 + i. The label order
    therefore defines the ids: keep it fixed between training and inference.
    """

    def __init__(self, labels: Sequence[str]) -> None:
        labels = tuple(labels)
        if not labels:
            # Without a REDUCE action any SHIFT would lead to a state that can never become final.
            raise ValueError(Errors.E018)
        for label in labels:
            if not isinstance(label, str) or not label:
                raise ValueError(Errors.E019.format(label=label))
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ValueError(Errors.E020.format(labels=", ".join(duplicates)))
        self.labels: Tuple[str, ...] = labels
        self.action_names: Tuple[str, ...] = ("SHIFT", "OUT") + tuple(
            REDUCE_PREFIX + label for label in labels
        )
        self._action_ids = {name: i for i, name in enumerate(self.action_names)}
        self._label_ids = {label: N_FIXED_ACTIONS + i for i, label in enumerate(labels)}

    # -- inventory -------------------------------------------------------------------------
    @property
    def n_actions(self) -> int:
        return len(self.action_names)

    def action_id(self, name: str) -> int:
        """Id of an action name such as ``"SHIFT"``, ``"OUT"`` or ``"REDUCE-PER"``."""
        try:
            return self._action_ids[name]
        except KeyError:
            raise ValueError(Errors.E021.format(what="action", name=name, known=", ".join(self.action_names))) from None

    def action_name(self, action: int) -> str:
        return self.action_names[self._check_id(action)]

    def reduce_action(self, label: str) -> int:
        """Id of ``REDUCE-<label>``."""
        try:
            return self._label_ids[label]
        except KeyError:
            known = ", ".join(self.labels)
            raise ValueError(Errors.E021.format(what="entity label", name=label, known=known)) from None

    def label_of(self, action: int) -> Optional[str]:
        """The label of a REDUCE action, ``None`` for SHIFT and OUT."""
        action = self._check_id(action)
        return self.labels[action - N_FIXED_ACTIONS] if action >= N_FIXED_ACTIONS else None

    def _check_id(self, action: int) -> int:
        action = index(action)  # accepts numpy integers, rejects floats
        if not 0 <= action < self.n_actions:
            raise ValueError(Errors.E022.format(action=action, n_actions=self.n_actions))
        return action

    # -- transitions -----------------------------------------------------------------------
    @staticmethod
    def initial_state(n_tokens: int) -> State:
        """All tokens in the buffer; with 0 tokens the initial state is already final."""
        return State(n_tokens)

    @staticmethod
    def is_final(state: State) -> bool:
        return state.stack_empty and state.buffer_empty

    def valid_actions(self, state: State) -> np.ndarray:
        """Boolean mask over the inventory; all False exactly when the state is final."""
        mask = np.zeros(self.n_actions, dtype=bool)
        buffer_left = not state.buffer_empty
        mask[SHIFT] = buffer_left
        mask[OUT] = buffer_left and state.stack_empty
        mask[N_FIXED_ACTIONS:] = not state.stack_empty
        return mask

    def _invalid_reason(self, state: State, action: int) -> Optional[str]:
        if action == SHIFT:
            return "SHIFT needs a non-empty buffer" if state.buffer_empty else None
        if action == OUT:
            if state.buffer_empty:
                return "OUT needs a non-empty buffer"
            return None if state.stack_empty else "OUT needs an empty stack"
        return "REDUCE needs a non-empty stack" if state.stack_empty else None

    def apply(self, state: State, action: int) -> State:
        """Apply ``action`` to ``state`` in place and return it; ValueError if it is invalid.

        After a REDUCE, ``state.last_chunk`` is the chunk just produced (the EL hook).
        """
        action = self._check_id(action)
        reason = self._invalid_reason(state, action)
        if reason is not None:
            raise ValueError(Errors.E023.format(action=self.action_names[action], state=repr(state), reason=reason))
        state.last_chunk = None
        if action == SHIFT:
            state.buffer_start += 1
        elif action == OUT:
            state.buffer_start += 1
            state.stack_start = state.buffer_start
        else:
            chunk = Chunk(state.stack_start, state.buffer_start, self.labels[action - N_FIXED_ACTIONS])
            state.chunks.append(chunk)
            state.last_chunk = chunk
            state.stack_start = state.buffer_start
        return state

    # -- oracle ----------------------------------------------------------------------------
    def oracle_actions(
        self, n_tokens: int, spans: Iterable[Tuple[int, int, str]]
    ) -> List[int]:
        """The gold action ids for ``n_tokens`` tokens with gold ``(start, end, label)`` spans.

        Spans are token offsets into the sequence (end exclusive, as spaCy's ``Span.start`` and
        ``Span.end`` relative to the sentence), non-overlapping, in any order. The sequence is
        unique: a chunk's REDUCE must come right after SHIFTing its last token (one more SHIFT
        would add a foreign token to the stack, and OUT is blocked until the REDUCE), so a static
        oracle is exact. It has ``n_tokens + len(spans)`` actions.
        """
        n_tokens = index(n_tokens)
        if n_tokens < 0:
            raise ValueError(Errors.E017.format(n_tokens=n_tokens))
        checked = []
        for span in spans:
            start, end, label = span
            start, end = index(start), index(end)
            if not 0 <= start < end <= n_tokens:
                raise ValueError(Errors.E024.format(span=tuple(span), n_tokens=n_tokens))
            checked.append((start, end, self.reduce_action(label), span))
        checked.sort(key=lambda item: item[:2])
        for prev, cur in zip(checked, checked[1:]):
            if cur[0] < prev[1]:
                raise ValueError(Errors.E025.format(first=tuple(prev[3]), second=tuple(cur[3])))
        actions: List[int] = []
        position = 0
        for start, end, reduce_id, _ in checked:
            actions.extend([OUT] * (start - position))
            actions.extend([SHIFT] * (end - start))
            actions.append(reduce_id)
            position = end
        actions.extend([OUT] * (n_tokens - position))
        return actions

    def spans_from_actions(self, n_tokens: int, actions: Iterable[int]) -> List[Chunk]:
        """Run ``actions`` from the initial state and return its chunks; ValueError when an
        action is invalid or the sequence does not end in the final state."""
        state = self.initial_state(n_tokens)
        for action in actions:
            self.apply(state, action)
        if not self.is_final(state):
            raise ValueError(Errors.E026.format(state=repr(state)))
        return state.chunks

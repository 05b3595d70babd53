"""The Stack-LSTM NER transition system: inventory, constraints, oracle round trips, batched masks.

Hand examples use made-up sentences (no CoNLL text); the data test reads CoNLL-2003/AIDA train
from ../shared/data at run time only.
"""
import random
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pytest

from spacy_el.algorithms import Chunk, State, TransitionSystem
from spacy_el.algorithms.transition_system import OUT, SHIFT

DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LABELS = ("PER", "LOC", "ORG", "MISC")

Spans = List[Tuple[int, int, str]]


@pytest.fixture(scope="module")
def ts() -> TransitionSystem:
    return TransitionSystem(LABELS)


def run_checked(ts: TransitionSystem, n_tokens: int, actions: Sequence[int]) -> State:
    """Apply actions, asserting each one is allowed by the mask before applying it."""
    state = ts.initial_state(n_tokens)
    for action in actions:
        assert ts.valid_actions(state)[action], (ts.action_name(action), state)
        ts.apply(state, action)
    assert ts.is_final(state)
    assert not ts.valid_actions(state).any()
    return state


def names(ts: TransitionSystem, actions: Sequence[int]) -> List[str]:
    return [ts.action_name(a) for a in actions]


# -- inventory -----------------------------------------------------------------------------


def test_inventory(ts: TransitionSystem) -> None:
    assert ts.action_names == ("SHIFT", "OUT", "REDUCE-PER", "REDUCE-LOC", "REDUCE-ORG", "REDUCE-MISC")
    assert ts.n_actions == 6
    assert ts.action_id("SHIFT") == SHIFT == 0 and ts.action_id("OUT") == OUT == 1
    assert ts.action_id("REDUCE-ORG") == ts.reduce_action("ORG") == 4
    assert ts.label_of(4) == "ORG" and ts.label_of(np.int64(SHIFT)) is None
    with pytest.raises(ValueError, match="E021.*'REDUCE-FOO'"):
        ts.action_id("REDUCE-FOO")
    with pytest.raises(ValueError, match="E022"):
        ts.action_name(6)


@pytest.mark.parametrize("labels", [(), ("PER", "PER"), ("PER", "")])
def test_bad_label_sets(labels: Tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        TransitionSystem(labels)


# -- oracle round trips ----------------------------------------------------------------------


def test_paper_table_2(ts: TransitionSystem) -> None:
    """'Obama met Donald Trump': the action sequence of the paper's Table 2."""
    actions = ts.oracle_actions(4, [(0, 1, "PER"), (2, 4, "PER")])
    assert names(ts, actions) == ["SHIFT", "REDUCE-PER", "OUT", "SHIFT", "SHIFT", "REDUCE-PER"]
    assert ts.spans_from_actions(4, actions) == [Chunk(0, 1, "PER"), Chunk(2, 4, "PER")]


@pytest.mark.parametrize(
    "n_tokens,spans,expected",
    [
        (0, [], []),  # empty sentence: no actions, initial state is final
        (3, [], ["OUT", "OUT", "OUT"]),  # all O
        (3, [(0, 2, "ORG")], ["SHIFT", "SHIFT", "REDUCE-ORG", "OUT"]),  # at sentence start
        (3, [(1, 3, "LOC")], ["OUT", "SHIFT", "SHIFT", "REDUCE-LOC"]),  # at sentence end
        (1, [(0, 1, "MISC")], ["SHIFT", "REDUCE-MISC"]),  # single-token sentence and entity
        (  # adjacent entities, no OUT between them
            4,
            [(0, 1, "PER"), (1, 3, "ORG"), (3, 4, "LOC")],
            ["SHIFT", "REDUCE-PER", "SHIFT", "SHIFT", "REDUCE-ORG", "SHIFT", "REDUCE-LOC"],
        ),
        (2, [(0, 2, "PER")], ["SHIFT", "SHIFT", "REDUCE-PER"]),  # whole sentence one entity
    ],
)
def test_hand_examples(ts: TransitionSystem, n_tokens: int, spans: Spans, expected: List[str]) -> None:
    actions = ts.oracle_actions(n_tokens, spans)
    assert names(ts, actions) == expected
    state = run_checked(ts, n_tokens, actions)
    assert state.chunks == spans
    assert ts.spans_from_actions(n_tokens, actions) == spans


def test_oracle_sorts_unordered_spans(ts: TransitionSystem) -> None:
    spans = [(3, 4, "LOC"), (0, 2, "PER")]
    assert ts.spans_from_actions(5, ts.oracle_actions(5, spans)) == sorted(spans)


@pytest.mark.parametrize(
    "n_tokens,spans,message",
    [
        (4, [(0, 2, "PER"), (1, 3, "ORG")], "E025"),
        (4, [(0, 2, "PER"), (0, 2, "ORG")], "E025"),
        (4, [(2, 5, "PER")], "E024"),
        (4, [(-1, 1, "PER")], "E024"),
        (4, [(2, 2, "PER")], "E024"),
        (4, [(0, 1, "DATE")], "E021.*'DATE'"),
        (-1, [], "E017"),
    ],
)
def test_oracle_rejects_bad_spans(ts: TransitionSystem, n_tokens: int, spans: Spans, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ts.oracle_actions(n_tokens, spans)


# -- constraints -------------------------------------------------------------------------------


def test_invalid_actions_rejected(ts: TransitionSystem) -> None:
    state = ts.initial_state(2)
    with pytest.raises(ValueError, match=r"E023.* REDUCE-PER .*State\(n_tokens=2"):
        ts.apply(state, ts.reduce_action("PER"))
    ts.apply(state, SHIFT)
    with pytest.raises(ValueError, match="E023.* OUT "):
        ts.apply(state, OUT)
    ts.apply(state, SHIFT)
    with pytest.raises(ValueError, match="E023.* SHIFT "):
        ts.apply(state, SHIFT)
    with pytest.raises(ValueError, match="E022"):
        ts.apply(state, 99)
    ts.apply(state, ts.reduce_action("LOC"))
    assert ts.is_final(state)
    for action in range(ts.n_actions):  # nothing is valid in a final state
        with pytest.raises(ValueError, match="E023"):
            ts.apply(state.copy(), action)
    # A rejected action leaves the state untouched.
    assert (state.stack_start, state.buffer_start, state.chunks) == (2, 2, [Chunk(0, 2, "LOC")])


def test_spans_from_actions_rejects_incomplete_or_invalid(ts: TransitionSystem) -> None:
    with pytest.raises(ValueError, match="E026"):
        ts.spans_from_actions(3, [OUT, SHIFT])
    with pytest.raises(ValueError, match="E023.* OUT "):
        ts.spans_from_actions(3, [SHIFT, OUT])


def test_state_views_and_el_hook(ts: TransitionSystem) -> None:
    state = ts.initial_state(4)
    ts.apply(state, OUT)
    ts.apply(state, SHIFT)
    ts.apply(state, SHIFT)
    assert state.stack == range(1, 3) and state.buffer == range(3, 4) and state.last_chunk is None
    before = state.copy()
    ts.apply(state, ts.reduce_action("ORG"))
    assert state.last_chunk == Chunk(1, 3, "ORG")  # where the joint model links the mention
    assert state.stack_empty and state.buffer == range(3, 4)
    ts.apply(state, OUT)
    assert state.last_chunk is None  # only set by the REDUCE itself
    assert before.chunks == [] and before.stack == range(1, 3)  # copy() is independent


# -- random property tests (seeded; hypothesis is not in the venv) --------------------------------


def random_spans(rng: random.Random, n_tokens: int) -> Spans:
    spans, position = [], 0
    while position < n_tokens:
        start = position + rng.choice([0, 0, 1, 2, 5])
        end = start + rng.choice([1, 1, 2, 3, 4])
        if end > n_tokens:
            break
        spans.append((start, end, rng.choice(LABELS)))
        position = end
    return spans


def test_random_span_sets_round_trip(ts: TransitionSystem) -> None:
    rng = random.Random(13)
    for _ in range(2000):
        n_tokens = rng.randint(0, 30)
        spans = random_spans(rng, n_tokens)
        shuffled = spans[:]
        rng.shuffle(shuffled)
        actions = ts.oracle_actions(n_tokens, shuffled)
        assert len(actions) == n_tokens + len(spans)
        assert run_checked(ts, n_tokens, actions).chunks == spans


def test_random_valid_walks_are_oracle_sequences(ts: TransitionSystem) -> None:
    """Every complete valid action sequence is the oracle sequence of its own chunks (bijection),
    and random walks never get stuck (a non-final state always has a valid action)."""
    rng = random.Random(7)
    for _ in range(1000):
        n_tokens = rng.randint(0, 20)
        state, actions = ts.initial_state(n_tokens), []
        while not ts.is_final(state):
            valid = np.flatnonzero(ts.valid_actions(state))
            assert valid.size
            actions.append(int(rng.choice(valid)))
            ts.apply(state, actions[-1])
        assert ts.oracle_actions(n_tokens, state.chunks) == actions


# -- data: CoNLL-2003 / AIDA train --------------------------------------------------------------


@pytest.mark.data
@pytest.mark.skipif(
    not (DATA_DIR / "aida" / "train.txt").is_file(), reason="../shared/data/aida/train.txt not available"
)
def test_oracle_reproduces_every_aida_train_span() -> None:
    from spacy_el.corpora import read_aida

    docs = read_aida(DATA_DIR / "aida", splits=("train",))["train"]
    ts = TransitionSystem(sorted({ent.label_ for doc in docs for ent in doc.ents}))
    n_sents = n_spans = n_tokens = n_actions = 0
    for doc in docs:
        doc_spans = 0
        for sent in doc.sents:
            # Span.ents keeps only entities inside the sentence; the per-doc count below catches
            # any entity that would cross a sentence boundary.
            gold = [(e.start - sent.start, e.end - sent.start, e.label_) for e in sent.ents]
            actions = ts.oracle_actions(len(sent), gold)
            assert ts.spans_from_actions(len(sent), actions) == gold, (doc.user_data, sent.start)
            n_sents += 1
            doc_spans += len(gold)
            n_tokens += len(sent)
            n_actions += len(actions)
        assert doc_spans == len(doc.ents)
        n_spans += doc_spans
    print(f"AIDA train: {len(docs)} docs, {n_sents} sentences, {n_tokens} tokens, {n_spans} spans")
    assert ts.labels == ("LOC", "MISC", "ORG", "PER")
    assert n_spans == 23_499
    assert n_sents == 14_041
    assert n_actions == n_tokens + n_spans

"""Numpy inputs of the EntQA models (no torch), the ``entity_retriever`` and ``entqa_reader`` components:
retriever passages (:class:`RetrieverBatch`) and reader (passage, entity) pairs (:class:`ReaderBatch`).

Both encoders read the *question side* ``[CLS] passage ⊕ topic`` of EntQA (Zhang et al. 2022, section 2):
the passage's wordpieces followed by the document's topic wordpieces. The retriever closes it with
``[SEP]``; the reader appends ``[SEP] title ⊕ description [SEP]`` (segment 1) for each candidate.

Positions in a reader row: 0 is ``[CLS]`` (the "no mention" span), ``1 .. len(passage)`` are the
passage's wordpieces (the only positions a mention may start or end on), then the topic and the entity.

The joint reader (``reader_mode = "joint"``, :class:`JointReaderArrays`) reads one window with all its
candidates in one row: ``[CLS] window ⊕ topic [SEP] [M] name_1 [M] name_2 ... [M] name_K [SEP]``, where
``[M]`` is a marker token (by default the vocabulary's unused ``[unused0]``: no new embedding row, so the
encoder and its tokenizer stay as they are); window positions are numbered as in the per-candidate rows.
When the K candidates do not fit into one row (``max_length``), the window is repeated over several rows,
each with a share of them.
"""
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...algorithms.passages import Passage
from ...errors import Errors

__all__ = [
    "QuestionSide", "question_sides", "retriever_arrays", "reader_arrays", "passage_from_slice", "EntityTokens",
    "ReaderArrays", "RetrieverBatch", "ReaderBatch", "encode_topic", "mention_wordpieces",
    "CandidateTokens", "JointReaderArrays", "joint_reader_arrays", "joint_layout", "marker_id",
]


@dataclass(frozen=True)
class QuestionSide:
    """``passage ⊕ topic`` of one passage, without special tokens.

    passage: the passage (wordpiece ids and document character offsets).
    topic_ids: wordpiece ids of the document's topic text (shared by all passages of a document).
    """

    passage: Passage
    topic_ids: Tuple[int, ...]

    @property
    def ids(self) -> Tuple[int, ...]:
        return self.passage.input_ids + self.topic_ids


def encode_topic(tokenizer: Any, topic: str, max_topic: int) -> Tuple[int, ...]:
    """Wordpiece ids of the topic text, at most ``max_topic`` of them (none for an empty topic)."""
    if not topic or max_topic <= 0:
        return ()
    ids = tokenizer(topic, add_special_tokens=False, truncation=True, max_length=max_topic, verbose=False)["input_ids"]
    return tuple(int(i) for i in ids)


def question_sides(passages: Sequence[Passage], topic_ids: Tuple[int, ...]) -> List[QuestionSide]:
    return [QuestionSide(p, topic_ids) for p in passages]


def passage_from_slice(text: str, start: int, end: int, tokenizer: Any, index: int, max_length: int) -> Passage:
    """A ``Passage`` over ``text[start:end]`` in the tokenizer's wordpieces (at most ``max_length``),
    with offsets into ``text``: how the reader reads the passages the retriever chose, whatever the
    retriever's tokenizer was."""
    encoding = tokenizer(
        text[start:end], add_special_tokens=False, return_offsets_mapping=True, truncation=True,
        max_length=max_length, verbose=False,
    )
    kept = [(int(i), (int(s) + start, int(e) + start)) for i, (s, e) in zip(encoding["input_ids"], encoding["offset_mapping"]) if e > s]
    if not kept:
        return Passage(index, 0, (), (), start, start)
    ids = tuple(i for i, _ in kept)
    offsets = tuple(o for _, o in kept)
    return Passage(index, 0, ids, offsets, offsets[0][0], offsets[-1][1])


def _pad(rows: Sequence[Sequence[int]], value: int = 0) -> np.ndarray:
    width = max([1] + [len(r) for r in rows])
    out = np.full((len(rows), width), value, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def retriever_arrays(tokenizer: Any, questions: Sequence[QuestionSide]) -> Tuple[np.ndarray, np.ndarray]:
    """``[CLS] passage ⊕ topic [SEP]`` per passage. RETURNS: ``(input_ids, attention_mask)``, both int64 ``[P, T]``."""
    rows = [[tokenizer.cls_token_id, *q.ids, tokenizer.sep_token_id] for q in questions]
    ids = _pad(rows, tokenizer.pad_token_id or 0)
    mask = _pad([[1] * len(r) for r in rows])
    return ids, mask


class _RowTokens:
    """Wordpiece ids of a KB row's text (:meth:`text`), truncated to ``max_length``, cached per row."""

    def __init__(self, tokenizer: Any, kb: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.kb = kb
        self.max_length = max_length
        self._cache: Dict[int, Tuple[int, ...]] = {}

    def text(self, row: int) -> str:
        raise NotImplementedError

    def __call__(self, row: int) -> Tuple[int, ...]:
        if row not in self._cache:
            text = self.text(row)
            ids = self.tokenizer(text, add_special_tokens=False, truncation=True, max_length=self.max_length, verbose=False)["input_ids"]
            self._cache[row] = tuple(int(i) for i in ids)
        return self._cache[row]


class EntityTokens(_RowTokens):
    """Wordpiece ids of ``title ⊕ description`` per KB row, truncated to ``max_length``, cached."""

    def text(self, row: int) -> str:
        from ...kb.encoder import entity_text

        store = self.kb.entities
        return entity_text(store.names[row], store.descriptions[row]) or store.ids[row]


@dataclass
class ReaderArrays:
    """Reader rows of ``B`` passages x ``K`` candidates (flattened to ``B*K`` encoder rows).

    input_ids / token_type_ids / attention_mask: int64 ``[B*K, T]``.
    span_mask: bool ``[B*K, T]``, True on the passage positions ``1 .. len(passage)`` (where a
        mention may start or end); ``[CLS]`` is handled by the loss/decoder.
    candidate_mask: bool ``[B, K]``, False on padding candidates.
    rows: int64 ``[B, K]`` KB rows of the candidates (-1 on padding).
    """

    input_ids: np.ndarray
    token_type_ids: np.ndarray
    attention_mask: np.ndarray
    span_mask: np.ndarray
    candidate_mask: np.ndarray
    rows: np.ndarray

    @property
    def shape(self) -> Tuple[int, int]:
        return tuple(self.rows.shape)  # type: ignore[return-value]


def reader_arrays(tokenizer: Any, questions: Sequence[QuestionSide], candidates: Sequence[Sequence[int]],
                  entity_tokens: EntityTokens, k: Optional[int] = None) -> ReaderArrays:
    """``[CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]`` for each passage and each of its
    candidate KB rows (``k`` columns; default: the longest candidate list)."""
    k = k if k is not None else max([1] + [len(c) for c in candidates])
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    seqs: List[List[int]] = []
    types: List[List[int]] = []
    spans: List[List[int]] = []
    rows = np.full((len(questions), k), -1, dtype=np.int64)
    for b, (question, cands) in enumerate(zip(questions, candidates)):
        first = [cls, *question.ids, sep]
        n_passage = len(question.passage)
        for c in range(k):
            row = int(cands[c]) if c < len(cands) else -1
            rows[b, c] = row
            second = [*entity_tokens(row), sep] if row >= 0 else [sep]
            seqs.append(first + second)
            types.append([0] * len(first) + [1] * len(second))
            spans.append([0] + [1] * n_passage + [0] * (len(first) - 1 - n_passage + len(second)))
    input_ids = _pad(seqs, tokenizer.pad_token_id or 0)
    return ReaderArrays(
        input_ids=input_ids,
        token_type_ids=_pad(types),
        attention_mask=_pad([[1] * len(s) for s in seqs]),
        span_mask=_pad(spans).astype(bool),
        candidate_mask=rows >= 0,
        rows=rows,
    )


class CandidateTokens(_RowTokens):
    """Wordpiece ids of a candidate in the joint reader: its name (``title``), or with ``description``
    ``title ⊕ description``, truncated to ``max_length``; cached per KB row."""

    def __init__(self, tokenizer: Any, kb: Any, max_length: int, description: bool = False) -> None:
        super().__init__(tokenizer, kb, max_length)
        self.description = description

    def text(self, row: int) -> str:
        from ...kb.encoder import entity_text

        store = self.kb.entities
        name = store.names[row] or store.ids[row].replace("_", " ")
        return (entity_text(name, store.descriptions[row]) or name) if self.description else name


def marker_id(tokenizer: Any, marker: str) -> int:
    """The vocabulary id of the candidate marker token (a single, known token: ``[unused0]`` in BERT
    vocabularies), or a ValueError naming it."""
    ids = tokenizer.convert_tokens_to_ids([marker])
    unk = tokenizer.unk_token_id
    if not ids or ids[0] is None or (ids[0] == unk and marker != tokenizer.unk_token):
        raise ValueError(Errors.E919.format(marker=marker))
    return int(ids[0])


def joint_layout(k: int, window_length: int, max_topic: int, candidate_length: int, max_length: int) -> Tuple[int, int]:
    """``(rows per window, candidates per row)`` of the joint reader for ``k`` candidates. It depends on
    the settings only (never on a batch's contents), so a window's rows, and so its scores, are the same
    in any batch. RAISES: ValueError when not even one candidate fits beside the window."""
    room = max_length - (window_length + max_topic + 3)  # [CLS] window ⊕ topic [SEP] ... [SEP]
    fit = room // (1 + candidate_length)
    if fit < 1:
        raise ValueError(Errors.E920.format(window_length=window_length, max_topic=max_topic,
                                            candidate_length=candidate_length, max_length=max_length))
    rows = -(-max(k, 1) // fit)
    return rows, -(-max(k, 1) // rows)


@dataclass
class JointReaderArrays:
    """Joint reader rows of ``B`` windows x ``K`` candidates, ``rows_per_window`` encoder rows each.

    input_ids / token_type_ids / attention_mask: int64 ``[B*R, T]`` (the rows of window ``b`` are
        ``b*R .. b*R + R - 1``; row ``r`` of a window holds candidates ``r*C .. r*C + C - 1``).
    marker_positions: int64 ``[B*R, C]``, the position of each candidate's marker in its row (0, the
        ``[CLS]``, for padding slots).
    candidate_ends: int64 ``[B*R, C]``, one past the candidate's last wordpiece (its marker and name are
        ``marker_positions .. candidate_ends - 1``; 1 for padding slots).
    span_mask: bool ``[B, K, 1 + W]`` (``W``: the longest window), True on the window's positions
        ``1 .. len(window)``; position 0 is the "no mention" span, as in :class:`ReaderArrays`.
    candidate_mask: bool ``[B, K]``; rows: int64 ``[B, K]`` KB rows (-1 on padding).
    """

    input_ids: np.ndarray
    token_type_ids: np.ndarray
    attention_mask: np.ndarray
    marker_positions: np.ndarray
    candidate_ends: np.ndarray
    span_mask: np.ndarray
    candidate_mask: np.ndarray
    rows: np.ndarray
    rows_per_window: int

    @property
    def shape(self) -> Tuple[int, int]:
        return tuple(self.rows.shape)  # type: ignore[return-value]


def joint_reader_arrays(tokenizer: Any, questions: Sequence[QuestionSide], candidates: Sequence[Sequence[int]],
                        candidate_tokens: Callable[[int], Tuple[int, ...]], marker: int, k: int,
                        layout: Tuple[int, int]) -> JointReaderArrays:
    """``[CLS] window ⊕ topic [SEP] ([M] candidate)* [SEP]`` rows for each window and its candidate KB
    rows (``k`` columns, in the order given), laid out as ``layout = joint_layout(...)``."""
    n_rows, per_row = layout
    if n_rows * per_row < k:
        raise ValueError(Errors.E921.format(layout=layout, k=k))
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    seqs: List[List[int]] = []
    types: List[List[int]] = []
    markers = np.zeros((len(questions) * n_rows, per_row), dtype=np.int64)
    ends = np.ones((len(questions) * n_rows, per_row), dtype=np.int64)
    rows = np.full((len(questions), k), -1, dtype=np.int64)
    width = max([0] + [len(q.passage) for q in questions])
    span_mask = np.zeros((len(questions), k, 1 + width), dtype=bool)
    for b, (question, cands) in enumerate(zip(questions, candidates)):
        first = [cls, *question.ids, sep]
        span_mask[b, :, 1: 1 + len(question.passage)] = True
        for r in range(n_rows):
            seq = list(first)
            for slot in range(per_row):
                c = r * per_row + slot
                row = int(cands[c]) if c < min(k, len(cands)) else -1
                if row < 0:
                    continue
                rows[b, c] = row
                markers[b * n_rows + r, slot] = len(seq)
                seq += [marker, *candidate_tokens(row)]
                ends[b * n_rows + r, slot] = len(seq)
            seq.append(sep)
            seqs.append(seq)
            types.append([0] * len(first) + [1] * (len(seq) - len(first)))
    return JointReaderArrays(
        input_ids=_pad(seqs, tokenizer.pad_token_id or 0),
        token_type_ids=_pad(types),
        attention_mask=_pad([[1] * len(s) for s in seqs]),
        marker_positions=markers,
        candidate_ends=ends,
        span_mask=span_mask,
        candidate_mask=rows >= 0,
        rows=rows,
        rows_per_window=n_rows,
    )


def mention_wordpieces(passage: Passage, start_char: int, end_char: int) -> Optional[Tuple[int, int]]:
    """Inclusive wordpiece span ``(s, t)`` (0-based over the passage) of a mention fully inside the
    passage, or None when no wordpiece lies inside ``[start_char, end_char)``."""
    inside = [i for i, (s, e) in enumerate(passage.offsets) if s >= start_char and e <= end_char]
    if not inside or passage.start_char > start_char or passage.end_char < end_char:
        return None
    return inside[0], inside[-1]


@dataclass
class RetrieverBatch:
    """``input_ids`` / ``attention_mask``: int64 ``[P, T]``; ``candidates_fn``: see ``PassageEncoder.forward``
    (None at prediction)."""

    input_ids: Any
    attention_mask: Any
    candidates_fn: Optional[Callable] = None


@dataclass
class ReaderBatch:
    """Reader rows (per-candidate or joint) and, in training, ``gold_spans[b][k]``: the gold ``(s, t)``
    reader positions."""

    arrays: Any  # ReaderArrays | JointReaderArrays
    gold_spans: Optional[List[List[List[Tuple[int, int]]]]] = None
    span_reduction: str = field(default="sum")



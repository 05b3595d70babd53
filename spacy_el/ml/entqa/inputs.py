"""Numpy inputs of the EntQA models (no torch), the ``entity_retriever`` and ``entqa_reader`` components:
retriever passages (:class:`RetrieverBatch`) and reader (passage, entity) pairs (:class:`ReaderBatch`).

Both encoders read the *question side* ``[CLS] passage ⊕ topic`` of EntQA (Zhang et al. 2022, section 2):
the passage's wordpieces followed by the document's topic wordpieces. The retriever closes it with
``[SEP]``; the reader appends ``[SEP] title ⊕ description [SEP]`` (segment 1) for each candidate.

Positions in a reader row: 0 is ``[CLS]`` (the "no mention" span), ``1 .. len(passage)`` are the
passage's wordpieces (the only positions a mention may start or end on), then the topic and the entity.
"""
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from thinc.api import Model

from ...algorithms.passages import Passage
from ..torch_io import shared_tokenizer

__all__ = [
    "QuestionSide", "question_sides", "retriever_arrays", "reader_arrays", "passage_from_slice", "EntityTokens",
    "ReaderArrays", "RetrieverBatch", "ReaderBatch", "encode_topic", "mention_wordpieces", "tokenizer_of",
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


class EntityTokens:
    """Wordpiece ids of ``title ⊕ description`` per KB row, truncated to ``max_length``, cached."""

    def __init__(self, tokenizer: Any, kb: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.kb = kb
        self.max_length = max_length
        self._cache: Dict[int, Tuple[int, ...]] = {}

    def __call__(self, row: int) -> Tuple[int, ...]:
        if row not in self._cache:
            from ...kb.encoder import entity_text

            store = self.kb.entities
            text = entity_text(store.names[row], store.descriptions[row]) or store.ids[row]
            ids = self.tokenizer(text, add_special_tokens=False, truncation=True, max_length=self.max_length, verbose=False)["input_ids"]
            self._cache[row] = tuple(int(i) for i in ids)
        return self._cache[row]


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
    """Reader rows and, in training, ``gold_spans[b][k]``: the gold ``(s, t)`` reader positions."""

    arrays: ReaderArrays
    gold_spans: Optional[List[List[List[Tuple[int, int]]]]] = None
    span_reduction: str = field(default="sum")


def tokenizer_of(model: Model) -> Any:
    """The encoder's fast tokenizer (thread-safe, one copy per thread; it comes from the encoder path and
    is kept out of the model's attrs, so that it is never part of the serialised model)."""
    return shared_tokenizer(model.attrs["encoder"], model.name)

"""Overlapping wordpiece passages for EntQA (``entity_retriever`` and ``entqa_reader``).

EntQA (Zhang et al., ICLR 2022, section 2 "Input representation") breaks a document ``x`` into
overlapping passages ``p_1(x) .. p_m(x)`` of ``L`` wordpieces with stride ``S`` (``L = 32``,
``S = 16`` in the paper) and optionally carries a document-level topical text ``psi_topic(x)``
across the passages (the paper uses the first token ``x_1``).

This module is pure Python (no torch): it only needs a Hugging Face *fast* tokenizer, whose
``offset_mapping`` lets every wordpiece be mapped back to character offsets of the document, and
from there (:func:`char_span_to_token_span`) to spaCy tokens, so reader predictions can become
``Doc`` spans.

Conventions
-----------
* Wordpiece indices inside a :class:`Passage` are 0-based over ``passage.input_ids`` and do *not*
  count special tokens: the caller that builds ``[CLS] p [SEP] ...`` must subtract the position of
  the first passage wordpiece (1 when ``[CLS]`` comes first) before calling
  :func:`wordpiece_span_to_char_span`.
* Character spans are half-open ``[start_char, end_char)``, like Python slices and spaCy.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple, Union

from ..errors import Errors

__all__ = [
    "Passage",
    "make_passages",
    "topic_text",
    "wordpiece_span_to_char_span",
    "char_span_to_token_span",
    "passages_covering",
    "window_cores",
    "window_candidates",
    "PassagesByStart",
    "TOPIC_MODES",
]

TOPIC_MODES = ("first_token", "first_sentence", "none")


@dataclass(frozen=True)
class Passage:
    """One window of ``<= length`` wordpieces of a document.

    Attributes:
        index: position of the passage in the document (0-based).
        wordpiece_start: index of the passage's first wordpiece in the whole document's
            wordpiece sequence (a multiple of the stride).
        input_ids: wordpiece ids, *without* special tokens; ``len(input_ids) <= length``.
        offsets: per-wordpiece ``(char_start, char_end)`` into the document text, same length as
            ``input_ids``.
        start_char: document offset of the first character covered by the passage.
        end_char: document offset one past the last character covered by the passage.
    """

    index: int
    wordpiece_start: int
    input_ids: Tuple[int, ...]
    offsets: Tuple[Tuple[int, int], ...]
    start_char: int
    end_char: int

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def wordpiece_end(self) -> int:
        """Exclusive end of the passage in the document's wordpiece sequence."""
        return self.wordpiece_start + len(self.input_ids)


def _check_window(length: int, stride: int) -> None:
    if not isinstance(length, int) or length < 1:
        raise ValueError(Errors.E033.format(name="length", value=length))
    if not isinstance(stride, int) or stride < 1:
        raise ValueError(Errors.E033.format(name="stride", value=stride))
    if stride > length:
        # A stride larger than the window would silently skip wordpieces between passages.
        raise ValueError(Errors.E034.format(stride=stride, length=length))


def make_passages(text: str, tokenizer: Any, length: int = 32, stride: int = 16) -> List[Passage]:
    """Split ``text`` into overlapping passages of ``length`` wordpieces with stride ``stride``.

    Windows start at wordpiece ``0, stride, 2*stride, ...``; the last window is the first one
    that reaches the end of the document (it may be shorter than ``length``), so consecutive
    passages always share exactly ``length - stride`` wordpieces (or all of the last, shorter
    one's) and every wordpiece is in at least one passage. Windows that start at a multiple of
    the stride (instead of right-aligning the last window at ``n - length``) keep passage
    boundaries identical between training and inference and match the paper's fixed ``S``.

    Args:
        text: the document.
        tokenizer: a Hugging Face *fast* tokenizer (``is_fast``); slow tokenizers cannot return
            ``offset_mapping``.
        length: ``L``, the maximum number of wordpieces per passage (special tokens excluded).
        stride: ``S``, distance between the starts of consecutive passages, ``1 <= S <= L``.

    Returns:
        The passages in document order; ``[]`` for empty or whitespace-only text.

    Raises:
        ValueError: on an invalid ``length``/``stride`` or a tokenizer that is not fast.
    """
    _check_window(length, stride)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(Errors.E035)
    if not text or not text.strip():
        return []
    encoding = tokenizer(
        text,
        add_special_tokens=False,  # special tokens are added per passage by the model input
        return_offsets_mapping=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        truncation=False,  # the whole document; windowing is done here
        verbose=False,  # do not warn that the document exceeds model_max_length
    )
    ids: List[int] = list(encoding["input_ids"])
    offsets: List[Tuple[int, int]] = [(int(s), int(e)) for s, e in encoding["offset_mapping"]]
    # Drop wordpieces that cover no characters (some tokenizers emit them); they cannot be aligned.
    kept = [(i, o) for i, o in zip(ids, offsets) if o[1] > o[0]]
    if not kept:
        return []
    ids = [i for i, _ in kept]
    offsets = [o for _, o in kept]

    n = len(ids)
    passages: List[Passage] = []
    start = 0
    while True:
        end = min(start + length, n)
        window = offsets[start:end]
        passages.append(
            Passage(
                index=len(passages),
                wordpiece_start=start,
                input_ids=tuple(ids[start:end]),
                offsets=tuple(window),
                start_char=window[0][0],
                end_char=window[-1][1],
            )
        )
        if end >= n:
            break
        start += stride
    return passages


# Sentence end: . ! or ? (plus closing quotes/brackets) followed by whitespace, or a line break.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n")


def topic_text(doc_text: str, mode: str = "first_token") -> str:
    """The document-level topical text ``psi_topic(x)`` carried across passages.

    Args:
        doc_text: the document.
        mode: ``"first_token"`` -- the first whitespace-delimited token (the paper's ``x_1``;
            in AIDA this is the topic word of the article); ``"first_sentence"`` -- the text up
            to the first sentence-final ``.!?`` followed by whitespace, or the first line break
            (a cheap heuristic so no spaCy pipeline is needed); ``"none"`` -- ``""``.

    Returns:
        The topic text without surrounding whitespace (``""`` for empty documents).

    Note:
        The paper writes ``x_1 in V`` (the first *wordpiece*). We return the first whitespace
        token instead so the topic is tokenizer-independent and not cut mid-word (e.g. the
        wordpiece ``"le"`` of ``"Leicestershire"``); for AIDA's one-word topics
        (``"SOCCER"``, ``"CRICKET"``) both coincide up to case/splitting.

    Raises:
        ValueError: on an unknown ``mode``.
    """
    if mode not in TOPIC_MODES:
        raise ValueError(Errors.E021.format(what="topic mode", name=mode, known=", ".join(TOPIC_MODES)))
    stripped = doc_text.strip() if doc_text else ""
    if mode == "none" or not stripped:
        return ""
    if mode == "first_token":
        return stripped.split(None, 1)[0]
    match = _SENTENCE_END.search(stripped)
    return (stripped[: match.end()] if match else stripped).strip()


def wordpiece_span_to_char_span(passage: Passage, s: int, t: int) -> Tuple[int, int]:
    """Map an inclusive wordpiece span ``[s, t]`` of ``passage`` to a document character span.

    Args:
        passage: the passage the reader read.
        s: index of the first wordpiece, 0-based over ``passage.input_ids`` (special tokens
            excluded -- subtract the ``[CLS]`` offset first).
        t: index of the last wordpiece (inclusive, as in the paper's ``(s, t)``).

    Returns:
        ``(start_char, end_char)``, half-open, into the document text.

    Raises:
        ValueError: when ``not 0 <= s <= t < len(passage)``.
    """
    if not (0 <= s <= t < len(passage.offsets)):
        raise ValueError(Errors.E036.format(s=s, t=t, n_wordpieces=len(passage.offsets)))
    return passage.offsets[s][0], passage.offsets[t][1]


def char_span_to_token_span(doc: Any, start_char: int, end_char: int) -> Optional[Tuple[int, int]]:
    """Map a document character span to spaCy token indices, expanding to whole tokens.

    Wordpiece boundaries need not coincide with spaCy token boundaries (``"Leicestershire"`` is
    several wordpieces; ``"U.S."`` may be several wordpieces but one spaCy token), so the span is
    expanded to cover every token it touches (``alignment_mode="expand"``).

    Args:
        doc: a spaCy ``Doc`` whose text is the document the passages were made from.
        start_char: start offset (inclusive).
        end_char: end offset (exclusive).

    Returns:
        ``(start_token, end_token)`` with ``end_token`` exclusive (like ``Span.start/end``), or
        ``None`` when the span is empty, out of range, or covers only whitespace.
    """
    if start_char < 0 or end_char > _text_length(doc) or start_char >= end_char:
        return None
    span = doc.char_span(start_char, end_char, alignment_mode="expand")
    if span is None or len(span) == 0:
        return None
    return span.start, span.end


def _text_length(doc: Any) -> int:
    """``len(doc.text)`` without building the text (``Doc.text`` joins every token on each access)."""
    return doc[-1].idx + len(doc[-1].text_with_ws) if len(doc) else 0


def passages_covering(passages: Sequence[Passage], start_char: int, end_char: int) -> List[int]:
    """Indices of the passages whose wordpieces fully contain ``[start_char, end_char)``.

    Useful to assign a gold mention to the passages in which the reader can see it whole.
    """
    return [
        p.index
        for p in passages
        if p.start_char <= start_char and end_char <= p.end_char
    ]


def window_cores(windows: Sequence[Passage]) -> List[Tuple[int, int]]:
    """The wordpiece range ``[lo, hi)`` (document wordpiece indices) that each window *owns*.

    Consecutive windows overlap; the boundary between window ``i`` and ``i + 1`` is the middle of their
    overlap, so the cores tile the document: every wordpiece belongs to exactly one core (the first
    window's core starts at its first wordpiece, the last window's ends at its last). A span predicted in
    window ``i`` is kept only when its first wordpiece lies in core ``i`` (the "maximum context" rule of
    sliding-window QA): a mention is then read once, from the window where it has the most context on
    both sides, and a mention cut by a window edge (its start outside the window's core) is left to the
    neighbour that sees it whole, as long as mentions are shorter than half the overlap.

    Args:
        windows: the document's windows in order (as :func:`make_passages` gives them).

    Returns:
        One ``(lo, hi)`` per window.
    """
    cores: List[Tuple[int, int]] = []
    for i, window in enumerate(windows):
        lo = window.wordpiece_start if i == 0 else cores[-1][1]
        if i + 1 < len(windows):
            following = windows[i + 1]
            hi = max(lo, (following.wordpiece_start + window.wordpiece_end) // 2)
        else:
            hi = window.wordpiece_end
        cores.append((lo, hi))
    return cores


class PassagesByStart:
    """The retriever's passages of a document (``(start_char, end_char, kb_ids, scores)``), indexed by their
    start, so that the passages inside (or overlapping) a character range are found by bisection: a
    document's windows then cost O(n log n) together, not O(windows x passages). Every query returns the
    passages in the order given."""

    def __init__(self, passages: Sequence[Tuple[int, int, Sequence[str], Sequence[float]]]) -> None:
        self.passages = list(passages)
        self._order = sorted(range(len(self.passages)), key=lambda i: self.passages[i][0])
        self._starts = [self.passages[i][0] for i in self._order]
        self._longest = max([p[1] - p[0] for p in self.passages] + [0])

    def _starting_in(self, low: int, high: int) -> List[int]:
        """Indices of the passages whose start lies in ``[low, high]``, in the order given."""
        return sorted(self._order[bisect_left(self._starts, low):bisect_right(self._starts, high)])

    def inside(self, start_char: int, end_char: int) -> List[Tuple[int, int, Sequence[str], Sequence[float]]]:
        """The passages that lie inside ``[start_char, end_char]``."""
        return [self.passages[i] for i in self._starting_in(start_char, end_char) if self.passages[i][1] <= end_char]

    def overlapping(self, start_char: int, end_char: int) -> List[Tuple[int, int, Sequence[str], Sequence[float]]]:
        """The passages that share a character with ``[start_char, end_char)``."""
        found = self._starting_in(start_char - self._longest, end_char - 1)
        return [self.passages[i] for i in found if self.passages[i][0] < end_char and start_char < self.passages[i][1]]


def window_candidates(window: Passage, passages: Union[PassagesByStart, Sequence[Tuple[int, int, Sequence[str], Sequence[float]]]]) -> List[str]:
    """The retrieved entities of a reader window: those of the retriever's passages that lie inside it
    (or, when none does, that overlap it), merged round-robin: each entity ranked by its best rank in any
    of those passages, ties by its best score, then first seen (on AIDA dev this keeps more gold entities
    in a window's top K than ranking by best score alone: 0.86 against 0.84 at K = 40 with 128-wordpiece
    windows over 32-wordpiece passages). ``passages``: ``(start_char, end_char, kb_ids, scores)`` as the
    retriever writes them, each best first, or a :class:`PassagesByStart` of them (built once for all the
    windows of a document). When the retriever's passages are the reader's windows, a window gets exactly
    its passage's entities, in their order."""
    by_start = passages if isinstance(passages, PassagesByStart) else PassagesByStart(passages)
    inside = by_start.inside(window.start_char, window.end_char)
    if not inside:
        inside = by_start.overlapping(window.start_char, window.end_char)
    best: dict = {}
    order: dict = {}
    for _, _, kb_ids, scores in inside:
        for rank, (kb_id, score) in enumerate(zip(kb_ids, scores)):
            key = (rank, -score)
            if kb_id not in best or key < best[kb_id]:
                best[kb_id] = key
            order.setdefault(kb_id, len(order))
    return sorted(best, key=lambda k: (best[k], order[k]))

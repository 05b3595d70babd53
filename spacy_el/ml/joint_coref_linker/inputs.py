"""Numpy inputs of the joint coreference + entity linking model (the ``joint_coref_linker`` component).

:class:`JointCorefBatch` holds one :class:`DocInputs` of numpy arrays per document
(:func:`make_doc_inputs`): the encoder windows, the wordpiece -> (window, position) and token <->
wordpiece maps, the enumerated spans, how many to keep, the spans that must be kept (gold mentions in
training), a candidate look-up callable and, in training, the gold clusters. Candidates are looked up
*after* pruning (``DocInputs.candidates`` maps the kept ``(K, 2)`` spans to ``(K, C)`` KB rows,
``(K, C, nE)`` vectors and ``(K, C)`` priors), so the alias table is queried for ``0.4 T`` spans rather
than every enumerated one.

Windows: the document text is split into wordpieces by the encoder's fast tokenizer
(:func:`~spacy_el.ml.torch_io.tokenizer_of`) once, without truncation. Windows of ``window`` wordpieces (``[CLS]`` +
``window - 2`` content wordpieces + ``[SEP]``) start every ``stride`` content wordpieces until the last
one reaches the end (:func:`encoder_windows`); each wordpiece takes its vector from the window where it
is most central (:func:`most_central_window`), and a spaCy token from the wordpieces that overlap its
characters (:func:`token_wordpiece_pairs`); see :mod:`spacy_el.ml.joint_coref_linker.modules`.
"""
import math
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
import torch
from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START
from spacy.tokens import Doc
from thinc.api import Model

from ...algorithms.mention_windows import most_central_windows
from ..torch_io import tokenizer_of
from .span_representations import enumerate_spans

__all__ = [
    "CandidateFn", "SimilarityFn", "GoldClusterIdx", "DocInputs", "JointCorefBatch", "make_doc_inputs",
    "encoder_windows", "most_central_window", "token_wordpiece_pairs", "candidate_spans",
]

#: ``(K, 2)`` kept spans -> ``(K, C)`` int64 KB rows (``-1`` padding), ``(K, C, nE)`` float32 vectors
#: and ``(K, C)`` float32 alias-table priors (0 on padding).
CandidateFn = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]
#: ``(K, 2)`` kept spans and the candidate width ``C`` -> ``(K, C)`` float32 mention-entity similarities of the
#: generator, laid out as :data:`CandidateFn`'s rows (0 where it gave none).
SimilarityFn = Callable[[np.ndarray, int], np.ndarray]
#: One gold cluster in span indexing: (indices into ``DocInputs.spans``, KB row or None for NIL).
GoldClusterIdx = Tuple[Tuple[int, ...], Optional[int]]


@dataclass
class DocInputs:
    """Numpy inputs of one document (see the module docstring).

    input_ids, attention_mask: int64 ``(P, L)`` windows (``L <= window``). wp_window, wp_position:
    int64 ``(N,)``, the window and the position in it that give wordpiece ``n`` its vector.
    pair_token, pair_wordpiece: int64 ``(Q,)``, the (token, wordpiece) overlap pairs. n_tokens: ``T``.
    spans: int64 ``(S, 2)`` ``(start, end exclusive)`` sorted by ``(start, end)``. n_keep: spans kept
    by pruning. forced: int64 ``(F,)`` indices into ``spans`` always kept (gold mentions in
    training, mentions given by an upstream component). candidates: the candidate look-up; similarities: the
    generator's similarities of its lists (None: not available). gold: gold clusters or None (prediction).
    """

    input_ids: np.ndarray
    attention_mask: np.ndarray
    wp_window: np.ndarray
    wp_position: np.ndarray
    pair_token: np.ndarray
    pair_wordpiece: np.ndarray
    n_tokens: int
    spans: np.ndarray
    n_keep: int
    candidates: CandidateFn
    forced: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    gold: Optional[List[GoldClusterIdx]] = None
    similarities: Optional[SimilarityFn] = None


@dataclass
class JointCorefBatch:
    """The documents of a batch; ``mode`` and ``mention_loss_weight`` are filled in from the model's
    attrs by :func:`spacy_el.ml.joint_coref_linker.model.forward` (loss settings, not part of the weights);
    ``frozen_layers``, ``cache_mb``, ``max_antecedents`` and ``checkpointing`` by the component in training
    (its ``frozen_encoder_layers`` and ``encoder_cache_mb``: :mod:`~spacy_el.ml.joint_coref_linker.frozen_encoder`; its
    early antecedent window, None = the model's; its ``encoder_checkpointing``); ``similarity_weight`` by the
    component at prediction (its setting: that times the generator's similarity joins each link score before
    decoding). ``dense_scores``: predict through the ``(M, M)`` coreference matrix instead of the sparse edges
    (the same clusters and links, in memory quadratic in the mentions): the reference that tests and
    ``studies/jcl_sparse_prediction/`` compared the sparse prediction with."""

    docs: List[DocInputs]
    mode: str = "global"
    mention_loss_weight: float = 0.0
    frozen_layers: int = 0
    cache_mb: float = 0.0
    max_antecedents: Optional[int] = None
    checkpointing: bool = False
    similarity_weight: float = 0.0
    dense_scores: bool = False

    @property
    def has_gold(self) -> bool:
        return any(d.gold is not None and len(d.spans) for d in self.docs)


def encoder_windows(n_wordpieces: int, window: int, stride: int) -> List[Tuple[int, int]]:
    """``(start, end)`` content ranges (wordpiece offsets, end exclusive) of the windows covering
    ``n_wordpieces``; each holds at most ``window - 2`` wordpieces, starts are ``stride`` apart."""
    if n_wordpieces <= 0:
        return []
    width = window - 2
    ranges = [(0, min(width, n_wordpieces))]
    while ranges[-1][1] < n_wordpieces:
        start = ranges[-1][0] + stride
        ranges.append((start, min(start + width, n_wordpieces)))
    return ranges


def most_central_window(ranges: Sequence[Tuple[int, int]], n_wordpieces: int) -> Tuple[np.ndarray, np.ndarray]:
    """Per wordpiece: the window where it is most central and its content offset in that window
    (:func:`~spacy_el.algorithms.mention_windows.most_central_windows` with the document-edge rule: an edge at
    the document's start or end counts as infinitely far; ties go to the earlier window)."""
    pieces = np.arange(n_wordpieces, dtype=np.int64)
    which, _ = most_central_windows(ranges, np.stack([pieces, pieces + 1], axis=1), n_total=n_wordpieces)
    starts = np.asarray([start for start, _ in ranges], dtype=np.int64)
    which = np.maximum(which, 0)  # every wordpiece lies in a window (encoder_windows covers them all)
    return which, pieces - starts[which] if len(starts) else pieces


def token_wordpiece_pairs(doc: Doc, offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(token, wordpiece) pairs whose character ranges overlap. offsets: ``(N, 2)`` wordpiece chars."""
    if len(doc) == 0 or len(offsets) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    starts, lengths = doc.to_array([IDX, LENGTH]).astype(np.int64).T
    ends = starts + lengths
    # Wordpieces are in character order: the first ending after the token start, the last starting before its end.
    lo = np.searchsorted(offsets[:, 1], starts, side="right")
    hi = np.searchsorted(offsets[:, 0], ends, side="left")
    counts = np.maximum(hi - lo, 0)
    tokens = np.repeat(np.arange(len(doc)), counts)
    pieces = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi) if b > a]) if counts.sum() else np.zeros(0, np.int64)
    keep = offsets[pieces, 1] > offsets[pieces, 0]  # drop zero-width pieces
    return tokens[keep].astype(np.int64), pieces[keep].astype(np.int64)


def candidate_spans(doc: Doc, max_width: int) -> np.ndarray:
    """All spans of up to ``max_width`` tokens, within a sentence when ``doc`` has sentence
    boundaries (else over the whole doc), whose first and last tokens are not whitespace."""
    n = len(doc)
    sentence_ids = None
    if n and doc.has_annotation("SENT_START"):
        sentence_ids = torch.as_tensor(np.cumsum(doc.to_array(SENT_START) == 1) - 1, dtype=torch.long)
        sentence_ids[sentence_ids < 0] = 0
    spans = enumerate_spans(n, max_width, sentence_ids).numpy()
    if len(spans):
        space = doc.to_array(IS_SPACE).astype(bool)
        spans = spans[~space[spans[:, 0]] & ~space[spans[:, 1] - 1]]
    return spans.astype(np.int64).reshape(-1, 2)


def span_keys(spans: np.ndarray, base: int) -> np.ndarray:
    """``(S,)`` one integer per ``(S, 2)`` span, ``start * base + end``, in the spans' ``(start, end)`` order;
    distinct spans get distinct keys when every ``end < base``."""
    return spans[:, 0] * base + spans[:, 1]


def make_doc_inputs(
    model: Model,
    doc: Doc,
    candidates: CandidateFn,
    gold: Optional[Sequence[Tuple[Sequence[Tuple[int, int]], Optional[int]]]] = None,
    *,
    similarities: Optional[SimilarityFn] = None,
    given: Sequence[Tuple[int, int]] = (),
    enumerate_all: bool = True,
    excluded: Sequence[Tuple[int, int]] = (),
    span_ratio: Optional[float] = None,
) -> DocInputs:
    """Numpy inputs of ``doc`` (module docstring). gold: clusters of ``(start, end)`` token spans of
    ``doc`` with a KB row or None. similarities: the generator's similarities of ``candidates``' lists
    (``similarity_weight``; None: not available). given: mentions found upstream (e.g. ``doc.ents``). Gold and given
    spans are added to the enumerated ones and always kept, if not wider than ``max_span_width``
    (wider ones cannot be embedded: they are dropped from the gold, and the caller reports the given
    ones). enumerate_all=False: only gold and given spans are scored (no pruning). excluded: spans
    left out of the enumerated ones (entities that are never linked; gold spans are still added). span_ratio:
    spans kept per token by pruning (None: the model's ``span_ratio``)."""
    a = model.attrs
    width = a["max_span_width"]
    spans = candidate_spans(doc, width) if enumerate_all else np.zeros((0, 2), dtype=np.int64)
    if len(excluded) and len(spans):
        drop = np.asarray([(int(s), int(e)) for s, e in excluded], dtype=np.int64).reshape(-1, 2)
        base = int(max(spans[:, 1].max(), drop[:, 1].max())) + 1
        spans = spans[~np.isin(span_keys(spans, base), span_keys(drop, base))].reshape(-1, 2)
    gold_idx: Optional[List[GoldClusterIdx]] = None
    if gold is not None:
        gold = [([(int(s), int(e)) for s, e in mentions if 0 < e - s <= width], row) for mentions, row in gold]
        gold = [(mentions, row) for mentions, row in gold if mentions]
    forced_spans = [(int(s), int(e)) for s, e in given if 0 < e - s <= width]
    forced_spans += [m for mentions, _ in gold or [] for m in mentions]
    extra = np.array(forced_spans, dtype=np.int64).reshape(-1, 2)
    spans = np.unique(np.concatenate([spans, extra]), axis=0) if len(extra) else spans
    base = int(spans[:, 1].max()) + 1 if len(spans) else 1
    keys = span_keys(spans, base)  # increasing: spans are sorted by (start, end)

    def positions(listed: Sequence[Tuple[int, int]]) -> List[int]:
        """The sorted distinct indices into ``spans`` of ``listed``, spans that ``spans`` holds."""
        wanted = span_keys(np.asarray(listed, dtype=np.int64).reshape(-1, 2), base)
        return sorted(set(np.searchsorted(keys, wanted).tolist()))

    if gold is not None:
        gold_idx = [(tuple(positions(mentions)), row) for mentions, row in gold]
    forced = np.array(positions(forced_spans), dtype=np.int64)
    ratio = a["span_ratio"] if span_ratio is None else span_ratio
    n_keep = min(len(spans), max(1, math.ceil(ratio * len(doc)))) if len(spans) and enumerate_all else 0
    empty = np.zeros(0, dtype=np.int64)
    inputs = DocInputs(
        input_ids=np.zeros((0, 0), dtype=np.int64), attention_mask=np.zeros((0, 0), dtype=np.int64),
        wp_window=empty, wp_position=empty, pair_token=empty, pair_wordpiece=empty, n_tokens=len(doc),
        spans=spans, n_keep=n_keep, candidates=candidates, forced=forced, gold=gold_idx, similarities=similarities,
    )
    if not len(spans):
        return inputs  # nothing to score: no need to encode
    tokenizer = tokenizer_of(model)
    encoded = tokenizer(doc.text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    ids = np.asarray(encoded["input_ids"], dtype=np.int64)
    offsets = np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    ranges = encoder_windows(len(ids), a["window"], a["stride"])
    if not ranges:  # the tokenizer reads nothing (NUL, BOM, zero-width characters): no vector, nothing to score
        inputs.spans, inputs.n_keep, inputs.forced, inputs.gold = np.zeros((0, 2), dtype=np.int64), 0, empty, None
        return inputs
    length = max(end - start for start, end in ranges) + 2
    inputs.input_ids = np.full((len(ranges), length), tokenizer.pad_token_id or 0, dtype=np.int64)
    inputs.attention_mask = np.zeros((len(ranges), length), dtype=np.int64)
    for p, (start, end) in enumerate(ranges):
        row = [tokenizer.cls_token_id, *ids[start:end].tolist(), tokenizer.sep_token_id]
        inputs.input_ids[p, : len(row)] = row
        inputs.attention_mask[p, : len(row)] = 1
    which, offset = most_central_window(ranges, len(ids))
    inputs.wp_window, inputs.wp_position = which, offset + 1  # + 1: [CLS]
    inputs.pair_token, inputs.pair_wordpiece = token_wordpiece_pairs(doc, offsets)
    return inputs

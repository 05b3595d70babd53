"""``entqa_reader``: EntQA's reader, the mentions of each retrieved entity (Zhang et al. 2022, sections 2.2-2.3).

For every passage that ``entity_retriever`` wrote to ``doc._.entqa_passages`` and each of its first
``entities_per_passage`` entities (K), a cross-encoder reads
``[CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]`` and gives start/end distributions over the passage's
wordpieces (``[CLS]`` = "not in this passage") and a rerank distribution over the K entities. Predictions are
``(s, t, e)`` with ``p_rerank(e) * p_start(s) * p_end(t) > min_span_score`` (γ) among each entity's
``spans_per_entity`` spans (P) that are more probable than ``[CLS]`` (:mod:`spacy_el.algorithms.entqa_decode`). Duplicates from overlapping
passages are merged (best score), and wordpiece spans become spaCy tokens through character offsets
(expanded to whole tokens).

Output:

* ``doc.spans[spans_key]`` (default ``"entqa"``): every prediction, nested and overlapping ones included,
  label ``"ENT"``, ``kb_id_`` set. Span extensions are keyed by character offsets in spaCy, so spans with
  the same offsets share them: ``span._.candidate_scores`` lists every ``[kb_id, score]`` predicted for
  those offsets (best first) and ``span._.link_score`` is the best of those scores.
* with ``write_ents = true`` (default): the best non-overlapping subset (greedy by score) goes to
  ``doc.ents``; existing entities that overlap none of them are kept, and an existing entity with the
  same offsets lends its label (else ``"ENT"``).

Two reader modes (setting ``reader_mode``):

* ``"per_candidate"`` (the paper's, the default): one encoder pass per (passage, candidate), over the
  retriever's passages (``max_passage_length`` wordpieces of each).
* ``"joint"``: one encoder pass per window for all its K candidates,
  ``[CLS] window ⊕ topic [SEP] [M] name_1 [M] name_2 ... [M] name_K [SEP]`` (``[M]``: ``marker_token``,
  an unused vocabulary token, so the encoder's embeddings and tokenizer are unchanged; names truncated to
  ``candidate_length`` wordpieces, with ``candidate_description`` also the start of the description).
  Each candidate's start/end scores over the window come from its marker state against the token states
  (:class:`~spacy_el.ml.entqa.modules.JointReaderModule`); same loss (eq. 2), same decoding and γ. The
  windows are the reader's own, ``window_length`` wordpieces with stride ``window_stride`` (longer than the
  retriever's passages: one pass now reads all candidates), cut from one tokenisation of the document;
  a window's candidates are the entities of the retriever's passages inside it, merged round-robin (by
  their best rank in those passages, :func:`~spacy_el.algorithms.passages.window_candidates`; with a
  retriever whose passages are the reader's windows, exactly its passage's entities). A span is kept only from the window that owns its first wordpiece (the middle of each
  overlap is the boundary, :func:`~spacy_el.algorithms.passages.window_cores`), so a mention cut by a
  window edge is read from the neighbour that sees it whole, and each mention is read once. A document's
  windows are read ``passages_per_batch`` per encoder call, never beside another document's (so that the
  output does not depend on the batch: bfloat16 rounding changes with the padding). The mode is
  fixed once the reader is initialised (the torch heads differ).

Training (``update``): eq. (2). Needs the retriever's passages on the *predicted* docs, so in ``spacy
train`` list the (frozen) retriever under ``[training] annotating_components``. Per passage the candidates
are its gold entities (KB entities with a reference mention entirely inside the passage; always
included, as in the paper) followed by the retriever's best other entities, ``train_candidates`` in all;
at most ``max_train_passages`` passages per document are used per step (sampled; 0 = all). In the joint
mode, where candidates share one sequence, they keep the retriever's order (gold entities the retriever
did not rank among the first ``train_candidates`` are put at random places), so that their position tells
the model no more in training than at prediction.
"""
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Literal, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.util import filter_spans
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..algorithms.entqa_decode import best_non_overlapping, merge_predictions, passage_predictions
from ..algorithms.passages import (PassagesByStart, char_span_to_token_span, make_passages, topic_text, window_candidates,
                                   window_cores, wordpiece_span_to_char_span)
from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..ml.entqa.inputs import EntityTokens, QuestionSide, ReaderBatch, encode_topic, mention_wordpieces, passage_from_slice
from ..ml.entqa.inputs import CandidateTokens, joint_layout, joint_reader_arrays, marker_id, reader_arrays
from ..ml.torch_io import tokenizer_of
from ..ml.entqa.model import EntQAReaderArguments, build_torch_layer
from .conventions import ENT_LABEL
from .entity_retriever import gold_mentions
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

DEFAULT_MODEL = {"@architectures": "spacy-el.EntQAReader.v1", **EntQAReaderArguments.defaults()}
Prediction = Tuple[int, int, str, float]  # start token, end token (exclusive), kb_id, score
READER_MODES = ("per_candidate", "joint")
MAX_SEQUENCE = 512  # encoder positions a joint row may use (BERT-style encoders)
Window = Tuple[QuestionSide, List[int]]  # a passage or window (with the topic) and its candidate KB rows


@dataclass(frozen=True)
class EntQAReaderSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    entities_per_passage: retrieved entities read per passage (K). spans_per_entity: spans per entity (P).
    max_mention_length: longest mention in wordpieces. min_span_score: γ. write_ents: also write the best non-overlapping subset
    to doc.ents. spans_key: span group of all predictions. passages_per_batch: passages per reader call
    at prediction (memory: x K rows; joint mode: windows per encoder call, of one doc).
    train_candidates / max_train_passages / seed: training sampling. reader_mode: "per_candidate" (the
    paper's) | "joint" (one pass per window for all candidates; fixed once initialised). Joint mode only:
    window_length / window_stride: the reader's windows in wordpieces; candidate_length: wordpieces of a
    candidate's name (⊕ description with candidate_description); marker_token: the vocabulary token that
    opens each candidate.
    """

    owner: ClassVar[str] = "entqa_reader"
    entities_per_passage: int = setting(20, low=1)
    spans_per_entity: int = setting(3, low=1)
    max_mention_length: int = setting(12, low=1)
    min_span_score: float = setting(0.05, low=0.0, high=1.0)
    write_ents: bool = True
    spans_key: str = setting("entqa", non_empty=True)
    passages_per_batch: int = setting(8, low=1)
    train_candidates: int = setting(4, low=1)
    max_train_passages: int = setting(4, low=0)
    seed: int = 0
    reader_mode: Literal[READER_MODES] = "per_candidate"  # type: ignore[valid-type]
    window_length: int = setting(128, low=2, high=MAX_SEQUENCE)
    window_stride: int = setting(64, low=1)
    candidate_length: int = setting(8, low=1)
    candidate_description: bool = False
    marker_token: str = setting("[unused0]", non_empty=True)

    def check(self) -> None:
        if self.window_stride > self.window_length:
            raise self.invalid("window_stride", f"<= window_length ({self.window_length})")


@Language.factory(
    "entqa_reader",
    assigns=["doc.ents", "doc.spans", "span._.link_score", "span._.candidate_scores"],
    requires=["doc._.entqa_passages"],
    default_config={"model": DEFAULT_MODEL, **EntQAReaderSettings.defaults(), "scorer": {"@scorers": "spacy-el.el_scorer.v1"}},
    default_score_weights={"el_micro_f": 1.0, "el_micro_p": None, "el_micro_r": None, "el_macro_f": None},
)
def make_entqa_reader(
    nlp: Language, name: str, *, model: Model, scorer: Optional[Callable], entities_per_passage: int,
    spans_per_entity: int, max_mention_length: int, min_span_score: float, write_ents: bool, spans_key: str, passages_per_batch: int,
    train_candidates: int, max_train_passages: int, seed: int, reader_mode: str, window_length: int,
    window_stride: int, candidate_length: int, candidate_description: bool, marker_token: str,
) -> "EntQAReader":
    """The settings are documented on :class:`EntQAReaderSettings` (their defaults too)."""
    return EntQAReader(nlp.vocab, model, name, settings=EntQAReaderSettings.from_arguments(locals()), scorer=scorer)


class EntQAReader(KBTorchPipe):
    """Finds the mentions of the retrieved entities; see the module docstring."""

    settings_class = EntQAReaderSettings

    def __init__(self, vocab: Vocab, model: Model, name: str, *, settings: EntQAReaderSettings,
                 scorer: Optional[Callable]) -> None:
        super().__init__(vocab, model, name, settings=settings, scorer=scorer)
        self._rng = np.random.default_rng(self.settings.seed)
        self._entity_tokens: Optional[EntityTokens] = None
        self._candidate_tokens: Optional[CandidateTokens] = None

    # -- set-up ------------------------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None) -> None:
        """Load the KB (saved inside the pipeline afterwards): the reader reads its titles and descriptions."""
        self._initialize_kb(get_examples, kb_loader)
        if self.kb.is_empty():
            raise ValueError(Errors.E803.format(name=self.name))
        self.model.set_dim("nE", max(1, self.kb.entity_vector_length))
        self._set_model_mode()
        self.model.initialize()
        self._entity_tokens = None
        self._candidate_tokens = None

    def _build_torch_layer(self) -> None:
        self._set_model_mode()
        build_torch_layer(self.model)

    def _set_model_mode(self) -> None:
        """Tell the model which torch module to build: the attr exists only in the joint mode, so that a
        per-candidate model's attrs (saved with its weights) are those it always had."""
        if self.model.layers:
            return
        if self.settings.reader_mode == "joint":
            self.model.attrs["reader_mode"] = "joint"
        else:
            self.model.attrs.pop("reader_mode", None)

    def _built_mode(self) -> Optional[str]:
        """The mode of the built torch layer (None before it is built)."""
        return self.model.attrs.get("reader_mode", "per_candidate") if self.model.layers else None

    def _check_settings(self, settings: EntQAReaderSettings) -> None:
        built = self._built_mode()
        wanted = settings.reader_mode
        if built is not None and wanted != built:
            raise ValueError(Errors.E816.format(name=self.name, built=built, wanted=wanted))

    def _check_initialized(self) -> None:
        if not self.model.layers:
            raise ValueError(Errors.E805.format(name=self.name))

    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        super().set_kb(kb_loader)
        self._entity_tokens = None

    def _after_load(self) -> None:
        self._entity_tokens = None
        self._candidate_tokens = None
        self._rng = np.random.default_rng(self.settings.seed)

    def entity_tokens(self) -> EntityTokens:
        if self._entity_tokens is None or self._entity_tokens.kb is not self.kb:
            self._entity_tokens = EntityTokens(tokenizer_of(self.model), self.kb, self.model.attrs["max_entity_length"])
        return self._entity_tokens

    def candidate_tokens(self) -> CandidateTokens:
        """The joint mode's candidate wordpieces (name, or name ⊕ description), cached per KB row."""
        s = self.settings
        cached = self._candidate_tokens
        if (cached is None or cached.kb is not self.kb or cached.max_length != s.candidate_length
                or cached.description != s.candidate_description):
            cached = CandidateTokens(tokenizer_of(self.model), self.kb, s.candidate_length, s.candidate_description)
            self._candidate_tokens = cached
        return cached

    # -- passages ----------------------------------------------------------------------------------
    def _retrieved(self, doc: Doc) -> Tuple[str, list]:
        """``(doc.text, the retriever's passages of doc)``, checked: each passage lies inside the text.
        ``doc.text`` is joined from the tokens on every access, so it is read once here."""
        text = doc.text
        retrieved = doc._.entqa_passages or []
        # No passages: either entity_retriever did not run, or it found no wordpiece in the text (blank
        # text, or only characters the tokenizer drops: NUL, BOM, zero-width space, a lone combining
        # mark), and then there is nothing to read.
        if not retrieved and self._has_wordpieces(text):
            raise ValueError(Errors.E817.format(name=self.name))
        for start, end, _, _ in retrieved:
            if not (0 <= start <= end <= len(text)):
                raise ValueError(Errors.E818.format(name=self.name, start=start, end=end, n_chars=len(text)))
        return text, retrieved

    def _passages(self, doc: Doc, limit: Optional[int] = None) -> List[Tuple[QuestionSide, List[int]]]:
        """The retriever's passages of ``doc`` as reader question sides, each with its KB rows (all of
        them, best first; entities missing from this KB are skipped; the first ``limit`` of them, None: all: the
        retriever keeps more than the reader reads, and each is a KB look-up)."""
        text, retrieved = self._retrieved(doc)
        if not retrieved:
            return []
        a = self.model.attrs
        tokenizer = tokenizer_of(self.model)
        topic = encode_topic(tokenizer, topic_text(text, a["topic"]), a["max_topic"])
        result = []
        for index, (start, end, kb_ids, _) in enumerate(retrieved):
            passage = passage_from_slice(text, start, end, tokenizer, index, a["max_passage_length"])
            if not len(passage):
                continue
            result.append((QuestionSide(passage, topic), self._kb_rows(kb_ids, limit)))
        return result

    def _kb_rows(self, kb_ids: Iterable[str], limit: Optional[int]) -> List[int]:
        """The KB rows of ``kb_ids`` in order, ids missing from this KB skipped, the first ``limit`` (None: all);
        reads ``kb_ids`` only as far as it needs."""
        rows: List[int] = []
        for kb_id in kb_ids:
            row = self.kb.entities.row_of(kb_id)
            if row is not None:
                rows.append(int(row))
                if limit is not None and len(rows) >= limit:
                    break
        return rows

    def _windows(self, doc: Doc, limit: Optional[int] = None) -> Tuple[List[Window], List[Tuple[int, int]]]:
        """Joint mode: the reader's windows of ``doc`` (with the topic), each with its candidate KB rows
        (the entities of the retriever's passages inside it, merged round-robin: :func:`window_candidates`;
        entities missing from this KB skipped; the first ``limit`` of them, None: all), and the wordpiece
        range each window owns (:func:`window_cores`)."""
        text, retrieved = self._retrieved(doc)
        if not retrieved:
            return [], []
        s = self.settings
        a = self.model.attrs
        tokenizer = tokenizer_of(self.model)
        windows = make_passages(text, tokenizer, s.window_length, s.window_stride)
        topic = encode_topic(tokenizer, topic_text(text, a["topic"]), a["max_topic"]) if windows else ()
        by_start = PassagesByStart(retrieved)  # once per document: each window finds its passages by bisection
        result = []
        for window in windows:
            # hundreds of ids per window: _kb_rows looks up only those kept
            result.append((QuestionSide(window, topic), self._kb_rows(window_candidates(window, by_start), limit)))
        return result, window_cores(windows)

    def _joint_layout(self, k: int) -> Tuple[int, int]:
        s = self.settings
        limit = min(MAX_SEQUENCE, int(getattr(tokenizer_of(self.model), "model_max_length", MAX_SEQUENCE) or MAX_SEQUENCE))
        return joint_layout(k, s.window_length, self.model.attrs["max_topic"], s.candidate_length, limit)

    def _has_wordpieces(self, text: str) -> bool:
        """Whether the encoder's tokenizer finds a wordpiece in ``text`` (one passage holds them all)."""
        whole = 1 << 30
        return bool(text.strip()) and bool(make_passages(text, tokenizer_of(self.model), whole, whole))

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[Prediction]]:
        """Per doc: ``(start_token, end_token, kb_id, score)`` of every prediction above γ."""
        docs = list(docs)
        self._check_initialized()
        if self.settings.reader_mode == "joint":
            return [self._by_tokens(doc, raw) for doc, raw in zip(docs, self._joint_raw(docs, self.settings.min_span_score))]
        return [self._predict_doc(doc) for doc in docs]

    def raw_predictions(self, doc: Doc, min_span_score: Optional[float] = None) -> List[Tuple[int, int, str, float]]:
        """``(start_char, end_char, kb_id, score)`` of a doc, merged over passages (before token alignment)."""
        gamma = self.settings.min_span_score if min_span_score is None else min_span_score
        if self.settings.reader_mode == "joint":
            return self._joint_raw([doc], gamma)[0]
        passages = self._passages(doc, limit=self.settings.entities_per_passage)
        passages = [(q, rows) for q, rows in passages if rows]
        if not passages or self.kb.is_empty():
            return []
        tokenizer = tokenizer_of(self.model)
        ids = self.kb.entities.ids
        found: List[Tuple[int, int, str, float]] = []
        step = self.settings.passages_per_batch
        for i in range(0, len(passages), step):
            chunk = passages[i:i + step]
            arrays = reader_arrays(tokenizer, [q for q, _ in chunk], [rows for _, rows in chunk], self.entity_tokens(),
                                   k=max(len(rows) for _, rows in chunk))
            (_, (start, end, rerank)), _ = self.model(ReaderBatch(arrays), is_train=False)
            b, k = arrays.shape
            span_mask = arrays.span_mask.reshape(b, k, -1)
            for j, (question, _) in enumerate(chunk):
                for s, t, column, score in passage_predictions(
                    start[j], end[j], rerank[j], span_mask[j], arrays.candidate_mask[j],
                    self.settings.spans_per_entity, self.settings.max_mention_length, gamma,
                ):
                    start_char, end_char = wordpiece_span_to_char_span(question.passage, s - 1, t - 1)
                    found.append((start_char, end_char, ids[int(arrays.rows[j, column])], score))
        return merge_predictions(found)

    def _joint_raw(self, docs: Sequence[Doc], gamma: float) -> List[List[Tuple[int, int, str, float]]]:
        """Joint mode: ``raw_predictions`` of several docs, each read on its own (:meth:`_joint_doc`)."""
        return [self._joint_doc(doc, gamma) for doc in docs]

    def _joint_doc(self, doc: Doc, gamma: float) -> List[Tuple[int, int, str, float]]:
        """Joint mode: ``raw_predictions`` of one doc. Its windows never share an encoder call with another
        document's, so they are padded the same in any batch and the output does not depend on the batch
        (with bfloat16 autocast, padding changes the encoder's states)."""
        s = self.settings
        windows, cores = self._windows(doc, limit=s.entities_per_passage)
        items = [(question, rows, core) for (question, rows), core in zip(windows, cores) if rows]
        if not items or self.kb.is_empty():
            return []
        tokenizer = tokenizer_of(self.model)
        marker = marker_id(tokenizer, s.marker_token)
        layout = self._joint_layout(s.entities_per_passage)
        ids = self.kb.entities.ids
        names = self.candidate_tokens()
        # Windows of similar length share an encoder call (less padding: a document's last window is short).
        items.sort(key=lambda item: len(item[0].ids) + sum(1 + len(names(r)) for r in item[1]))
        found: List[Tuple[int, int, str, float]] = []
        step = s.passages_per_batch
        for first in range(0, len(items), step):
            chunk = items[first:first + step]
            arrays = joint_reader_arrays(tokenizer, [q for q, _, _ in chunk], [rows for _, rows, _ in chunk],
                                         names, marker, s.entities_per_passage, layout)
            (_, (start, end, rerank)), _ = self.model(ReaderBatch(arrays), is_train=False)
            for j, (question, _, (lo, hi)) in enumerate(chunk):
                window = question.passage
                for first_wp, last_wp, column, score in passage_predictions(
                    start[j], end[j], rerank[j], arrays.span_mask[j], arrays.candidate_mask[j],
                    s.spans_per_entity, s.max_mention_length, gamma,
                ):
                    if not lo <= window.wordpiece_start + first_wp - 1 < hi:
                        continue  # another window owns this start: it reads the mention with more context
                    start_char, end_char = wordpiece_span_to_char_span(window, first_wp - 1, last_wp - 1)
                    found.append((start_char, end_char, ids[int(arrays.rows[j, column])], score))
        return merge_predictions(found)

    def _by_tokens(self, doc: Doc, raw: Sequence[Tuple[int, int, str, float]]) -> List[Prediction]:
        by_tokens: List[Prediction] = []
        for start_char, end_char, kb_id, score in raw:
            tokens = char_span_to_token_span(doc, start_char, end_char)
            if tokens is not None:
                by_tokens.append((tokens[0], tokens[1], kb_id, score))
        return merge_predictions(by_tokens)

    def _predict_doc(self, doc: Doc) -> List[Prediction]:
        return self._by_tokens(doc, self.raw_predictions(doc))

    def set_annotations(self, docs: Iterable[Doc], predictions: List[List[Prediction]]) -> None:
        key = self.settings.spans_key
        for doc, preds in zip(docs, predictions):
            spans = [Span(doc, s, e, ENT_LABEL, kb_id=kb_id) for s, e, kb_id, _ in preds]
            by_offsets: Dict[Tuple[int, int], List[List[Any]]] = {}
            for (s, e, kb_id, score), span in zip(preds, spans):
                by_offsets.setdefault((span.start_char, span.end_char), []).append([kb_id, score])
            for span in spans:
                ranked = sorted(by_offsets[(span.start_char, span.end_char)], key=lambda x: -x[1])
                span._.candidate_scores = ranked
                span._.link_score = ranked[0][1]
            doc.spans[key] = spans
            if self.settings.write_ents:
                best = best_non_overlapping(preds)
                labels = {(ent.start, ent.end): ent.label_ for ent in doc.ents}
                new = [Span(doc, s, e, labels.get((s, e), ENT_LABEL), kb_id=kb_id) for s, e, kb_id, _ in best]
                taken = {(s.start, s.end) for s in new}
                doc.ents = filter_spans(new + [ent for ent in doc.ents if (ent.start, ent.end) not in taken])

    # -- training ----------------------------------------------------------------------------------
    def _training_rows(self, eg: Example) -> List[Tuple[QuestionSide, List[int], List[List[Tuple[int, int]]]]]:
        """Sampled passages (joint mode: windows) of one example with their candidate rows and gold reader spans."""
        joint = self.settings.reader_mode == "joint"
        passages = self._windows(eg.predicted)[0] if joint else self._passages(eg.predicted)
        mentions = [(s, e, self.kb.entities.row_of(k)) for s, e, k in gold_mentions(eg.reference)]
        mentions = [(s, e, int(r)) for s, e, r in mentions if r is not None]
        limit = self.settings.max_train_passages
        chosen = range(len(passages))
        if limit and len(passages) > limit:
            chosen = sorted(self._rng.choice(len(passages), size=limit, replace=False).tolist())
        rows_out = []
        for index in chosen:
            question, retrieved = passages[index]
            spans: Dict[int, List[Tuple[int, int]]] = {}
            for start, end, row in mentions:
                wordpieces = mention_wordpieces(question.passage, start, end)
                if wordpieces is not None:  # reader positions: [CLS] is 0
                    spans.setdefault(row, []).append((wordpieces[0] + 1, wordpieces[1] + 1))
            gold = sorted(spans)
            others = [r for r in retrieved if r not in spans]
            if joint:
                candidates = self._joint_training_candidates(gold, retrieved)
            else:
                candidates = gold + others[: max(0, self.settings.train_candidates - len(gold))]
            rows_out.append((question, candidates, [sorted(set(spans.get(r, []))) for r in candidates]))
        return rows_out

    def _joint_training_candidates(self, gold: List[int], retrieved: List[int]) -> List[int]:
        """Gold rows and the retriever's best others, ``train_candidates`` in all (or all the gold ones), in
        the retriever's order; gold entities it did not rank that high go to random places."""
        budget = max(self.settings.train_candidates, len(gold))
        gold_set = set(gold)
        others = [r for r in retrieved if r not in gold_set][: budget - len(gold)]
        shown = set(retrieved[: budget])  # gold entities the retriever ranks this high keep their place
        kept = set(others) | (gold_set & shown)
        candidates = [r for r in retrieved if r in kept]
        for row in [r for r in gold if r not in shown]:
            candidates.insert(int(self._rng.integers(0, len(candidates) + 1)), row)
        return candidates

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One step of eq. (2) over the sampled passages."""
        examples, losses = self._start_update(examples, losses)
        rows = [r for eg in examples for r in self._training_rows(eg) if r[1]]
        if not rows:
            return losses
        k = max(len(candidates) for _, candidates, _ in rows)
        tokenizer = tokenizer_of(self.model)
        if self.settings.reader_mode == "joint":
            arrays = joint_reader_arrays(tokenizer, [q for q, _, _ in rows], [c for _, c, _ in rows], self.candidate_tokens(),
                                         marker_id(tokenizer, self.settings.marker_token), k, self._joint_layout(k))
        else:
            arrays = reader_arrays(tokenizer, [q for q, _, _ in rows], [c for _, c, _ in rows], self.entity_tokens(), k=k)
        gold_spans = [spans + [[] for _ in range(k - len(spans))] for _, _, spans in rows]
        batch = ReaderBatch(arrays, gold_spans, self.model.attrs["span_reduction"])
        return self._scalar_loss_step(batch, sgd, losses)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """End-to-end EL over ``doc.ents`` (InKB, strong match) with the configured scorer."""
        examples = list(examples)
        validate_examples(examples, "EntQAReader.score")
        return self.scorer(examples, **kwargs) if self.scorer is not None else {}

"""``entqa_reader``: EntQA's reader, the mentions of each retrieved entity (Zhang et al. 2022, sections 2.2-2.3).

For every passage that ``entity_retriever`` wrote to ``doc._.entqa_passages`` and each of its first
``top_k`` entities (K), a cross-encoder reads ``[CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]``
and gives start/end distributions over the passage's wordpieces (``[CLS]`` = "not in this passage") and
a rerank distribution over the K entities. Predictions are ``(s, t, e)`` with
``p_rerank(e) * p_start(s) * p_end(t) > threshold`` (γ) among each entity's ``top_p`` spans (P) that are
more probable than ``[CLS]`` (:mod:`spacy_el.algorithms.entqa_decode`). Duplicates from overlapping
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

Training (``update``): eq. (2). Needs the retriever's passages on the *predicted* docs, so in ``spacy
train`` list the (frozen) retriever under ``[training] annotating_components``. Per passage the candidates
are its gold entities (KB entities with a reference mention entirely inside the passage; always
included, as in the paper) followed by the retriever's best other entities, ``train_candidates`` in all;
at most ``max_train_passages`` passages per document are used per step (sampled; 0 = all).
"""
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.util import filter_spans
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer

from ..algorithms.entqa_decode import best_non_overlapping, merge_predictions, passage_predictions
from ..algorithms.passages import char_span_to_token_span, make_passages, topic_text, wordpiece_span_to_char_span
from ..extensions import register_extensions
from ..kb import ElKnowledgeBase
from ..ml.entqa.inputs import EntityTokens, QuestionSide, ReaderBatch, encode_topic, mention_wordpieces, passage_from_slice
from ..ml.entqa.inputs import reader_arrays, tokenizer_of
from ..ml.entqa.model import build_torch_layer
from .entity_retriever import gold_mentions
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

DEFAULT_READER_MODEL = """
[model]
@architectures = "spacy-el.EntQAReader.v1"
encoder = ""
max_passage_length = 48
max_entity_length = 32
topic = "first_token"
max_topic = 8
dropout = 0.1
span_reduction = "sum"
encoder_dtype = "auto"
encoder_batch = 64
encoder_lr_scale = 1.0
"""
DEFAULT_MODEL = Config().from_str(DEFAULT_READER_MODEL)["model"]
ENT_LABEL = "ENT"
Prediction = Tuple[int, int, str, float]  # start token, end token (exclusive), kb_id, score


@dataclass(frozen=True)
class EntQAReaderSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    top_k: retrieved entities read per passage (K). top_p: spans per entity (P). max_mention_length:
    longest mention in wordpieces. threshold: γ. write_ents: also write the best non-overlapping subset
    to doc.ents. spans_key: span group of all predictions. passages_per_batch: passages per reader call
    at prediction (memory: x K rows). train_candidates / max_train_passages / seed: training sampling.
    """

    component: ClassVar[str] = "entqa_reader"
    top_k: int = setting(20, low=1)
    top_p: int = setting(3, low=1)
    max_mention_length: int = setting(12, low=1)
    threshold: float = setting(0.05, low=0.0, high=1.0)
    write_ents: bool = True
    spans_key: str = setting("entqa", non_empty=True)
    passages_per_batch: int = setting(8, low=1)
    train_candidates: int = setting(4, low=1)
    max_train_passages: int = setting(4, low=0)
    seed: int = 0


@Language.factory(
    "entqa_reader",
    assigns=["doc.ents", "doc.spans", "span._.link_score", "span._.candidate_scores"],
    requires=["doc._.entqa_passages"],
    default_config={"model": DEFAULT_MODEL, **EntQAReaderSettings.defaults(), "scorer": {"@scorers": "spacy-el.el_scorer.v1"}},
    default_score_weights={"el_micro_f": 1.0, "el_micro_p": None, "el_micro_r": None, "el_macro_f": None},
)
def make_entqa_reader(
    nlp: Language, name: str, model: Model, top_k: int, top_p: int, max_mention_length: int, threshold: float,
    write_ents: bool, spans_key: str, passages_per_batch: int, train_candidates: int, max_train_passages: int,
    seed: int, scorer: Optional[Callable],
) -> "EntQAReader":
    """The settings are documented on :class:`EntQAReaderSettings`."""
    return EntQAReader(nlp.vocab, model, name, top_k=top_k, top_p=top_p, max_mention_length=max_mention_length,
                       threshold=threshold, write_ents=write_ents, spans_key=spans_key,
                       passages_per_batch=passages_per_batch, train_candidates=train_candidates,
                       max_train_passages=max_train_passages, seed=seed, scorer=scorer)


class EntQAReader(KBTorchPipe):
    """Finds the mentions of the retrieved entities; see the module docstring."""

    settings_class = EntQAReaderSettings

    def __init__(self, vocab: Vocab, model: Model, name: str = "entqa_reader", *, scorer: Optional[Callable] = None, **cfg: Any) -> None:
        register_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: Dict[str, Any] = EntQAReaderSettings.from_cfg(cfg).to_cfg()
        self.scorer = scorer
        self.kb = ElKnowledgeBase(vocab)
        self._rng = np.random.default_rng(self.settings.seed)
        self._entity_tokens: Optional[EntityTokens] = None

    # -- set-up ------------------------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None) -> None:
        """Load the KB (saved inside the pipeline afterwards): the reader reads its titles and descriptions."""
        validate_examples(get_examples(), "EntQAReader.initialize")
        if kb_loader is not None:
            self.set_kb(kb_loader)
        if self.kb.is_empty():
            raise ValueError(
                f"[spacy_el] {self.name} has an empty KB. Give one in the config: [initialize.components.{self.name}.kb_loader] "
                "@misc = \"spacy-el.KBFromDisk.v1\" path = \"kb/...\"."
            )
        self.model.set_dim("nE", max(1, self.kb.entity_vector_length))
        self.model.initialize()
        self._entity_tokens = None

    def _build_torch_layer(self) -> None:
        build_torch_layer(self.model)

    def _check_initialized(self) -> None:
        if not self.model.layers:
            raise ValueError(
                f"[spacy_el] The {self.name} component is not initialised: call nlp.initialize() "
                "(with a kb_loader) or load a trained pipeline."
            )

    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        super().set_kb(kb_loader)
        self._entity_tokens = None

    def _after_load(self) -> None:
        self._entity_tokens = None
        self._rng = np.random.default_rng(self.settings.seed)

    def entity_tokens(self) -> EntityTokens:
        if self._entity_tokens is None or self._entity_tokens.kb is not self.kb:
            self._entity_tokens = EntityTokens(tokenizer_of(self.model), self.kb, self.model.attrs["max_entity_length"])
        return self._entity_tokens

    # -- passages ----------------------------------------------------------------------------------
    def _passages(self, doc: Doc) -> List[Tuple[QuestionSide, List[int]]]:
        """The retriever's passages of ``doc`` as reader question sides, each with its KB rows (all of
        them, best first; entities missing from this KB are skipped)."""
        retrieved = doc._.entqa_passages or []
        # No passages: either entity_retriever did not run, or it found no wordpiece in the text (blank
        # text, or only characters the tokenizer drops: NUL, BOM, zero-width space, a lone combining
        # mark), and then there is nothing to read.
        if not retrieved and self._has_wordpieces(doc.text):
            raise ValueError(
                f"[spacy_el] {self.name} found no passages in doc._.entqa_passages: put entity_retriever before it "
                "in the pipeline (and in training list it in [training] annotating_components)."
            )
        if not retrieved:
            return []
        a = self.model.attrs
        tokenizer = tokenizer_of(self.model)
        topic = encode_topic(tokenizer, topic_text(doc.text, a["topic"]), a["max_topic"])
        result = []
        for index, (start, end, kb_ids, _) in enumerate(retrieved):
            if not (0 <= start <= end <= len(doc.text)):
                raise ValueError(f"[spacy_el] {self.name}: passage ({start}, {end}) lies outside the doc text ({len(doc.text)} characters).")
            passage = passage_from_slice(doc.text, start, end, tokenizer, index, a["max_passage_length"])
            if not len(passage):
                continue
            rows = [r for r in (self.kb.entities.row_of(k) for k in kb_ids) if r is not None]
            result.append((QuestionSide(passage, topic), [int(r) for r in rows]))
        return result

    def _has_wordpieces(self, text: str) -> bool:
        """Whether the encoder's tokenizer finds a wordpiece in ``text`` (one passage holds them all)."""
        whole = 1 << 30
        return bool(text.strip()) and bool(make_passages(text, tokenizer_of(self.model), whole, whole))

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[Prediction]]:
        """Per doc: ``(start_token, end_token, kb_id, score)`` of every prediction above γ."""
        docs = list(docs)
        self._check_initialized()
        return [self._predict_doc(doc) for doc in docs]

    def raw_predictions(self, doc: Doc, threshold: Optional[float] = None) -> List[Tuple[int, int, str, float]]:
        """``(start_char, end_char, kb_id, score)`` of a doc, merged over passages (before token alignment)."""
        gamma = self.settings.threshold if threshold is None else threshold
        passages = [(q, rows[: self.settings.top_k]) for q, rows in self._passages(doc)]
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
                    self.settings.top_p, self.settings.max_mention_length, gamma,
                ):
                    start_char, end_char = wordpiece_span_to_char_span(question.passage, s - 1, t - 1)
                    found.append((start_char, end_char, ids[int(arrays.rows[j, column])], score))
        return merge_predictions(found)

    def _predict_doc(self, doc: Doc) -> List[Prediction]:
        by_tokens: List[Prediction] = []
        for start_char, end_char, kb_id, score in self.raw_predictions(doc):
            tokens = char_span_to_token_span(doc, start_char, end_char)
            if tokens is not None:
                by_tokens.append((tokens[0], tokens[1], kb_id, score))
        return merge_predictions(by_tokens)

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
        """Sampled passages of one example with their candidate rows and gold reader spans."""
        passages = self._passages(eg.predicted)
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
            candidates = gold + others[: max(0, self.settings.train_candidates - len(gold))]
            rows_out.append((question, candidates, [sorted(set(spans.get(r, []))) for r in candidates]))
        return rows_out

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One step of eq. (2) over the sampled passages."""
        examples, losses = self._start_update(examples, losses)
        rows = [r for eg in examples for r in self._training_rows(eg) if r[1]]
        if not rows:
            return losses
        k = max(len(candidates) for _, candidates, _ in rows)
        arrays = reader_arrays(tokenizer_of(self.model), [q for q, _, _ in rows], [c for _, c, _ in rows], self.entity_tokens(), k=k)
        gold_spans = [spans + [[] for _ in range(k - len(spans))] for _, _, spans in rows]
        batch = ReaderBatch(arrays, gold_spans, self.model.attrs["span_reduction"])
        return self._scalar_loss_step(batch, sgd, losses)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """End-to-end EL over ``doc.ents`` (InKB, strong match) with the configured scorer."""
        examples = list(examples)
        validate_examples(examples, "EntQAReader.score")
        return self.scorer(examples, **kwargs) if self.scorer is not None else {}

"""``ner_constrained_linker``: NER-aware entity disambiguation (NER4EL, Tedeschi et al., EMNLP Findings 2021).

Disambiguates the mentions already in ``doc.ents`` (or a span group) against the shared KB, using
entity types at four switchable points:

1. typed entity representations (``model.typed_entities``): a learned type embedding joins each
   candidate's representation;
2. type-aware candidate selection (``type_aware_selection``): when the alias table's candidates are
   cut to ``candidates_per_mention``, those compatible with the mention's type are kept first;
3. type-based negative sampling (``n_type_negatives``): training negatives of the gold's type;
4. type-constrained decoding (``decoding = "hard" | "soft"``): drop incompatible candidates, or add
   ``soft_weight * log P(type agreement)`` to the scores, with the entity types smoothed by
   ``type_smoothing`` (a KB-typed entity's one-hot type would otherwise make "soft" as strict as "hard").

The mention's type comes from its NER label mapped into the type inventory, or from the model's
mention-typing head (``mention_type_source = "head"``, and whenever the label is not in the inventory).
Mentions whose label is one of ``unlinkable_labels`` (default
:data:`~spacy_el.extensions.UNLINKABLE_LABELS`: DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL,
CARDINAL) are not scored: they get ``kb_id_`` ``"NIL"``, ``span._.nil_reason = "not_linkable_label"``
and no candidates (``docs/drop_in.md`` maps the OntoNotes labels). The setting applies at prediction;
training still learns from every gold mention with a KB id.
Each KB entity's type distribution is kept in the KB; at ``initialize``, entities without a type get
one from an entity-typing classifier trained on the typed ones (:mod:`spacy_el.ml.ner_constrained_linker.entity_typing`).

Prediction scores the marked windows of a batch ``encoder_batch`` windows at a time (default 32), so
that memory (the encoder's activations, the candidate arrays) does not grow with the length of a
document; the scores do not depend on the setting. Training encodes each update's windows at once.

Spans with the same character offsets (possible in a span group, not in ``doc.ents``) are one mention
to spaCy's span extensions: their values live in ``doc.user_data`` under (name, start_char, end_char),
so such spans share ``candidate_scores``, ``link_score`` and ``nil_reason``. Twins whose labels give
the same mention type (or any labels with ``mention_type_source = "head"``) are therefore linked once
and all get that decision; twins whose labels give different types would need different values under
one key, so they are refused with a ValueError naming the span (keep one span per offsets).
"""
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Literal, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..extensions import (
    BELOW_THRESHOLD, NIL, NOT_LINKABLE_LABEL, NO_CANDIDATES, TYPE_CONSTRAINT, UNLINKABLE_LABELS,
)
from ..candidates import CandidateGenerator, CandidateMemo
from ..candidates.held_out import held_out_of
from ..candidates.typed_selection import CandidateSelector, CandidateSet
from ..errors import Errors, Warnings
from ..kb import ElKnowledgeBase
from ..kb.type_inventory import TypeInventory, observed_type_counts
from ..ml.ner_constrained_linker.entity_typing import entity_type_distributions
from ..ml.ner_constrained_linker.inputs import CandidateFeatures, MentionSlot, Ner4elBatch, encode_mentions, make_batch, window_chunks
from ..ml.ner_constrained_linker.model import Ner4elArguments, build_torch_layer
from ..ml.torch_io import tokenizer_of
from .conventions import CANDIDATES_KEPT
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

DEFAULT_MODEL = {"@architectures": "spacy-el.NerConstrainedLinker.v1", **Ner4elArguments.defaults()}


@dataclass(frozen=True)
class NerConstrainedLinkerSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    mentions_key: link ``doc.spans[mentions_key]`` instead of ``doc.ents`` (null). candidates_per_mention:
    candidates per mention, cut from what the factory's ``candidates`` generator gives (all alias-table matches by
    default; type-aware when ``type_aware_selection``). type_inventory: the type labels ("coarse": PER/LOC/ORG/MISC, or "fine"). The type switches
    are in the module docstring: type_aware_selection, n_random_negatives / n_type_negatives (training
    negatives), decoding with soft_weight and type_smoothing, min_type_prob (the type probability an
    entity needs to count as compatible), mention_type_source, type_loss_weight (the mention-typing
    head's loss). min_link_prob: write NIL when the best candidate's probability is below it (null: never).
    seed: of the negative sampling. held_out_priors: in training, take each document's own gold mentions out
    of the alias priors first (:mod:`spacy_el.candidates.held_out`; the KB must carry what each document it
    counted contributed, as the evaluation KB does for AIDA and GUM train). similarity_weight: at prediction,
    add this times the candidate generator's mention-entity similarity (dense or hybrid generators; 0 where it
    gave none) to each candidate's score, after the type decoding (0: off; a weight chosen on dev, see the
    docs). encoder_batch: marked windows per scorer call at prediction
    (memory, not results). unlinkable_labels: entity labels never linked (NIL, nil_reason
    "not_linkable_label"; module docstring).
    """

    owner: ClassVar[str] = "ner_constrained_linker"
    mentions_key: Optional[str] = setting(None, non_empty=True)
    candidates_per_mention: int = setting(30, low=1)
    type_inventory: Literal["coarse", "fine"] = "coarse"
    type_aware_selection: bool = False
    n_random_negatives: int = setting(4, low=0)
    n_type_negatives: int = setting(0, low=0)
    decoding: Literal["none", "hard", "soft"] = "none"
    soft_weight: float = setting(1.0, low=0.0)
    type_smoothing: float = setting(0.1, low=0.0, low_open=True, high=1.0)
    min_type_prob: float = setting(0.2, low=0.0, high=1.0)
    mention_type_source: Literal["label", "head"] = "label"
    min_link_prob: Optional[float] = setting(None, low=0.0)
    type_loss_weight: float = setting(0.1, low=0.0)
    seed: int = 0
    held_out_priors: bool = False
    similarity_weight: float = setting(0.0, low=0.0)
    encoder_batch: int = setting(32, low=1)
    unlinkable_labels: Tuple[str, ...] = setting(UNLINKABLE_LABELS, non_empty=True)


@Language.factory(
    "ner_constrained_linker",
    assigns=["doc.ents", "token.ent_kb_id", "span._.candidate_scores", "span._.link_score", "span._.nil_reason"],
    requires=["doc.ents"],
    default_config={
        "model": DEFAULT_MODEL, **NerConstrainedLinkerSettings.defaults(), "scorer": {"@scorers": "spacy-el.el_scorer.v1"},
        "candidates": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": None, "fuzzy": True},
    },
    default_score_weights={"el_micro_f": 1.0, "el_micro_p": None, "el_micro_r": None, "el_macro_f": None, "ed_accuracy": None},
)
def make_ner_constrained_linker(
    nlp: Language,
    name: str,
    *,
    model: Model,
    scorer: Optional[Callable],
    candidates: CandidateGenerator,
    mentions_key: Optional[str],
    candidates_per_mention: int,
    type_inventory: str,
    type_aware_selection: bool,
    n_random_negatives: int,
    n_type_negatives: int,
    decoding: str,
    soft_weight: float,
    type_smoothing: float,
    min_type_prob: float,
    mention_type_source: str,
    min_link_prob: Optional[float],
    type_loss_weight: float,
    seed: int,
    held_out_priors: bool,
    similarity_weight: float,
    encoder_batch: int,
    unlinkable_labels: List[str],
) -> "NerConstrainedLinker":
    """The settings are documented on :class:`NerConstrainedLinkerSettings` (their defaults too); ``candidates`` is
    any registered candidate generator (``spacy-el.AliasCandidates.v1``, ``DenseCandidates.v1``, ``HybridCandidates.v1``)."""
    settings = NerConstrainedLinkerSettings.from_arguments(locals())
    return NerConstrainedLinker(nlp.vocab, model, name, settings=settings, scorer=scorer, candidates=candidates)


class NerConstrainedLinker(KBTorchPipe):
    """NER4EL entity disambiguation over given mentions; see the module docstring."""

    dim_names = ("nE", "nT")
    settings_class = NerConstrainedLinkerSettings

    def __init__(
        self, vocab: Vocab, model: Model, name: str, *, settings: NerConstrainedLinkerSettings,
        scorer: Optional[Callable], candidates: CandidateGenerator,
    ) -> None:
        super().__init__(vocab, model, name, settings=settings, scorer=scorer)
        self.inventory = TypeInventory.from_name(self.settings.type_inventory)
        self.candidates = candidates
        self._training_memo = CandidateMemo()  # the gold mentions' candidates across epochs (update only)
        self._selector: Optional[CandidateSelector] = None
        self._rng = np.random.default_rng(self.settings.seed)

    # -- set-up ------------------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None,
    ) -> None:
        """Load the KB, give every KB entity a type distribution (from its KB types and the training
        mentions' NER labels, else the entity-typing classifier) and build the model."""
        self._initialize_kb(get_examples, kb_loader)
        self._require_kb_with_vectors()
        mentions = [
            (span.kb_id_, span.label_) for eg in get_examples() for span in self._spans(eg.reference) if span.kb_id_
        ]
        observed = observed_type_counts(self.kb, self.inventory, mentions)
        probs, _ = entity_type_distributions(self.kb, self.inventory, observed)
        self.kb.set_type_probs(self.inventory.labels, probs)
        self.model.set_dim("nE", self.kb.entity_vector_length)
        self.model.set_dim("nT", len(self.inventory.labels))
        self.model.initialize()
        self._selector = None
        self._training_memo.clear()

    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        super().set_kb(kb_loader)
        self._selector = None

    def _build_torch_layer(self) -> None:
        build_torch_layer(self.model)

    @property
    def selector(self) -> CandidateSelector:
        if self._selector is None:
            probs = self.kb.get_type_probs(self.inventory.labels)
            if probs is None:
                warnings.warn(Warnings.W802.format(name=self.name, labels=self.inventory.labels))
                probs = np.full((self.kb.n_entities, len(self.inventory.labels)), 1.0 / len(self.inventory.labels), np.float32)
            self._selector = CandidateSelector(
                self.kb, probs, self.settings.candidates_per_mention, self.settings.type_aware_selection, self.settings.min_type_prob
            )
        return self._selector

    def _spans(self, doc: Doc) -> List[Span]:
        key = self.settings.mentions_key
        if key is None:
            return list(doc.ents)
        return list(doc.spans[key]) if key in doc.spans else []

    def _unlinkable(self, span: Span) -> bool:
        return span.label_ in self.settings.unlinkable_labels

    def _mention_type(self, span: Span) -> Optional[int]:
        if self.settings.mention_type_source == "head":
            return None
        return self.inventory.mention_label(span.label_)

    # -- features ----------------------------------------------------------------------------------
    def _batch(self, texts_spans: Sequence[Tuple[str, Sequence[Tuple[int, int]]]], cand_sets: Sequence[CandidateSet]) -> Ner4elBatch:
        """All the marked windows of ``texts_spans`` (text, char spans per doc) with one candidate set per mention."""
        input_ids, attention_mask, slots = encode_mentions(texts_spans, tokenizer_of(self.model), self.model.attrs["max_length"])
        return self._make_batch(input_ids, attention_mask, slots, cand_sets)

    def _make_batch(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, slots: Sequence[MentionSlot], cand_sets: Sequence[CandidateSet]
    ) -> Ner4elBatch:
        """input_ids, attention_mask: int64 (P, L) windows; ``slots[i]`` and ``cand_sets[i]``: mention i."""
        probs = self.selector.type_probs
        vectors = self.kb.entities.vectors
        width = self.model.get_dim("nE")
        candidates = [
            CandidateFeatures(vectors[c.rows] if len(c) else np.zeros((0, width), np.float32), probs[c.rows], c.log_prior,
                              c.from_alias, c.dense)
            for c in cand_sets
        ]
        return make_batch(input_ids, attention_mask, slots, candidates, width, len(self.inventory.labels))

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[Dict[str, Any]]]:
        """Per doc, per mention: the chosen KB id ("NIL" when none) with its scores and NIL reason."""
        docs = list(docs)
        self._check_initialized()
        spans_per_doc = [self._spans(doc) for doc in docs]
        if not any(spans_per_doc):
            return [[] for _ in docs]
        # One decision per character offsets: spans sharing them share their extension values.
        unique_per_doc, twin_of = zip(*(self._unique_mentions(spans) for spans in spans_per_doc))
        # Mentions of an unlinkable label are not scored (nor encoded): NIL, "not_linkable_label".
        decisions: List[Dict[str, Any]] = [
            {"kb_id": NIL, "reason": NOT_LINKABLE_LABEL, "candidates": [], "score": None} if self._unlinkable(s) else {}
            for spans in unique_per_doc for s in spans
        ]
        to_link = [i for i, d in enumerate(decisions) if not d]  # flat indices of the mentions to score
        linkable_per_doc = [[s for s in spans if not self._unlinkable(s)] for spans in unique_per_doc]
        if to_link:
            self._link(docs, linkable_per_doc, decisions, to_link)
        out, offset = [], 0
        for unique, twins in zip(unique_per_doc, twin_of):
            out.append([decisions[offset + j] for j in twins])
            offset += len(unique)
        return out

    def _link(self, docs: Sequence[Doc], spans_per_doc: Sequence[Sequence[Span]], decisions: List[Dict[str, Any]], to_link: Sequence[int]) -> None:
        """Score the mentions ``spans_per_doc`` (flat, they are ``decisions[to_link[i]]``) and fill in their decisions."""
        flat_spans = [s for spans in spans_per_doc for s in spans]
        generated = self.candidates(self.kb, flat_spans)
        flat_sets = [self.selector.select(found, self._mention_type(s)) for s, found in zip(flat_spans, generated)]
        texts_spans = [(doc.text, [(s.start_char, s.end_char) for s in spans]) for doc, spans in zip(docs, spans_per_doc)]
        input_ids, attention_mask, slots = encode_mentions(texts_spans, tokenizer_of(self.model), self.model.attrs["max_length"])
        # Score a bounded number of windows at a time: memory would otherwise grow with the document
        # (encoder activations and candidate arrays of every mention at once). Every chunk keeps the
        # batch's padded width L, so a window is encoded exactly as in one call.
        size = self.settings.encoder_batch
        for rows, members, chunk_slots in window_chunks(slots, input_ids.shape[0], size):
            chunk_spans = [flat_spans[i] for i in members]
            chunk_sets = [flat_sets[i] for i in members]
            batch = self._make_batch(input_ids[rows], attention_mask[rows], chunk_slots, chunk_sets)
            scores, type_logits = self.model.predict(batch)
            chunk_decisions = self._decode(chunk_spans, chunk_sets, batch, scores, type_logits)
            for i, decision in zip(members, chunk_decisions):
                decisions[to_link[i]] = decision

    def _unique_mentions(self, spans: Sequence[Span]) -> Tuple[List[Span], List[int]]:
        """The spans to link, one per character offsets (first seen), and for each of ``spans`` the index
        of the one it is linked as.

        spaCy keeps span extension values under (name, start_char, end_char), without the label, so
        spans with the same offsets share ``candidate_scores``/``link_score``/``nil_reason``. Twins of one
        mention type are one mention and get one decision (encoding them twice would also mark the
        mention twice in its window); twins of different types would need two decisions under one key,
        so they are refused rather than given values that contradict one of their links.
        """
        first: Dict[Tuple[int, int], int] = {}
        unique: List[Span] = []
        twins: List[int] = []
        for span in spans:
            key = (span.start_char, span.end_char)
            j = first.setdefault(key, len(unique))
            if j == len(unique):
                unique.append(span)
            elif (self._unlinkable(span), self._mention_type(span)) != (self._unlinkable(unique[j]), self._mention_type(unique[j])):
                where = "doc.ents" if self.settings.mentions_key is None else f"doc.spans[{self.settings.mentions_key!r}]"
                raise ValueError(Errors.E826.format(name=self.name, text=span.text, key=key, where=where,
                                                    first=unique[j].label_, second=span.label_))
            twins.append(j)
        return unique, twins

    def _decode(
        self, spans: Sequence[Span], sets: Sequence[CandidateSet], batch: Ner4elBatch, scores: np.ndarray, type_logits: np.ndarray
    ) -> List[Dict[str, Any]]:
        """Constrained decoding (contribution 4). scores: (M, C); type_logits: (M, T)."""
        head_probs = _softmax(type_logits)
        settings = self.settings  # read once: it is checked against cfg on every access
        decoding = settings.decoding
        out = []
        for i, (span, cands) in enumerate(zip(spans, sets)):
            if len(cands) == 0:
                out.append({"kb_id": NIL, "reason": NO_CANDIDATES, "candidates": [], "score": None})
                continue
            mention_type = self._mention_type(span)
            q = np.eye(len(self.inventory.labels), dtype=np.float32)[mention_type] if mention_type is not None else head_probs[i]
            row_scores = scores[i, : len(cands)].astype(np.float64)
            entity_types = batch.cand_type_probs[i, : len(cands)]
            if decoding == "hard":
                allowed = entity_types[:, int(np.argmax(q))] >= settings.min_type_prob
                if not allowed.any():
                    out.append({"kb_id": NIL, "reason": TYPE_CONSTRAINT, "candidates": [], "score": None})
                    continue
                row_scores = np.where(allowed, row_scores, -np.inf)
            elif decoding == "soft":
                # Smoothed entity types: a KB-typed entity's one-hot distribution would make the soft
                # constraint as strict as the hard one.
                eps = settings.type_smoothing
                smoothed = (1.0 - eps) * entity_types + eps / entity_types.shape[1]
                row_scores = row_scores + settings.soft_weight * np.log(smoothed @ q)
            if settings.similarity_weight:
                # The generator's similarity, weighed at prediction: the scorer cannot learn its weight from
                # training mentions, which the mention encoder was trained on.
                row_scores = row_scores + settings.similarity_weight * np.nan_to_num(cands.dense[: len(row_scores)], nan=0.0)
            probs = _softmax(row_scores[None, :])[0]
            order = np.argsort(-probs, kind="stable")
            ids = self.kb.entities.ids
            ranked = [[ids[int(cands.rows[j])], float(probs[j])] for j in order[:CANDIDATES_KEPT] if np.isfinite(row_scores[j])]
            best = int(order[0])
            min_link_prob = settings.min_link_prob
            if min_link_prob is not None and probs[best] < min_link_prob:
                out.append({"kb_id": NIL, "reason": BELOW_THRESHOLD, "candidates": ranked, "score": float(probs[best])})
            else:
                out.append({"kb_id": ids[int(cands.rows[best])], "reason": None, "candidates": ranked, "score": float(probs[best])})
        return out

    def set_annotations(self, docs: Iterable[Doc], decisions: List[List[Dict[str, Any]]]) -> None:
        key = self.settings.mentions_key
        for doc, doc_decisions in zip(docs, decisions):
            spans = self._spans(doc)
            if not spans:
                continue
            linked = [Span(doc, s.start, s.end, s.label, kb_id=d["kb_id"]) for s, d in zip(spans, doc_decisions)]
            for span, decision in zip(linked, doc_decisions):
                span._.candidate_scores = decision["candidates"]
                span._.link_score = decision["score"]
                span._.nil_reason = decision["reason"]
            # Reassign: kb_id_ set on a span of doc.ents does not reach the tokens.
            if key is None:
                doc.ents = linked
            else:
                doc.spans[key] = linked

    # -- training ----------------------------------------------------------------------------------
    def _training_mentions(self, examples: Iterable[Example]) -> Tuple[list, list, list]:
        """Gold mentions in the KB: (text, char spans) per predicted doc, candidate sets, gold spans.

        The batch's mentions get their candidates in one generator call, through the training memo: a
        gold mention's list is generated in its first epoch and reused in the later ones."""
        in_kb_per_eg = []
        for eg in examples:
            in_kb = []
            for gold in self._spans(eg.reference):
                row = self.kb.entities.row_of(gold.kb_id_) if gold.kb_id_ not in ("", NIL) else None
                if row is not None:  # else NIL or not in the KB: nothing to disambiguate towards
                    in_kb.append((gold, row))
            in_kb_per_eg.append((eg, in_kb))
        golds_flat = [gold for _, in_kb in in_kb_per_eg for gold, _ in in_kb]
        held_out = held_out_of(self.kb, golds_flat) if self.settings.held_out_priors else None
        generated = iter(self._training_memo(self.candidates, self.kb, golds_flat, held_out))
        texts_spans, sets, golds = [], [], []
        settings = self.settings
        for eg, in_kb in in_kb_per_eg:
            spans = []
            for (gold, row), found in zip(in_kb, generated):
                cands = self.selector.training_set(
                    found, self.inventory.mention_label(gold.label_), row, self._rng,
                    settings.n_random_negatives, settings.n_type_negatives,
                )
                spans.append((gold.start_char, gold.end_char))
                sets.append(cands)
                golds.append(gold)
            texts_spans.append((eg.reference.text, spans))
        return texts_spans, sets, golds

    def update(
        self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None, losses: Optional[Dict[str, float]] = None
    ) -> Dict[str, float]:
        """Cross-entropy over each gold mention's candidates and negatives, plus the mention-typing loss."""
        examples, losses = self._start_update(examples, losses)
        texts_spans, sets, golds = self._training_mentions(examples)
        if not sets:
            return losses
        batch = self._batch(texts_spans, sets)
        (scores, type_logits), backprop = self.model.begin_update(batch)
        loss, d_scores, d_types = self.get_loss(examples, (scores, type_logits), batch=batch, sets=sets, golds=golds)
        backprop((d_scores, d_types))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any, *, batch: Ner4elBatch = None, sets: Sequence[CandidateSet] = (), golds: Sequence[Span] = ()) -> Tuple[float, Any, Any]:
        """Mean cross-entropy of the gold candidate + ``type_loss_weight`` x mention-typing cross-entropy.
        RETURNS: the loss and the gradients of the scores (M, C) and the type logits (M, T)."""
        ops = self.model.ops
        cand_scores = ops.to_numpy(scores[0]).astype(np.float64)
        type_logits = ops.to_numpy(scores[1]).astype(np.float64)
        m = len(sets)
        masked = np.where(batch.cand_mask, cand_scores, -np.inf)
        probs = _softmax(masked)
        gold_index = np.fromiter((c.gold for c in sets), dtype=np.int64, count=m)
        target = np.zeros_like(probs)
        target[np.arange(m), gold_index] = 1.0
        loss = -np.log(probs[np.arange(m), gold_index] + 1e-12).sum() / m
        d_scores = (probs - target) / m
        type_targets = np.stack([self._type_target(span, c) for span, c in zip(golds, sets)])
        type_probs = _softmax(type_logits)
        weight = self.settings.type_loss_weight
        loss += weight * -(type_targets * np.log(type_probs + 1e-12)).sum() / m
        d_types = weight * (type_probs - type_targets) / m
        return float(loss), ops.asarray(d_scores.astype(np.float32)), ops.asarray(d_types.astype(np.float32))

    def _type_target(self, span: Span, cands: CandidateSet) -> np.ndarray:
        """The NER label's type, or the gold entity's type distribution when the label has none."""
        label = self.inventory.mention_label(span.label_)
        if label is not None:
            return np.eye(len(self.inventory.labels))[label]
        return self.selector.type_probs[cands.rows[cands.gold]].astype(np.float64)

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """End-to-end EL of the linked mentions (``doc.spans[mentions_key]``, or ``doc.ents``) with the configured scorer."""
        examples = list(examples)
        validate_examples(examples, "NerConstrainedLinker.score")
        return self.scorer(examples, **{"spans_key": self.settings.mentions_key, **kwargs}) if self.scorer is not None else {}

    # -- serialisation (KBTorchPipe) --------------------------------------------------------------
    def _after_configure(self) -> None:
        self._after_load()

    def _after_load(self) -> None:
        self.inventory = TypeInventory.from_name(self.settings.type_inventory)
        self._selector = None


def _softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a (N, K) array; -inf entries get probability 0."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    shifted = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


__all__ = ["NerConstrainedLinker", "make_ner_constrained_linker", "DEFAULT_MODEL"]

"""``ner_stack_lstm``: joint NER and entity linking with a Stack-LSTM transition system.

Seed paper: ``stack-lstm-joint-ner-el.txt`` (Martins, Marinho and Martins, 2019). Each sentence is
parsed with SHIFT / OUT / REDUCE-<label> (``spacy_el.algorithms.transition_system``); every REDUCE
detects and types a mention and links it to the shared KB: a NIL classifier on the stack state says
whether it is linkable, and the candidates from the alias table (top ``top_k`` by prior) are ranked
from ``[entity vector; prior; mention; sentence; action history]``. The model is
``spacy-el.NerStackLstm.v1`` (:mod:`spacy_el.ml.ner_stack_lstm`); its word features come from a
spaCy tok2vec sublayer in the config.

Output: ``doc.ents`` (replacing any there) with labels and ``kb_id_`` (``"NIL"`` when the NIL classifier
says so or the mention has no candidate; ``""`` with ``tasks = "ner"``), and on each entity
``span._.candidate_scores`` (the top candidates with their probabilities), ``span._.link_score``,
``span._.nil_prob`` and ``span._.nil_reason``.

``tasks`` (the paper's tables 5 and 6): ``"joint"`` trains and predicts both; ``"ner"`` trains the
NER loss only and writes no links; ``"el"`` trains the EL and NIL losses only and, at inference,
links the mentions already in ``doc.ents`` (from an NER upstream, e.g. a joint ``ner_stack_lstm``)
by following their actions instead of parsing.

Sentences: the parser reads ``doc.sents``; put a ``sentencizer`` (or parser/senter) before this
component (in training too, as an ``annotating_components`` entry). A document without sentence
boundaries is read in pieces of ``max_sentence_length`` tokens.
"""
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Literal, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer

from ..algorithms.transition_system import TransitionSystem
from ..errors import Errors, Warnings
from ..extensions import NIL, NIL_CLASSIFIER, NO_CANDIDATES
from ..kb import ElKnowledgeBase
from ..candidates import CandidateGenerator, CandidateMemo
from ..candidates.held_out import held_out_of
from ..candidates.arrays import padded_candidates, padded_similarities
from ..ml.ner_stack_lstm.inputs import TASKS, CandidateArrays, Chunk, Segment, StackLstmBatch, gold_actions, pad_segments, segment_doc
from ..ml.ner_stack_lstm.model import StackLstmArguments, build_torch_layer, set_learned_entities
from ..ml.ner_stack_lstm.modules import StackLstmOutput
from .conventions import CANDIDATES_KEPT
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

#: The word features of the default model: a character embedding and a CNN.
DEFAULT_TOK2VEC = """
[tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[tok2vec.embed]
@architectures = "spacy.CharacterEmbed.v2"
width = 96
rows = 5000
nM = 64
nC = 8
include_static_vectors = false

[tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 96
depth = 2
window_size = 1
maxout_pieces = 3
"""
DEFAULT_MODEL = {
    "@architectures": "spacy-el.NerStackLstm.v1", **StackLstmArguments.defaults(),
    "tok2vec": Config().from_str(DEFAULT_TOK2VEC)["tok2vec"],
}
INIT_SAMPLE = 10  # documents given to the model's initialize


@dataclass(frozen=True)
class NerStackLstmSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    tasks: "joint", "ner" or "el" (see the module docstring).
    max_sentence_length: longer sentences are read in pieces. min_nil_prob: write NIL when the NIL
    classifier's P(NIL) is at least this. use_nil_classifier: False = the paper's "- NIL" ablation
    (every mention with a candidate is linked). The candidates come from the factory's ``candidates``
    generator (``spacy-el.AliasCandidates.v1`` top 30 exact and normalised matches by default).
    held_out_priors: in training, take each document's own mentions out of the alias priors first
    (:mod:`spacy_el.candidates.held_out`; the KB must carry what each document it counted contributed).
    similarity_weight: at prediction, add this times the candidate generator's mention-entity similarity
    (dense or hybrid generators; 0 where it gave none) to each candidate's score before the softmax over
    the candidates (0: off; a weight chosen on dev, see the docs). The NIL decision is unchanged.
    """

    owner: ClassVar[str] = "ner_stack_lstm"
    tasks: Literal[TASKS] = "joint"  # type: ignore[valid-type]
    max_sentence_length: int = setting(150, low=1)
    min_nil_prob: float = setting(0.5, low=0.0, low_open=True, high=1.0)
    use_nil_classifier: bool = True
    held_out_priors: bool = False
    similarity_weight: float = setting(0.0, low=0.0)


@Language.factory(
    "ner_stack_lstm",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "token.ent_kb_id", "span._.candidate_scores",
             "span._.link_score", "span._.nil_prob", "span._.nil_reason"],
    default_config={
        "model": DEFAULT_MODEL, **NerStackLstmSettings.defaults(), "scorer": {"@scorers": "spacy-el.ner_el_scorer.v1"},
        "candidates": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 30, "fuzzy": False},
    },
    default_score_weights={"ner_f": 0.5, "el_micro_f": 0.5, "ner_p": None, "ner_r": None, "el_micro_p": None,
                           "el_micro_r": None, "el_macro_f": None, "ed_accuracy": None},
)
def make_ner_stack_lstm(
    nlp: Language,
    name: str,
    *,
    model: Model,
    scorer: Optional[Callable],
    candidates: CandidateGenerator,
    tasks: str,
    max_sentence_length: int,
    min_nil_prob: float,
    use_nil_classifier: bool,
    held_out_priors: bool,
    similarity_weight: float,
) -> "NerStackLstm":
    """The settings are documented on :class:`NerStackLstmSettings` (their defaults too); ``candidates`` is any
    registered candidate generator (``spacy-el.AliasCandidates.v1``, ``DenseCandidates.v1``, ``HybridCandidates.v1``)."""
    settings = NerStackLstmSettings.from_arguments(locals())
    return NerStackLstm(nlp.vocab, model, name, settings=settings, scorer=scorer, candidates=candidates)


class NerStackLstm(KBTorchPipe):
    """Joint NER + EL with a Stack-LSTM; see the module docstring."""

    dim_names = ("nW", "nA", "nE", "nL")
    settings_class = NerStackLstmSettings

    def __init__(
        self, vocab: Vocab, model: Model, name: str, *, settings: NerStackLstmSettings, scorer: Optional[Callable],
        candidates: CandidateGenerator,
    ) -> None:
        # The entity labels are state, not a setting: spaCy keeps a component's labels in its cfg too.
        super().__init__(vocab, model, name, settings=settings, scorer=scorer, state={"labels": []})
        self.candidates = candidates
        self._training_memo = CandidateMemo()  # the gold mentions' candidates across epochs (update only)

    def _check_state(self, state: Dict[str, Any]) -> None:
        """The labels of a saved settings file."""
        labels = state.get("labels", [])
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            raise ValueError(Errors.E819.format(labels=labels))

    # -- labels and set-up -------------------------------------------------------------------------
    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self._state["labels"])

    @property
    def system(self) -> TransitionSystem:
        return TransitionSystem(self.labels)

    @property
    def tasks(self) -> str:
        return self.settings.tasks

    def add_label(self, label: str) -> int:
        """Add an entity label before initialisation (the action inventory is fixed after it)."""
        if self.model.has_dim("nA") and len(self.model.layers) > 1:
            raise ValueError(Errors.E820.format(label=label, name=self.name))
        if label in self._state["labels"]:
            return 0
        self._state["labels"] = [*self._state["labels"], label]
        return 1

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Labels come from ``labels`` or the training examples' entities; the KB from ``kb_loader``
        (needed unless ``tasks = "ner"``)."""
        if kb_loader is not None:
            self.set_kb(kb_loader)
        self._training_memo.clear()
        learned = set()
        sample: List[Doc] = []
        for label in labels or ():
            self.add_label(label)
        for eg in get_examples():
            if len(sample) < INIT_SAMPLE:
                sample.append(eg.predicted)
            for ent in eg.reference.ents:
                if not labels:
                    self.add_label(ent.label_)
                row = self._kb_row(ent.kb_id_)
                if row is not None:
                    learned.add(row)
        if not self.labels:
            raise ValueError(Errors.E821.format(name=self.name))
        if self.tasks != "ner":
            if self.kb.is_empty():
                raise ValueError(Errors.E822.format(name=self.name, tasks=self.tasks))
            if self.model.attrs["entity_vectors"] != "learned" and self.kb.entities.vectors is None:
                raise ValueError(Errors.E823.format(name=self.name))
        uses_kb_vectors = self.model.attrs["entity_vectors"] != "learned" and self.kb.entities.vectors is not None
        self.model.set_dim("nA", self.system.n_actions)
        self.model.set_dim("nE", self.kb.entity_vector_length if uses_kb_vectors else 0)
        learned_rows = np.asarray(sorted(learned), dtype=np.int64) if self.model.attrs["entity_vectors"] != "kb" else np.zeros(0, np.int64)
        self.model.set_dim("nL", len(learned_rows))
        self.model.initialize(X=StackLstmBatch(sample, [], np.zeros((0, 0), np.int64), np.zeros(0, np.int64)))
        set_learned_entities(self.model, learned_rows)

    def _build_torch_layer(self) -> None:
        build_torch_layer(self.model)

    def _check_initialized(self) -> None:
        if len(self.model.layers) < 2:
            raise ValueError(Errors.E824.format(name=self.name))
        width = self.model.get_dim("nE")
        if width and not self.kb.is_empty() and self.kb.entity_vector_length != width:
            raise ValueError(Errors.E806.format(kb_width=self.kb.entity_vector_length, name=self.name, width=width))

    def _kb_row(self, kb_id: str) -> Optional[int]:
        if not kb_id or kb_id == NIL or self.kb.is_empty():
            return None
        return self.kb.entities.row_of(kb_id)

    # -- candidates --------------------------------------------------------------------------------
    def _candidates(self, mentions: List[Span], training: bool = False) -> CandidateArrays:
        """The generator's candidates of the mentions, with KB vectors when the model uses them and the
        generator's similarities when it reads them (``candidate_evidence``) or ranks by them
        (``similarity_weight``). In training, through the memo:
        a gold mention's list is generated in its first epoch and reused in the later ones; with
        ``held_out_priors``, from priors without the mention's own document."""
        if training:
            held_out = held_out_of(self.kb, mentions) if self.settings.held_out_priors else None
            lists = self._training_memo(self.candidates, self.kb, mentions, held_out)
        else:
            lists = self.candidates(self.kb, mentions)
        rows, vectors, priors = padded_candidates(self.kb, lists, self.model.get_dim("nE"))
        # similarity_weight weighs the similarities at prediction only: the scorer cannot learn that weight from
        # the training mentions, which the mention encoder was trained on.
        ranks_by_similarity = bool(self.settings.similarity_weight) and not training
        if not (self.model.attrs["candidate_evidence"] or ranks_by_similarity):
            return CandidateArrays(rows, vectors, priors)
        return CandidateArrays(rows, vectors, priors, *padded_similarities(lists, rows.shape[1]))

    # -- batches -----------------------------------------------------------------------------------
    def _segments(self, docs: Sequence[Doc], protected: Optional[Sequence[Sequence[Tuple[int, int]]]] = None) -> List[Segment]:
        max_length = self.settings.max_sentence_length
        segments = []
        for d, doc in enumerate(docs):
            spans = protected[d] if protected is not None else ()
            segments.extend(Segment(d, start, end) for start, end in segment_doc(doc, max_length, spans))
        return segments

    def _forced_batch(self, docs: Sequence[Doc], mentions: Sequence[Sequence[Span]], kb_ids: Optional[Sequence[Sequence[str]]] = None) -> StackLstmBatch:
        """A teacher-forced batch: training (``kb_ids`` given) or linking given mentions (``kb_ids`` None)."""
        segments = self._segments(docs, [[(m.start, m.end) for m in doc_mentions] for doc_mentions in mentions])
        index, lengths = pad_segments(segments, _doc_offsets(docs))
        by_segment: List[List[Chunk]] = [[] for _ in segments]
        mentions_in_order, golds = [], []
        keyed = []
        seg_of = _segment_lookup(segments, len(docs))
        for d, doc_mentions in enumerate(mentions):
            for i, span in enumerate(doc_mentions):
                if span.label_ not in self.labels:
                    raise ValueError(Errors.E825.format(name=self.name, label=span.label_, known=", ".join(self.labels)))
                s = seg_of(d, span.start)
                seg = segments[s]
                # Only a mention longer than max_sentence_length can outrun its segment: keep its first piece.
                end = min(span.end, seg.end)
                keyed.append((s, span.start - seg.start, end - seg.start, span.label_, span,
                               kb_ids[d][i] if kb_ids is not None else ""))
        keyed.sort(key=lambda item: item[:3])  # the order gold_actions numbers the chunks in
        for s, start, end, label, span, kb_id in keyed:
            by_segment[s].append((start, end, label))
            mentions_in_order.append(span)
            golds.append(self._kb_row(kb_id))
        batch = StackLstmBatch(list(docs), segments, index, lengths, gold=gold_actions(self.system, by_segment, lengths), tasks=self.tasks,
                               use_nil=self.settings.use_nil_classifier)
        if self.tasks != "ner" and mentions_in_order:
            batch.gold_candidates = self._candidates(mentions_in_order, training=kb_ids is not None)
        if kb_ids is not None:
            candidate_rows = batch.gold_candidates
            batch.gold_candidate = candidate_rows.gold_positions(golds) if candidate_rows is not None else np.full(len(golds), -1, np.int64)
            batch.linkable = np.asarray([g is not None for g in golds], dtype=np.float32)
        else:  # linking given mentions at prediction
            batch.similarity_weight = self.settings.similarity_weight
        return batch

    def _predict_batch(self, docs: Sequence[Doc]) -> StackLstmBatch:
        segments = self._segments(docs)
        index, lengths = pad_segments(segments, _doc_offsets(docs))
        is_space = np.concatenate([doc.to_array("IS_SPACE").astype(bool) for doc in docs]) if segments else np.zeros(0, bool)
        space = is_space[index] & (np.arange(index.shape[1])[None, :] < lengths[:, None])
        return StackLstmBatch(list(docs), segments, index, lengths, candidates=None if self.tasks == "ner" else self._candidates,
                              tasks=self.tasks, use_nil=self.settings.use_nil_classifier, space=space,
                              similarity_weight=self.settings.similarity_weight)

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[Dict[str, Any]]]:
        docs = list(docs)
        self._check_initialized()
        if not docs:
            return []
        if self.tasks == "el":
            batch = self._forced_batch(docs, [list(doc.ents) for doc in docs])
        else:
            batch = self._predict_batch(docs)
        _, output = self.model.predict(batch)
        return self._decisions(batch, output)

    def _decisions(self, batch: StackLstmBatch, output: StackLstmOutput) -> List[List[Dict[str, Any]]]:
        decisions: List[List[Dict[str, Any]]] = [[] for _ in batch.docs]
        system = self.system
        linking = self.tasks != "ner"
        threshold = self.settings.min_nil_prob
        for r in range(len(output.segment)):
            seg = batch.segments[int(output.segment[r])]
            doc = batch.docs[seg.doc]
            start, end = seg.start + int(output.start[r]), seg.start + int(output.end[r])
            while end - start > 1 and doc[end - 1].is_space:  # entities end on a word, not on whitespace
                end -= 1
            decision: Dict[str, Any] = {
                "start": start, "end": end,
                "label": system.label_of(int(output.action[r])), "kb_id": "", "candidates": None,
                "score": None, "nil_prob": None, "reason": None,
            }
            if linking:
                self._link(decision, output, r, threshold)
            decisions[seg.doc].append(decision)
        return decisions

    def _link(self, decision: Dict[str, Any], output: StackLstmOutput, r: int, threshold: float) -> None:
        rows, probs = output.candidate_rows[r], output.candidate_probs[r]
        ranked = [int(i) for i in np.argsort(-probs, kind="stable") if rows[i] >= 0]
        ids = self.kb.entities.ids
        decision["candidates"] = [[ids[int(rows[i])], float(probs[i])] for i in ranked[:CANDIDATES_KEPT]]
        nil_prob = float(output.nil_prob[r])
        decision["nil_prob"] = None if np.isnan(nil_prob) else nil_prob
        if not ranked:
            decision.update(kb_id=NIL, reason=NO_CANDIDATES)
        elif decision["nil_prob"] is not None and nil_prob >= threshold:
            decision.update(kb_id=NIL, reason=NIL_CLASSIFIER)
        else:
            decision.update(kb_id=ids[int(rows[ranked[0]])], score=float(probs[ranked[0]]))

    def set_annotations(self, docs: Iterable[Doc], decisions: List[List[Dict[str, Any]]]) -> None:
        for doc, doc_decisions in zip(docs, decisions):
            spans = [Span(doc, d["start"], d["end"], d["label"], kb_id=d["kb_id"]) for d in doc_decisions]
            for span, d in zip(spans, doc_decisions):
                span._.candidate_scores = d["candidates"]
                span._.link_score = d["score"]
                span._.nil_prob = d["nil_prob"]
                span._.nil_reason = d["reason"]
            doc.ents = spans

    # -- training ----------------------------------------------------------------------------------
    def _gold_mentions(self, eg: Example) -> Tuple[List[Span], List[str]]:
        """The reference entities on the predicted doc's tokens, with their KB ids."""
        x, y = eg.predicted, eg.reference
        same_tokens = len(x) == len(y) and all(a.text == b.text and a.idx == b.idx for a, b in zip(x, y))
        spans, kb_ids = [], []
        misaligned = 0
        for ent in y.ents:
            if same_tokens:
                aligned = [Span(x, ent.start, ent.end, ent.label_)]
            else:
                aligned = eg.get_aligned_spans_y2x([ent], allow_overlap=False)
            if len(aligned) != 1:
                misaligned += 1
                continue
            spans.append(aligned[0])
            kb_ids.append(ent.kb_id_)
        if misaligned:
            warnings.warn(Warnings.W801.format(name=self.name, misaligned=misaligned))
        return spans, kb_ids

    def update(
        self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None, losses: Optional[Dict[str, float]] = None
    ) -> Dict[str, float]:
        """One teacher-forced step on ``L_NER + L_EL + L_NIL`` (the tasks'). ``drop`` is not used: the
        model's own ``dropout`` setting applies (as the paper's 0.3 throughout)."""
        examples, losses = self._start_update(examples, losses)
        if not examples:
            return losses
        mentions, kb_ids = zip(*(self._gold_mentions(eg) for eg in examples))
        batch = self._forced_batch([eg.predicted for eg in examples], mentions, kb_ids)
        return self._scalar_loss_step(batch, sgd, losses)  # the model returns its loss (scalar-loss pattern)


def _doc_offsets(docs: Sequence[Doc]) -> List[int]:
    """Where each document's tokens start in the batch's concatenated token vectors."""
    return np.cumsum([0] + [len(doc) for doc in docs[:-1]]).tolist()


def _segment_lookup(segments: Sequence[Segment], n_docs: int) -> Callable[[int, int], int]:
    """(doc, token) -> the index of the segment holding it."""
    starts: List[List[int]] = [[] for _ in range(n_docs)]
    firsts: List[List[int]] = [[] for _ in range(n_docs)]
    for i, seg in enumerate(segments):
        starts[seg.doc].append(seg.start)
        firsts[seg.doc].append(i)

    def lookup(doc: int, token: int) -> int:
        j = int(np.searchsorted(starts[doc], token, side="right")) - 1
        return firsts[doc][j]

    return lookup


__all__ = ["NerStackLstm", "make_ner_stack_lstm", "DEFAULT_MODEL"]

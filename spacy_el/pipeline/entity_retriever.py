"""``entity_retriever``: EntQA's dense retriever, entities first (Zhang et al., ICLR 2022, section 2.1).

The document is cut into overlapping passages of ``model.passage_length`` wordpieces with stride
``model.stride`` (paper: 32 / 16), each followed by the document's topic text (``model.topic``). A passage
encoder embeds ``[CLS] passage ⊕ topic [SEP]``; the entity side of the dual encoder is the KB's entity
vectors (title ⊕ description through the KB's text encoder) searched through the KB's FAISS index, so
entities added to the KB are retrievable without retraining, and the index is never rebuilt per call.

Output: ``doc._.entqa_passages``, one entry per passage, ``[start_char, end_char, [kb_id, ...],
[score, ...]]`` with the ``entities_per_passage`` entities best first (plain JSON data: it survives
``DocBin``). The ``entqa_reader`` reads them; nothing else of the doc is changed.

Training (``update``): the multi-label NCE of eq. (1). A passage's gold entities are the KB entities of
the reference's linked mentions (``doc.ents`` and every span group) that lie entirely in the passage;
passages without one contribute nothing and are skipped. Each gold entity is contrasted with
``negatives`` sampled entities: ``1 - hard_negative_ratio`` of them uniform over the KB and the rest the
highest-scoring wrong entities under the current passage encoder (found in the FAISS index with the
same forward pass; the entity vectors are fixed, so the index is never stale). At most
``max_train_passages`` passages per document are used per step (sampled; 0 = all): a CPU budget knob.
Differences from the paper: the entity encoder is not fine-tuned (its vectors are the KB's), and the
score is ``s * cos`` with a learned scale ``s``.

Candidates of upstream entities (``ents_candidates``, off by default): with a candidate generator there
(``spacy-el.HybridCandidates.v1``, ``spacy-el.AliasCandidates.v1``, ...) and entities in ``doc.ents`` from an
upstream component (spaCy's ``ner``, say), each passage's list also holds the generator's candidates of the
entities that lie inside it, interleaved round-robin with the dense list (dense first:
:func:`~spacy_el.algorithms.rank_fusion.round_robin`) and cut at ``entities_per_passage``. A merged entity's score
is the passage's inner product with its vector, as the index gives it. The reader reads the lists as they are, so an
entity the dense retriever misses can still be read where a mention of it was found. Without entities, or
with the default ``null``, the lists are the retriever's alone.
"""
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..algorithms.passages import Passage, make_passages, passages_covering, topic_text
from ..algorithms.rank_fusion import round_robin
from ..candidates import CandidateGenerator
from ..errors import Errors
from ..extensions import NIL
from ..kb import ElKnowledgeBase
from ..ml.entqa.inputs import RetrieverBatch, encode_topic, question_sides, retriever_arrays
from ..ml.entqa.model import EntityRetrieverArguments, build_torch_layer
from ..ml.torch_io import tokenizer_of
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

DEFAULT_MODEL = {"@architectures": "spacy-el.EntityRetriever.v1", **EntityRetrieverArguments.defaults()}
RECALL_AT = (10, 30, 100)


@dataclass(frozen=True)
class EntityRetrieverSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    entities_per_passage: entities kept per passage (K). negatives / hard_negative_ratio: sampled negatives per gold
    entity in training and the share of hard ones (paper: 10%). max_train_passages: passages per
    document per step (0 = all). seed: of the negative and passage sampling.
    """

    owner: ClassVar[str] = "entity_retriever"
    entities_per_passage: int = setting(100, low=1)
    negatives: int = setting(63, low=1)
    hard_negative_ratio: float = setting(0.1, low=0.0, high=1.0)
    max_train_passages: int = setting(8, low=0)
    seed: int = 0


@Language.factory(
    "entity_retriever",
    assigns=["doc._.entqa_passages"],
    default_config={"model": DEFAULT_MODEL, **EntityRetrieverSettings.defaults(), "ents_candidates": None},
    default_score_weights={"retriever_recall_at_100": 1.0, "retriever_recall_at_10": None, "retriever_recall_at_30": None},
)
def make_entity_retriever(
    nlp: Language, name: str, *, model: Model, ents_candidates: Optional[CandidateGenerator], entities_per_passage: int,
    negatives: int, hard_negative_ratio: float, max_train_passages: int, seed: int,
) -> "EntityRetriever":
    """The settings are documented on :class:`EntityRetrieverSettings` (their defaults too). ents_candidates: a
    candidate generator whose candidates of the upstream ``doc.ents`` join the passages' lists (module docstring),
    or None."""
    settings = EntityRetrieverSettings.from_arguments(locals())
    return EntityRetriever(nlp.vocab, model, name, settings=settings, ents_candidates=ents_candidates)


class EntityRetriever(KBTorchPipe):
    """Dense passage -> entity retrieval over the KB's FAISS index; see the module docstring."""

    settings_class = EntityRetrieverSettings

    def __init__(self, vocab: Vocab, model: Model, name: str, *, settings: EntityRetrieverSettings,
                 ents_candidates: Optional[CandidateGenerator]) -> None:
        super().__init__(vocab, model, name, settings=settings)
        self.ents_candidates = ents_candidates
        self._rng = np.random.default_rng(self.settings.seed)

    # -- set-up ------------------------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None) -> None:
        """Load the KB (saved inside the pipeline afterwards); it needs vectors and a dense index."""
        self._initialize_kb(get_examples, kb_loader)
        self._require_kb_with_vectors()
        self._require_index()
        self.model.set_dim("nE", self.kb.entity_vector_length)
        self.model.initialize()

    def _require_index(self) -> None:
        index = self.kb.dense_index
        if index is None:
            raise ValueError(Errors.E829.format(name=self.name))
        if index.dim != self.kb.entity_vector_length:
            raise ValueError(Errors.E830.format(index_width=index.dim, width=self.kb.entity_vector_length))

    def _build_torch_layer(self) -> None:
        build_torch_layer(self.model)

    def _check_initialized(self) -> None:
        super()._check_initialized()
        if not self.kb.is_empty():
            self._require_index()

    # -- passages ----------------------------------------------------------------------------------
    def passages(self, doc: Doc) -> Tuple[List[Passage], Tuple[int, ...]]:
        """The passages of ``doc`` and the wordpiece ids of its topic text."""
        a = self.model.attrs
        tokenizer = tokenizer_of(self.model)
        text = doc.text  # joined from the tokens on every access: read once
        passages = make_passages(text, tokenizer, a["passage_length"], a["stride"])
        topic = encode_topic(tokenizer, topic_text(text, a["topic"]), a["max_topic"]) if passages else ()
        return passages, topic

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[List[Any]]]:
        """Per doc and passage: ``[start_char, end_char, kb_ids, scores]``.

        Each document is encoded and searched on its own: its passages never share an encoder call (and so
        its padding) or an index search with another document's, so what a document gets does not depend
        on the batch it came in (with bfloat16 autocast, padding a passage to another document's length
        changes its vector by up to 1e-3, and then its entities and scores)."""
        docs = list(docs)
        self._check_initialized()
        return [self._predict_doc(doc) for doc in docs]

    def _predict_doc(self, doc: Doc) -> List[List[Any]]:
        passages, topic = self.passages(doc)
        if not passages or self.kb.is_empty():
            return [[p.start_char, p.end_char, [], []] for p in passages]
        vectors = self._encode(question_sides(passages, topic))
        k = min(self.settings.entities_per_passage, self.kb.n_entities)
        scores, rows = self.kb.dense_index.search(vectors, k)
        ids = self.kb.entities.ids
        ents = self._ents_candidate_rows(doc)
        result = []
        for i, p in enumerate(passages):
            keep = rows[i] >= 0
            found, found_scores = rows[i][keep].tolist(), scores[i][keep].tolist()
            if ents:
                found, found_scores = self._merge(vectors[i], found, found_scores, ents, p)
            result.append([p.start_char, p.end_char, [ids[int(r)] for r in found], [round(float(s), 5) for s in found_scores]])
        return result

    def _ents_candidate_rows(self, doc: Doc) -> List[Tuple[int, int, List[int]]]:
        """``(start_char, end_char, kb_rows)`` of each upstream entity of ``doc`` (``ents_candidates``' lists;
        none without the generator or entities)."""
        if self.ents_candidates is None or not doc.ents:
            return []
        ents = list(doc.ents)
        found = self.ents_candidates(self.kb, ents)
        return [(ent.start_char, ent.end_char, cands.rows.tolist()) for ent, cands in zip(ents, found) if len(cands)]

    def _merge(self, vector: np.ndarray, rows: List[int], scores: List[float], ents: Sequence[Tuple[int, int, List[int]]],
               passage: Passage) -> Tuple[List[int], List[float]]:
        """The passage's dense ``rows`` interleaved with the candidates of the entities inside it, cut at
        ``entities_per_passage``; a merged row's score is the passage vector's inner product with the entity's (``vector``: (d,))."""
        inside = [cands for start, end, cands in ents if passage.start_char <= start and end <= passage.end_char]
        if not inside:
            return rows, scores
        merged = round_robin([rows, *inside], self.settings.entities_per_passage)
        known = dict(zip(rows, scores))
        missing = [r for r in merged if r not in known]
        if missing:
            entity_vectors = np.asarray(self.kb.entities.vectors[np.asarray(missing)], dtype=np.float32)  # (m, d)
            known.update(zip(missing, (entity_vectors @ np.asarray(vector, dtype=np.float32)).tolist()))
        return merged, [known[r] for r in merged]

    def _encode(self, questions: Sequence[Any]) -> np.ndarray:
        ids, mask = retriever_arrays(tokenizer_of(self.model), questions)
        (_, (vectors,)), _ = self.model(RetrieverBatch(ids, mask), is_train=False)
        return vectors

    def set_annotations(self, docs: Iterable[Doc], passages: List[List[List[Any]]]) -> None:
        for doc, doc_passages in zip(docs, passages):
            doc._.entqa_passages = doc_passages

    # -- training ----------------------------------------------------------------------------------
    def gold_rows(self, eg: Example, passages: Sequence[Passage]) -> List[List[int]]:
        """Per passage, the KB rows of the reference's linked mentions that lie entirely inside it."""
        rows: List[set] = [set() for _ in passages]
        for start, end, kb_id in gold_mentions(eg.reference):
            row = self.kb.entities.row_of(kb_id)
            if row is None:
                continue
            for index in passages_covering(passages, start, end):
                rows[index].add(int(row))
        return [sorted(r) for r in rows]

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Optimizer] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One step of eq. (1) over the sampled passages that have gold entities."""
        examples, losses = self._start_update(examples, losses)
        questions, golds = [], []
        for eg in examples:
            passages, topic = self.passages(eg.predicted)
            gold = self.gold_rows(eg, passages)
            chosen = [i for i, g in enumerate(gold) if g]
            limit = self.settings.max_train_passages
            if limit and len(chosen) > limit:
                chosen = sorted(self._rng.choice(chosen, size=limit, replace=False).tolist())
            sides = question_sides(passages, topic)
            questions += [sides[i] for i in chosen]
            golds += [gold[i] for i in chosen]
        if not questions:
            return losses
        ids, mask = retriever_arrays(tokenizer_of(self.model), questions)
        batch = RetrieverBatch(ids, mask, candidates_fn=lambda vectors: self._candidates(vectors, golds))
        return self._scalar_loss_step(batch, sgd, losses)

    def _candidates(self, vectors: np.ndarray, golds: List[List[int]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gold rows, then random and hard negatives, per passage: ``(vectors [P, C, d], gold [P, C],
        valid [P, C])``. A sampled negative that is a gold entity of the passage is marked invalid."""
        n = self.settings.negatives
        n_hard = int(round(n * self.settings.hard_negative_ratio))
        n_random = n - n_hard
        width = max(len(g) for g in golds)
        n_entities = self.kb.n_entities
        hard_rows = np.full((len(golds), 0), -1, dtype=np.int64)
        if n_hard:
            _, hard_rows = self.kb.dense_index.search(vectors.astype(np.float32), min(n_hard + width, n_entities))
        rows = np.full((len(golds), width + n), -1, dtype=np.int64)
        gold_mask = np.zeros(rows.shape, dtype=bool)
        for p, gold in enumerate(golds):
            rows[p, : len(gold)] = gold
            gold_mask[p, : len(gold)] = True
            hard = [int(r) for r in hard_rows[p] if r >= 0 and int(r) not in gold][:n_hard]
            rows[p, width: width + len(hard)] = hard
            rows[p, width + n_hard: width + n_hard + n_random] = self._rng.integers(0, n_entities, size=n_random)
        valid = rows >= 0
        for p, gold in enumerate(golds):
            valid[p, width:] &= ~np.isin(rows[p, width:], gold)
        store_vectors = self.kb.entities.vectors
        entity_vectors = store_vectors[np.maximum(rows, 0)]
        return entity_vectors, gold_mask, valid

    # -- evaluation --------------------------------------------------------------------------------
    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """``retriever_recall_at_K``: share of (passage, gold entity) pairs whose entity is in the
        passage's top K (K = 10, 30, 100 and ``entities_per_passage``; K above ``entities_per_passage`` is left out)."""
        examples = list(examples)
        validate_examples(examples, "EntityRetriever.score")
        ks = [k for k in sorted({*RECALL_AT, self.settings.entities_per_passage}) if k <= self.settings.entities_per_passage]
        return retrieval_recall(examples, ks, in_kb=self.kb.__contains__)


def gold_mentions(doc: Doc) -> List[Tuple[int, int, str]]:
    """``(start_char, end_char, kb_id)`` of every linked mention of ``doc`` (``doc.ents`` and all span
    groups), without NIL and unlinked ones, each once."""
    seen = set()
    for span in [*doc.ents, *(s for group in doc.spans.values() for s in group)]:
        if span.kb_id_ and span.kb_id_ != NIL:
            seen.add((span.start_char, span.end_char, span.kb_id_))
    return sorted(seen)


def retrieval_recall(examples: Sequence[Example], ks: Sequence[int], in_kb: Callable[[str], bool] = lambda _: True) -> Dict[str, float]:
    """Recall@K over (passage, gold entity) pairs, gold entities in the KB only (``in_kb``): gold from
    the reference, passages and their ranked entities from ``eg.predicted._.entqa_passages``."""
    hits = {k: 0 for k in ks}
    total = 0
    for eg in examples:
        mentions = gold_mentions(eg.reference)
        for start, end, kb_ids, _ in eg.predicted._.entqa_passages or []:
            gold = {kb for s, e, kb in mentions if start <= s and e <= end and in_kb(kb)}
            total += len(gold)
            for k in ks:
                top = set(kb_ids[:k])
                hits[k] += len(gold & top)
    return {f"retriever_recall_at_{k}": (hits[k] / total if total else 0.0) for k in ks}

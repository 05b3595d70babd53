"""The scoring model of joint coreference + entity linking (pure PyTorch): :class:`JointCorefScorer`.

Eqs. (1)-(6) of the seed paper (Zaporojets et al. 2022, "Towards consistent document-level entity
linking: joint models for entity linking and coreference resolution",
``../shared/seeds/joint-coref-el-spanning-trees.txt``), the scorer of the ``joint_coref_linker``
component, shared by its four modes (:data:`MODES`: the Local and Global joint models and the Standalone
coref and EL baselines of section 3). Their losses are in :mod:`spacy_el.ml.joint_coref_linker.losses`
(Global: :mod:`spacy_el.ml.joint_coref_linker.matrix_tree`), their decoding in
:mod:`spacy_el.ml.joint_coref_linker.decoding`. No Thinc, no spaCy: :mod:`spacy_el.ml.joint_coref_linker.model` wraps it.

Inputs: one document's ``M`` pruned mentions (:func:`spacy_el.ml.joint_coref_linker.span_representations.prune_spans`,
sorted in document order), their span representations ``g`` ``(M, D)``, and for every mention up to
``C`` candidate entities given by KB vectors ``(M, C, E)``, a mask ``(M, C)`` and KB entity ids
``(M, C)`` (``-1`` = padding).

Equations (the paper's numbers)
-------------------------------
* (1) ``Phi_p(s_i) = FFNN_P(g_i)`` -- the mention (pruning) score, :attr:`JointScores.mention_scores`.
* (3) ``Phi_cl(s_i, s_j) = Phi_p(s_i) + Phi_p(s_j) + Phi_c(s_i, s_j)`` -- span ``s_j`` is the
  antecedent (Local) / the parent (Global) of ``s_i``.
* (4) ``Phi_c(s_i, s_j) = FFNN_C([g_i; g_j; g_i * g_j; phi_ij])`` with ``phi_ij`` a learned
  embedding of the bucketed distance (Lee et al. 2017 buckets ``0, 1, 2, 3, 4, 5-7, 8-15, 16-31,
  32-63, 64+``). Footnote 3: the distance is "measured in number of spans, after pruning",
  ``|i - j|`` (``distance="spans"``, default); ``distance="tokens"`` uses ``|start_i - start_j|``
  as Lee et al. 2017. The distance is unsigned, so ``FFNN_C`` sees which span is the child (the
  first slot) but not which comes first in the text.
* (5) ``Phi_cl(s_i, e_j) = Phi_p(s_i) + Phi_l(s_i, e_j)``;
* (6) ``Phi_l(s_i, e_j) = FFNN_L([g_i; e_j])`` with ``e_j = W_e v_j`` a learned linear projection of
  the candidate's KB vector ``v_j`` (width ``E``).
* Root edges (section 2.2, Global): ``Phi_cl(r, e_j) = 0``; the NIL edge of a mention (it starts
  a NIL cluster, attached to the root) is "eq. (3) with ``Phi_p(r) = 0``", i.e.
  ``Phi_cl(s_i, r) = Phi_p(s_i) + Phi_c(s_i, r)``. The paper does not say what ``Phi_c(s_i, r)``
  is; ``FFNN_C`` needs a span representation and a distance for ``r``, which it has not.
  ``nil_score="learned"`` (default) scores it like a link to a learned "root entity" vector
  ``v_r``: ``Phi_c(s_i, r) := Phi_l(s_i, v_r)`` -- the paper authors' code does exactly this (a
  learned root embedding scored by the linking FFNN, plus ``Phi_p(s_i)``). ``nil_score="zero"``
  takes ``Phi_c(s_i, r) := 0``, so ``Phi_cl(s_i, r) = Phi_p(s_i)`` (Lee et al.'s fixed dummy score,
  shifted by ``Phi_p(s_i)``).
* (2) Local: ``P_cl(y | s_i) = softmax over y in Y(s_i)`` of ``Phi_cl(s_i, y)``, ``Y(s_i)`` = the
  preceding spans ``{s_j : j < i}``, ``s_i``'s candidate entities and the dummy/root ``r``
  (the paper lists only spans and entities; a mention must be able to start a cluster, and its
  Global model uses the root for that, so the root edge above is the dummy here too).

``Phi_p(s_i)`` is in every edge *into* ``s_i`` (root, entity and antecedent alike), so it cancels
in the softmax of eq. (2) and in the tree distribution of eq. (8) for ``s_i`` as the child; it is
trained through the edges *out of* ``s_i`` (``s_i`` as an antecedent/parent, eq. (3)).

Bounded scores: with ``score_bound = b`` (default 10) every edge score ``Phi_cl`` is soft-clamped
to ``b * tanh(Phi_cl / b)`` (applied to the whole sum of eq. (3)/(5), not to its parts), because
the Matrix-Tree determinants lose accuracy when edges differ by more than ~30 nats (see
:mod:`spacy_el.ml.joint_coref_linker.matrix_tree`, "Numerics"; the authors' code bounds scores too). ``None``
disables it, as the coreference-only config does (``configs/joint_coref_linker_coref.cfg``): mode ``coref``
computes no determinant, and the paper's Entity Equalization, whose rescored edges grow with the soft
cluster size, saturates the tanh there and stops training. :attr:`JointScores.mention_scores` (pruning)
stays unbounded.

Refinement (optional, ``refinement=`` :data:`~spacy_el.ml.joint_coref_linker.entity_equalization.REFINEMENTS`): one
iteration as in Lee et al. 2018 / Kantor & Globerson 2019: score with ``g``, take the antecedent
distribution ``P(y_i)`` over the preceding mentions and a dummy, refine ``g' = refine(g, P)``
(:func:`~spacy_el.ml.joint_coref_linker.entity_equalization.build_refinement`), recompute ``Phi_c`` (eq. (4)) with
``g'``. ``Phi_p``, ``Phi_l`` and the NIL score keep the unrefined ``g`` (as Lee et al. 2018 keep
their mention scores). The dummy of ``P(y_i)`` collects everything that is not a preceding
mention: ``logsumexp`` of the root edge and the candidate links (``s_i`` starts an entity).

Antecedent pruning (``max_antecedents = K``, ``antecedent_pruning``): ``"nearest"`` (default, Lee et al.
2017) scores the pairs at most ``K`` mentions apart. ``"coarse"`` (Lee et al. 2018, coarse-to-fine) ranks
every earlier mention ``j`` of ``s_i`` by the cheap score ``Phi_p(s_j) + c(s_i, s_j)``, with the coarse part
``c(s_i, s_j) = (U g_i) . (V g_j) / sqrt(H) + w_d[bucket(d_ij)]``, and scores the ``K`` best only, in both
text orders, so a mention can reach an antecedent any distance back at the cost of ``K`` pairs. ``U`` and
``V`` are learned ``(H, D)`` projections (``H`` = ``ffnn``), ``V`` initially 0; ``w_d`` is a learned score
per distance bucket, initially ``-bucket``: the first ranking is by mention score and nearness. Lee et al.'s
bilinear form is full-rank, ``g_i W_c g_j``; but Adam moves each of the ``D^2`` entries of ``W_c`` by about
the learning rate at every step, which can move a coarse score by ``lr ||g_i||_1 ||g_j||_1``: hundreds with
unit-scale ``g`` of about 1,200 dimensions (a first LitBank training with it fell far behind the nearest
window). So here it has rank ``H`` and the scale of attention. ``c`` is added to the chosen pairs'
``Phi_cl`` (as Lee et al. 2018 add their fast score), which trains it; the refinement rescores the same
pairs, with the ``c`` of the unrefined ``g``.

Layout conventions
------------------
* :class:`JointScores` holds *child-first* blocks: ``coref_scores[i, j] = Phi_cl(s_i, s_j)`` =
  edge ``s_j -> s_i`` (``s_j`` antecedent/parent of ``s_i``), full ``(M, M)`` (both text orders;
  Local uses only ``j < i``), ``-inf`` on the diagonal; ``link_scores[i, c] = Phi_cl(s_i, e_ic)``,
  ``-inf`` for masked candidates; ``nil_scores[i] = Phi_cl(s_i, r)``.
* The joint graph (:meth:`JointScores.graph`, built by
  :func:`spacy_el.ml.joint_coref_linker.matrix_tree.assemble_scores`) is *parent-first*, nodes
  ``[root, entity_0 .. entity_{E-1}, mention_0 .. mention_{M-1}]``, ``scores[parent, child]``; its
  entity axis is the sorted set of distinct KB ids among all valid candidates of the document
  (:attr:`JointGraph.entity_ids`), so a mention's candidate column ``c`` is entity node
  ``1 + candidate_entities[i, c]``.
"""
from dataclasses import dataclass, replace
from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn

from ...errors import Errors

from .entity_equalization import EntityEqualization, EntityEqualizationMean, build_refinement
from .matrix_tree import assemble_scores

__all__ = [
    "ANTECEDENT_PRUNINGS",
    "CorefEdges",
    "DISTANCE_BUCKETS",
    "MODES",
    "JointCorefScorer",
    "JointGraph",
    "JointScores",
    "antecedent_distribution",
    "antecedent_edge_distribution",
    "bucket_distance",
    "check_mode",
    "entity_axis",
    "local_logits",
]

#: Training/decoding modes: joint Local, joint Global, Standalone coref, Standalone EL.
MODES: Tuple[str, ...] = ("local", "global", "coref", "link")
#: Number of distance buckets: 0, 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+ (Lee et al. 2017).
DISTANCE_BUCKETS = 10
#: How the ``max_antecedents`` pairs of each mention are chosen (module docstring, "Antecedent pruning").
ANTECEDENT_PRUNINGS = ("nearest", "coarse")
#: Mention pairs scored per block by :meth:`JointCorefScorer.selected_pair_scores`.
PAIR_BLOCK = 2048
#: Mentions ranked per block by :meth:`JointCorefScorer.coarse_antecedents` (each against every earlier one).
RANK_BLOCK = 256

NEG_INF = float("-inf")


def bucket_distance(distance: Tensor) -> Tensor:
    """Lee et al. (2017) distance buckets: ``0..4`` identity, then ``5-7, 8-15, 16-31, 32-63, 64+``.

    Args:
        distance: integer tensor of non-negative distances, any shape.

    Returns:
        Long tensor of bucket ids in ``[0, DISTANCE_BUCKETS)``, same shape.
    """
    d = distance.long().clamp(min=0)
    log_bucket = torch.floor(torch.log2(d.clamp(min=1).double())).long() + 3  # 5-7 -> 5, 8-15 -> 6, ...
    return torch.where(d <= 4, d, log_bucket).clamp(max=DISTANCE_BUCKETS - 1)


# --------------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------------


@dataclass
class JointGraph:
    """The joint graph of one document, ready for :func:`~spacy_el.ml.joint_coref_linker.matrix_tree.mtt_loss`.

    Attributes:
        scores: ``(1 + E + M, 1 + E + M)`` edge scores, ``scores[parent, child]``, nodes
            ``[root, entities, mentions]`` (:func:`~spacy_el.ml.joint_coref_linker.matrix_tree.assemble_scores`).
        entity_ids: ``(E,)`` long, sorted distinct KB ids of the entity nodes.
        candidate_entities: ``(M, C)`` long, entity index (``0..E-1``) of every candidate slot,
            ``-1`` for masked/padding slots.
    """

    scores: Tensor
    entity_ids: Tensor
    candidate_entities: Tensor

    @property
    def n_entities(self) -> int:
        return int(self.entity_ids.shape[0])

    @property
    def n_mentions(self) -> int:
        return int(self.candidate_entities.shape[0])


@dataclass
class CorefEdges:
    """The scored coreference edges of one document, sparse: ``values[k] = Phi_cl(s_rows[k], s_cols[k])``, the
    edge ``s_cols[k] -> s_rows[k]`` (child-first, as :attr:`JointScores.coref_scores`). Both text orders of every
    scored pair are listed, each ordered pair at most once; a pair not listed has no edge (``-inf`` in the dense
    matrix). ``rows``, ``cols``: long ``(P,)``; ``values``: float ``(P,)``, finite."""

    rows: Tensor
    cols: Tensor
    values: Tensor

    def dense(self, m: int) -> Tensor:
        """The ``(m, m)`` matrix of :attr:`JointScores.coref_scores` (``-inf`` where no edge)."""
        matrix = self.values.new_full((m, m), NEG_INF)
        return matrix.index_put((self.rows, self.cols), self.values)

    def detach_cpu(self) -> "CorefEdges":
        return CorefEdges(self.rows.detach().cpu(), self.cols.detach().cpu(), self.values.detach().cpu())


@dataclass
class JointScores:
    """Edge scores of one document (child-first blocks; see the module docstring).

    Attributes:
        mention_scores: ``(M,)`` ``Phi_p(s_i)`` (eq. (1)), unbounded; for pruning.
        coref_scores: ``(M, M)``, ``[i, j] = Phi_cl(s_i, s_j)`` (eq. (3)): ``s_j`` antecedent /
            parent of ``s_i``, both text orders; diagonal ``-inf``.
        link_scores: ``(M, C)``, ``[i, c] = Phi_cl(s_i, e_ic)`` (eq. (5)); ``-inf`` where masked.
        nil_scores: ``(M,)``, ``Phi_cl(s_i, r)``: root/NIL edge (eq. (3) with ``Phi_p(r) = 0``).
        candidate_mask: ``(M, C)`` bool, valid candidate slots.
        candidate_entity_ids: ``(M, C)`` long KB ids (``-1`` padding) or ``None`` (then entity
            nodes, links and gold entities are unavailable: only ``coref`` mode works, or ``C = 0``).
        coref_edges: the same edges sparse (:class:`CorefEdges`), in place of ``coref_scores`` (then ``None``):
            what the scorer returns at prediction (``sparse=True``), ``O(M K)`` for ``K`` antecedents per mention
            where the matrix is ``O(M^2)``; the losses and :meth:`graph` need the matrix (:meth:`dense`).
    """

    mention_scores: Tensor
    coref_scores: Optional[Tensor]
    link_scores: Tensor
    nil_scores: Tensor
    candidate_mask: Tensor
    candidate_entity_ids: Optional[Tensor] = None
    coref_edges: Optional[CorefEdges] = None

    @property
    def is_sparse(self) -> bool:
        return self.coref_scores is None

    def edges(self) -> CorefEdges:
        """The coreference edges as :class:`CorefEdges` (the finite entries of a dense ``coref_scores``, row-major)."""
        if self.coref_edges is not None:
            return self.coref_edges
        rows, cols = torch.isfinite(self.coref_scores).nonzero(as_tuple=True)
        return CorefEdges(rows, cols, self.coref_scores[rows, cols])

    def dense(self) -> "JointScores":
        """These scores with the ``(M, M)`` ``coref_scores`` matrix (itself when it has it)."""
        if not self.is_sparse:
            return self
        return replace(self, coref_scores=self.coref_edges.dense(self.n_mentions), coref_edges=None)

    def sparse(self) -> "JointScores":
        """These scores with :class:`CorefEdges` in place of the matrix (itself when sparse)."""
        if self.is_sparse:
            return self
        return replace(self, coref_scores=None, coref_edges=self.edges())

    @property
    def n_mentions(self) -> int:
        return int(self.nil_scores.shape[0])

    @property
    def n_candidates(self) -> int:
        return int(self.link_scores.shape[1])

    def candidate_ids(self) -> Tensor:
        """``(M, C)`` KB ids with ``-1`` on masked slots; raises if ids are needed but missing."""
        m, c = self.link_scores.shape
        if self.candidate_entity_ids is None:
            if c == 0 or not bool(self.candidate_mask.any()):
                return torch.full((m, c), -1, dtype=torch.long, device=self.link_scores.device)
            raise ValueError(Errors.E944)
        ids = self.candidate_entity_ids
        if ids.shape != (m, c) or ids.dtype != torch.long:
            raise ValueError(Errors.E922.format(name="candidate_entity_ids", expected=f"a ({m}, {c}) long tensor",
                                                value=f"{tuple(ids.shape)} {ids.dtype}"))
        if bool((self.candidate_mask & (ids < 0)).any()):
            raise ValueError(Errors.E945)
        return ids.masked_fill(~self.candidate_mask, -1)

    def graph(self) -> JointGraph:
        """Assemble the joint graph (:func:`~spacy_el.ml.joint_coref_linker.matrix_tree.assemble_scores`).

        The entity axis is the sorted set of distinct KB ids among the valid candidates of all
        mentions; ``link block[e, i] = link_scores[i, c]`` where candidate ``c`` of ``s_i`` is
        entity ``e``; the coref block is ``coref_scores.T`` (parent-first); ``root -> entity`` = 0.

        Returns:
            :class:`JointGraph` with ``(1 + E + M, 1 + E + M)`` scores, differentiable.

        Raises:
            ValueError: a mention lists the same entity twice among its valid candidates.
        """
        if self.is_sparse:
            return self.dense().graph()
        m = self.n_mentions
        entity_ids, candidate_entities = entity_axis(self.candidate_ids())
        n_entities = int(entity_ids.shape[0])
        valid = candidate_entities >= 0
        rows, cols = valid.nonzero(as_tuple=True)
        inverse = candidate_entities[valid]
        link_block = self.link_scores.new_full((n_entities, m), NEG_INF)
        link_block = link_block.index_put((inverse, rows), self.link_scores[rows, cols])
        scores = assemble_scores(self.nil_scores, link_block, self.coref_scores.t())
        return JointGraph(scores=scores, entity_ids=entity_ids, candidate_entities=candidate_entities)


def entity_axis(ids: Tensor) -> Tuple[Tensor, Tensor]:
    """The entity nodes of a document: its distinct candidate KB ids, sorted.

    Args:
        ids: ``(M, C)`` long KB ids of the candidates (``-1`` padding).

    Returns:
        ``(E,)`` KB ids and ``(M, C)`` index of each candidate's entity node (``-1`` padding).

    Raises:
        ValueError: a mention lists the same entity twice among its valid candidates.
    """
    valid = ids >= 0
    entity_ids, inverse = torch.unique(ids[valid], sorted=True, return_inverse=True)
    n_entities = int(entity_ids.shape[0])
    candidate_entities = torch.full_like(ids, -1)
    candidate_entities[valid] = inverse
    rows = valid.nonzero(as_tuple=True)[0]
    if n_entities and int(torch.unique(rows * n_entities + inverse).numel()) != int(rows.numel()):
        raise ValueError(Errors.E946)
    return entity_ids, candidate_entities


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def _ffnn_tail(hidden: int, depth: int, dropout: float) -> nn.Sequential:
    """Everything of an FFNN after its first linear layer: ReLU, dropout, more layers, 1 output."""
    layers: List[nn.Module] = [nn.ReLU(), nn.Dropout(dropout)]
    for _ in range(depth - 1):
        layers += [nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout)]
    layers.append(nn.Linear(hidden, 1))
    return nn.Sequential(*layers)


class JointCorefScorer(nn.Module):
    """Eqs. (1)-(6): mention, coreference, linking and NIL scores of one document.

    Every FFNN has ``ffnn_depth`` hidden ReLU layers of width ``ffnn`` (Lee et al. 2017: 2 x 150).
    The first layers of ``FFNN_C`` and ``FFNN_L`` are single ``nn.Linear`` layers over the
    concatenations of eqs. (4)/(6), applied block-wise (``W [a; b] = W_a a + W_b b``) so the
    ``(M, M, 3D)`` pair tensor is never built (``W_prod (g_i * g_j)`` costs ``O(M H D)`` memory).

    Args:
        span_width: ``D``, width of ``g``.
        entity_width: ``E``, width of the KB entity vectors.
        ffnn: hidden width ``H``.
        ffnn_depth: hidden layers per FFNN (>= 1).
        distance_width: width of the distance embedding ``phi``.
        entity_proj: width of the projected entity vector ``W_e v``.
        dropout: dropout inside the FFNNs.
        refinement: ``"none" | "antecedent_averaging" | "entity_equalization"`` (module docstring).
        nil_score: ``"learned"`` or ``"zero"``: ``Phi_c(s_i, r)`` of the root/NIL edge.
        distance: ``"spans"`` (paper, footnote 3) or ``"tokens"`` (Lee et al. 2017).
        score_bound: ``b`` of the soft clamp ``b tanh(s / b)`` on every edge score; ``None`` = off.
        max_antecedents: antecedent window ``K`` (Lee et al. 2017/2018): only pairs with
            ``|i - j| <= K`` in mention order get a finite ``Phi_cl(s_i, s_j)`` (both text orders);
            all other pairs are ``-inf`` (no edge) and ``FFNN_C`` never sees them, so memory is
            ``O(M K H)`` and time ``O(M K)`` instead of ``O(M^2 H)``. ``None`` (default) or
            ``K >= M - 1`` = all pairs (the unwindowed computation, bit for bit).
        antecedent_pruning: which ``K`` pairs of each mention are scored: ``"nearest"`` (the window above)
            or ``"coarse"`` (the ``K`` earlier mentions best by a coarse score, Lee et al. 2018; module
            docstring). Only matters when ``max_antecedents`` is set and ``K < M - 1``.
        prior_feature: add ``w_p log p(e_j | s_i)`` (the alias-table prior, ``w_p`` learned, initially
            1) to ``Phi_l``, as Kolitsas et al. (2018) do, whose candidates the paper uses for AIDA+.
            The paper's own ``Phi_l`` has no prior (``False``); with little training, as on CPU, the
            prior is what ranks the candidates until ``FFNN_L`` has learned to.
    """

    def __init__(
        self,
        span_width: int,
        entity_width: int,
        *,
        ffnn: int = 150,
        ffnn_depth: int = 2,
        distance_width: int = 20,
        entity_proj: int = 150,
        dropout: float = 0.0,
        refinement: str = "none",
        nil_score: str = "learned",
        distance: str = "spans",
        score_bound: Optional[float] = 10.0,
        max_antecedents: Optional[int] = None,
        prior_feature: bool = False,
        antecedent_pruning: str = "nearest",
    ):
        super().__init__()
        for name, value in (("span_width", span_width), ("entity_width", entity_width), ("ffnn", ffnn),
                            ("ffnn_depth", ffnn_depth), ("distance_width", distance_width),
                            ("entity_proj", entity_proj)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(Errors.E922.format(name=name, expected="a positive int", value=repr(value)))
        if nil_score not in ("learned", "zero"):
            raise ValueError(Errors.E021.format(what="nil_score", name=nil_score, known=("learned", "zero")))
        if distance not in ("spans", "tokens"):
            raise ValueError(Errors.E021.format(what="distance", name=distance, known=("spans", "tokens")))
        if score_bound is not None and not score_bound > 0:
            raise ValueError(Errors.E922.format(name="score_bound", expected="positive or None", value=repr(score_bound)))
        if max_antecedents is not None and (
            not isinstance(max_antecedents, int) or isinstance(max_antecedents, bool) or max_antecedents < 1
        ):
            raise ValueError(Errors.E922.format(name="max_antecedents", expected="a positive int or None",
                                                value=repr(max_antecedents)))
        if antecedent_pruning not in ANTECEDENT_PRUNINGS:
            raise ValueError(Errors.E021.format(what="antecedent_pruning", name=antecedent_pruning, known=ANTECEDENT_PRUNINGS))
        self.max_antecedents = max_antecedents
        self.antecedent_pruning = antecedent_pruning
        self.span_width = span_width
        self.entity_width = entity_width
        self.nil_score = nil_score
        self.distance = distance
        self.score_bound = score_bound
        self.refinement_name = refinement
        self.refinement = build_refinement(refinement, span_width)
        # (1) Phi_p
        self.mention_ffnn = nn.Sequential(nn.Linear(span_width, ffnn), _ffnn_tail(ffnn, ffnn_depth, dropout))
        # (4) Phi_c: first layer over [g_i; g_j; g_i * g_j; phi_ij]
        self.distance_embedding = nn.Embedding(DISTANCE_BUCKETS, distance_width)
        self.coref_first = nn.Linear(3 * span_width + distance_width, ffnn)
        self.coref_tail = _ffnn_tail(ffnn, ffnn_depth, dropout)
        # (6) Phi_l: first layer over [g_i; W_e v_j]
        self.entity_projection = nn.Linear(entity_width, entity_proj)
        self.link_first = nn.Linear(span_width + entity_proj, ffnn)
        self.link_tail = _ffnn_tail(ffnn, ffnn_depth, dropout)
        # Root "entity" v_r of the learned NIL score (the authors' root embedding).
        self.root_vector = nn.Parameter(torch.randn(entity_width) / entity_width ** 0.5) if nil_score == "learned" else None
        # (1,), not a 0-d tensor: Thinc's optimizer takes len() of every parameter
        self.prior_weight = nn.Parameter(torch.ones(1)) if prior_feature else None
        # Coarse antecedent score (U g_i) . (V g_j) / sqrt(H) + w_d[bucket]: V starts at 0 and w_d at -bucket, so
        # the first ranking prefers likely mentions nearby (the nearest window's choice) until the model has learned.
        self.coarse_child = self.coarse_antecedent = self.coarse_distance = None
        if antecedent_pruning == "coarse":
            self.coarse_child = nn.Linear(span_width, ffnn, bias=False)
            self.coarse_antecedent = nn.Linear(span_width, ffnn, bias=False)
            nn.init.zeros_(self.coarse_antecedent.weight)
            self.coarse_distance = nn.Parameter(-torch.arange(DISTANCE_BUCKETS, dtype=torch.float32))

    # -- components --------------------------------------------------------------------------

    def _bound(self, scores: Tensor) -> Tensor:
        if self.score_bound is None:
            return scores
        b = self.score_bound
        return b * torch.tanh(scores / b)

    def pair_scores(self, span_embs: Tensor, distances: Tensor) -> Tensor:
        """Eq. (4): ``Phi_c(s_i, s_j)`` for all ordered pairs.

        Args:
            span_embs: ``(M, D)`` ``g``.
            distances: ``(M, M)`` long non-negative distances.

        Returns:
            ``(M, M)``, ``[i, j] = FFNN_C([g_i; g_j; g_i * g_j; phi(d_ij)])``.
        """
        d = self.span_width
        w = self.coref_first.weight  # (H, 3D + dist)
        w_i, w_j, w_prod, w_dist = w[:, :d], w[:, d:2 * d], w[:, 2 * d:3 * d], w[:, 3 * d:]
        h = (span_embs @ w_i.t())[:, None, :] + (span_embs @ w_j.t())[None, :, :]  # (M, M, H)
        scaled = span_embs[:, None, :] * w_prod[None, :, :]  # (M, H, D)
        h = h + torch.matmul(scaled, span_embs.t()).permute(0, 2, 1)  # + W_prod (g_i * g_j)
        h = h + self.distance_embedding(bucket_distance(distances)) @ w_dist.t() + self.coref_first.bias
        return self.coref_tail(h).squeeze(-1)

    def link_logits(self, span_embs: Tensor, entity_vectors: Tensor) -> Tensor:
        """Eq. (6): ``Phi_l(s_i, e_j)`` for every mention and entity vector.

        Args:
            span_embs: ``(M, D)``.
            entity_vectors: ``(M, C, E)`` raw KB vectors (projected here).

        Returns:
            ``(M, C)``.
        """
        d = self.span_width
        w = self.link_first.weight  # (H, D + P)
        projected = self.entity_projection(entity_vectors)  # (M, C, P)
        h = (span_embs @ w[:, :d].t())[:, None, :] + projected @ w[:, d:].t() + self.link_first.bias
        return self.link_tail(h).squeeze(-1)

    def _first_layer_parts(self, span_embs: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        """``FFNN_C``'s first layer split by its input blocks, for scoring chosen pairs:
        ``W [g_i; g_j; g_i * g_j; phi_ij] + b = A_i + B_j + W_prod (g_i * g_j) + W_dist phi_ij``.

        Returns:
            ``A + b`` ``(M, H)``, ``B`` ``(M, H)``, ``W_prod`` ``(H, D)`` and ``W_dist phi`` per distance bucket
            ``(buckets, H)``.
        """
        d = self.span_width
        w = self.coref_first.weight  # (H, 3D + dist)
        w_i, w_j, w_prod, w_dist = w[:, :d], w[:, d:2 * d], w[:, 2 * d:3 * d], w[:, 3 * d:]
        as_child = span_embs @ w_i.t() + self.coref_first.bias  # (M, H): A + bias
        as_antecedent = span_embs @ w_j.t()  # (M, H): B
        distance_rows = self.distance_embedding.weight @ w_dist.t()  # (buckets, H)
        return as_child, as_antecedent, w_prod, distance_rows

    def window_pair_scores(self, span_embs: Tensor, positions: Tensor, window: int) -> Tuple[Tensor, Tensor, Tensor]:
        """Eq. (4) for the pairs ``0 < |i - j| <= window`` only (mention order), one offset at a time.

        ``FFNN_C``'s first layer is linear, so ``W [g_i; g_j; g_i * g_j; phi_ij] = A_i + B_j + S_ij``
        with ``A = g W_i^T`` and ``B = g W_j^T`` computed once per span, and
        ``S_ij = W_prod (g_i * g_j) + W_dist phi(|d_ij|)`` symmetric in ``i, j``. For each offset
        ``o = 1..window`` the pairs ``(i, i - o)`` are contiguous slices of ``g``: ``S`` is computed
        once for them and serves both ``(i, i - o)`` and ``(i - o, i)``. That is a sixth of the first
        layer's work on concatenated features, no gathers and no ``(P, 3D)`` concatenation. Without
        autograd the memory is ``O(M (D + H))`` per offset, whatever the window (training keeps each
        offset's products for the backward pass: ``O(M K D)``).

        Args:
            span_embs: ``(M, D)`` ``g``.
            positions: ``(M,)`` long positions whose absolute differences are the distances
                (mention indices for ``distance="spans"``, start tokens for ``"tokens"``).
            window: ``K >= 1``.

        Returns:
            ``(rows, cols, values)``: the ``(P,)`` child / antecedent indices of the in-window pairs
            and their ``Phi_c`` ``(P,)``.
        """
        m = span_embs.shape[0]
        device = span_embs.device
        as_child, as_antecedent, w_prod, distance_rows = self._first_layer_parts(span_embs)
        all_rows, all_cols, all_values = [], [], []
        for o in range(1, min(window, m - 1) + 1):
            later = torch.arange(o, m, device=device)  # (M - o,) i
            earlier = later - o  # j = i - o
            dist = (positions[o:] - positions[:-o]).abs()
            shared = (span_embs[o:] * span_embs[:-o]) @ w_prod.t() + distance_rows[bucket_distance(dist)]  # (M - o, H)
            forward_h = as_child[o:] + as_antecedent[:-o] + shared  # (i, j): i's antecedent j
            backward_h = as_child[:-o] + as_antecedent[o:] + shared  # (j, i)
            all_values.append(self.coref_tail(torch.cat([forward_h, backward_h])).squeeze(-1))  # (2 (M - o),)
            all_rows += [later, earlier]
            all_cols += [earlier, later]
        if not all_values:
            empty = torch.zeros(0, dtype=torch.long, device=device)
            return empty, empty, span_embs.new_zeros(0)
        return torch.cat(all_rows), torch.cat(all_cols), torch.cat(all_values)

    def coarse_antecedents(self, span_embs: Tensor, mention_scores: Tensor, positions: Tensor,
                           k: int) -> Tuple[Tensor, Tensor, Tensor]:
        """Each mention's ``k`` best earlier mentions by the coarse score (Lee et al. 2018; module docstring).

        The ranking runs in blocks of :data:`RANK_BLOCK` mentions, each against the mentions before the block's
        end only: half the products of a full ranking, and in prediction ``O(block M)`` memory, no ``(M, M)``
        matrix beyond the edge matrix the scorer returns anyway (training keeps each block's products for the
        backward pass). The chosen pairs' coarse part is read off those products; only it carries gradients.

        Args:
            span_embs: ``(M, D)`` ``g``.
            mention_scores: ``(M,)`` ``Phi_p``.
            positions: ``(M,)`` long positions whose absolute differences are the distances.
            k: antecedents per mention, ``>= 1``.

        Returns:
            ``(rows, cols, coarse)``: the ``(P,)`` child and antecedent indices (``cols < rows``, at most ``k``
            per child, children in order) and their coarse part ``c(s_i, s_j)`` ``(P,)`` (which the ranking adds
            ``Phi_p(s_j)`` to).
        """
        m = span_embs.shape[0]
        device = span_embs.device
        as_child = self.coarse_child(span_embs) * self.coarse_child.out_features ** -0.5  # (M, H): U g / sqrt(H)
        as_antecedent = self.coarse_antecedent(span_embs)  # (M, H): V g
        mention_d, distance_d = mention_scores.detach(), self.coarse_distance.detach()
        all_rows, all_cols, all_parts = [], [], []
        for start in range(1, m, RANK_BLOCK):  # mention 0 has no earlier mention
            end = min(m, start + RANK_BLOCK)
            children = torch.arange(start, end, device=device)  # (B,)
            bilinear = as_child[start:end] @ as_antecedent[:end].t()  # (B, end): [r, j] scores j for start + r
            buckets = bucket_distance((positions[start:end, None] - positions[None, :end]).abs())  # (B, end)
            with torch.no_grad():
                ranking = bilinear.detach() + mention_d[None, :end]
                ranking += distance_d[buckets]
                later = torch.arange(end, device=device)[None, :] >= children[:, None]  # j >= i: not an antecedent
                best = ranking.masked_fill_(later, NEG_INF).topk(min(k, end - 1), dim=1).indices  # (B, k')
                picked = children[:, None].expand_as(best)
                valid = best < picked  # a mention with fewer than k' earlier ones fills its row with -inf picks
            all_rows.append(picked[valid])
            all_cols.append(best[valid])
            # the chosen pairs' coarse part, read off the block's products (with gradients in training)
            all_parts.append(bilinear.gather(1, best)[valid] + self.coarse_distance[buckets.gather(1, best)[valid]])
        if not all_rows:
            empty = torch.zeros(0, dtype=torch.long, device=device)
            return empty, empty, span_embs.new_zeros(0)
        return torch.cat(all_rows), torch.cat(all_cols), torch.cat(all_parts)

    def selected_pair_scores(self, span_embs: Tensor, positions: Tensor, rows: Tensor, cols: Tensor) -> Tuple[Tensor, Tensor]:
        """Eq. (4) for the given pairs in both orders, the first layer split by :meth:`_first_layer_parts`.

        Args:
            span_embs: ``(M, D)`` ``g``.
            positions: ``(M,)`` long positions whose absolute differences are the distances.
            rows, cols: ``(P,)`` long mention indices.

        Returns:
            ``(Phi_c(s_rows, s_cols), Phi_c(s_cols, s_rows))``, each ``(P,)``.
        """
        as_child, as_antecedent, w_prod, distance_rows = self._first_layer_parts(span_embs)
        forward_values, backward_values = [], []
        # In blocks of pairs: the (block, D) gathers stay in cache, where (P, D) ones would not. Rows are
        # gathered with index_select rather than x[index], the faster CPU kernel for row gathers: these gathers
        # are the work coarse pruning adds to the nearest window's contiguous slices.
        for block_rows, block_cols in zip(rows.split(PAIR_BLOCK), cols.split(PAIR_BLOCK)):
            products = span_embs.index_select(0, block_rows) * span_embs.index_select(0, block_cols)  # (block, D)
            shared = products @ w_prod.t()  # (block, H)
            shared = shared + distance_rows[bucket_distance((positions[block_rows] - positions[block_cols]).abs())]
            hidden = torch.cat([as_child.index_select(0, block_rows) + as_antecedent.index_select(0, block_cols) + shared,
                                as_child.index_select(0, block_cols) + as_antecedent.index_select(0, block_rows) + shared])
            values = self.coref_tail(hidden).squeeze(-1)  # (2 block,)
            forward_values.append(values[:block_rows.shape[0]])
            backward_values.append(values[block_rows.shape[0]:])
        if not forward_values:
            return span_embs.new_zeros(0), span_embs.new_zeros(0)
        return torch.cat(forward_values), torch.cat(backward_values)

    @staticmethod
    def _windowed(m: int, k: Optional[int]) -> bool:
        """Whether a budget of ``k`` antecedents per mention (None: all) leaves pairs of ``m`` mentions out."""
        return k is not None and k < m - 1

    def _coarse_pruned(self, m: int, k: Optional[int]) -> bool:
        return self.antecedent_pruning == "coarse" and self._windowed(m, k)

    def _positions(self, span_starts: Tensor) -> Tensor:
        if self.distance == "spans":
            return torch.arange(span_starts.shape[0], device=span_starts.device)
        return span_starts.long()

    def _distances(self, span_starts: Tensor, k: Optional[int]) -> Optional[Tensor]:
        """``(M, M)`` distances, or ``None`` in the windowed case (computed per pair there)."""
        if self._windowed(span_starts.shape[0], k):
            return None
        idx = self._positions(span_starts)
        return (idx[:, None] - idx[None, :]).abs()

    def _coref_pairs(self, span_embs: Tensor, mention_scores: Tensor, span_starts: Tensor, k: Optional[int],
                     coarse: Optional[Tuple[Tensor, Tensor, Tensor]] = None) -> CorefEdges:
        """The scored edges of the windowed cases, sparse: ``Phi_cl`` (eq. (3)) of the pairs of :meth:`coarse_antecedents`
        (``coarse``, in both orders, with their coarse part added) or of the window of ``k`` antecedents."""
        if coarse is not None:  # coarse-to-fine: only the selected pairs are scored
            rows, cols, coarse_part = coarse
            forward_c, backward_c = self.selected_pair_scores(span_embs, self._positions(span_starts), rows, cols)
            shared = mention_scores[rows] + mention_scores[cols] + coarse_part
            return CorefEdges(torch.cat([rows, cols]), torch.cat([cols, rows]),
                              self._bound(torch.cat([shared + forward_c, shared + backward_c])))
        assert k is not None
        rows, cols, phi_c = self.window_pair_scores(span_embs, self._positions(span_starts), k)
        return CorefEdges(rows, cols, self._bound(mention_scores[rows] + mention_scores[cols] + phi_c))  # eq. (3)

    def _coref_edges(self, span_embs: Tensor, mention_scores: Tensor, distances: Optional[Tensor],
                     span_starts: Optional[Tensor] = None, k: Optional[int] = None,
                     coarse: Optional[Tuple[Tensor, Tensor, Tensor]] = None) -> Tensor:
        """``(M, M)`` ``Phi_cl`` (eq. (3)), ``-inf`` where no edge is scored; ``distances`` None: the window of
        ``k`` antecedents; ``coarse``: the pairs of :meth:`coarse_antecedents`, scored in both orders, with their
        coarse part added."""
        m = span_embs.shape[0]
        if coarse is not None or distances is None:  # only the chosen pairs are scored, the rest is -inf
            assert span_starts is not None
            return self._coref_pairs(span_embs, mention_scores, span_starts, k, coarse).dense(m)
        pair = mention_scores[:, None] + mention_scores[None, :] + self.pair_scores(span_embs, distances)  # eq. (3)
        eye = torch.eye(m, dtype=torch.bool, device=span_embs.device)
        return self._bound(pair).masked_fill(eye, NEG_INF)

    # -- forward -----------------------------------------------------------------------------

    def forward(
        self,
        span_embs: Tensor,
        span_starts: Tensor,
        candidate_vectors: Optional[Tensor],
        candidate_mask: Tensor,
        candidate_entity_ids: Optional[Tensor] = None,
        candidate_log_prior: Optional[Tensor] = None,
        max_antecedents: Optional[int] = None,
        sparse: bool = False,
        link_logits: Optional[Tensor] = None,
    ) -> JointScores:
        """Score one document.

        Args:
            span_embs: ``(M, D)`` representations ``g`` of the mentions, in document order.
            span_starts: ``(M,)`` start token of every mention, non-decreasing (document order).
            candidate_vectors: ``(M, C, E)`` KB vectors of the candidates (anything on masked slots).
            candidate_mask: ``(M, C)`` bool, valid candidates.
            candidate_entity_ids: optional ``(M, C)`` long KB ids (``-1`` padding), stored in the
                result for :meth:`JointScores.graph`, the losses and :func:`decode`.
            candidate_log_prior: ``(M, C)`` log alias-table priors; required with
                ``prior_feature``, ignored without.
            max_antecedents: this call's antecedents per mention ``K >= 1`` (None: the model's), chosen as the
                model's ``antecedent_pruning`` says. An argument, not a change to the module: threads that
                predict with one model may ask for different budgets.
            sparse: return the coreference edges as :class:`CorefEdges` (``JointScores.coref_edges``, no
                ``(M, M)`` matrix): prediction. With a window of ``K < M - 1`` antecedents nothing quadratic in
                ``M`` is built (antecedent averaging is computed over the edges too); all pairs (``K`` None or
                ``>= M - 1``) and the Entity Equalization refinements, whose soft clusters are ``(M, M)``, still
                build the matrix. The same values as the dense scores.
            link_logits: ``(M, C)`` ``Phi_l`` (eq. (6), :meth:`link_logits` of the masked vectors) computed by the
                caller, in blocks of mentions (prediction: the ``(M, C, E)`` vectors of a book are never held at
                once); ``candidate_vectors`` is then not read.

        Returns:
            :class:`JointScores` (mention ``(M,)``, coref ``(M, M)`` or its edges, link ``(M, C)``, NIL ``(M,)``).
        """
        if span_embs.dim() != 2 or span_embs.shape[1] != self.span_width:
            raise ValueError(Errors.E922.format(name="span_embs", expected=f"(M, {self.span_width})", value=tuple(span_embs.shape)))
        m = span_embs.shape[0]
        if span_starts.shape != (m,):
            raise ValueError(Errors.E922.format(name="span_starts", expected=f"({m},)", value=tuple(span_starts.shape)))
        if m > 1 and bool((span_starts[1:] < span_starts[:-1]).any()):
            raise ValueError(Errors.E947)
        if link_logits is not None:
            if link_logits.shape != candidate_mask.shape or link_logits.shape[0] != m:
                raise ValueError(Errors.E922.format(name="link_logits", expected=f"({m}, C) as candidate_mask",
                                                    value=tuple(link_logits.shape)))
        elif candidate_vectors.dim() != 3 or candidate_vectors.shape[0] != m or candidate_vectors.shape[2] != self.entity_width:
            raise ValueError(Errors.E922.format(name="candidate_vectors", expected=f"({m}, C, {self.entity_width})",
                                                value=tuple(candidate_vectors.shape)))
        c = candidate_vectors.shape[1] if link_logits is None else link_logits.shape[1]
        if candidate_mask.shape != (m, c) or candidate_mask.dtype != torch.bool:
            raise ValueError(Errors.E922.format(name="candidate_mask", expected=f"a ({m}, {c}) bool tensor",
                                                value=f"{tuple(candidate_mask.shape)} {candidate_mask.dtype}"))
        if candidate_entity_ids is not None and candidate_entity_ids.shape != (m, c):
            raise ValueError(Errors.E922.format(name="candidate_entity_ids", expected=f"({m}, {c})",
                                                value=tuple(candidate_entity_ids.shape)))

        mention_scores = self.mention_ffnn(span_embs).squeeze(-1)  # eq. (1): (M,)
        if link_logits is None:
            vectors = candidate_vectors.masked_fill(~candidate_mask[..., None], 0.0)  # keep padding finite
            link_logits = self.link_logits(span_embs, vectors)
        if self.prior_weight is not None:
            if candidate_log_prior is None or candidate_log_prior.shape != (m, c):
                raise ValueError(Errors.E948.format(m=m, c=c))
            link_logits = link_logits + self.prior_weight * candidate_log_prior.masked_fill(~candidate_mask, 0.0)
        links = self._bound(mention_scores[:, None] + link_logits)  # eq. (5)
        links = links.masked_fill(~candidate_mask, NEG_INF)
        if self.root_vector is not None:
            root = self.root_vector.to(span_embs.dtype).expand(m, 1, self.entity_width)
            nil_pair = self.link_logits(span_embs, root).squeeze(-1)  # Phi_c(s_i, r) := Phi_l(s_i, v_r)
        else:
            nil_pair = torch.zeros_like(mention_scores)
        nil = self._bound(mention_scores + nil_pair)  # eq. (3) with Phi_p(r) = 0

        k = self.max_antecedents if max_antecedents is None else max_antecedents
        coarse = None
        if self._coarse_pruned(m, k):
            coarse = self.coarse_antecedents(span_embs, mention_scores, self._positions(span_starts), k)
        ids = None if candidate_entity_ids is None else candidate_entity_ids.long()
        if sparse and self._windowed(m, k) and not isinstance(self.refinement, (EntityEqualization, EntityEqualizationMean)):
            edges = self._coref_pairs(span_embs, mention_scores, span_starts, k, coarse)
            if self.refinement is not None and m > 0:
                weights = antecedent_edge_distribution(edges, nil, links)
                refined = self.refinement.forward_edges(span_embs, *weights)
                edges = self._coref_pairs(refined, mention_scores, span_starts, k, coarse)
            return JointScores(mention_scores, None, links, nil, candidate_mask, ids, coref_edges=edges)
        distances = self._distances(span_starts, k)
        coref = self._coref_edges(span_embs, mention_scores, distances, span_starts, k, coarse)
        if self.refinement is not None and m > 0:
            probs = antecedent_distribution(coref, nil, links)
            refined = self.refinement(span_embs, probs)
            coref = self._coref_edges(refined, mention_scores, distances, span_starts, k, coarse)
        scores = JointScores(
            mention_scores=mention_scores,
            coref_scores=coref,
            link_scores=links,
            nil_scores=nil,
            candidate_mask=candidate_mask,
            candidate_entity_ids=ids,
        )
        return scores.sparse() if sparse else scores

    def extra_repr(self) -> str:
        return (f"span_width={self.span_width}, entity_width={self.entity_width}, refinement={self.refinement_name!r}, "
                f"nil_score={self.nil_score!r}, distance={self.distance!r}, score_bound={self.score_bound}, "
                f"max_antecedents={self.max_antecedents}, antecedent_pruning={self.antecedent_pruning!r}, "
                f"prior_feature={self.prior_weight is not None}")


def antecedent_edge_distribution(edges: CorefEdges, nil: Tensor, links: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """:func:`antecedent_distribution` over sparse edges: the same softmax per mention over its scored preceding
    mentions and the dummy, without the ``(M, M)`` matrix.

    Returns:
        ``(dummy, rows, cols, weights)``: ``(M,)`` the dummy's probability per mention, and the ``(P',)``
        probabilities ``weights`` of the edges ``cols -> rows`` with ``cols < rows`` (an antecedent precedes).
    """
    dummy = torch.logsumexp(torch.cat([nil[:, None], links], dim=1), dim=1)  # (M,)
    earlier = edges.cols < edges.rows
    rows, cols, logits = edges.rows[earlier], edges.cols[earlier], edges.values[earlier]
    peak = dummy.detach().scatter_reduce(0, rows, logits.detach(), reduce="amax", include_self=True)  # (M,)
    dummy_e = torch.exp(dummy - peak)
    edge_e = torch.exp(logits - peak[rows])
    total = dummy_e.index_add(0, rows, edge_e)
    return dummy_e / total, rows, cols, edge_e / total[rows]


def antecedent_distribution(coref: Tensor, nil: Tensor, links: Tensor) -> Tensor:
    """``(M, M)`` square antecedent matrix (dummy on the diagonal) for the refinement.

    Row ``i``: softmax over the preceding mentions ``j < i`` (``coref[i, j]``) and the dummy, whose
    logit is ``logsumexp(nil[i], links[i, :])`` (``s_i`` is not coreferent with a preceding mention).
    """
    m = coref.shape[0]
    dummy = torch.logsumexp(torch.cat([nil[:, None], links], dim=1), dim=1)  # (M,)
    eye = torch.eye(m, dtype=torch.bool, device=coref.device)
    lower = torch.tril(torch.ones(m, m, dtype=torch.bool, device=coref.device), diagonal=-1)
    logits = torch.where(eye, dummy[:, None].expand(m, m), coref.masked_fill(~lower, NEG_INF))
    return torch.softmax(logits, dim=1)


# --------------------------------------------------------------------------------------------
# Shared by the losses and the decoding
# --------------------------------------------------------------------------------------------


def check_mode(mode: str) -> None:
    """Raise a ValueError unless ``mode`` is one of :data:`MODES`."""
    if mode not in MODES:
        raise ValueError(Errors.E021.format(what="mode", name=mode, known=", ".join(map(repr, MODES))))


def local_logits(scores: JointScores, with_entities: bool, with_mentions: bool) -> Tensor:
    """``(M, 1 + C' + M')`` logits of ``Y(s_i)`` (eq. (2)): [root, candidates (C' = C or 0), mentions j < i]."""
    m = scores.n_mentions
    parts = [scores.nil_scores[:, None]]
    if with_entities:
        parts.append(scores.link_scores)
    if with_mentions:
        lower = torch.tril(torch.ones(m, m, dtype=torch.bool, device=scores.coref_scores.device), diagonal=-1)
        parts.append(scores.coref_scores.masked_fill(~lower, NEG_INF))
    return torch.cat(parts, dim=1)

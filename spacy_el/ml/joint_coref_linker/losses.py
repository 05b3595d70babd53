"""The losses of joint coreference + entity linking, one per mode (:data:`~spacy_el.ml.joint_coref_linker.scorer.MODES`).

The training objectives of the ``joint_coref_linker`` component over its scorer's
:class:`~spacy_el.ml.joint_coref_linker.scorer.JointScores`: the Local loss (eq. (2)) and the Standalone coref
(eqs. (2)-(4)) and EL (eq. (6)) losses of the seed paper (Zaporojets et al. 2022), and its Global loss
(eqs. (7)-(10)) on the joint graph through :func:`~spacy_el.ml.joint_coref_linker.matrix_tree.mtt_loss`.
:func:`compute_loss` picks the mode's. Pure PyTorch.

Gold: :class:`GoldMentionCluster` (mention indices into the ``M`` scored mentions, KB entity id
or ``None`` for NIL). Mentions in no gold cluster (pruned spans that are not gold mentions) are
NIL singletons, as in the authors' code and :func:`~spacy_el.ml.joint_coref_linker.matrix_tree.mtt_loss`.

Gold rules
----------
* Local (eq. (2)), following the authors' target construction: the correct ``y`` for ``s_i`` are
  the preceding mentions of its gold cluster, plus its gold entity if that is among ``s_i``'s
  candidates; the dummy/root is correct only when there is neither (``s_i`` starts its cluster
  and its gold entity is NIL or not a candidate of ``s_i``; always for non-gold spans). The loss
  is ``-sum_i log sum_{y correct} P_cl(y | s_i)`` (marginal log-likelihood, summed over mentions).
* Global (eq. (8)): a gold cluster is *linked* in the graph when its gold entity is a candidate
  of at least one of its mentions, else it is a NIL cluster (the authors' ``is_valid_link``);
  linked clusters with the same entity are merged (a tree puts every mention below an entity
  node into one cluster).
* Antecedent window (``max_antecedents=K``): mention pairs more than ``K`` apart have no edge
  (``-inf``). Local/Coref: a gold antecedent outside the window is not a correct ``y`` (so the
  dummy/root is correct when no gold antecedent and no gold entity is reachable, as in Lee et al.
  2017). Global: a gold cluster is split into its parts connected by finite mention edges; a part
  none of whose mentions has the gold entity as a candidate is a NIL cluster.
* Coref (eqs. (2)-(4), no entity nodes): ``Y(s_i)`` = root + preceding spans; root correct iff no
  preceding gold antecedent.
* Link (eq. (6)): softmax over ``s_i``'s candidates and NIL (the root edge); NIL correct when the
  gold entity is not among the candidates (or the span is no gold mention). ``Phi_p(s_i)`` is in
  every option and cancels (exactly when ``score_bound=None``).
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

from ...errors import Errors

from .matrix_tree import GoldCluster, check_gold_cluster, mtt_loss
from .scorer import MODES, NEG_INF, JointGraph, JointScores, check_mode, local_logits

__all__ = [
    "MODES",
    "GoldMentionCluster",
    "compute_loss",
    "coref_loss",
    "finite_coref",
    "global_loss",
    "graph_clusters",
    "link_loss",
    "local_loss",
]


@dataclass(frozen=True)
class GoldMentionCluster:
    """One gold cluster of a document, in the scorer's mention indexing.

    Attributes:
        mentions: indices into the ``M`` scored (pruned) mentions, at least one.
        entity_id: gold KB entity id (the value space of ``candidate_entity_ids``), ``None`` = NIL.
    """

    mentions: Tuple[int, ...]
    entity_id: Optional[int] = None

    def __post_init__(self) -> None:
        check_gold_cluster(self, "entity_id")


# --------------------------------------------------------------------------------------------
# Gold handling
# --------------------------------------------------------------------------------------------


def _cluster_of(gold: Sequence[GoldMentionCluster], n_mentions: int) -> Tuple[np.ndarray, List[Optional[int]]]:
    """``(M,)`` gold cluster index of every mention (``-1``: none) and the clusters' entity ids."""
    cluster = np.full(n_mentions, -1, dtype=np.int64)
    entities: List[Optional[int]] = []
    for c, g in enumerate(gold):
        if not isinstance(g, GoldMentionCluster):
            raise TypeError(Errors.E922.format(name=f"gold[{c}]", expected="a GoldMentionCluster", value=type(g).__name__))
        for m in g.mentions:
            if not 0 <= m < n_mentions:
                raise ValueError(Errors.E939.format(where=f"gold[{c}]", m=m, n_mentions=n_mentions))
            if cluster[m] >= 0:
                raise ValueError(Errors.E940.format(m=m, first=cluster[m], second=c))
            cluster[m] = c
        entities.append(g.entity_id)
    return cluster, entities


def _gold_entity_columns(ids: Tensor, cluster: np.ndarray, entities: List[Optional[int]]) -> Tensor:
    """``(M, C)`` bool: candidate slot holds the mention's gold entity."""
    m, c = ids.shape
    gold_ids = torch.tensor(
        [-2 if k < 0 or entities[k] is None else entities[k] for k in cluster.tolist()], dtype=torch.long,
        device=ids.device,
    ).reshape(m)
    return (ids == gold_ids[:, None]) & (ids >= 0)


def _window_components(mentions: Tuple[int, ...], finite: Optional[np.ndarray]) -> List[Tuple[int, ...]]:
    """Split a gold cluster into the groups connected by finite mention -> mention edges.

    ``finite``: ``(M, M)`` bool of finite coref edges, or ``None`` when all off-diagonal edges are
    finite (then the cluster is returned whole). With an antecedent window the gold antecedents
    outside it are unreachable, as in Lee et al. 2017 (their dummy becomes gold).
    """
    if finite is None or len(mentions) < 2:
        return [mentions]
    nodes = np.asarray(mentions)
    adjacency = finite[np.ix_(nodes, nodes)]
    adjacency = adjacency | adjacency.T
    label = np.full(len(nodes), -1)
    for start in range(len(nodes)):
        if label[start] >= 0:
            continue
        label[start] = start
        stack = [start]
        while stack:
            u = stack.pop()
            for v in np.flatnonzero(adjacency[u] & (label < 0)).tolist():
                label[v] = start
                stack.append(v)
    groups: Dict[int, List[int]] = {}
    for k, lab in enumerate(label.tolist()):
        groups.setdefault(lab, []).append(int(nodes[k]))
    return [tuple(g) for g in groups.values()]


def finite_coref(coref: Tensor) -> Optional[np.ndarray]:
    """``(M, M)`` bool finite mask of the coref block, ``None`` when every off-diagonal edge is finite."""
    finite = torch.isfinite(coref.detach())
    m = coref.shape[0]
    if int(finite.sum()) == m * (m - 1) and not bool(finite.diagonal().any()):
        return None
    return finite.cpu().numpy()


def graph_clusters(gold: Sequence[GoldMentionCluster], graph: JointGraph,
                    finite: Optional[np.ndarray] = None) -> List[GoldCluster]:
    """Gold clusters in graph indexing (Global rule of the module docstring).

    With missing mention -> mention edges (``finite``, antecedent window), a gold cluster is first
    split into its parts connected by finite edges; a part whose mentions do not have the gold
    entity as a candidate is a NIL cluster (it cannot reach the entity node).
    """
    _cluster_of(gold, graph.n_mentions)  # validation
    position: Dict[int, int] = {int(e): i for i, e in enumerate(graph.entity_ids.tolist())}
    cand = graph.candidate_entities.cpu().numpy()
    linked: Dict[int, List[int]] = {}
    result: List[GoldCluster] = []
    for g in gold:
        e = position.get(g.entity_id) if g.entity_id is not None else None
        for part in _window_components(g.mentions, finite):
            if e is not None and (cand[list(part)] == e).any():
                linked.setdefault(e, []).extend(part)
            else:
                result.append(GoldCluster(part, None))
    result += [GoldCluster(tuple(sorted(ms)), e) for e, ms in linked.items()]
    return result


# --------------------------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------------------------


def _local_targets(
    scores: JointScores, gold: Sequence[GoldMentionCluster], with_entities: bool, with_mentions: bool
) -> Tensor:
    """``(M, 1 + C' + M')`` bool correct set, matching :func:`local_logits`."""
    m = scores.n_mentions
    device = scores.nil_scores.device
    cluster, entities = _cluster_of(gold, m)
    parts = []
    has_correct = torch.zeros(m, dtype=torch.bool, device=device)
    if with_entities:
        link_ok = _gold_entity_columns(scores.candidate_ids(), cluster, entities)  # (M, C)
        has_correct |= link_ok.any(dim=1)
        parts.append(link_ok)
    if with_mentions:
        c = torch.as_tensor(cluster, device=device)
        lower = torch.tril(torch.ones(m, m, dtype=torch.bool, device=device), diagonal=-1)
        # Gold antecedents without an edge (outside the antecedent window) cannot be chosen: Lee et al.
        same = (c[:, None] == c[None, :]) & (c[:, None] >= 0) & lower & torch.isfinite(scores.coref_scores.detach())
        has_correct |= same.any(dim=1)
        parts.append(same)
    return torch.cat([(~has_correct)[:, None]] + parts, dim=1)


def _marginal_nll(logits: Tensor, targets: Tensor) -> Tensor:
    """``-sum_i [logsumexp(logits_i over targets) - logsumexp(logits_i)]``; ``[]`` scalar."""
    if logits.shape[0] == 0:
        return logits.sum()
    gold = torch.logsumexp(logits.masked_fill(~targets, NEG_INF), dim=1)
    return (torch.logsumexp(logits, dim=1) - gold).sum()


def local_loss(scores: JointScores, gold: Sequence[GoldMentionCluster]) -> Tensor:
    """Local joint loss, eq. (2): marginal NLL over preceding spans, candidates and root.

    Args:
        scores: :class:`JointScores` of ``M`` mentions (needs ``candidate_entity_ids`` when ``C > 0``).
        gold: gold clusters (module docstring "Gold rules"); other mentions are NIL singletons.

    Returns:
        ``[]`` scalar, summed over mentions, differentiable.
    """
    logits = local_logits(scores, True, True)
    return _marginal_nll(logits, _local_targets(scores, gold, True, True))


def coref_loss(scores: JointScores, gold: Sequence[GoldMentionCluster]) -> Tensor:
    """Standalone coreference, eqs. (2)-(4): eq. (2) over root + preceding spans (no entities).

    Gold entities are ignored. Returns a ``[]`` scalar summed over mentions.
    """
    logits = local_logits(scores, False, True)
    return _marginal_nll(logits, _local_targets(scores, gold, False, True))


def link_loss(scores: JointScores, gold: Sequence[GoldMentionCluster]) -> Tensor:
    """Standalone EL, eq. (6): per mention, softmax over its candidates and NIL (the root edge).

    NIL is correct when the gold entity is not among the mention's candidates. Returns a ``[]``
    scalar summed over mentions.
    """
    logits = local_logits(scores, True, False)
    return _marginal_nll(logits, _local_targets(scores, gold, True, False))


def global_loss(scores: JointScores, gold: Sequence[GoldMentionCluster], *, dtype: torch.dtype = torch.float64) -> Tensor:
    """Global joint loss, eqs. (8)-(10): :func:`~spacy_el.ml.joint_coref_linker.matrix_tree.mtt_loss` on the joint graph.

    Args:
        scores: :class:`JointScores` (needs ``candidate_entity_ids`` when ``C > 0``).
        gold: gold clusters; a cluster whose entity is a candidate of none of its mentions is a NIL
            cluster, linked clusters sharing an entity are merged; uncovered mentions are NIL
            singletons.
        dtype: computation dtype of the determinants.

    Returns:
        ``[]`` scalar (``log Z - log numerator``) in the scores' dtype, differentiable.
    """
    graph = scores.graph()
    clusters = graph_clusters(gold, graph, finite_coref(scores.coref_scores))
    return mtt_loss(graph.scores, clusters, graph.n_entities, uncovered="nil", dtype=dtype)


_LOSSES = {"local": local_loss, "global": global_loss, "coref": coref_loss, "link": link_loss}


def compute_loss(scores: JointScores, gold: Sequence[GoldMentionCluster], mode: str) -> Tensor:
    """The loss of ``mode`` (:data:`MODES`): ``"local"``, ``"global"``, ``"coref"`` or ``"link"``.

    Raises:
        ValueError: unknown ``mode``.
    """
    check_mode(mode)
    return _LOSSES[mode](scores, gold)

"""Matrix-Tree-Theorem partition functions and the Global loss of joint coref + entity linking.

Implements eqs. (8)-(10) and Appendix A of the seed paper (joint coreference resolution and
entity linking as spanning trees, "Global" model of the ``joint_coref_linker`` component;
:func:`spacy_el.ml.joint_coref_linker.losses.global_loss` applies it to the scorer's joint graph).

Graph and conventions (shared with :mod:`spacy_el.algorithms.arborescence`)
--------------------------------------------------------------------------
``scores[i, j]`` is the score of the directed edge ``i -> j``: node ``i`` is the *parent* of node
``j`` in a tree rooted at the virtual root and pointing away from it, so every non-root node has
exactly one incoming edge. ``-inf`` = no edge; the diagonal and the root's column are ignored.
The weight of an edge is ``exp(score)``, the weight of a tree the product of its edge weights.

The joint graph orders its nodes ``[root, entity_0 .. entity_{E-1}, mention_0 .. mention_{M-1}]``
(``n = 1 + E + M``, see :func:`entity_node`, :func:`mention_node` and :func:`assemble_scores`):

* ``root -> entity_e``: score 0 (section 2.2, ``Phi_cl(r, e_j) = 0``);
* ``root -> mention_m``: the NIL score, eq. (3) with ``Phi_p(r) = 0`` (footnote 2);
* ``entity_e -> mention_m``: the link score ``Phi_cl(s_m, e_e)`` of eq. (5), ``-inf`` when ``e``
  is not a candidate of ``m``;
* ``mention_a -> mention_m``: the coreference score ``Phi_cl(s_m, s_a)`` of eq. (3), in both
  text orders for Global;
* nothing enters the root, and nothing but the root enters an entity (``-inf``).

The paper writes ``Phi_cl(s_i, y)`` for "span ``s_i`` points to its antecedent or entity ``y``"
(child first) but ``Phi_cl(u_i, u_j)`` in eqs. (7)/(10) and the matrices of Appendix A with the
*parent* first (row = parent: ``exp(Phi_cl)[e2, s2] = 4`` is the link of ``s2`` to ``e2``). This
module always uses the matrix convention: ``scores[parent, child]``.

Functions
---------
* :func:`log_partition` -- ``log Z = log sum_{t in T_all} exp(Phi_tr(t))``, the denominator of
  eq. (8), via the directed Matrix-Tree Theorem (eq. (9)-(10)), in log space.
* :func:`edge_marginals` -- ``d log Z / d scores``: the probability of every edge.
* :func:`log_partition_clusters` -- ``log det(L_hat_c)`` for every gold cluster (the factors of
  the numerator of eq. (9)).
* :func:`log_numerator` -- log of the summed weight of every full spanning tree consistent with
  the gold clustering; :func:`mtt_loss` -- ``log Z - log_numerator``, eq. (8)/(9).

Numerics
--------
Everything is computed in float64 by default (``dtype``) whatever the input dtype, with per-column
shifts so no ``exp`` overflows (see :func:`log_partition`). The shift removes overflow, not
ill-conditioning: the Laplacian determinant loses accuracy when a group of nodes is bound by
internal edges much stronger than every edge entering it. Two mentions whose mutual edges outscore
every way into the pair (root, entities, other mentions) by ``g`` nats give a shifted determinant
``~ exp(-g)`` formed by cancellation, which float64 resolves for ``g`` up to ~30 (float32: ~12).
I.i.d. scores spread over hundreds of nats (e.g. ``N(0, 1000^2)``) are far past that: the
best-incoming-edge graph has cycles whose cheapest entry costs hundreds of nats, below float64's
range even before rounding. Large scores are fine when the spread *within* each node's incoming
edges stays moderate (any per-node offset is removed exactly by the shift). When the computed
determinant is not positive a :class:`FloatingPointError` is raised rather than returning NaN;
inaccurate positive determinants cannot be detected cheaply. Keep edge scores bounded (e.g. a soft
clamp ``b * tanh(s / b)``); the paper authors' code bounds scores for the same reason.
"""
from dataclasses import dataclass
from operator import index
from typing import Any, List, Literal, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

from ...algorithms.arborescence import reachable_from
from ...errors import Errors

__all__ = [
    "GoldCluster",
    "assemble_scores",
    "edge_marginals",
    "entity_node",
    "log_numerator",
    "log_partition",
    "log_partition_clusters",
    "mention_node",
    "mtt_loss",
]

ROOT = 0  # the virtual root of the joint graph is always node 0


# --------------------------------------------------------------------------------------------
# Generic directed Matrix-Tree Theorem
# --------------------------------------------------------------------------------------------


def _check_square(scores: Tensor, name: str = "scores") -> int:
    if not isinstance(scores, Tensor):
        raise TypeError(Errors.E922.format(name=name, expected="a torch.Tensor", value=type(scores).__name__))
    if scores.dim() != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(Errors.E922.format(name=name, expected="a square [n, n] matrix", value=f"shape {tuple(scores.shape)}"))
    if not scores.is_floating_point():
        raise ValueError(Errors.E922.format(name=name, expected="a floating point tensor", value=scores.dtype))
    n = scores.shape[0]
    if n == 0:
        raise ValueError(Errors.E956.format(name=name))
    # One host sync per call: a NaN or +inf score would silently turn log Z into NaN.
    if bool(torch.isnan(scores).any()) or bool(torch.isposinf(scores).any()):
        raise ValueError(Errors.E957.format(name=name))
    return n


def _without_ignored_edges(scores: Tensor, root: int) -> Tensor:
    """``scores`` with self-loops and edges into ``root`` set to ``-inf`` (out of place)."""
    n = scores.shape[0]
    ignored = torch.eye(n, dtype=torch.bool, device=scores.device)
    ignored[:, root] = True
    return scores.masked_fill(ignored, float("-inf"))


def _finite_mask(scores: Tensor) -> np.ndarray:
    return torch.isfinite(scores).detach().cpu().numpy()


def _masked_logsumexp(x: Tensor, dim: int) -> Tensor:
    """``logsumexp`` that returns ``-inf`` with a zero (not NaN) gradient for all-``-inf`` slices."""
    empty = ~torch.isfinite(x).any(dim=dim, keepdim=True)
    safe = x.masked_fill(empty, 0.0)  # keeps the unused branch finite so backward stays NaN-free
    return torch.logsumexp(safe, dim=dim, keepdim=True).masked_fill(empty, float("-inf")).squeeze(dim)


def _slogdet_positive(matrix: Tensor, what: str) -> Tensor:
    """``log det(matrix)`` for a matrix whose determinant is positive in exact arithmetic."""
    sign, logabsdet = torch.linalg.slogdet(matrix)
    if not bool(sign > 0) or not bool(torch.isfinite(logabsdet)):
        raise FloatingPointError(Errors.E958.format(what=what, sign=float(sign), logabsdet=float(logabsdet)))
    return logabsdet


def _log_partition(s: Tensor, root: int, what: str) -> Tensor:
    """Core of :func:`log_partition` on an already validated, masked, converted matrix."""
    n = s.shape[0]
    finite = _finite_mask(s)
    reachable = reachable_from(finite, root)
    if not reachable.all():
        missing = np.flatnonzero(~reachable)
        raise ValueError(Errors.E959.format(what=what, n_missing=missing.size,
                                            nodes=f"{missing[:20].tolist()}{' ...' if missing.size > 20 else ''}"))
    if n == 1:  # the empty tree, weight 1; built from s so that backward() still works
        return s.masked_fill(torch.ones_like(s, dtype=torch.bool), 0.0).sum()

    # Nodes whose only possible parent is the root (all entities of the joint graph) are in every
    # tree with the same edge root -> e, so Z = prod_e w(r, e) * Z(G with those nodes merged into
    # the root): their outgoing edges become extra root edges (parallel weights add up, i.e. a
    # logsumexp of scores). Exact, subtraction-free, and it shrinks the determinant from
    # 1 + E + M to 1 + M rows in the joint graph (E: up to 16 candidates per mention).
    root_only = (finite.sum(axis=0) == 1) & finite[root]
    root_only[root] = False
    device = s.device
    kept_t = torch.as_tensor(np.flatnonzero(~root_only & (np.arange(n) != root)), device=device)
    const: "Tensor | float" = 0.0
    if root_only.any():
        merged = np.flatnonzero(root_only)
        root_part = s[torch.as_tensor(np.r_[root, merged], device=device)]  # [1 + R, n], one gather
        const = root_part[0, torch.as_tensor(merged, device=device)].sum()
        if kept_t.numel() == 0:
            return const
        root_row = _masked_logsumexp(root_part[:, kept_t], dim=0)  # [k]
    else:
        root_row = s[root, kept_t]
    inner = s[kept_t][:, kept_t]  # [k, k]

    # Column shift: c_j = max score into j (finite: every kept node has a parent). Detached, since
    # log Z = sum_j c_j + log det L_r(s - c) holds for *any* constants c_j (see log_partition).
    incoming = torch.cat([root_row[None, :], inner], dim=0)  # [1 + k, k]: row 0 = root
    shift = incoming.max(dim=0).values.detach()  # [k]
    weights = torch.exp(incoming - shift)  # [1 + k, k], every column's max is exactly 1
    laplacian = torch.diag(weights.sum(dim=0)) - weights[1:]  # L_r: [k, k], root row/col removed
    return const + shift.sum() + _slogdet_positive(laplacian, what)


def log_partition(scores: Tensor, root: int = 0, *, dtype: torch.dtype = torch.float64) -> Tensor:
    """Log of the summed weight of all spanning arborescences rooted at ``root``.

    ``log Z = log sum_t exp(sum_{(i, j) in t} scores[i, j])`` over all trees ``t`` rooted at
    ``root`` in which every other node has exactly one parent (the denominator of eq. (8)).

    Derivation. Directed Matrix-Tree Theorem (Tutte 1984; Koo et al. 2007): with weights
    ``w_ij = exp(scores[i, j])`` and the in-degree Laplacian ``L_jj = sum_{k != j} w_kj``,
    ``L_ij = -w_ij`` (eq. (10)), ``Z = det(L_r)``, the minor of ``L`` without row and column
    ``root``. Exponentiating large scores would overflow, so we factor per column: every tree has
    exactly one edge into each non-root node ``j``, hence for any constants ``c_j``
    ``prod_{(i,j) in t} w_ij = exp(sum_j c_j) prod_{(i,j) in t} exp(scores[i, j] - c_j)``.
    In matrix form, column ``j`` of ``L_r`` holds only the weights of edges *into* ``j`` (diagonal
    and off-diagonal alike), so ``L_r(w) = L_r(w') diag(exp(c))`` and
    ``log Z = sum_j c_j + log det L_r(w')``. With ``c_j = max_i scores[i, j]`` every shifted weight
    lies in ``[0, 1]`` and each column holds a 1: nothing overflows, and ``log det`` comes from
    ``torch.linalg.slogdet`` (LU). ``c`` is detached from the autograd graph: the identity holds
    for every constant ``c``, so the gradient is exact. Nodes whose only parent can be the root are
    merged into the root first (exact; see the code), which removes the entity block of the joint
    graph from the determinant.

    The gradient ``d log Z / d scores[i, j]`` is the marginal probability of edge ``i -> j``
    under ``P(t) = exp(score(t)) / Z`` (:func:`edge_marginals`).

    Args:
        scores: ``[n, n]`` float tensor, ``scores[i, j]`` = score of edge ``i -> j`` (``i`` parent
            of ``j``), ``-inf`` = no edge. The diagonal and column ``root`` are ignored.
        root: index of the root node.
        dtype: computation dtype (float64 by default, see the module docstring on conditioning).

    Returns:
        ``[]`` scalar tensor in ``scores.dtype``, differentiable w.r.t. ``scores``.

    Raises:
        ValueError: malformed ``scores`` or some node unreachable from ``root`` (``Z = 0``).
        FloatingPointError: the determinant is numerically not positive (ill-conditioned graph).
    """
    n = _check_square(scores)
    if not -n <= root < n:
        raise ValueError(Errors.E029.format(root=root, n=n))
    root = root % n
    s = _without_ignored_edges(scores.to(dtype), root)
    return _log_partition(s, root, "log_partition").to(scores.dtype)


def edge_marginals(scores: Tensor, root: int = 0, *, dtype: torch.dtype = torch.float64) -> Tensor:
    """Marginal probability of every edge under the tree distribution ``exp(score(t)) / Z``.

    ``marginals[i, j] = P(i is the parent of j) = d log Z / d scores[i, j]``, computed by autograd
    through :func:`log_partition` (works under ``torch.no_grad()``; not itself differentiable).
    Every non-root column sums to 1; the root column, the diagonal and ``-inf`` edges are 0.

    Args:
        scores: ``[n, n]`` edge scores as in :func:`log_partition`.
        root: index of the root node.
        dtype: computation dtype.

    Returns:
        ``[n, n]`` tensor in ``scores.dtype`` on ``scores.device``.
    """
    with torch.enable_grad():
        leaf = scores.detach().to(dtype).requires_grad_(True)
        (grad,) = torch.autograd.grad(log_partition(leaf, root, dtype=dtype), leaf)
    return grad.to(scores.dtype)


# --------------------------------------------------------------------------------------------
# The joint coref + EL graph and the gold-cluster numerator
# --------------------------------------------------------------------------------------------


def entity_node(entity: int) -> int:
    """Node index of ``entity`` (0-based among the entities) in the joint graph."""
    return 1 + entity


def mention_node(mention: int, n_entities: int) -> int:
    """Node index of ``mention`` (0-based among the mentions) in the joint graph."""
    return 1 + n_entities + mention


@dataclass(frozen=True)
class GoldCluster:
    """One gold coreference cluster of the joint graph.

    Attributes:
        mentions: indices of its mentions, 0-based among the *mentions* (node
            ``mention_node(m, n_entities)``), not node indices. At least one.
        entity: index of its gold entity, 0-based among the *entities* (node ``entity_node(e)``),
            or ``None`` for a NIL cluster (attached to the root by exactly one of its mentions).
    """

    mentions: Tuple[int, ...]
    entity: Optional[int] = None

    def __post_init__(self) -> None:
        check_gold_cluster(self, "entity")


def check_gold_cluster(cluster: Any, entity_field: str) -> None:
    """Store a frozen gold cluster's ``mentions`` as a tuple of ints, refused when there is none or one repeats,
    and its entity (field ``entity_field``; None: NIL) as an int: for :class:`GoldCluster` and the losses'
    ``GoldMentionCluster``, named in the errors by their class."""
    what = type(cluster).__name__
    mentions = tuple(index(m) for m in cluster.mentions)
    if not mentions:
        raise ValueError(Errors.E937.format(what=what))
    if len(set(mentions)) != len(mentions):
        raise ValueError(Errors.E938.format(what=what, mentions=mentions))
    object.__setattr__(cluster, "mentions", mentions)
    entity = getattr(cluster, entity_field)
    if entity is not None:
        object.__setattr__(cluster, entity_field, index(entity))


def assemble_scores(
    nil_scores: Tensor,
    link_scores: Tensor,
    coref_scores: Tensor,
    root_entity_scores: Optional[Tensor] = None,
) -> Tensor:
    """Build the ``[1 + E + M, 1 + E + M]`` edge-score matrix of the joint graph from its blocks.

    Args:
        nil_scores: ``[M]``, edge ``root -> mention_m``: mention ``m`` starts a NIL cluster
            (eq. (3) with ``Phi_p(r) = 0``).
        link_scores: ``[E, M]``, ``link_scores[e, m]`` = edge ``entity_e -> mention_m``: mention
            ``m`` links to entity ``e`` (eq. (5)); ``-inf`` where ``e`` is not a candidate of ``m``.
        coref_scores: ``[M, M]``, ``coref_scores[a, m]`` = edge ``mention_a -> mention_m``:
            ``a`` is the parent (antecedent, in either text order for Global) of ``m`` (eq. (3)).
            The diagonal is ignored (set to ``-inf``).
        root_entity_scores: ``[E]`` edge ``root -> entity_e``; zeros (the paper's choice) if None.

    Returns:
        ``[n, n]`` tensor (``n = 1 + E + M``) in the dtype/device of ``coref_scores``,
        differentiable w.r.t. every block, ``-inf`` where the joint graph has no edge.
    """
    if nil_scores.dim() != 1:
        raise ValueError(Errors.E922.format(name="nil_scores", expected="[M]", value=f"shape {tuple(nil_scores.shape)}"))
    m = nil_scores.shape[0]
    if coref_scores.shape != (m, m):
        raise ValueError(Errors.E922.format(name="coref_scores", expected=f"[M, M] = [{m}, {m}]", value=tuple(coref_scores.shape)))
    if link_scores.dim() != 2 or link_scores.shape[1] != m:
        raise ValueError(Errors.E922.format(name="link_scores", expected=f"[E, M] with M = {m}", value=tuple(link_scores.shape)))
    e = link_scores.shape[0]
    like = coref_scores
    if root_entity_scores is None:
        root_entity_scores = like.new_zeros(e)
    elif root_entity_scores.shape != (e,):
        raise ValueError(Errors.E922.format(name="root_entity_scores", expected=f"[E] = [{e}]",
                                            value=tuple(root_entity_scores.shape)))

    def none(rows: int, cols: int) -> Tensor:
        return like.new_full((rows, cols), float("-inf"))

    root_row = torch.cat([none(1, 1), root_entity_scores.to(like)[None], nil_scores.to(like)[None]], dim=1)
    entity_rows = torch.cat([none(e, 1), none(e, e), link_scores.to(like)], dim=1)
    coref = coref_scores.masked_fill(torch.eye(m, dtype=torch.bool, device=like.device), float("-inf"))
    mention_rows = torch.cat([none(m, 1), none(m, e), coref], dim=1)
    return torch.cat([root_row, entity_rows, mention_rows], dim=0)


def _check_joint(
    scores: Tensor,
    gold_clusters: Sequence[GoldCluster],
    n_entities: int,
    uncovered: Optional[str],
) -> List[int]:
    """Validate the joint graph and the gold clusters; return the uncovered mentions.

    ``uncovered``: ``"nil"`` checks that every uncovered mention can be a NIL singleton,
    ``"error"`` rejects uncovered mentions, ``None`` ignores them.
    """
    if uncovered not in ("nil", "error", None):
        raise ValueError(Errors.E021.format(what="uncovered", name=uncovered, known=("nil", "error")))
    n = _check_square(scores)
    n_entities = index(n_entities)
    if not 0 <= n_entities <= n - 1:
        raise ValueError(Errors.E960.format(n_entities=n_entities, n=n))
    n_mentions = n - 1 - n_entities
    finite = _finite_mask(scores)
    np.fill_diagonal(finite, False)
    finite[:, ROOT] = False
    wrong = np.flatnonzero(finite[1:, 1:1 + n_entities].any(axis=0))
    if wrong.size:
        raise ValueError(Errors.E961.format(entities=wrong[:10].tolist()))
    seen_mentions: dict = {}
    seen_entities: dict = {}
    for c, cluster in enumerate(gold_clusters):
        if not isinstance(cluster, GoldCluster):
            raise TypeError(Errors.E922.format(name=f"gold_clusters[{c}]", expected="a GoldCluster", value=type(cluster).__name__))
        for m in cluster.mentions:
            if not 0 <= m < n_mentions:
                raise ValueError(Errors.E939.format(where=f"gold_clusters[{c}]", m=m, n_mentions=n_mentions))
            if m in seen_mentions:
                raise ValueError(Errors.E940.format(m=m, first=seen_mentions[m], second=c))
            seen_mentions[m] = c
        if cluster.entity is not None:
            if not 0 <= cluster.entity < n_entities:
                raise ValueError(Errors.E962.format(where=f"gold_clusters[{c}]", entity=cluster.entity, n_entities=n_entities))
            if cluster.entity in seen_entities:
                # In a tree, every mention below the same entity is one cluster (the paper's premise).
                raise ValueError(Errors.E963.format(first=seen_entities[cluster.entity], second=c, entity=cluster.entity))
            seen_entities[cluster.entity] = c
        _check_feasible(finite, cluster, n_entities, f"gold_clusters[{c}]")
    missing = [m for m in range(n_mentions) if m not in seen_mentions]
    if uncovered == "error" and missing:
        raise ValueError(Errors.E964.format(mentions=missing[:20]))
    if uncovered == "nil":
        for m in missing:
            _check_feasible(finite, GoldCluster((m,)), n_entities, f"uncovered mention {m} (NIL singleton)")
    return missing


def _check_feasible(finite: np.ndarray, cluster: GoldCluster, n_entities: int, what: str) -> None:
    """Raise unless at least one gold-consistent subtree exists for ``cluster``."""
    nodes = np.array([mention_node(m, n_entities) for m in cluster.mentions])
    inner = finite[np.ix_(nodes, nodes)]
    if cluster.entity is not None:
        e = entity_node(cluster.entity)
        if not finite[ROOT, e]:
            raise ValueError(Errors.E965.format(what=what, entity=cluster.entity))
        entry = finite[e, nodes]
        adjacency = np.zeros((len(nodes) + 1, len(nodes) + 1), dtype=bool)
        adjacency[0, 1:] = entry
        adjacency[1:, 1:] = inner
        if not reachable_from(adjacency, 0).all():
            raise ValueError(Errors.E966.format(what=what, entity=cluster.entity))
        return
    # NIL: exactly one mention hangs from the root, so some root-connected mention must reach all.
    for j in np.flatnonzero(finite[ROOT, nodes]):
        if reachable_from(inner, int(j)).all():
            return
    raise ValueError(Errors.E967.format(what=what))


def log_partition_clusters(
    scores: Tensor,
    gold_clusters: Sequence[GoldCluster],
    n_entities: int,
    *,
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """``log det(L_hat_c)`` of eq. (9) for every gold cluster ``c``: its gold subtrees' log weight.

    A gold subtree of cluster ``c`` uses only edges consistent with the gold clustering:

    * linked cluster (gold entity ``e``): ``root -> e``, then a tree rooted at ``e`` over the
      cluster's mentions built from ``e -> mention`` links (only to mentions having ``e`` as a
      candidate) and within-cluster ``mention -> mention`` edges;
    * NIL cluster: exactly one ``root -> mention`` edge (footnote 2: a NIL cluster has "a link of
      a mention directly to the root"), the rest within-cluster ``mention -> mention`` edges.

    The paper's modified Laplacian ``L_hat_c`` is the cluster's Laplacian restricted to those
    edges, *without* root edges on its diagonal, whose first row is replaced by the root-selection
    weights ``w(r, j)`` (Koo et al. 2007, single-root trees). Expanding ``det`` along that row,
    ``det(L_hat_c) = sum_j w(r, j) * Z_j`` with ``Z_j`` the trees of the cluster rooted at ``j``:
    exactly one root edge per cluster (Appendix A: ``det(L_hat_c1) = 5*9 + 7*8 = 101``). NIL
    clusters are computed that way, with the column shifts of :func:`log_partition`. A linked
    cluster's only root-selection weight is ``w(r, e)``, so its ``det(L_hat_c)`` reduces to
    ``w(r, e) * Z_e``, computed as ``scores[r, e] + log_partition(cluster subgraph, root=e)``.

    Args:
        scores: ``[n, n]`` joint-graph edge scores, ``n = 1 + E + M``, nodes ordered
            ``[root, entities, mentions]`` (see :func:`assemble_scores`); ``scores[i, j]`` = edge
            ``i -> j``. Entities may only have the root as parent.
        gold_clusters: ``C`` disjoint clusters; mention/entity indices are 0-based within their
            block (see :class:`GoldCluster`). At most one cluster per entity.
        n_entities: ``E``.
        dtype: computation dtype.

    Returns:
        ``[C]`` tensor in ``scores.dtype``: ``log det(L_hat_c)`` per cluster, differentiable.

    Raises:
        ValueError: malformed input, overlapping clusters, two clusters on one entity, or a cluster
            with no gold-consistent subtree (e.g. no mention has its gold entity as a candidate).
    """
    _check_joint(scores, gold_clusters, n_entities, uncovered=None)
    return _log_clusters(scores.to(dtype), gold_clusters, n_entities).to(scores.dtype)


def _log_clusters(s: Tensor, gold_clusters: Sequence[GoldCluster], n_entities: int) -> Tensor:
    """Per-cluster ``log det(L_hat_c)`` on a validated joint graph ``s``: ``[C]``.

    Every index into the (possibly huge) ``[n, n]`` matrix makes its backward allocate an
    ``[n, n]`` gradient, so singletons are gathered in one vectorised index each and the larger
    clusters share one gather of the sub-matrix over the nodes they involve.
    """
    device = s.device
    values: List[Tensor] = []
    order: List[int] = []

    def as_index(nodes: Sequence[int]) -> Tensor:
        return torch.as_tensor(np.asarray(nodes, dtype=np.int64), device=device)

    # Singletons have exactly one gold subtree: root -> mention, or root -> entity -> mention.
    nil_single = [c for c, cl in enumerate(gold_clusters) if cl.entity is None and len(cl.mentions) == 1]
    if nil_single:
        mentions = [mention_node(gold_clusters[c].mentions[0], n_entities) for c in nil_single]
        values.append(s[ROOT, as_index(mentions)])
        order += nil_single
    linked_single = [c for c, cl in enumerate(gold_clusters) if cl.entity is not None and len(cl.mentions) == 1]
    if linked_single:
        entities = as_index([entity_node(gold_clusters[c].entity) for c in linked_single])
        mentions = as_index([mention_node(gold_clusters[c].mentions[0], n_entities) for c in linked_single])
        values.append(s[ROOT, entities] + s[entities, mentions])
        order += linked_single

    multi = [c for c, cl in enumerate(gold_clusters) if len(cl.mentions) > 1]
    if multi:
        involved = [ROOT]
        for c in multi:
            cluster = gold_clusters[c]
            if cluster.entity is not None:
                involved.append(entity_node(cluster.entity))
            involved += [mention_node(m, n_entities) for m in cluster.mentions]
        local = {node: i for i, node in enumerate(involved)}  # clusters are disjoint: no repeats
        sub = s[as_index(involved)][:, as_index(involved)]
        for c in multi:
            cluster = gold_clusters[c]
            nodes = as_index([local[mention_node(m, n_entities)] for m in cluster.mentions])
            what = f"gold_clusters[{c}]"
            if cluster.entity is None:
                values.append(_log_single_root(sub[0, nodes], sub[nodes][:, nodes], what)[None])
            else:
                e = local[entity_node(cluster.entity)]
                idx = torch.cat([as_index([e]), nodes])
                tree = _without_ignored_edges(sub[idx][:, idx], 0)
                values.append((sub[0, e] + _log_partition(tree, 0, what))[None])
            order.append(c)

    if not values:
        return s.new_zeros((0,))
    # Back to the caller's cluster order.
    return torch.cat(values)[torch.as_tensor(np.argsort(order), device=device)]


def _log_single_root(root_scores: Tensor, inner: Tensor, what: str) -> Tensor:
    """``log det(L_hat)``: log weight of the trees entered from the root by exactly one node.

    Args:
        root_scores: ``[k]`` scores of ``root -> node_j`` (the root-selection row).
        inner: ``[k, k]`` scores of ``node_i -> node_j`` among the cluster's nodes.
    """
    k = inner.shape[0]
    inner = inner.masked_fill(torch.eye(k, dtype=torch.bool, device=inner.device), float("-inf"))
    # Column j of L_hat holds only weights of edges into j (its root weight in row 0, the others
    # on the diagonal/off-diagonal), so the per-column shift of log_partition applies unchanged.
    shift = torch.cat([root_scores[None], inner], dim=0).max(dim=0).values.detach()  # [k]
    root_w = torch.exp(root_scores - shift)  # [k]
    inner_w = torch.exp(inner - shift)  # [k, k]
    laplacian = torch.diag(inner_w.sum(dim=0)) - inner_w  # root edges NOT on the diagonal
    l_hat = torch.cat([root_w[None], laplacian[1:]], dim=0)  # first row := root selection
    return shift.sum() + _slogdet_positive(l_hat, what)


def log_numerator(
    scores: Tensor,
    gold_clusters: Sequence[GoldCluster],
    n_entities: int,
    *,
    uncovered: Literal["nil", "error"] = "nil",
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """Log summed weight of all full spanning trees consistent with the gold clustering.

    ``= sum_c log det(L_hat_c)`` (:func:`log_partition_clusters`)
    ``+ sum_{m uncovered} scores[root, m]`` (mentions in no gold cluster are NIL singletons)
    ``+ sum_{e linked by no cluster} scores[root, e]`` (every entity node is in every spanning
    tree, hanging from the root; 0 with the paper's ``Phi_cl(r, e) = 0``, cf. Appendix A's note
    on ``c3 = {e1}``). Including the last two terms makes the numerator a sum over a subset of the
    trees counted by :func:`log_partition`, so :func:`mtt_loss` is never negative.

    Args:
        scores, gold_clusters, n_entities, dtype: as in :func:`log_partition_clusters`.
        uncovered: what to do with mentions in no gold cluster: ``"nil"`` (default) treats each as
            its own NIL cluster -- pruned candidate spans that are not gold mentions, as in the
            paper authors' implementation; ``"error"`` raises.

    Returns:
        ``[]`` scalar tensor in ``scores.dtype``, differentiable.
    """
    missing = _check_joint(scores, gold_clusters, n_entities, uncovered)
    return _log_numerator(scores.to(dtype), gold_clusters, n_entities, missing).to(scores.dtype)


def _log_numerator(s: Tensor, gold_clusters: Sequence[GoldCluster], n_entities: int, missing: List[int]) -> Tensor:
    total = _log_clusters(s, gold_clusters, n_entities).sum()
    device = s.device
    linked = {cl.entity for cl in gold_clusters if cl.entity is not None}
    # Root edges of the uncovered mentions (NIL singletons) and of the unlinked entities: one gather.
    extra = [mention_node(m, n_entities) for m in missing]
    extra += [entity_node(e) for e in range(n_entities) if e not in linked]
    if extra:
        total = total + s[ROOT, torch.as_tensor(np.asarray(extra, dtype=np.int64), device=device)].sum()
    return total


def mtt_loss(
    scores: Tensor,
    gold_clusters: Sequence[GoldCluster],
    n_entities: int,
    *,
    uncovered: Literal["nil", "error"] = "nil",
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """The Global loss of eq. (8)/(9) for one document: ``log Z - log numerator``.

    ``L = -log( prod_c det(L_hat_c) / det(L_r) )``: the negative log-probability, under the
    distribution over spanning trees ``P(t) ∝ exp(sum of edge scores)``, of drawing a tree that
    encodes the gold clustering and gold links. Non-negative (up to rounding), and 0 exactly when
    every tree allowed by ``scores`` is gold-consistent.

    Args:
        scores: ``[1 + E + M, 1 + E + M]`` joint-graph edge scores (:func:`assemble_scores`),
            ``scores[i, j]`` = edge ``i -> j``; ``-inf`` for absent edges.
        gold_clusters: gold clusters (:class:`GoldCluster`, block-relative indices).
        n_entities: ``E``, the number of entity nodes (after the root, before the mentions).
        uncovered: mentions in no gold cluster: ``"nil"`` singletons (default) or ``"error"``.
        dtype: computation dtype (float64 by default).

    Returns:
        ``[]`` scalar tensor in ``scores.dtype``, differentiable w.r.t. ``scores``; its gradient is
        ``P(edge) - P(edge | gold-consistent)``.
    """
    missing = _check_joint(scores, gold_clusters, n_entities, uncovered)
    s = scores.to(dtype)
    numerator = _log_numerator(s, gold_clusters, n_entities, missing)
    log_z = _log_partition(_without_ignored_edges(s, ROOT), ROOT, "mtt_loss (log Z)")
    return (log_z - numerator).to(scores.dtype)

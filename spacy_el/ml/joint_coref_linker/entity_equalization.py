"""Entity Equalization (Kantor & Globerson 2019) and antecedent averaging (Lee et al. 2018).

Span-representation refinements for a mention-ranking coreference model (the scorer of the
``joint_coref_linker`` component, :mod:`spacy_el.ml.joint_coref_linker.scorer`): given span embeddings ``g``
and the current antecedent distribution ``P(y_i)``, build refined embeddings ``g'`` from which the
antecedent scores are recomputed.
Chosen by the config switch ``refinement = "none" | "antecedent_averaging" | "entity_equalization"``
(:func:`build_refinement`).

Equations (numbers are the paper's; section 3.1's three formulas are unnumbered there)
-------------------------------------------------------------------------------------
Mentions ``1..n`` in document order (0-based ``0..n-1`` in code); ``y_i`` ranges over
``Y(i) = {eps, 1, ..., i-1}`` (section 2).

* eq. (1), antecedent averaging: ``a_i = sum_{y in Y(i)} P(y_i = y) g_y``, with ``g_eps := g_i``
  (the dummy contributes the span itself, as in Lee et al. 2018's implementation).
* eq. (3), Entity Equalization: ``a_i = sum_{j in C(i)} g_j``, the *sum* (not the mean) of the
  mentions currently in ``i``'s cluster, relaxed as follows:
* section 3.1, soft clustering (Le & Titov 2017): ``Q(i in E_j)``, the probability that mention
  ``i`` belongs to the entity ``E_j`` whose first mention is ``j``::

      Q(i in E_j) = sum_{k=j}^{i-1} P(y_i = k) Q(k in E_j)   if j < i
                  = P(y_i = eps)                             if j = i
                  = 0                                        if j > i

* section 3.1, entity representation at step ``t``: ``e_j^(t) = sum_{k=1}^{t} Q(k in E_j) g_k``
  (only mentions up to ``t``: "we won't represent a mention using mentions not yet encountered");
* section 3.1, equalized representation: ``a_i = sum_{j=1}^{i} Q(i in E_j) e_j^(i)``;
* eq. (2), the gate shared by both refinements: ``g'_i = f_i * g_i + (1 - f_i) * a_i`` with
  ``f_i = sigmoid(W_f [g_i; a_i] + b_f)``.

With a one-hot ``P`` the relaxation is exact: ``Q`` is the 0/1 entity assignment and
``a_i = sum_{k in C(i), k <= i} g_k``, eq. (3) over the cluster as built so far (for the last
mention of a cluster, the whole cluster: the paper's John/he/John example).

Layout of ``antecedent_probs`` (the paper's antecedent matrix)
--------------------------------------------------------------
A square ``[..., n, n]`` matrix, row ``i`` = mention ``i``'s distribution ``P(y_i)``, exactly as
the paper's example table (and the authors' code, which scatters the dummy weight onto the
diagonal)::

    P[i, j] = P(y_i = j)     for j < i   (antecedent j)
    P[i, i] = P(y_i = eps)              (dummy: i starts a new entity / is not a mention)
    P[i, j] = 0              for j > i   (invalid: not a preceding span)

so row ``i`` holds its ``i + 1`` valid entries in columns ``0..i`` and sums to 1; row 0 is
``[1, 0, ...]``. The dummy-first layout of Lee et al.'s code (``[..., n, n + 1]``, column 0 =
dummy, column ``1 + j`` = antecedent ``j``) and their top-``c`` pruned layout convert with
:func:`antecedent_matrix`. A leading batch shape ``...`` is allowed everywhere; since mention
``i``'s outputs depend only on rows/embeddings ``<= i``, documents of different lengths can be
padded at the end (give padding rows a valid distribution, e.g. dummy = 1).

Complexity: everything is dense ``[n, n]`` matrix algebra, no Python loop over mentions.
``Q`` is one unit-lower-triangular solve (``O(n^3)`` time, ``O(n^2)`` memory; the recursion is
exactly forward substitution), ``a`` two matrix products (``O(n^2 (n + d))`` time, ``O(n^2 + n d)``
memory, instead of the ``O(n^2 d)`` tensor of all ``e_j^(t)``).
"""
from typing import Optional, Tuple

import torch
from torch import Tensor, nn

from ...errors import Errors

__all__ = [
    "REFINEMENTS",
    "AntecedentAveraging",
    "EntityEqualization",
    "EntityEqualizationMean",
    "antecedent_matrix",
    "build_refinement",
    "entity_representations",
    "equalized_representations",
    "equalized_mean_representations",
    "expected_antecedents",
    "soft_clusters",
]

#: Edges gathered at a time by :meth:`AntecedentAveraging.forward_edges` (``EDGE_BLOCK x d`` floats).
EDGE_BLOCK = 16384
#: Valid values of the ``refinement`` config switch (:func:`build_refinement`).
REFINEMENTS: Tuple[str, ...] = ("none", "antecedent_averaging", "entity_equalization", "entity_equalization_mean")


# --------------------------------------------------------------------------------------------
# Layout and validation
# --------------------------------------------------------------------------------------------


def _check_probs(p: Tensor, name: str = "antecedent_probs") -> int:
    """Validate a square antecedent matrix (see the module docstring); return ``n``.

    One host sync: negative or NaN entries, mass above the diagonal (a transposed matrix, or an
    unmasked softmax over following spans) and rows not summing to 1 (a dropped dummy column)
    would otherwise silently give wrong clusters.
    """
    if not isinstance(p, Tensor):
        raise TypeError(Errors.E922.format(name=name, expected="a torch.Tensor", value=type(p).__name__))
    if not p.is_floating_point():
        raise ValueError(Errors.E922.format(name=name, expected="a floating point tensor", value=p.dtype))
    if p.dim() < 2 or p.shape[-1] != p.shape[-2]:
        raise ValueError(Errors.E949.format(name=name, shape=tuple(p.shape)))
    n = p.shape[-1]
    if p.numel() == 0:
        return n
    eps = torch.finfo(p.dtype).eps
    tol = max(1e-4, 16 * n * eps)
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool, device=p.device), diagonal=1)
    bad_value = torch.isnan(p).any() | (p < 0).any()
    bad_upper = (p.masked_select(upper.expand(p.shape)) != 0).any()
    bad_rows = ((p.sum(dim=-1) - 1).abs() > tol).any()
    flags = torch.stack([bad_value, bad_upper, bad_rows]).tolist()
    if flags[0]:
        raise ValueError(Errors.E950.format(name=name))
    if flags[1]:
        raise ValueError(Errors.E951.format(name=name))
    if flags[2]:
        raise ValueError(Errors.E952.format(name=name, tol=tol))
    return n


def antecedent_matrix(weights: Tensor, antecedent_idx: Optional[Tensor] = None) -> Tensor:
    """Convert a dummy-first antecedent distribution to the square layout of this module.

    Args:
        weights: ``[..., n, c + 1]`` probabilities, column 0 = the dummy ``eps``. Without
            ``antecedent_idx``, ``c = n`` and column ``1 + j`` is antecedent ``j`` (entries for
            ``j >= i`` must be 0). With it, column ``1 + s`` is antecedent ``antecedent_idx[..., i, s]``
            (Lee et al.'s top-``c`` pruning); masked slots must carry weight 0.
        antecedent_idx: optional ``[..., n, c]`` int64 indices of each mention's candidate
            antecedents; slots with nonzero weight must satisfy ``0 <= idx < i`` (repeated indices
            add up), masked slots (weight 0) may hold anything.

    Returns:
        ``[..., n, n]``: ``P[i, i] = weights[i, 0]``, ``P[i, j] = P(y_i = j)`` for ``j < i``,
        differentiable w.r.t. ``weights``.

    Raises:
        ValueError: wrong shapes, or nonzero weight on an antecedent that does not precede its
            mention (it would land on or above the diagonal).
    """
    if weights.dim() < 2:
        raise ValueError(Errors.E922.format(name="weights", expected="[..., n, c + 1]", value=f"shape {tuple(weights.shape)}"))
    n = weights.shape[-2]
    rows = torch.arange(n, device=weights.device)
    if antecedent_idx is None:
        if weights.shape[-1] != n + 1:
            raise ValueError(Errors.E953.format(shape=tuple(weights.shape)))
        invalid = rows[None, :] >= rows[:, None]  # [n, n]: antecedent j >= mention i
        if bool((weights[..., 1:].masked_select(invalid.expand(weights[..., 1:].shape)) != 0).any()):
            raise ValueError(Errors.E954)
        square = weights[..., 1:].masked_fill(invalid, 0.0)
        return square + torch.diag_embed(weights[..., 0])
    if antecedent_idx.shape != weights.shape[:-1] + (weights.shape[-1] - 1,):
        raise ValueError(Errors.E922.format(name="antecedent_idx", expected="[..., n, c] for weights [..., n, c + 1]",
                                            value=f"{tuple(antecedent_idx.shape)} and {tuple(weights.shape)}"))
    idx = antecedent_idx.long()
    used = weights[..., 1:] != 0
    if bool((used & ((idx >= rows[:, None]) | (idx < 0))).any()):
        raise ValueError(Errors.E955)
    # Masked slots (weight 0) may hold any index: send them to column 0 with weight 0.
    idx = torch.where(used, idx, torch.zeros_like(idx))
    square = weights.new_zeros(weights.shape[:-1] + (n,))
    square = square.scatter_add(-1, idx, weights[..., 1:] * used)
    return square + torch.diag_embed(weights[..., 0])


# --------------------------------------------------------------------------------------------
# Soft clustering and representations
# --------------------------------------------------------------------------------------------


def soft_clusters(antecedent_probs: Tensor, *, validate: bool = True) -> Tensor:
    """``Q[i, j] = Q(i in E_j)``: the differentiable soft clustering of section 3.1.

    Column ``j`` is the entity ``E_j`` started by mention ``j``; ``Q`` is lower triangular
    (``Q(i in E_j) = 0`` for ``j > i``), ``Q[i, i] = P(y_i = eps)``, and for ``j < i``
    ``Q(i in E_j) = sum_{k=j}^{i-1} P(y_i = k) Q(k in E_j)`` (Le & Titov 2017). If every row of
    ``P`` sums to 1 so does every row of ``Q``, and ``Q(i in E_j) <= Q(j in E_j)``. ``Q`` is the
    exact marginal membership probability when the ``y_i`` are drawn independently from
    ``P(y_i)``, and the 0/1 entity assignment when ``P`` is one-hot.

    Derivation (vectorised recursion). With ``A`` the strictly lower part of ``P`` (the
    antecedent links) and ``D = diag(P)`` (the dummy), the recursion is row ``i`` of
    ``Q = D + A Q`` -- the ``k > i`` and ``k < j`` terms vanish since ``A`` is strictly lower
    and ``Q`` lower triangular -- so ``Q = (I - A)^{-1} D``. ``I - A`` is unit lower triangular,
    so this is one ``torch.linalg.solve_triangular`` whose forward substitution *is* the
    recursion, row after row (only non-negative terms are added: no cancellation). Cost
    ``O(n^3)`` time, ``O(n^2)`` memory, no Python loop.

    Args:
        antecedent_probs: ``[..., n, n]`` square antecedent matrix, dummy on the diagonal (module
            docstring). Entries above the diagonal are ignored (zero gradient).
        validate: check the layout (one host sync; see :func:`_check_probs`). With
            ``validate=False`` any non-negative lower-triangular ``P`` is accepted as is.

    Returns:
        ``[..., n, n]`` ``Q`` in the input dtype, lower triangular, differentiable.
    """
    if validate:
        _check_probs(antecedent_probs)
    elif antecedent_probs.dim() < 2 or antecedent_probs.shape[-1] != antecedent_probs.shape[-2]:
        raise ValueError(Errors.E922.format(name="antecedent_probs", expected="[..., n, n]",
                                            value=f"shape {tuple(antecedent_probs.shape)}"))
    p = antecedent_probs
    dtype = p.dtype
    if dtype in (torch.float16, torch.bfloat16):  # triangular solves need float32 on CPU
        p = p.float()
    n = p.shape[-1]
    links = torch.tril(p, diagonal=-1)  # A: [..., n, n]
    eye = torch.eye(n, dtype=p.dtype, device=p.device)
    q = torch.linalg.solve_triangular(
        eye - links, torch.diag_embed(torch.diagonal(p, dim1=-2, dim2=-1)), upper=False, unitriangular=True
    )
    return q.to(dtype)


def entity_representations(q: Tensor, span_embs: Tensor) -> Tensor:
    """All entity representations ``e_j^(t) = sum_{k=1}^{t} Q(k in E_j) g_k`` (section 3.1).

    Explicit ``O(n^2 d)``-memory form, for inspection and tests; the refinement itself uses
    :func:`equalized_representations`, which never materialises it.

    Args:
        q: ``[..., n, n]`` soft clusters from :func:`soft_clusters` (``q[k, j] = Q(k in E_j)``).
        span_embs: ``[..., n, d]`` span representations ``g``.

    Returns:
        ``[..., n, n, d]`` tensor ``E`` with ``E[t, j] = e_j^(t)`` (0-based ``t``: mentions
        ``0..t`` included).
    """
    # [..., k, j, d] contributions Q(k in E_j) g_k, accumulated over k <= t.
    return torch.cumsum(q.unsqueeze(-1) * span_embs.unsqueeze(-2), dim=-3)


def equalized_representations(q: Tensor, span_embs: Tensor) -> Tensor:
    """The equalized representation ``a_i = sum_{j=1}^{i} Q(i in E_j) e_j^(i)`` (section 3.1).

    Substituting ``e_j^(i)``: ``a_i = sum_{k<=i} (sum_j Q(i in E_j) Q(k in E_j)) g_k``, i.e.
    ``a = tril(Q Q^T) g`` -- ``O(n^2 (n + d))`` time, ``O(n^2)`` extra memory. ``(Q Q^T)[i, k]``
    is the paper's soft "same entity" weight of ``i`` and ``k`` (it treats their memberships as
    independent, so it is the exact co-reference probability only for one-hot ``P``); with
    one-hot ``P`` this is eq. (3) over the cluster so far, ``a_i = sum_{k in C(i), k <= i} g_k``.

    Args:
        q: ``[..., n, n]`` soft clusters (:func:`soft_clusters`).
        span_embs: ``[..., n, d]`` span representations ``g``.

    Returns:
        ``[..., n, d]`` ``a``.
    """
    same_entity = torch.tril(q @ q.transpose(-1, -2))  # [..., n, n]: i row, k <= i column
    return same_entity @ span_embs


def equalized_mean_representations(q: Tensor, span_embs: Tensor) -> Tensor:
    """Entity Equalization with each entity represented by its soft *mean*, not its sum (not in the paper).

    ``a_i = sum_j Q(i in E_j) e_j^(i) / m_j^(i)`` with the soft size ``m_j^(i) = sum_{k<=i} Q(k in E_j)``.
    Since ``sum_j Q(i in E_j) = 1``, ``a_i`` is a convex combination of span representations and keeps
    their scale, whatever the cluster sizes; with one-hot ``P`` it is the mean of ``i``'s cluster so
    far. The sum of :func:`equalized_representations` grows with the cluster: on long documents it
    reaches many times ``|g|``, so the rescored edges are far larger too: a bounded scorer (``score_bound``)
    saturates and stops the gradient, an unbounded one trains unsteadily.

    Args:
        q: ``[..., n, n]`` soft clusters (:func:`soft_clusters`).
        span_embs: ``[..., n, d]`` span representations ``g``.

    Returns:
        ``[..., n, d]`` ``a``.
    """
    size = torch.cumsum(q, dim=-2)  # [..., n, n]: m_j^(i) at row i, column j
    weights = q / size.clamp_min(torch.finfo(q.dtype).tiny)  # Q(i in E_j) / m_j^(i); 0 where Q is 0
    same_entity = torch.tril(weights @ q.transpose(-1, -2))
    return same_entity @ span_embs


def expected_antecedents(antecedent_probs: Tensor, span_embs: Tensor) -> Tensor:
    """Eq. (1), antecedent averaging: ``a_i = sum_{y in Y(i)} P(y_i = y) g_y`` with ``g_eps = g_i``.

    In the square layout the dummy weight sits on the diagonal, so this is ``a = tril(P) g``.

    Args:
        antecedent_probs: ``[..., n, n]`` square antecedent matrix (module docstring).
        span_embs: ``[..., n, d]`` span representations ``g``.

    Returns:
        ``[..., n, d]`` ``a``.
    """
    return torch.tril(antecedent_probs) @ span_embs


# --------------------------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------------------------


class _GatedRefinement(nn.Module):
    """Eq. (2): ``g'_i = f_i * g_i + (1 - f_i) * a_i``, ``f_i = sigmoid(W_f [g_i; a_i] + b_f)``.

    Subclasses define ``a`` (:meth:`attend`). One refinement step; Lee et al. (2018) rescore the
    antecedents with ``g'`` and may refine again (their "second order" is one step). Written as
    in the paper; the public TF code gates the other way round (``f * a + (1 - f) * g``), the
    same model family up to ``W_f, b_f -> -W_f, -b_f``.
    """

    def __init__(self, width: int, *, validate: bool = True):
        super().__init__()
        if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
            raise ValueError(Errors.E922.format(name="width", expected="a positive int", value=repr(width)))
        self.width = width
        self.validate = validate
        self.gate = nn.Linear(2 * width, width)  # W_f, b_f

    def attend(self, span_embs: Tensor, antecedent_probs: Tensor) -> Tensor:  # pragma: no cover
        raise NotImplementedError

    def forward(self, span_embs: Tensor, antecedent_probs: Tensor) -> Tensor:
        """Refine ``span_embs``.

        Args:
            span_embs: ``[..., n, d]`` span representations ``g`` (``d = width``).
            antecedent_probs: ``[..., n, n]`` square antecedent matrix, dummy on the diagonal
                (module docstring; :func:`antecedent_matrix` converts other layouts).

        Returns:
            ``[..., n, d]`` refined representations ``g'``.
        """
        if span_embs.dim() < 2 or span_embs.shape[-1] != self.width:
            raise ValueError(Errors.E922.format(name="span_embs", expected=f"[..., n, {self.width}]",
                                                value=f"shape {tuple(span_embs.shape)}"))
        if antecedent_probs.shape[-2:] != (span_embs.shape[-2],) * 2:
            raise ValueError(Errors.E922.format(name="antecedent_probs", expected=f"[..., n, n] with n = {span_embs.shape[-2]} spans",
                                                value=f"shape {tuple(antecedent_probs.shape)}"))
        if self.validate:
            _check_probs(antecedent_probs)
        return self.gated(span_embs, self.attend(span_embs, antecedent_probs.to(span_embs.dtype)))

    def gated(self, span_embs: Tensor, a: Tensor) -> Tensor:
        """Eq. (2) for ``g`` and ``a``, both ``[..., n, d]``."""
        f = torch.sigmoid(self.gate(torch.cat([span_embs, a], dim=-1)))  # [..., n, d]
        return f * span_embs + (1 - f) * a

    def extra_repr(self) -> str:
        return f"width={self.width}"


class AntecedentAveraging(_GatedRefinement):
    """Lee et al. (2018)'s refinement: eq. (1) (``g_eps = g_i``) then the gate of eq. (2)."""

    def attend(self, span_embs: Tensor, antecedent_probs: Tensor) -> Tensor:
        return expected_antecedents(antecedent_probs, span_embs)

    def forward_edges(self, span_embs: Tensor, dummy: Tensor, rows: Tensor, cols: Tensor, weights: Tensor) -> Tensor:
        """:meth:`forward` with the antecedent distribution given sparse, as
        :func:`~spacy_el.ml.joint_coref_linker.scorer.antecedent_edge_distribution` gives it: ``dummy`` ``(n,)``,
        and ``weights`` ``(P,)`` of the edges ``cols -> rows``. Memory ``O(n d)`` (the edges are gathered in blocks
        of :data:`EDGE_BLOCK`), where the square matrix is ``O(n^2)``.

        Args:
            span_embs: ``(n, d)`` ``g`` of one document.

        Returns:
            ``(n, d)`` refined ``g'``.
        """
        a = dummy.to(span_embs.dtype)[:, None] * span_embs  # g_eps = g_i
        for block_rows, block_cols, block_weights in zip(rows.split(EDGE_BLOCK), cols.split(EDGE_BLOCK),
                                                         weights.split(EDGE_BLOCK)):
            a = a.index_add(0, block_rows, block_weights.to(span_embs.dtype)[:, None] * span_embs.index_select(0, block_cols))
        return self.gated(span_embs, a)


class EntityEqualization(_GatedRefinement):
    """Kantor & Globerson (2019)'s refinement: section 3.1's ``a_i`` then the gate of eq. (2).

    ``Q`` = :func:`soft_clusters` of the antecedent distribution, ``a`` =
    :func:`equalized_representations` (the sum over the soft cluster so far, eq. (3)), and
    ``g' = f * g + (1 - f) * a``. ``a_i`` is a *sum*, so its scale grows with the cluster size,
    as in the paper (and its authors' code).
    """

    def attend(self, span_embs: Tensor, antecedent_probs: Tensor) -> Tensor:
        q = soft_clusters(antecedent_probs, validate=False)  # validated in forward
        return equalized_representations(q, span_embs)


class EntityEqualizationMean(_GatedRefinement):
    """Entity Equalization with entity means (:func:`equalized_mean_representations`) then the gate."""

    def attend(self, span_embs: Tensor, antecedent_probs: Tensor) -> Tensor:
        q = soft_clusters(antecedent_probs, validate=False)  # validated in forward
        return equalized_mean_representations(q, span_embs)


def build_refinement(name: str, width: int) -> Optional[nn.Module]:
    """The refinement module for the config switch ``refinement`` (:data:`REFINEMENTS`).

    Args:
        name: ``"none"`` (no refinement: returns ``None``), ``"antecedent_averaging"``
            (:class:`AntecedentAveraging`), ``"entity_equalization"`` (:class:`EntityEqualization`) or
            ``"entity_equalization_mean"`` (:class:`EntityEqualizationMean`).
        width: ``d``, the span representation width.

    Raises:
        ValueError: any other name (the message lists the valid ones).
    """
    if name == "none":
        return None
    if name == "antecedent_averaging":
        return AntecedentAveraging(width)
    if name == "entity_equalization":
        return EntityEqualization(width)
    if name == "entity_equalization_mean":
        return EntityEqualizationMean(width)
    raise ValueError(Errors.E021.format(what="refinement", name=name, known=", ".join(map(repr, REFINEMENTS))))

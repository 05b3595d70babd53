"""Entity Equalization and antecedent averaging refinements (spacy_el.ml.joint_coref_linker.entity_equalization)."""
import itertools
from typing import List, Sequence

import pytest
import torch

from spacy_el.ml.joint_coref_linker.entity_equalization import (
    REFINEMENTS,
    AntecedentAveraging,
    EntityEqualization,
    EntityEqualizationMean,
    antecedent_matrix,
    build_refinement,
    entity_representations,
    equalized_mean_representations,
    equalized_representations,
    expected_antecedents,
    soft_clusters,
)

F64 = torch.float64
EPS = -1  # "antecedent" of a mention that picks the dummy


# Exact float comparisons: one torch thread, as set by the conftest fixture.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ------------------------------------------------------------------------------------------
# Helpers and references
# ------------------------------------------------------------------------------------------


def one_hot_probs(antecedents: Sequence[int], dtype=F64) -> torch.Tensor:
    """Square antecedent matrix of hard decisions: ``antecedents[i]`` = j < i, or EPS (diagonal)."""
    n = len(antecedents)
    p = torch.zeros(n, n, dtype=dtype)
    for i, j in enumerate(antecedents):
        assert j == EPS or 0 <= j < i
        p[i, i if j == EPS else j] = 1.0
    return p


def first_mentions(antecedents: Sequence[int]) -> List[int]:
    """Hard clustering: the first mention of each mention's entity (follow the antecedent chain)."""
    first: List[int] = []
    for i, j in enumerate(antecedents):
        first.append(i if j == EPS else first[j])
    return first


def random_probs(n: int, *, batch=(), scale: float = 2.0, seed: int = 0, dtype=F64) -> torch.Tensor:
    """Random soft antecedent matrices: masked softmax of random scores (dummy on the diagonal)."""
    gen = torch.Generator().manual_seed(seed)
    scores = scale * torch.randn(*batch, n, n, generator=gen, dtype=dtype)
    return masked_softmax(scores)


def masked_softmax(scores: torch.Tensor) -> torch.Tensor:
    n = scores.shape[-1]
    following = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return torch.softmax(scores.masked_fill(following, float("-inf")), dim=-1)


def loop_soft_clusters(p: torch.Tensor) -> torch.Tensor:
    """The recursion of section 3.1 written literally, one mention at a time."""
    n = p.shape[0]
    q = torch.zeros_like(p)
    for i in range(n):
        q[i, i] = p[i, i]
        for j in range(i):
            q[i, j] = sum(p[i, k] * q[k, j] for k in range(j, i))
    return q


def enumerated_memberships(p: torch.Tensor) -> torch.Tensor:
    """``P(i in E_j)`` by enumerating every antecedent assignment drawn independently from ``P``."""
    n = p.shape[0]
    out = torch.zeros_like(p)
    for choice in itertools.product(*[[EPS] + list(range(i)) for i in range(n)]):
        weight = torch.prod(torch.stack([p[i, i if j == EPS else j] for i, j in enumerate(choice)]))
        for i, f in enumerate(first_mentions(choice)):
            out[i, f] += weight
    return out


# ------------------------------------------------------------------------------------------
# soft_clusters: hard cases (the paper's example)
# ------------------------------------------------------------------------------------------

# "[John] went to the park and [he] got tired. [John] decided to go back home." (section 3)
PAPER_P = torch.tensor(
    [
        [1.0, 0.0, 0.0],  # John1 -> eps (the paper's table puts the dummy on the diagonal)
        [1.0, 0.0, 0.0],  # he    -> John1
        [1.0, 0.0, 0.0],  # John2 -> John1
    ],
    dtype=F64,
)


def test_paper_example_is_one_cluster() -> None:
    q = soft_clusters(PAPER_P)
    assert torch.equal(q, torch.tensor([[1.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]], dtype=F64))


def test_chain_is_transitive() -> None:
    # John2 -> he -> John1: John2 reaches E_1 only through he.
    q = soft_clusters(one_hot_probs([EPS, 0, 1]))
    assert torch.equal(q, torch.tensor([[1.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]], dtype=F64))


@pytest.mark.parametrize(
    "antecedents",
    [
        [EPS],
        [EPS, EPS, EPS],
        [EPS, EPS, 0, 1, 2],  # {0, 2, 4} via a chain, {1, 3}
        [EPS, 0, EPS, 2, 1, 3, EPS, 6],
        [EPS, 0, 1, 2, 3, 4],  # one long chain
    ],
)
def test_one_hot_gives_exact_hard_clusters(antecedents) -> None:
    q = soft_clusters(one_hot_probs(antecedents))
    expected = torch.zeros_like(q)
    for i, f in enumerate(first_mentions(antecedents)):
        expected[i, f] = 1.0
    assert torch.equal(q, expected)  # exact 0/1, not just close


# ------------------------------------------------------------------------------------------
# soft_clusters: soft P
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_soft_cluster_properties(seed: int) -> None:
    p = random_probs(12, seed=seed)
    q = soft_clusters(p)
    assert (q >= 0).all() and (q <= 1 + 1e-12).all()
    assert torch.equal(q, torch.tril(q))  # Q(i in E_j) = 0 for j > i
    torch.testing.assert_close(torch.diagonal(q), torch.diagonal(p))  # Q(i in E_i) = P(y_i = eps)
    torch.testing.assert_close(q.sum(dim=1), torch.ones(12, dtype=F64))  # one entity per mention
    # A mention joins E_j at most as likely as j starts it: Q(i in E_j) <= Q(j in E_j).
    assert (q <= torch.diagonal(q)[None, :] + 1e-12).all()
    torch.testing.assert_close(q, loop_soft_clusters(p))


def test_soft_clusters_are_exact_marginals() -> None:
    p = random_probs(5, scale=1.0, seed=7)
    torch.testing.assert_close(soft_clusters(p), enumerated_memberships(p))


def test_soft_clusters_float32_batch_and_empty() -> None:
    p = random_probs(9, batch=(3,), seed=1, dtype=torch.float32)
    q = soft_clusters(p)
    assert q.dtype == torch.float32 and q.shape == (3, 9, 9)
    for b in range(3):
        torch.testing.assert_close(q[b], soft_clusters(p[b].double()).float())
    assert soft_clusters(torch.zeros(0, 0)).shape == (0, 0)
    half = soft_clusters(p[0].to(torch.bfloat16))
    assert half.dtype == torch.bfloat16


def test_soft_clusters_gradcheck() -> None:
    scores = torch.randn(4, 4, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda s: soft_clusters(masked_softmax(s)), (scores,))
    # Directly w.r.t. P (no row normalisation needed with validate=False); the upper part is ignored.
    p = random_probs(5, seed=3).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: soft_clusters(x, validate=False), (p,))


def test_validation_errors() -> None:
    good = random_probs(4)
    with pytest.raises(ValueError, match="E949"):
        soft_clusters(torch.ones(4, 5, dtype=F64) / 5)
    with pytest.raises(ValueError, match="E951"):
        soft_clusters(good.T.contiguous())
    with pytest.raises(ValueError, match="E952"):
        soft_clusters(torch.tril(good, diagonal=-1))  # dummy dropped
    with pytest.raises(ValueError, match="E950"):
        soft_clusters(good - 0.5)
    with pytest.raises(ValueError, match=r"E922\] .* floating point tensor"):
        soft_clusters(torch.eye(3, dtype=torch.long))


# ------------------------------------------------------------------------------------------
# Layout conversion
# ------------------------------------------------------------------------------------------


def test_antecedent_matrix_dense_and_pruned() -> None:
    square = random_probs(5, seed=4)
    dummy_first = torch.zeros(5, 6, dtype=F64)
    dummy_first[:, 0] = torch.diagonal(square)
    dummy_first[:, 1:] = torch.tril(square, diagonal=-1)
    torch.testing.assert_close(antecedent_matrix(dummy_first), square)

    # Top-2 pruned antecedents (Lee et al.): slot s of mention i is antecedent idx[i, s].
    idx = torch.tensor([[0, 0], [0, 0], [1, 0], [2, 0]])
    weights = torch.tensor(
        [[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], dtype=F64
    )
    expected = torch.tensor(
        [[1.0, 0, 0, 0], [0.75, 0.25, 0, 0], [0.2, 0.3, 0.5, 0], [0.3, 0, 0.6, 0.1]], dtype=F64
    )
    torch.testing.assert_close(antecedent_matrix(weights, idx), expected)
    with pytest.raises(ValueError, match="E955"):
        antecedent_matrix(weights, torch.tensor([[0, 0], [1, 0], [1, 0], [2, 0]]))  # 1 -> itself
    with pytest.raises(ValueError, match="E954"):
        antecedent_matrix(torch.full((2, 3), 1 / 3, dtype=F64))
    with pytest.raises(ValueError, match="E953"):
        antecedent_matrix(torch.ones(3, 3, dtype=F64))


# ------------------------------------------------------------------------------------------
# Entity and equalized representations
# ------------------------------------------------------------------------------------------


def test_entity_representations_by_hand() -> None:
    # Mentions 0..4, clusters E_0 = {0, 2, 4} (4 -> 2 -> 0) and E_1 = {1, 3}.
    g = torch.arange(1.0, 16.0, dtype=F64).reshape(5, 3)
    q = soft_clusters(one_hot_probs([EPS, EPS, 0, 1, 2]))
    e = entity_representations(q, g)  # [t, j] = e_j^(t)
    zero = torch.zeros(3, dtype=F64)
    members = {0: [0, 2, 4], 1: [1, 3]}
    for t in range(5):
        for j in range(5):
            expected = sum((g[k] for k in members.get(j, []) if k <= t), zero)
            torch.testing.assert_close(e[t, j], expected)
    # a_i: sum of the cluster's members so far (eq. (3) under one-hot P).
    a = equalized_representations(q, g)
    expected_a = torch.stack([g[0], g[1], g[0] + g[2], g[1] + g[3], g[0] + g[2] + g[4]])
    torch.testing.assert_close(a, expected_a)


def test_paper_example_representations() -> None:
    g = torch.randn(3, 4, dtype=F64)
    a = equalized_representations(soft_clusters(PAPER_P), g)
    torch.testing.assert_close(a[2], g.sum(dim=0))  # John2: John1 + he + John2
    torch.testing.assert_close(a[1], g[0] + g[1])  # he: nothing after it
    # Antecedent averaging only sees John2's antecedent John1.
    torch.testing.assert_close(expected_antecedents(PAPER_P, g)[2], g[0])


def test_mean_variant_on_the_paper_example_and_soft_p() -> None:
    g = torch.randn(3, 4, dtype=F64)
    a = equalized_mean_representations(soft_clusters(PAPER_P), g)
    torch.testing.assert_close(a[2], g.mean(dim=0))  # John2: mean of John1, he, John2
    torch.testing.assert_close(a[1], (g[0] + g[1]) / 2)
    torch.testing.assert_close(a[0], g[0])
    # Soft P: a_i = sum_j Q(i in E_j) e_j^(i) / m_j^(i), literally; a convex combination of g.
    p = random_probs(6, seed=5)
    g = torch.randn(6, 3, dtype=F64)
    q = soft_clusters(p)
    e = entity_representations(q, g)
    size = torch.cumsum(q, dim=0)
    literal = torch.stack([sum(q[i, j] * e[i, j] / size[i, j] for j in range(i + 1) if size[i, j] > 0) for i in range(6)])
    torch.testing.assert_close(equalized_mean_representations(q, g), literal)
    big = torch.full((40, 40), 0.0, dtype=F64)
    big[:, 0] = 1.0  # every mention joins the first: the sum grows 40-fold, the mean stays at |g|
    ones = torch.ones(40, 2, dtype=F64)
    assert equalized_representations(soft_clusters(big), ones)[-1, 0] == 40
    torch.testing.assert_close(equalized_mean_representations(soft_clusters(big), ones), ones)


def test_equalized_matches_paper_formula_on_soft_p() -> None:
    p = random_probs(6, seed=5)
    g = torch.randn(6, 3, dtype=F64)
    q = soft_clusters(p)
    e = entity_representations(q, g)
    # a_i = sum_{j <= i} Q(i in E_j) e_j^(i), literally.
    literal = torch.stack([sum(q[i, j] * e[i, j] for j in range(i + 1)) for i in range(6)])
    torch.testing.assert_close(equalized_representations(q, g), literal)


# ------------------------------------------------------------------------------------------
# Modules
# ------------------------------------------------------------------------------------------


def _gate_output(module, g: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    f = torch.sigmoid(module.gate(torch.cat([g, a], dim=-1)))
    return f * g + (1 - f) * a  # eq. (2)


def test_antecedent_averaging_picks_antecedent() -> None:
    torch.manual_seed(0)
    antecedents = [EPS, 0, EPS, 1]
    p = one_hot_probs(antecedents)
    g = torch.randn(4, 3, dtype=F64)
    a = expected_antecedents(p, g)
    torch.testing.assert_close(a, torch.stack([g[0], g[0], g[2], g[1]]))  # dummy -> g_i
    module = AntecedentAveraging(3).double()
    torch.testing.assert_close(module(g, p), _gate_output(module, g, a))


def test_entity_equalization_module() -> None:
    torch.manual_seed(0)
    p = random_probs(5, seed=6)
    g = torch.randn(5, 4, dtype=F64)
    module = EntityEqualization(4).double()
    refined = module(g, p)
    assert refined.shape == (5, 4)
    torch.testing.assert_close(refined, _gate_output(module, g, equalized_representations(soft_clusters(p), g)))
    # Batched input = per-document results.
    batch = module(torch.stack([g, g.flip(0)]), torch.stack([p, p]))
    torch.testing.assert_close(batch[0], refined)
    with pytest.raises(ValueError, match=r"E922\] span_embs must be \[\.\.\., n, 4\]"):
        module(torch.randn(5, 3, dtype=F64), p)
    with pytest.raises(ValueError, match=r"E922\] antecedent_probs .* n = 4"):
        module(g[:4], p)


def test_modules_gradcheck() -> None:
    torch.manual_seed(0)
    g = torch.randn(4, 2, dtype=F64, requires_grad=True)
    scores = torch.randn(4, 4, dtype=F64, requires_grad=True)
    for cls in (EntityEqualization, EntityEqualizationMean, AntecedentAveraging):
        module = cls(2).double()
        assert torch.autograd.gradcheck(lambda x, s: module(x, masked_softmax(s)), (g, scores))
        module(g, masked_softmax(scores)).sum().backward()
        assert module.gate.weight.grad is not None and torch.isfinite(module.gate.weight.grad).all()


def test_build_refinement() -> None:
    assert REFINEMENTS == ("none", "antecedent_averaging", "entity_equalization", "entity_equalization_mean")
    assert isinstance(build_refinement("entity_equalization_mean", 8), EntityEqualizationMean)
    assert build_refinement("none", 8) is None
    assert isinstance(build_refinement("antecedent_averaging", 8), AntecedentAveraging)
    ee = build_refinement("entity_equalization", 8)
    assert isinstance(ee, EntityEqualization) and ee.gate.in_features == 16 and ee.gate.out_features == 8
    with pytest.raises(ValueError, match=r"E021\] Unknown refinement 'second_order'; choose one of 'none', 'antecedent_averaging'"):
        build_refinement("second_order", 8)
    with pytest.raises(ValueError, match=r"E922\] width"):
        build_refinement("entity_equalization", 0)

"""Matrix-Tree-Theorem partition functions and the Global MTT loss (spacy_el.ml.joint_coref_linker.matrix_tree)."""
import itertools
import math
from typing import Callable, Iterator, List, Optional, Sequence

import numpy as np
import pytest
import torch

from spacy_el.ml.joint_coref_linker.matrix_tree import (
    GoldCluster,
    assemble_scores,
    edge_marginals,
    entity_node,
    log_numerator,
    log_partition,
    log_partition_clusters,
    mention_node,
    mtt_loss,
)

NEG = float("-inf")
F64 = torch.float64


# ------------------------------------------------------------------------------------------
# Brute-force references
# ------------------------------------------------------------------------------------------


def arborescences(scores: np.ndarray, root: int = 0) -> Iterator[np.ndarray]:
    """Every spanning arborescence rooted at ``root`` using finite, non-loop edges."""
    n = len(scores)
    others = [j for j in range(n) if j != root]
    options = [[i for i in range(n) if i != j and np.isfinite(scores[i, j])] for j in others]
    for choice in itertools.product(*options):
        parents = np.full(n, -1)
        parents[others] = choice
        if all(_reaches_root(parents, j, root) for j in others):
            yield parents


def _reaches_root(parents: np.ndarray, j: int, root: int) -> bool:
    for _ in range(len(parents)):
        if j == root:
            return True
        j = parents[j]
    return j == root


def tree_score(scores: np.ndarray, parents: np.ndarray) -> float:
    children = np.flatnonzero(parents >= 0)
    return float(scores[parents[children], children].sum())


def brute_log_sum(scores: np.ndarray, root: int = 0, keep: Callable[[np.ndarray], bool] = lambda t: True) -> float:
    values = [tree_score(scores, t) for t in arborescences(scores, root) if keep(t)]
    if not values:
        return NEG
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def gold_consistent(parents: np.ndarray, clusters: Sequence[GoldCluster], n_entities: int, n_mentions: int) -> bool:
    """Does a full tree encode the gold clustering? Written from the paper, not from the code.

    Linked cluster: each mention's parent is the gold entity or a mention of the same cluster.
    NIL cluster: each mention's parent is the root or a mention of the same cluster, and exactly
    one mention hangs from the root. Mentions in no cluster are NIL singletons (parent = root).
    """
    covered = set()
    for cluster in clusters:
        nodes = {mention_node(m, n_entities) for m in cluster.mentions}
        covered |= nodes
        entry = 0 if cluster.entity is None else entity_node(cluster.entity)
        if any(parents[v] not in nodes | {entry} for v in nodes):
            return False
        if cluster.entity is None and sum(parents[v] == 0 for v in nodes) != 1:
            return False
    return all(parents[mention_node(m, n_entities)] == 0 for m in range(n_mentions)
               if mention_node(m, n_entities) not in covered)


def reference_log_partition(scores: torch.Tensor, root: int = 0) -> torch.Tensor:
    """Plain float64 MTT with per-column max shift, no node merging (independent of the module)."""
    s = scores.to(F64).clone()
    n = s.shape[0]
    s.fill_diagonal_(NEG)
    s[:, root] = NEG
    keep = [j for j in range(n) if j != root]
    shift = s[:, keep].max(dim=0).values
    w = torch.exp(s[:, keep] - shift)
    laplacian = torch.diag(w.sum(dim=0)) - w[keep]
    sign, logdet = torch.linalg.slogdet(laplacian)
    assert sign > 0
    return shift.sum() + logdet


def random_joint(rng: np.random.Generator, n_entities: int, n_mentions: int, p_link: float = 0.6) -> torch.Tensor:
    """Random joint-graph scores built with assemble_scores (random candidate sets)."""
    nil = torch.as_tensor(rng.normal(size=n_mentions))
    link = torch.as_tensor(rng.normal(size=(n_entities, n_mentions)))
    link[torch.as_tensor(rng.random((n_entities, n_mentions)) > p_link)] = NEG
    coref = torch.as_tensor(rng.normal(size=(n_mentions, n_mentions)))
    coref[torch.as_tensor(rng.random((n_mentions, n_mentions)) < 0.2)] = NEG
    return assemble_scores(nil, link, coref, torch.as_tensor(rng.normal(size=n_entities) * 0.5))


def random_clusters(
    rng: np.random.Generator, scores: torch.Tensor, n_entities: int, n_mentions: int
) -> List[GoldCluster]:
    """A random partition of a random subset of mentions, each cluster NIL or linked to a candidate."""
    mentions = list(rng.permutation(n_mentions)[: rng.integers(1, n_mentions + 1)])
    clusters, free_entities = [], list(range(n_entities))
    while mentions:
        size = int(rng.integers(1, len(mentions) + 1))
        group, mentions = mentions[:size], mentions[size:]
        candidates = [e for e in free_entities
                      if any(np.isfinite(scores[entity_node(e), mention_node(m, n_entities)].item()) for m in group)]
        entity: Optional[int] = None
        if candidates and rng.random() < 0.6:
            entity = int(rng.choice(candidates))
            free_entities.remove(entity)
        clusters.append(GoldCluster(tuple(int(m) for m in group), entity))
    return clusters


# ------------------------------------------------------------------------------------------
# log Z and edge marginals
# ------------------------------------------------------------------------------------------


def test_log_partition_matches_brute_force():
    rng = np.random.default_rng(0)
    checked = 0
    for trial in range(150):
        n = int(rng.integers(1, 7))
        root = int(rng.integers(n))
        scores = rng.normal(size=(n, n)) * 2
        if trial % 2:
            scores[rng.random((n, n)) < 0.35] = NEG
        expected = brute_log_sum(scores, root)
        if expected == NEG:
            with pytest.raises(ValueError, match="E959"):
                log_partition(torch.as_tensor(scores), root)
            continue
        got = log_partition(torch.as_tensor(scores), root)
        assert got.shape == () and got.dtype == F64
        assert got.item() == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked > 100


def test_paper_appendix_example():
    """Appendix A, eqs. (11)-(19): det L_r = 3600, det L_hat_c1 = 101, det L_hat_c2 = 4."""
    weights = torch.tensor(
        [  # r  e1 e2 s1 s2 s3   (row = parent, column = child)
            [0, 1, 1, 5, 3, 7],  # r
            [0, 0, 0, 0, 1, 0],  # e1
            [0, 0, 0, 0, 4, 2],  # e2
            [0, 0, 0, 0, 5, 9],  # s1
            [0, 0, 0, 3, 0, 2],  # s2
            [0, 0, 0, 8, 4, 0],  # s3
        ],
        dtype=F64,
    )
    scores = weights.log()  # 0 -> -inf: no edge
    # The appendix text says c1 = {s1, s2}; its matrices (14)-(15) use {s1, s3}, as here.
    clusters = [GoldCluster((0, 2)), GoldCluster((1,), entity=1)]
    assert log_partition(scores).exp().item() == pytest.approx(3600.0)
    np.testing.assert_allclose(log_partition_clusters(scores, clusters, 2).exp().numpy(), [101.0, 4.0])
    assert log_numerator(scores, clusters, 2).exp().item() == pytest.approx(404.0)  # e1: weight 1
    assert mtt_loss(scores, clusters, 2).item() == pytest.approx(-math.log(101 * 4 / 3600))
    # The same graph assembled from blocks.
    blocks = assemble_scores(
        nil_scores=scores[0, 3:], link_scores=scores[1:3, 3:], coref_scores=scores[3:, 3:]
    )
    torch.testing.assert_close(blocks, scores)


def test_edge_marginals_match_brute_force_and_sum_to_one():
    rng = np.random.default_rng(1)
    for trial in range(20):
        n = int(rng.integers(2, 6))
        scores = rng.normal(size=(n, n)) * 1.5
        scores[rng.random((n, n)) < 0.25] = NEG
        scores[0, 1:] = rng.normal(size=n - 1)  # keep it feasible
        trees = list(arborescences(scores))
        weights = np.array([math.exp(tree_score(scores, t)) for t in trees])
        expected = np.zeros((n, n))
        for tree, weight in zip(trees, weights):
            for j in range(1, n):
                expected[tree[j], j] += weight
        expected /= weights.sum()
        with torch.no_grad():  # must work without an enclosing autograd context
            marginals = edge_marginals(torch.as_tensor(scores))
        np.testing.assert_allclose(marginals.numpy(), expected, atol=1e-10)
        np.testing.assert_allclose(marginals[:, 1:].sum(dim=0).numpy(), np.ones(n - 1), atol=1e-12)
        assert (marginals[:, 0] == 0).all() and (marginals.diagonal() == 0).all()
        assert (marginals[torch.as_tensor(~np.isfinite(scores))] == 0).all()


def test_gradient_is_marginals_and_gradcheck():
    rng = np.random.default_rng(2)
    n = 6
    mask = torch.as_tensor(rng.random((n, n)) < 0.3)
    mask[0, 1:] = False
    x = torch.as_tensor(rng.normal(size=(n, n)), dtype=F64).requires_grad_(True)

    def f(t: torch.Tensor) -> torch.Tensor:
        return log_partition(t.masked_fill(mask, NEG))

    assert torch.autograd.gradcheck(f, (x,))
    (grad,) = torch.autograd.grad(f(x), x)
    torch.testing.assert_close(grad, edge_marginals(x.detach().masked_fill(mask, NEG)))


def test_root_only_nodes_are_merged_exactly():
    """Entities (only parent: the root) are folded into the root; compare with the plain formula."""
    rng = np.random.default_rng(3)
    scores = random_joint(rng, n_entities=40, n_mentions=25)
    torch.testing.assert_close(log_partition(scores), reference_log_partition(scores))
    # Only root-only nodes: Z is the product of the root edges.
    star = torch.full((4, 4), NEG, dtype=F64)
    star[0, 1:] = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    assert log_partition(star).item() == pytest.approx(1.5)
    assert log_partition(torch.zeros(1, 1)).item() == 0.0


def test_stability_large_scores_many_nodes():
    """|scores| ~ 1e3 on 320 nodes: exp overflows, the column-shifted log-space result does not."""
    rng = np.random.default_rng(4)
    n = 320
    noise = torch.as_tensor(rng.normal(size=(n, n)) * 2.0)
    noise[torch.as_tensor(rng.random((n, n)) < 0.1)] = NEG
    noise[0, 1:] = torch.as_tensor(rng.normal(size=n - 1))
    offsets = torch.as_tensor(1000.0 + rng.uniform(-1000.0, 1000.0, size=n))  # per child node
    scores = noise + offsets[None, :]
    assert torch.isinf(torch.exp(scores)).any()  # the naive Laplacian would overflow
    reference = reference_log_partition(scores)
    for dtype in (torch.float32, F64):
        got = log_partition(scores.to(dtype))
        assert got.dtype == dtype and torch.isfinite(got)
        assert got.item() == pytest.approx(reference.item(), rel=1e-6 if dtype == torch.float32 else 1e-12)
    # Exact identity: shifting every edge into j by c_j adds c_j to every tree's score.
    base = log_partition(noise)
    assert log_partition(scores).item() == pytest.approx(base.item() + offsets[1:].sum().item(), rel=1e-12)
    # Gradients stay finite and are proper marginals.
    marginals = edge_marginals(scores)
    assert torch.isfinite(marginals).all()
    torch.testing.assert_close(marginals[:, 1:].sum(dim=0), torch.ones(n - 1, dtype=F64))
    # The joint loss too, with large link/coref scores.
    joint = random_joint(rng, n_entities=60, n_mentions=300, p_link=0.05) * 1.0
    joint = joint + torch.cat([torch.zeros(61), torch.as_tensor(rng.uniform(500, 1500, size=300))])[None, :]
    clusters = [GoldCluster(tuple(range(i, i + 3))) for i in range(0, 30, 3)]
    loss = mtt_loss(joint, clusters, 60)
    assert torch.isfinite(loss) and loss.item() >= 0


def test_ill_conditioned_graph_raises_instead_of_nan():
    """Two mentions bound by edges 60 nats stronger than any way in: float64 cannot resolve it."""

    def pair(gap: float) -> torch.Tensor:
        s = torch.full((3, 3), NEG, dtype=F64)
        s[0, 1] = s[0, 2] = -gap / 2
        s[1, 2] = s[2, 1] = gap / 2
        return s  # Z = exp(-gap) + 2

    assert log_partition(pair(20.0)).item() == pytest.approx(math.log(2 + math.exp(-20.0)), rel=1e-6)
    with pytest.raises(FloatingPointError, match="E958"):
        log_partition(pair(60.0))


# ------------------------------------------------------------------------------------------
# Gold-cluster numerator and loss
# ------------------------------------------------------------------------------------------


def brute_cluster(scores: np.ndarray, cluster: GoldCluster, n_entities: int) -> float:
    """log sum of the cluster's gold subtrees, enumerated on the cluster's own subgraph."""
    nodes = [0] + ([entity_node(cluster.entity)] if cluster.entity is not None else [])
    nodes += [mention_node(m, n_entities) for m in cluster.mentions]
    sub = scores[np.ix_(nodes, nodes)].copy()
    if cluster.entity is not None:
        sub[0, 2:] = NEG  # mentions of a linked cluster never hang from the root
        return brute_log_sum(sub)
    return brute_log_sum(sub, keep=lambda t: sum(t[1:] == 0) == 1)


def test_numerator_and_loss_match_brute_force():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(120):
        n_entities = int(rng.integers(0, 3))
        n_mentions = int(rng.integers(1, 6 - n_entities))
        scores = random_joint(rng, n_entities, n_mentions)
        clusters = random_clusters(rng, scores, n_entities, n_mentions)
        np_scores = scores.numpy()
        try:
            per_cluster = log_partition_clusters(scores, clusters, n_entities)
        except ValueError as error:  # a random cluster may admit no gold subtree
            assert "gold_clusters" in str(error)
            assert any(brute_cluster(np_scores, c, n_entities) == NEG for c in clusters)
            continue
        for value, cluster in zip(per_cluster.tolist(), clusters):
            assert value == pytest.approx(brute_cluster(np_scores, cluster, n_entities), abs=1e-9)
        keep = lambda t: gold_consistent(t, clusters, n_entities, n_mentions)  # noqa: E731
        try:
            numerator = log_numerator(scores, clusters, n_entities)
        except ValueError:
            assert brute_log_sum(np_scores, keep=keep) == NEG  # an uncovered mention without NIL edge
            continue
        assert numerator.item() == pytest.approx(brute_log_sum(np_scores, keep=keep), abs=1e-9)
        loss = mtt_loss(scores, clusters, n_entities)
        assert loss.item() == pytest.approx(brute_log_sum(np_scores) - numerator.item(), abs=1e-9)
        assert loss.item() >= -1e-9
        checked += 1
    assert checked > 60


def test_loss_is_zero_when_only_the_gold_structure_is_allowed():
    rng = np.random.default_rng(6)
    n_entities, n_mentions = 3, 7
    clusters = [GoldCluster((0, 3, 5), entity=1), GoldCluster((1, 4)), GoldCluster((2,), entity=0)]
    # mention 6 is uncovered: a NIL singleton.
    nil = torch.full((n_mentions,), NEG, dtype=F64)
    nil[[1, 6]] = torch.as_tensor(rng.normal(size=2))  # one root entry for the NIL clusters
    link = torch.full((n_entities, n_mentions), NEG, dtype=F64)
    link[1, [0, 5]] = torch.as_tensor(rng.normal(size=2))
    link[0, 2] = 0.3
    coref = torch.full((n_mentions, n_mentions), NEG, dtype=F64)
    for group in ([0, 3, 5], [1, 4]):
        for a, b in itertools.permutations(group, 2):
            coref[a, b] = float(rng.normal())
    scores = assemble_scores(nil, link, coref, torch.as_tensor(rng.normal(size=n_entities)))
    assert mtt_loss(scores, clusters, n_entities).item() == pytest.approx(0.0, abs=1e-12)
    # Any extra (non-gold) edge makes the loss strictly positive.
    scores[mention_node(2, n_entities), mention_node(4, n_entities)] = 0.0
    assert mtt_loss(scores, clusters, n_entities).item() > 1e-3


def test_loss_non_negative_on_random_graphs():
    rng = np.random.default_rng(7)
    for _ in range(40):
        n_entities, n_mentions = int(rng.integers(0, 12)), int(rng.integers(1, 40))
        scores = random_joint(rng, n_entities, n_mentions) * float(rng.choice([1.0, 5.0]))
        scores[0, 1 + n_entities:] = torch.as_tensor(rng.normal(size=n_mentions))  # every mention may be NIL
        clusters = random_clusters(rng, scores, n_entities, n_mentions)
        try:
            loss = mtt_loss(scores, clusters, n_entities)
        except ValueError:
            continue
        assert loss.item() >= -1e-6


def test_loss_gradcheck_and_gradient_meaning():
    rng = np.random.default_rng(8)
    n_entities, n_mentions = 2, 4
    link = torch.as_tensor(rng.normal(size=(n_entities, n_mentions)))
    link[0, 3] = NEG  # a missing link inside the gold cluster: mention 3 must go through mention 1
    base = assemble_scores(
        torch.as_tensor(rng.normal(size=n_mentions)), link, torch.as_tensor(rng.normal(size=(n_mentions, n_mentions)))
    )
    clusters = [GoldCluster((0, 2)), GoldCluster((1, 3), entity=0)]
    mask = ~torch.isfinite(base)
    x = base.masked_fill(mask, 0.0).requires_grad_(True)

    def f(t: torch.Tensor) -> torch.Tensor:
        return mtt_loss(t.masked_fill(mask, NEG), clusters, n_entities)

    assert torch.autograd.gradcheck(f, (x,))
    # d loss / d s = P(edge) - P(edge | gold-consistent): columns of each sum to 1 - 1 = 0.
    (grad,) = torch.autograd.grad(f(x), x)
    torch.testing.assert_close(grad[:, 1:].sum(dim=0), torch.zeros(base.shape[0] - 1, dtype=F64))


def test_float32_input_is_computed_in_float64():
    rng = np.random.default_rng(9)
    scores = random_joint(rng, 5, 20) * 10
    clusters = [GoldCluster((0, 1, 2)), GoldCluster((3, 4))]
    got = mtt_loss(scores.float(), clusters, 5)
    assert got.dtype == torch.float32
    assert got.item() == pytest.approx(mtt_loss(scores.float().double(), clusters, 5).item(), rel=1e-6)


def test_assemble_scores_directions():
    nil = torch.tensor([0.1, 0.2])
    link = torch.tensor([[1.0, NEG], [2.0, 3.0], [NEG, 4.0]])  # 3 entities x 2 mentions
    coref = torch.tensor([[9.0, 5.0], [6.0, 9.0]])
    s = assemble_scores(nil, link, coref)
    assert s.shape == (6, 6)
    assert (s[0, 1:4] == 0).all()  # root -> entity: 0
    assert s[0, mention_node(1, 3)] == pytest.approx(0.2)  # root -> mention: NIL
    assert s[entity_node(1), mention_node(1, 3)] == 3.0  # entity -> mention: link
    assert s[mention_node(1, 3), mention_node(0, 3)] == 6.0  # mention_1 is the parent of mention_0
    assert torch.isinf(s[:, 0]).all() and torch.isinf(s[1:, 1:4]).all()  # nothing enters root/entities
    assert torch.isinf(s.diagonal()).all()
    x = torch.randn(2, 2, requires_grad=True)
    assemble_scores(nil, link, x).sum().backward()
    assert x.grad is not None
    with pytest.raises(ValueError, match=r"E922\] coref_scores must be \[M, M\]"):
        assemble_scores(nil, link, torch.zeros(3, 3))
    with pytest.raises(ValueError, match=r"E922\] link_scores must be \[E, M\]"):
        assemble_scores(nil, link.T, coref)


def test_errors():
    rng = np.random.default_rng(10)
    scores = random_joint(rng, 2, 4, p_link=1.0)
    with pytest.raises(ValueError, match=r"E922\] .* a square"):
        log_partition(torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"E922\] .* a floating point tensor"):
        log_partition(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="E957"):
        log_partition(torch.tensor([[0.0, float("nan")], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="E029"):
        log_partition(torch.zeros(2, 2), root=5)
    island = torch.full((4, 4), NEG)
    island[0, 1] = island[2, 3] = island[3, 2] = 0.0
    with pytest.raises(ValueError, match=r"E959\] .* 2 node\(s\) .*\[2, 3\]"):
        log_partition(island)
    with pytest.raises(ValueError, match="E961"):
        mtt_loss(scores.T.contiguous(), [], 2)
    with pytest.raises(ValueError, match=r"E940\] mention 1 "):
        mtt_loss(scores, [GoldCluster((0, 1)), GoldCluster((1, 2))], 2)
    with pytest.raises(ValueError, match="E963"):
        mtt_loss(scores, [GoldCluster((0,), 1), GoldCluster((1,), 1)], 2)
    with pytest.raises(ValueError, match=r"E939\] .* mention 4 "):
        mtt_loss(scores, [GoldCluster((4,))], 2)
    with pytest.raises(ValueError, match=r"E962\] .* entity 2 "):
        mtt_loss(scores, [GoldCluster((0,), 2)], 2)
    with pytest.raises(ValueError, match="E964"):
        mtt_loss(scores, [GoldCluster((0,))], 2, uncovered="error")
    with pytest.raises(ValueError, match=r"E021\] Unknown uncovered"):
        mtt_loss(scores, [], 2, uncovered="drop")
    with pytest.raises(ValueError, match="E937"):
        GoldCluster(())
    with pytest.raises(TypeError):
        mtt_loss(scores, [((0,), None)], 2)
    # Gold entity is no candidate of any mention of the cluster.
    no_candidate = scores.clone()
    no_candidate[entity_node(0), 1 + 2:] = NEG
    with pytest.raises(ValueError, match=r"E966\] gold_clusters\[0\]: .* entity 0"):
        mtt_loss(no_candidate, [GoldCluster((0, 1), 0)], 2)
    # NIL cluster without any NIL edge; uncovered mention without NIL edge.
    no_nil = scores.clone()
    no_nil[0, mention_node(0, 2)] = no_nil[0, mention_node(1, 2)] = NEG
    with pytest.raises(ValueError, match=r"E967\] gold_clusters\[0\]"):
        mtt_loss(no_nil, [GoldCluster((0, 1))], 2)
    with pytest.raises(ValueError, match=r"E967\] uncovered mention 0"):
        mtt_loss(no_nil, [GoldCluster((1, 2), 0)], 2)

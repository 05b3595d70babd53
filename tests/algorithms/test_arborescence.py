"""Chu-Liu/Edmonds maximum spanning arborescence (spacy_el.algorithms.arborescence)."""
import itertools
import time
from typing import Optional, Tuple

import numpy as np
import pytest

from spacy_el.algorithms.arborescence import (
    arborescence_score,
    max_spanning_arborescence,
    reachable_from,
)

NEG = -np.inf


def brute_force(scores: np.ndarray, root: int) -> Tuple[float, Optional[np.ndarray]]:
    """Best score over *all* arborescences rooted at ``root`` (None when there is none)."""
    n = len(scores)
    others = [j for j in range(n) if j != root]
    best, best_parents = -np.inf, None
    for choice in itertools.product(range(n), repeat=len(others)):
        parents = np.full(n, -1)
        if any(p == j or not np.isfinite(scores[p, j]) for j, p in zip(others, choice)):
            continue
        parents[others] = choice
        if not is_arborescence(parents, root):
            continue
        total = sum(scores[parents[j], j] for j in others)
        if total > best:
            best, best_parents = total, parents
    return best, best_parents


def is_arborescence(parents: np.ndarray, root: int) -> bool:
    n = len(parents)
    if parents[root] != -1 or any(parents[j] < 0 or parents[j] >= n for j in range(n) if j != root):
        return False
    for j in range(n):  # every node reaches the root in < n steps: no cycle
        x, steps = j, 0
        while x != root:
            x, steps = parents[x], steps + 1
            if steps > n:
                return False
    return True


def random_scores(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "ties":  # few distinct values: many co-optimal trees
        return rng.integers(-2, 3, size=(n, n)).astype(float)
    scores = rng.normal(size=(n, n))
    if kind == "masked":
        scores[rng.random((n, n)) < 0.35] = NEG
    return scores


@pytest.mark.parametrize("kind", ["dense", "masked", "ties"])
def test_matches_brute_force(kind):
    rng = np.random.default_rng({"dense": 0, "masked": 1, "ties": 2}[kind])
    checked = infeasible = 0
    for _ in range(250):
        n = int(rng.integers(1, 7))
        root = int(rng.integers(n))
        scores = random_scores(rng, n, kind)
        best, best_parents = brute_force(scores, root)
        if best_parents is None:
            with pytest.raises(ValueError, match="E032"):
                max_spanning_arborescence(scores, root)
            infeasible += 1
            continue
        parents = max_spanning_arborescence(scores, root)
        assert parents.shape == (n,) and parents.dtype == np.int64
        assert is_arborescence(parents, root)
        assert all(np.isfinite(scores[parents[j], j]) for j in range(n) if j != root)
        assert arborescence_score(scores, parents) == pytest.approx(best, abs=1e-9)
        checked += 1
    assert checked > 100
    if kind == "masked":
        assert infeasible > 0  # the error path was exercised too


def test_ties_are_deterministic():
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores = random_scores(rng, 6, "ties")
        first = max_spanning_arborescence(scores)
        for _ in range(3):
            np.testing.assert_array_equal(max_spanning_arborescence(scores.copy()), first)
    # All-equal scores: the first maximum (lowest parent index) wins every choice.
    np.testing.assert_array_equal(max_spanning_arborescence(np.zeros((4, 4))), [-1, 0, 0, 0])


def test_unique_optimum_equals_brute_force_parents():
    rng = np.random.default_rng(4)
    for _ in range(100):
        n = int(rng.integers(2, 7))
        scores = random_scores(rng, n, "dense")  # continuous: the optimum is unique a.s.
        _, expected = brute_force(scores, 0)
        np.testing.assert_array_equal(max_spanning_arborescence(scores), expected)


def test_matches_networkx():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(5)
    for n in (8, 30, 80):
        scores = rng.normal(size=(n, n))
        scores[rng.random((n, n)) < 0.3] = NEG
        scores[0, 1:] = rng.normal(size=n - 1) - 3.0  # weak root edges force contractions
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n))
        for i, j in zip(*np.nonzero(np.isfinite(scores))):
            if i != j and j != 0:
                graph.add_edge(int(i), int(j), weight=float(scores[i, j]))
        tree = nx.maximum_spanning_arborescence(graph, attr="weight", preserve_attrs=True)
        expected = np.full(n, -1)
        for u, v in tree.edges():
            expected[v] = u
        np.testing.assert_array_equal(max_spanning_arborescence(scores), expected)


def test_root_constraints_and_ignored_entries():
    rng = np.random.default_rng(6)
    scores = rng.normal(size=(5, 5))
    clean = scores.copy()
    np.fill_diagonal(clean, NEG)
    clean[:, 2] = NEG
    # Edges into the root and self-loops are ignored even when they carry the best scores.
    scores[:, 2] = 1e6
    np.fill_diagonal(scores, 1e6)
    parents = max_spanning_arborescence(scores, root=2)
    assert parents[2] == -1
    assert is_arborescence(parents, 2)
    best, expected = brute_force(clean, 2)
    np.testing.assert_array_equal(parents, expected)
    assert arborescence_score(clean, parents) == pytest.approx(best)
    # Negative root index works like Python indexing.
    np.testing.assert_array_equal(max_spanning_arborescence(scores, root=-3), parents)


def test_cycle_contraction_example():
    # 1 <-> 2 is the mutual best pair; the root enters it more cheaply at 2 than at 1.
    scores = np.full((4, 4), NEG)
    scores[1, 2] = scores[2, 1] = 10.0
    scores[0, 1], scores[0, 2] = 1.0, 3.0
    scores[2, 3], scores[1, 3] = 5.0, 4.0
    np.testing.assert_array_equal(max_spanning_arborescence(scores), [-1, 2, 0, 2])


def test_nested_cycles():
    # Two 2-cycles that, once contracted, form a cycle of supernodes: exercises nested expansion.
    scores = np.full((5, 5), NEG)
    scores[1, 2] = scores[2, 1] = 10.0
    scores[3, 4] = scores[4, 3] = 10.0
    scores[2, 3], scores[4, 1] = 5.0, 6.0
    scores[0, 1], scores[0, 3] = 0.0, 0.5
    best, expected = brute_force(scores, 0)
    parents = max_spanning_arborescence(scores)
    np.testing.assert_array_equal(parents, expected)
    assert arborescence_score(scores, parents) == pytest.approx(best)


def test_errors():
    with pytest.raises(ValueError, match="E027"):
        max_spanning_arborescence(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="E027"):
        max_spanning_arborescence(np.zeros(3))
    with pytest.raises(ValueError, match="E028"):
        max_spanning_arborescence(np.zeros((0, 0)))
    with pytest.raises(ValueError, match="E029"):
        max_spanning_arborescence(np.zeros((3, 3)), root=3)
    with pytest.raises(ValueError, match="E031.*NaN"):
        max_spanning_arborescence(np.array([[0.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"E031.*\+inf"):
        max_spanning_arborescence(np.array([[0.0, np.inf], [0.0, 0.0]]))
    # Node 2 has no incoming edge at all.
    no_in = np.zeros((3, 3))
    no_in[:, 2] = NEG
    with pytest.raises(ValueError, match=r"E032.* 1 node.* root 0 \(1 of them"):
        max_spanning_arborescence(no_in)
    # Nodes 2 and 3 only point at each other: every node has a parent, yet no tree exists.
    island = np.full((4, 4), NEG)
    island[0, 1] = island[2, 3] = island[3, 2] = 0.0
    with pytest.raises(ValueError, match=r"E032.* 2 node.* root 0 \(0 of them.*\[2, 3\]"):
        max_spanning_arborescence(island)


def test_trivial_sizes_and_input_untouched():
    np.testing.assert_array_equal(max_spanning_arborescence(np.zeros((1, 1))), [-1])
    np.testing.assert_array_equal(max_spanning_arborescence(np.array([[0.0, 2.0], [5.0, 0.0]])), [-1, 0])
    scores = np.arange(9, dtype=np.int32).reshape(3, 3)  # integer input is accepted
    before = scores.copy()
    max_spanning_arborescence(scores)
    np.testing.assert_array_equal(scores, before)


def test_reachable_from():
    adjacency = np.zeros((5, 5), dtype=bool)
    adjacency[0, 1] = adjacency[1, 2] = adjacency[3, 4] = True
    np.testing.assert_array_equal(reachable_from(adjacency, 0), [True, True, True, False, False])
    np.testing.assert_array_equal(reachable_from(adjacency, 3), [False, False, False, True, True])


def test_large_graphs_complete():
    """Sanity, not a benchmark: a dense 1000-node graph (and a cycle-heavy one) are solved."""
    rng = np.random.default_rng(7)
    n = 1000
    dense = rng.normal(size=(n, n))
    symmetric = dense + dense.T  # mutual best pairs everywhere: many contractions
    symmetric[0, 1:] -= 20.0
    for scores in (dense, symmetric):
        start = time.perf_counter()
        parents = max_spanning_arborescence(scores)
        assert time.perf_counter() - start < 30.0
        assert is_arborescence(parents, 0)
        # Local optimality certificate that holds for every optimum: re-hanging any node on a
        # better parent that keeps the tree acyclic cannot improve it (checked on a sample).
        for j in rng.choice(np.arange(1, n), size=20, replace=False):
            for i in rng.choice(n, size=20, replace=False):
                if i == j or scores[i, j] <= scores[parents[j], j]:
                    continue
                moved = parents.copy()
                moved[j] = i
                assert not is_arborescence(moved, 0)

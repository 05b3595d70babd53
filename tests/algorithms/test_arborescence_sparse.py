"""The maximum spanning arborescence over an edge list (linear memory) against the dense Chu-Liu/Edmonds."""
import numpy as np
import pytest

from spacy_el.algorithms.arborescence import (
    arborescence_score, max_spanning_arborescence, max_spanning_arborescence_sparse,
)


def random_graph(rng, n, integer):
    scores = rng.integers(-3, 3, size=(n, n)).astype(float) if integer else rng.normal(size=(n, n))
    scores[rng.random((n, n)) > rng.uniform(0.1, 1.0)] = -np.inf
    scores[0, 1:] = np.where(np.isfinite(scores[0, 1:]), scores[0, 1:], rng.normal(size=n - 1) - 2)
    return scores


def as_edges(scores):
    tails, heads = np.nonzero(np.isfinite(scores))
    return tails, heads, scores[tails, heads]


@pytest.mark.parametrize("integer", [False, True])
def test_the_sparse_tree_is_a_best_tree_and_the_dense_one_without_ties(integer):
    rng = np.random.default_rng(int(integer))
    for _ in range(400):
        n = int(rng.integers(1, 20))
        scores = random_graph(rng, n, integer)
        dense = max_spanning_arborescence(scores)
        sparse = max_spanning_arborescence_sparse(n, *as_edges(scores))
        finite = np.where(np.isfinite(scores), scores, -1e9)
        assert sparse[0] == -1 and np.isfinite(scores[sparse[1:], np.arange(1, n)]).all()
        assert arborescence_score(finite, sparse) == pytest.approx(arborescence_score(finite, dense))
        if not integer:  # continuous scores have one best tree
            np.testing.assert_array_equal(sparse, dense)


def test_a_tree_needs_every_node_reachable_and_finite_scores():
    with pytest.raises(ValueError, match="E032"):
        max_spanning_arborescence_sparse(3, [0], [1], [1.0])
    with pytest.raises(ValueError, match="E031"):
        max_spanning_arborescence_sparse(2, [0], [1], [np.nan])
    with pytest.raises(ValueError, match="E976"):
        max_spanning_arborescence_sparse(2, [0], [5], [1.0])
    with pytest.raises(ValueError, match="E975"):
        max_spanning_arborescence_sparse(2, [0, 1], [1], [1.0])
    # self-loops, edges into the root and -inf edges are ignored
    parents = max_spanning_arborescence_sparse(3, [0, 1, 2, 1, 0], [1, 1, 0, 2, 2], [0.0, 9.0, 9.0, 1.0, -np.inf])
    np.testing.assert_array_equal(parents, [-1, 0, 1])

"""Gold-candidate dropout (spacy_el.algorithms.candidate_dropout): which mentions lose their gold entity."""
import numpy as np
import pytest

from spacy_el.algorithms.candidate_dropout import hidden_gold_candidates, hide_candidates

# Two linked clusters (rows 7 and 9), a NIL cluster and a linked singleton.
GOLD = [([(0, 1), (5, 6), (9, 10)], 7), ([(2, 3), (12, 13)], 9), ([(3, 4), (14, 15)], None), ([(20, 21)], 4)]


def everyone_has_it(mention, row):
    return True


def test_rate_zero_hides_nothing():
    assert hidden_gold_candidates(GOLD, everyone_has_it, 0.0, np.random.default_rng(0)) == {}


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_rate_outside_zero_one_is_refused(rate):
    with pytest.raises(ValueError, match="E004"):
        hidden_gold_candidates(GOLD, everyone_has_it, rate, np.random.default_rng(0))


def test_each_linked_cluster_keeps_its_entity_somewhere_and_nil_clusters_and_singletons_are_left_alone():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        hidden = hidden_gold_candidates(GOLD, everyone_has_it, 0.9, rng)
        for mentions, row in GOLD[:2]:
            assert sum(m in hidden for m in mentions) < len(mentions)
            assert all(hidden[m] == row for m in mentions if m in hidden)
        assert not set(hidden) & {(3, 4), (14, 15), (20, 21)}
        seen |= set(hidden)
    assert seen == {(0, 1), (5, 6), (9, 10), (2, 3), (12, 13)}


def test_only_mentions_that_have_the_entity_can_lose_it_and_a_lone_holder_keeps_it():
    rng = np.random.default_rng(1)
    holds = {(0, 1), (5, 6), (2, 3)}  # cluster 9: only (2, 3) has the entity -> must keep it
    for _ in range(100):
        hidden = hidden_gold_candidates(GOLD, lambda m, row: m in holds, 0.5, rng)
        assert set(hidden) <= {(0, 1), (5, 6)} and len(hidden) <= 1


def test_the_rate_is_roughly_the_share_hidden():
    rng = np.random.default_rng(2)
    gold = [([(i, i + 1) for i in range(0, 2000, 2)], 3)]
    hidden = hidden_gold_candidates(gold, everyone_has_it, 0.2, rng)
    assert 150 < len(hidden) < 250


def test_hide_candidates_removes_the_row_and_packs_the_rest_left():
    rows = np.array([[5, 7, 2], [7, -1, -1], [1, 2, -1]], dtype=np.int64)
    vectors = np.arange(18, dtype=np.float32).reshape(3, 3, 2)
    priors = np.array([[0.5, 0.3, 0.2], [1.0, 0, 0], [0.6, 0.4, 0]], dtype=np.float32)
    new_rows, new_vectors, new_priors = hide_candidates(rows, vectors, priors, {0: 7, 1: 7, 2: 7})
    assert new_rows.tolist() == [[5, 2, -1], [-1, -1, -1], [1, 2, -1]]
    assert np.allclose(new_priors, [[0.5, 0.2, 0], [0, 0, 0], [0.6, 0.4, 0]])
    assert new_vectors[0].tolist() == [[0, 1], [4, 5], [0, 0]] and not new_vectors[1].any()
    assert (new_vectors[2] == vectors[2]).all()
    assert rows[0].tolist() == [5, 7, 2], "the inputs are not modified"

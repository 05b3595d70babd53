"""Joint coref + EL scoring model, losses and decoding (spacy_el.ml.joint_coref_linker.scorer, .losses, .decoding)."""
import math

import numpy as np
import pytest
import torch

from spacy_el.algorithms.arborescence import arborescence_score, max_spanning_arborescence
from spacy_el.ml.joint_coref_linker.decoding import decode
from spacy_el.ml.joint_coref_linker.losses import (
    GoldMentionCluster,
    compute_loss,
    coref_loss,
    finite_coref,
    global_loss,
    graph_clusters,
    link_loss,
    local_loss,
)
from spacy_el.ml.joint_coref_linker.matrix_tree import GoldCluster, mtt_loss
from spacy_el.ml.joint_coref_linker.scorer import MODES, JointCorefScorer, JointScores, bucket_distance

NEG = float("-inf")


# Exact float comparisons: one torch thread, as set by the conftest fixture.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def lse(*xs: float) -> float:
    top = max(xs)
    return top + math.log(sum(math.exp(x - top) for x in xs))


def toy_scores() -> JointScores:
    """3 mentions, 2 candidate slots; hand-picked scores (child-first blocks)."""
    coref = torch.tensor([[NEG, 1.2, -0.2], [1.5, NEG, 0.4], [-0.3, 0.9, NEG]], dtype=torch.float64)
    return JointScores(
        mention_scores=torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64),
        coref_scores=coref,
        link_scores=torch.tensor([[1.0, NEG], [0.3, 2.0], [NEG, NEG]], dtype=torch.float64),
        nil_scores=torch.tensor([0.5, -1.0, 0.2], dtype=torch.float64),
        candidate_mask=torch.tensor([[True, False], [True, True], [False, False]]),
        candidate_entity_ids=torch.tensor([[7, -1], [7, 9], [-1, -1]]),
    )


TOY_GOLD = [GoldMentionCluster((0, 1), 7), GoldMentionCluster((2,), None)]


# ------------------------------------------------------------------------------------------
# Six mentions in two clusters, for the model tests
# ------------------------------------------------------------------------------------------

M, D, E, C = 6, 12, 6, 3
GOLD6 = [GoldMentionCluster((0, 2, 4), 7), GoldMentionCluster((1, 3, 5), None)]


def six_mentions(first_has_entity: bool):
    """Fixed random span embeddings of 6 mentions; cluster {0, 2, 4} -> entity 7, {1, 3, 5} NIL.

    Mention 5 has no candidate; the NIL mentions have distractors. Without ``first_has_entity``,
    entity 7 is only a candidate of the later mentions 2 and 4 (the case Local cannot solve).
    """
    gen = torch.Generator().manual_seed(0)
    span_embs = torch.randn(M, D, generator=gen)
    vectors = torch.randn(M, C, E, generator=gen)
    ids = torch.tensor([[7 if first_has_entity else 3, 5, -1], [4, -1, -1], [7, 3, -1],
                        [5, -1, -1], [9, 7, 4], [-1, -1, -1]])
    starts = torch.arange(M) * 3
    return span_embs, starts, vectors, ids >= 0, ids


def small_model(**kwargs) -> JointCorefScorer:
    torch.manual_seed(1)
    return JointCorefScorer(D, E, ffnn=24, entity_proj=12, distance_width=6, **kwargs)


def train(model, inputs, mode, steps=200, lr=1e-2):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = compute_loss(model(*inputs), GOLD6, mode)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return float(loss.detach())


# ------------------------------------------------------------------------------------------
# Components
# ------------------------------------------------------------------------------------------


def test_bucket_distance_lee_buckets():
    d = torch.tensor([0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 1000])
    assert bucket_distance(d).tolist() == [0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]


def test_scorer_shapes_masks_and_bounds():
    inputs = six_mentions(True)
    model = small_model(score_bound=3.0)
    scores = model(*inputs)
    mask, ids = inputs[3], inputs[4]
    assert scores.mention_scores.shape == (M,)
    assert scores.coref_scores.shape == (M, M)
    assert scores.link_scores.shape == (M, C)
    assert scores.nil_scores.shape == (M,)
    assert torch.all(torch.isneginf(scores.link_scores[~mask]))
    assert torch.all(torch.isfinite(scores.link_scores[mask]))
    assert torch.all(torch.isneginf(scores.coref_scores.diagonal()))
    off = ~torch.eye(M, dtype=torch.bool)
    assert torch.all(torch.isfinite(scores.coref_scores[off]))
    for block in (scores.coref_scores[off], scores.link_scores[mask], scores.nil_scores):
        assert torch.all(block.abs() <= 3.0)
    graph = scores.graph()
    assert graph.entity_ids.tolist() == [3, 4, 5, 7, 9]
    n = 1 + 5 + M
    assert graph.scores.shape == (n, n)
    for i in range(M):
        for e, kb_id in enumerate(graph.entity_ids.tolist()):
            edge = graph.scores[1 + e, 1 + 5 + i]
            slot = (ids[i] == kb_id).nonzero()
            if slot.numel():
                assert edge == scores.link_scores[i, slot[0, 0]]
            else:  # not a candidate of mention i: no edge
                assert torch.isneginf(edge)
        assert graph.scores[0, 1 + 5 + i] == scores.nil_scores[i]
        for j in range(M):  # parent-first: edge j -> i is Phi_cl(s_i, s_j)
            if i != j:
                assert graph.scores[1 + 5 + j, 1 + 5 + i] == scores.coref_scores[i, j]
    assert torch.all(graph.scores[0, 1:6] == 0)  # root -> entity: 0


def test_score_composition_eqs_3_and_5():
    inputs = six_mentions(True)
    model = small_model(score_bound=None, nil_score="zero")
    scores = model(*inputs)
    span_embs, starts = inputs[0], inputs[1]
    p = scores.mention_scores
    distances = (torch.arange(M)[:, None] - torch.arange(M)[None, :]).abs()
    pair = model.pair_scores(span_embs, distances)
    # Reference eq. (4) with an explicit concatenation [g_i; g_j; g_i * g_j; phi_ij].
    gi = span_embs[:, None, :].expand(M, M, D)
    gj = span_embs[None, :, :].expand(M, M, D)
    feats = torch.cat([gi, gj, gi * gj, model.distance_embedding(bucket_distance(distances))], dim=-1)
    ref = model.coref_tail(model.coref_first(feats)).squeeze(-1)
    assert torch.allclose(pair, ref, atol=1e-5)
    off = ~torch.eye(M, dtype=torch.bool)
    assert torch.allclose(scores.coref_scores[off], (p[:, None] + p[None, :] + pair)[off], atol=1e-5)
    link_ref = p[:, None] + model.link_logits(span_embs, inputs[2].masked_fill(~inputs[3][..., None], 0.0))
    assert torch.allclose(scores.link_scores[inputs[3]], link_ref[inputs[3]], atol=1e-5)
    assert torch.allclose(scores.nil_scores, p)  # nil_score="zero": Phi_cl(s_i, r) = Phi_p(s_i)
    # Token distances only change the coref block.
    tok = JointCorefScorer(D, E, ffnn=24, entity_proj=12, distance_width=6, distance="tokens")
    assert tok(*inputs).coref_scores.shape == (M, M)
    assert starts.shape == (M,)


def test_prior_feature_adds_weighted_log_prior_to_links_only():
    inputs = six_mentions(True)
    mask = inputs[3]
    log_prior = torch.log(torch.rand(M, C, generator=torch.Generator().manual_seed(3)).clamp(min=1e-3))
    plain = small_model(score_bound=None)(*inputs)
    with_prior = small_model(score_bound=None, prior_feature=True)  # same seed: same weights + w_p = 1
    scores = with_prior(*inputs, log_prior)
    assert torch.allclose(scores.link_scores[mask], (plain.link_scores + log_prior)[mask], atol=1e-5)
    assert torch.equal(scores.nil_scores, plain.nil_scores)
    assert torch.equal(scores.coref_scores, plain.coref_scores)
    with torch.no_grad():
        with_prior.prior_weight.fill_(0.5)
    half = with_prior(*inputs, log_prior)
    assert torch.allclose(half.link_scores[mask], (plain.link_scores + 0.5 * log_prior)[mask], atol=1e-5)
    with pytest.raises(ValueError, match="E948"):
        with_prior(*inputs)


@pytest.mark.parametrize("refinement", ["antecedent_averaging", "entity_equalization"])
def test_refinement_rescores_only_coreference(refinement):
    inputs = six_mentions(True)
    plain = small_model()
    refined = small_model(refinement=refinement)
    refined.load_state_dict(plain.state_dict(), strict=False)
    a, b = plain(*inputs), refined(*inputs)
    assert torch.equal(a.mention_scores, b.mention_scores)
    assert torch.equal(a.link_scores, b.link_scores)
    assert torch.equal(a.nil_scores, b.nil_scores)
    assert not torch.allclose(a.coref_scores, b.coref_scores)
    global_loss(b, GOLD6).backward()
    assert refined.refinement.gate.weight.grad is not None


def test_forward_validates_inputs():
    span_embs, starts, vectors, mask, ids = six_mentions(True)
    model = small_model()
    with pytest.raises(ValueError, match="E947"):
        model(span_embs, starts.flip(0), vectors, mask, ids)
    with pytest.raises(ValueError, match=r"E922\] candidate_mask"):
        model(span_embs, starts, vectors, mask.long(), ids)
    with pytest.raises(ValueError, match=r"E922\] span_embs"):
        model(span_embs[:, :3], starts, vectors, mask, ids)
    with pytest.raises(ValueError, match=r"E021\] Unknown refinement"):
        JointCorefScorer(D, E, refinement="bogus")
    scores = model(span_embs, starts, vectors, mask)  # no ids: the graph cannot be built
    with pytest.raises(ValueError, match="E944"):
        global_loss(scores, GOLD6)
    coref_loss(scores, GOLD6)  # coref mode needs no entities
    dup = ids.clone()
    dup[4, 2] = 7
    with pytest.raises(ValueError, match="E946"):
        model(span_embs, starts, vectors, mask, dup).graph()


# ------------------------------------------------------------------------------------------
# Losses
# ------------------------------------------------------------------------------------------


def test_local_loss_hand_computed():
    s = toy_scores()
    # Mention 0: Y = {root 0.5, e7 1.0}; first of its cluster, e7 is a candidate -> correct {e7}.
    l0 = lse(0.5, 1.0) - 1.0
    # Mention 1: Y = {root -1, e7 0.3, e9 2.0, m0 1.5}; correct {e7, m0}.
    l1 = lse(-1.0, 0.3, 2.0, 1.5) - lse(0.3, 1.5)
    # Mention 2: Y = {root 0.2, m0 -0.3, m1 0.9}; NIL singleton -> correct {root}.
    l2 = lse(0.2, -0.3, 0.9) - 0.2
    assert float(local_loss(s, TOY_GOLD)) == pytest.approx(l0 + l1 + l2, abs=1e-12)
    # Standalone coref (no entities): root is correct for mention 0 now.
    c0 = 0.0  # only the root
    c1 = lse(-1.0, 1.5) - 1.5
    assert float(coref_loss(s, TOY_GOLD)) == pytest.approx(c0 + c1 + l2, abs=1e-12)
    # Standalone EL: softmax over candidates and NIL.
    k0 = lse(0.5, 1.0) - 1.0
    k1 = lse(-1.0, 0.3, 2.0) - 0.3
    k2 = 0.0  # no candidate: NIL is the only option
    assert float(link_loss(s, TOY_GOLD)) == pytest.approx(k0 + k1 + k2, abs=1e-12)


def test_local_dummy_rule_when_entity_not_a_candidate():
    s = toy_scores()
    # Gold entity 9 is a candidate of mention 1 only: mention 0 starts the cluster -> root correct.
    gold = [GoldMentionCluster((0, 1), 9), GoldMentionCluster((2,), None)]
    l0 = lse(0.5, 1.0) - 0.5
    l1 = lse(-1.0, 0.3, 2.0, 1.5) - lse(2.0, 1.5)
    l2 = lse(0.2, -0.3, 0.9) - 0.2
    assert float(local_loss(s, gold)) == pytest.approx(l0 + l1 + l2, abs=1e-12)


def test_global_loss_equals_mtt_loss_on_assembled_graph():
    s = toy_scores()
    graph = s.graph()
    assert graph.entity_ids.tolist() == [7, 9]
    loss = global_loss(s, TOY_GOLD)
    expected = mtt_loss(graph.scores, [GoldCluster((0, 1), 0), GoldCluster((2,), None)], 2)
    assert torch.isfinite(loss) and float(loss) >= 0
    assert float(loss) == pytest.approx(float(expected), abs=1e-12)
    # An entity that is a candidate of none of the cluster's mentions: the cluster is NIL.
    nil_gold = [GoldMentionCluster((0, 1), 123), GoldMentionCluster((2,), None)]
    expected_nil = mtt_loss(graph.scores, [GoldCluster((0, 1), None), GoldCluster((2,), None)], 2)
    assert float(global_loss(s, nil_gold)) == pytest.approx(float(expected_nil), abs=1e-12)
    # Uncovered mentions are NIL singletons.
    partial = [GoldMentionCluster((0, 1), 7)]
    assert float(global_loss(s, partial)) == pytest.approx(float(expected), abs=1e-12)


def test_global_loss_on_model_scores_is_differentiable():
    inputs = six_mentions(False)
    model = small_model()
    scores = model(*inputs)
    loss = global_loss(scores, GOLD6)
    graph = scores.graph()
    gold = [GoldCluster((0, 2, 4), int((graph.entity_ids == 7).nonzero())), GoldCluster((1, 3, 5), None)]
    assert float(loss.detach()) == pytest.approx(float(mtt_loss(graph.scores.detach(), gold, graph.n_entities)), rel=1e-6)
    loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters() if p.requires_grad)


def test_gold_validation_and_mode_errors():
    s = toy_scores()
    with pytest.raises(ValueError, match="E939"):
        local_loss(s, [GoldMentionCluster((0, 5), 7)])
    with pytest.raises(ValueError, match="E940"):
        local_loss(s, [GoldMentionCluster((0, 1), 7), GoldMentionCluster((1,), None)])
    with pytest.raises(ValueError, match=r"E021\] Unknown mode"):
        compute_loss(s, TOY_GOLD, "joint")
    with pytest.raises(ValueError, match=r"E021\] Unknown mode"):
        decode(s, "joint")
    for mode in MODES:
        assert torch.isfinite(compute_loss(s, TOY_GOLD, mode))


# ------------------------------------------------------------------------------------------
# Decoding
# ------------------------------------------------------------------------------------------


def test_decode_toy_all_modes():
    s = toy_scores()
    # Local: m0 -> e7 (1.0 > 0.5); m1 -> e9 (2.0); m2 -> m1 (0.9). Following mentions are ignored.
    local = decode(s, "local")
    assert local.parent_of(0) == ("entity", 7)
    assert local.parent_of(1) == ("entity", 9)
    assert local.parent_of(2) == ("mention", 1)
    assert local.clusters == [[0], [1, 2]] and local.links == [7, 9]
    coref = decode(s, "coref")
    assert coref.parents.tolist() == [0, 1, 2] and coref.clusters == [[0, 1, 2]] and coref.links == [None]
    link = decode(s, "link")
    assert link.clusters == [[0], [1], [2]] and link.links == [7, 9, None]
    # Global: every node takes its best incoming edge (no cycle, so that is the maximum tree):
    # m0 <- m1 (coref[0, 1] = 1.2, a *following* mention, beats e7 1.0), m1 <- e9, m2 <- m1.
    glob = decode(s, "global")
    assert glob.parent_of(1) == ("entity", 9)
    assert glob.parent_of(0) == ("mention", 1)
    assert glob.parent_of(2) == ("mention", 1)
    assert glob.clusters == [[0, 1, 2]] and glob.links == [9]


def test_decode_merges_mentions_below_one_entity():
    s = toy_scores()
    s.coref_scores = torch.full((3, 3), -5.0, dtype=torch.float64).fill_diagonal_(NEG)
    s.link_scores = torch.tensor([[3.0, NEG], [3.0, 0.0], [NEG, NEG]], dtype=torch.float64)
    for mode in ("local", "global"):
        out = decode(s, mode)
        assert out.clusters == [[0, 1], [2]] and out.links == [7, None]


def test_empty_document():
    model = small_model()
    scores = model(torch.zeros(0, D), torch.zeros(0, dtype=torch.long), torch.zeros(0, 2, E),
                   torch.zeros(0, 2, dtype=torch.bool), torch.zeros(0, 2, dtype=torch.long))
    for mode in MODES:
        assert float(compute_loss(scores, [], mode).detach()) == 0.0
        out = decode(scores, mode)
        assert out.clusters == [] and out.links == []


# ------------------------------------------------------------------------------------------
# Overfitting: 200 Adam steps recover the gold structure
# ------------------------------------------------------------------------------------------


def test_overfit_global_links_through_a_later_mention():
    # Entity 7 is not a candidate of the cluster's first mention: Global links it anyway.
    inputs = six_mentions(first_has_entity=False)
    model = small_model()
    final = train(model, inputs, "global")
    assert final < 0.05
    out = decode(model(*inputs), "global")
    assert out.clusters == [[0, 2, 4], [1, 3, 5]]
    assert out.links == [7, None]


def test_overfit_local():
    inputs = six_mentions(first_has_entity=True)
    model = small_model()
    final = train(model, inputs, "local")
    assert final < 0.05
    out = decode(model(*inputs), "local")
    assert out.clusters == [[0, 2, 4], [1, 3, 5]]
    assert out.links == [7, None]


def test_standalone_modes_train_and_decode():
    inputs = six_mentions(first_has_entity=False)
    coref_model = small_model(refinement="entity_equalization")
    train(coref_model, inputs, "coref", steps=60, lr=2e-2)
    out = decode(coref_model(*inputs), "coref")
    assert out.clusters == [[0, 2, 4], [1, 3, 5]] and out.links == [None, None]
    link_model = small_model()
    train(link_model, inputs, "link", steps=60, lr=2e-2)
    out = decode(link_model(*inputs), "link")
    assert out.clusters == [[i] for i in range(M)]
    # Gold entity 7 where it is a candidate (mentions 2, 4), NIL elsewhere; mention 5 has none.
    assert out.links == [None, None, 7, None, 7, None]
    untrained = decode(small_model()(*inputs), "link")
    assert untrained.links[5] is None and untrained.parent_of(5) == ("root", None)


# ------------------------------------------------------------------------------------------
# Antecedent window (max_antecedents, Lee et al. 2017/2018)
# ------------------------------------------------------------------------------------------


def ten_mentions():
    gen = torch.Generator().manual_seed(3)
    m = 10
    span_embs = torch.randn(m, D, generator=gen, dtype=torch.float64)
    vectors = torch.randn(m, C, E, generator=gen, dtype=torch.float64)
    ids = torch.tensor([[7, 5, -1], [4, -1, -1], [7, 3, -1], [5, -1, -1], [9, 7, 4],
                        [-1, -1, -1], [7, -1, -1], [3, 4, -1], [-1, -1, -1], [9, -1, -1]])
    starts = torch.tensor([0, 2, 3, 7, 11, 12, 20, 33, 34, 70])
    return span_embs, starts, vectors, ids >= 0, ids


@pytest.mark.parametrize("refinement", ["none", "antecedent_averaging"])
@pytest.mark.parametrize("distance", ["spans", "tokens"])
def test_window_at_least_m_minus_1_is_the_unwindowed_model(refinement, distance):
    inputs = ten_mentions()
    full = small_model(refinement=refinement, distance=distance).double()
    for k in (9, 10, 1000):
        windowed = small_model(refinement=refinement, distance=distance, max_antecedents=k).double()
        windowed.load_state_dict(full.state_dict())
        a, b = full(*inputs), windowed(*inputs)
        for name in ("mention_scores", "coref_scores", "link_scores", "nil_scores"):
            assert torch.equal(getattr(a, name), getattr(b, name)), (k, name)


@pytest.mark.parametrize("distance", ["spans", "tokens"])
def test_window_k2_drops_far_pairs_in_both_orders(distance):
    inputs = ten_mentions()
    full = small_model(distance=distance).double()
    windowed = small_model(distance=distance, max_antecedents=2).double()
    windowed.load_state_dict(full.state_dict())
    a, b = full(*inputs), windowed(*inputs)
    i, j = torch.meshgrid(torch.arange(10), torch.arange(10), indexing="ij")
    near = ((i - j).abs() <= 2) & (i != j)
    assert torch.all(torch.isneginf(b.coref_scores[~near]))  # far pairs and the diagonal, both orders
    assert torch.all(torch.isfinite(b.coref_scores[near]))
    torch.testing.assert_close(b.coref_scores[near], a.coref_scores[near], rtol=1e-12, atol=1e-12)
    for name in ("mention_scores", "link_scores", "nil_scores"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    # Losses and decoding work on the graph with missing mention -> mention edges.
    for mode in MODES:
        loss = compute_loss(b, GOLD_TEN, mode)
        assert torch.isfinite(loss)
        loss.backward(retain_graph=True)
        decoded = decode(b, mode)
        for child, parent in enumerate(decoded.parents.tolist()):
            kind, target = decoded.parent_of(child)
            if kind == "mention":
                assert abs(target - child) <= 2, (mode, child, target)
    assert all(torch.isfinite(p.grad).all() for p in windowed.parameters() if p.grad is not None)


# With K = 2: (0, 6) reaches entity 7 from both parts; (2, 5) splits and {5} has no candidate 3 (NIL
# part); the NIL cluster (1, 3, 8) splits into {1, 3} and {8}; mention 7 is an uncovered NIL singleton.
GOLD_TEN = [GoldMentionCluster((0, 6), 7), GoldMentionCluster((2, 5), 3), GoldMentionCluster((1, 3, 8), None),
            GoldMentionCluster((4, 9), 9)]


def test_window_splits_unreachable_gold_clusters():
    inputs = ten_mentions()
    model = small_model(max_antecedents=2).double()
    scores = model(*inputs)
    graph = scores.graph()
    clusters = graph_clusters(GOLD_TEN, graph, finite_coref(scores.coref_scores))
    ent = {int(e): i for i, e in enumerate(graph.entity_ids.tolist())}
    got = sorted((tuple(sorted(c.mentions)), c.entity) for c in clusters)
    assert got == sorted([((0, 6), ent[7]), ((2,), ent[3]), ((5,), None), ((1, 3), None), ((8,), None),
                          ((4, 9), ent[9])])
    # Unwindowed: nothing is split.
    full = small_model().double()(*inputs)
    assert finite_coref(full.coref_scores) is None


def test_window_never_scores_all_pairs():
    """M = 3000, K = 10: FFNN_C sees at most M (2K + 1) pairs (no M x M x H tensor)."""
    m, d, k = 3000, 16, 10
    torch.manual_seed(0)
    model = JointCorefScorer(d, 8, ffnn=16, entity_proj=8, distance_width=4, max_antecedents=k)
    seen, biggest = [], []  # pairs per FFNN_C call, and the size of its hidden input
    model.coref_tail.register_forward_hook(lambda mod, inp, out: seen.append(inp[0].numel() // inp[0].shape[-1]))
    model.coref_tail.register_forward_hook(lambda mod, inp, out: biggest.append(inp[0].numel()))
    span_embs = torch.randn(m, d)
    with torch.no_grad():
        scores = model(span_embs, torch.arange(m) * 2, torch.randn(m, 1, 8), torch.ones(m, 1, dtype=torch.bool),
                       torch.arange(m)[:, None])
    assert 0 < sum(seen) <= m * (2 * k + 1)
    assert max(biggest) < m * m  # no block holds an M x M x H hidden tensor (M x M x H = 144M floats)
    coref = scores.coref_scores
    assert coref.shape == (m, m)
    n_finite = int(torch.isfinite(coref).sum())
    assert n_finite == 2 * sum(min(k, m - 1 - i) for i in range(m))
    band = torch.isfinite(coref).nonzero()
    assert int((band[:, 0] - band[:, 1]).abs().max()) == k


@pytest.mark.parametrize("seed", range(20))
def test_global_decoding_without_entity_nodes_matches_the_joint_graph(seed):
    """decode("global") drops the entity nodes (module docstring of _global_parents); its tree must
    score exactly as much as Edmonds on the full (1 + E + M) joint graph."""
    gen = torch.Generator().manual_seed(seed)
    m, c = 7, 3
    ids = torch.randint(0, 5, (m, c), generator=gen)
    ids[:, 1] = torch.where(ids[:, 1] == ids[:, 0], -1, ids[:, 1])
    ids[:, 2] = torch.where((ids[:, 2] == ids[:, 0]) | (ids[:, 2] == ids[:, 1]), -1, ids[:, 2])
    ids[seed % m] = -1  # one mention without candidates
    mask = ids >= 0
    coref = torch.randn(m, m, generator=gen, dtype=torch.float64).masked_fill(torch.eye(m, dtype=torch.bool), NEG)
    scores = JointScores(
        mention_scores=torch.zeros(m, dtype=torch.float64), coref_scores=coref,
        link_scores=torch.randn(m, c, generator=gen, dtype=torch.float64).masked_fill(~mask, NEG),
        nil_scores=torch.randn(m, generator=gen, dtype=torch.float64), candidate_mask=mask, candidate_entity_ids=ids,
    )
    full = scores.graph().scores.double().numpy()
    n_entities = full.shape[0] - 1 - m
    best = arborescence_score(full, max_spanning_arborescence(full, root=0))
    decoded = decode(scores, "global")
    parents = np.concatenate([[-1], np.zeros(n_entities, dtype=np.int64), decoded.parents])
    assert arborescence_score(full, parents) == pytest.approx(best, abs=1e-9)


# ------------------------------------------------------------------------------------------
# Coarse-to-fine antecedents (antecedent_pruning="coarse", Lee et al. 2018)
# ------------------------------------------------------------------------------------------


def coarse_twin(full: JointCorefScorer, k: int, **kwargs) -> JointCorefScorer:
    """A coarse-pruned model with ``full``'s weights (and its own, fresh, coarse ones)."""
    model = small_model(max_antecedents=k, antecedent_pruning="coarse", **kwargs).double()
    missing, unexpected = model.load_state_dict(full.state_dict(), strict=False)
    assert set(missing) == {"coarse_child.weight", "coarse_antecedent.weight", "coarse_distance"} and not unexpected
    return model


@pytest.mark.parametrize("refinement", ["none", "entity_equalization"])
def test_coarse_pruning_with_every_pair_in_reach_is_the_unwindowed_model(refinement):
    inputs = ten_mentions()
    full = small_model(refinement=refinement).double()
    a = full(*inputs)
    for k in (9, 1000):
        b = coarse_twin(full, k, refinement=refinement)(*inputs)
        for name in ("mention_scores", "coref_scores", "link_scores", "nil_scores"):
            assert torch.equal(getattr(a, name), getattr(b, name)), (k, name)


@pytest.mark.parametrize("block", [3, 2048])
@pytest.mark.parametrize("distance", ["spans", "tokens"])
def test_coarse_pairs_score_as_the_full_model_plus_their_coarse_part(distance, block, monkeypatch):
    monkeypatch.setattr("spacy_el.ml.joint_coref_linker.scorer.PAIR_BLOCK", block)  # several blocks, or one
    span_embs, starts, *_ = inputs = ten_mentions()
    full = small_model(distance=distance, score_bound=None).double()  # unbounded: the parts add up
    a = full(*inputs).coref_scores
    b = coarse_twin(full, 8, distance=distance, score_bound=None)(*inputs).coref_scores  # W_c = 0: coarse part -bucket
    positions = torch.arange(10) if distance == "spans" else starts
    coarse_part = -bucket_distance((positions[:, None] - positions[None, :]).abs()).double()
    finite = torch.isfinite(b)
    assert int(finite.sum()) == 2 * sum(min(8, i) for i in range(10))  # mention 9 leaves out one of its 9
    torch.testing.assert_close(b[finite], (a + coarse_part)[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block", [3, 256])
@pytest.mark.parametrize("distance", ["spans", "tokens"])
def test_coarse_pruning_scores_each_mentions_k_best_earlier_mentions_in_both_orders(distance, block, monkeypatch):
    monkeypatch.setattr("spacy_el.ml.joint_coref_linker.scorer.RANK_BLOCK", block)  # ranked in several blocks, or one
    span_embs, starts, *_ = inputs = ten_mentions()
    model = small_model(distance=distance, max_antecedents=2, antecedent_pruning="coarse").double()
    with torch.no_grad():
        model.coarse_antecedent.weight.normal_(generator=torch.Generator().manual_seed(5))
    scores = model(*inputs)
    positions = torch.arange(10) if distance == "spans" else starts
    bilinear = model.coarse_child(span_embs) @ model.coarse_antecedent(span_embs).t() / math.sqrt(24)
    ranking = (bilinear + scores.mention_scores[None, :]
               + model.coarse_distance[bucket_distance((positions[:, None] - positions[None, :]).abs())]).detach()
    finite = torch.isfinite(scores.coref_scores)
    for i in range(10):
        chosen = set(sorted(range(i), key=lambda j: -float(ranking[i, j]))[:2])
        assert {j for j in range(i) if finite[i, j]} == chosen  # i's edges to earlier mentions: its choice
    assert torch.equal(finite, finite.t())  # each chosen pair in both orders, nothing else
    rows, cols, coarse = model.coarse_antecedents(span_embs, scores.mention_scores, positions, 2)
    assert bool((rows[1:] >= rows[:-1]).all()) and bool((cols < rows).all())  # children in order
    expected = bilinear + model.coarse_distance[bucket_distance((positions[:, None] - positions[None, :]).abs())]
    torch.testing.assert_close(coarse, expected[rows, cols], rtol=1e-12, atol=1e-12)


def test_coarse_pruning_reaches_an_antecedent_any_distance_back():
    inputs = ten_mentions()
    model = small_model(max_antecedents=1, antecedent_pruning="coarse").double()
    span_embs = inputs[0]
    with torch.no_grad():  # U = u g_9^T, V = u g_0^T: c(9, j) = |u|^2 (g_9 . g_9)(g_0 . g_j) / sqrt(H), best at j = 0
        u = torch.zeros(24, 1, dtype=torch.float64)
        u[0] = 10.0
        model.coarse_child.weight.copy_(u @ span_embs[9][None, :])
        model.coarse_antecedent.weight.copy_(u @ span_embs[0][None, :])
    scores = model(*inputs)
    assert torch.isfinite(scores.coref_scores[9, 0]) and torch.isfinite(scores.coref_scores[0, 9])
    nearest = small_model(max_antecedents=1).double()(*inputs)
    assert torch.isneginf(nearest.coref_scores[9, 0])


@pytest.mark.parametrize("mode", MODES)
def test_coarse_pruning_trains_its_coarse_score_in_every_mode(mode):
    inputs = ten_mentions()
    model = small_model(max_antecedents=2, antecedent_pruning="coarse", refinement="entity_equalization").double()
    loss = compute_loss(model(*inputs), GOLD_TEN, mode)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    if mode != "link":  # the link mode has no mention edges
        assert model.coarse_antecedent.weight.grad.abs().sum() > 0 and model.coarse_distance.grad.abs().sum() > 0
    decode(model(*inputs), mode)


def test_coarse_pruning_learns_antecedents_the_nearest_window_cannot_reach():
    # GOLD6's mentions alternate between two clusters: with K = 1 the nearest window only pairs mentions of
    # different clusters, while the coarse ranking learns to pick the mate two back.
    inputs = six_mentions(first_has_entity=False)
    coarse = small_model(max_antecedents=1, antecedent_pruning="coarse")
    train(coarse, inputs, "coref", steps=200, lr=2e-2)
    assert decode(coarse(*inputs), "coref").clusters == [[0, 2, 4], [1, 3, 5]]
    nearest = small_model(max_antecedents=1)
    train(nearest, inputs, "coref", steps=200, lr=2e-2)
    assert decode(nearest(*inputs), "coref").clusters != [[0, 2, 4], [1, 3, 5]]


@pytest.mark.parametrize("pruning", ["nearest", "coarse"])
def test_a_calls_antecedent_budget_scores_as_a_model_built_with_it_and_leaves_the_model_alone(pruning):
    inputs = ten_mentions()
    model = small_model(max_antecedents=6, antecedent_pruning=pruning, refinement="antecedent_averaging").double()
    if pruning == "coarse":
        with torch.no_grad():
            model.coarse_antecedent.weight.normal_(generator=torch.Generator().manual_seed(5))
    for k in (2, 4, 9):
        built = small_model(max_antecedents=k, antecedent_pruning=pruning, refinement="antecedent_averaging").double()
        built.load_state_dict(model.state_dict())
        a, b = model(*inputs, max_antecedents=k), built(*inputs)
        for name in ("mention_scores", "coref_scores", "link_scores", "nil_scores"):
            assert torch.equal(getattr(a, name), getattr(b, name)), (k, name)
    assert model.max_antecedents == 6
    assert torch.equal(model(*inputs).coref_scores, model(*inputs, max_antecedents=None).coref_scores)
    assert int(torch.isfinite(model(*inputs, max_antecedents=2).coref_scores).sum()) < int(
        torch.isfinite(model(*inputs).coref_scores).sum())


def test_antecedent_pruning_is_validated():
    with pytest.raises(ValueError, match=r"E021\] Unknown antecedent_pruning"):
        small_model(antecedent_pruning="farthest")

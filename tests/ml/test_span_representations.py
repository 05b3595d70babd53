"""Candidate spans, Lee et al. span representations and pruning (spacy_el.ml.joint_coref_linker.span_representations)."""
import itertools
from types import SimpleNamespace

import pytest
import torch

from spacy_el.ml.joint_coref_linker.modules import JointCorefModule
from spacy_el.ml.joint_coref_linker.scorer import JointCorefScorer
from spacy_el.ml.joint_coref_linker.span_representations import SpanEmbedder, enumerate_spans, prune_spans


# Exact float comparisons: one torch thread, as set by the conftest fixture.
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _crosses(a, b) -> bool:
    (s1, e1), (s2, e2) = a, b
    return s1 < s2 < e1 < e2 or s2 < s1 < e2 < e1


# ------------------------------------------------------------------------------------------
# enumerate_spans
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_tokens,max_width", [(5, 3), (2, 5), (1, 1), (7, 7), (0, 3)])
def test_enumerate_spans_counts_and_order(n_tokens, max_width):
    spans = enumerate_spans(n_tokens, max_width)
    expected = sum(n_tokens - w + 1 for w in range(1, min(max_width, n_tokens) + 1))
    assert spans.shape == (expected, 2) and spans.dtype == torch.long
    listed = [tuple(s) for s in spans.tolist()]
    assert listed == sorted(listed)
    assert listed == [(s, e) for s in range(n_tokens) for e in range(s + 1, min(s + max_width, n_tokens) + 1)]


def test_enumerate_spans_respects_sentences():
    sentence_ids = torch.tensor([0, 0, 0, 1, 1, 2])
    spans = enumerate_spans(6, 3, sentence_ids)
    listed = [tuple(s) for s in spans.tolist()]
    # Sentence of 3 tokens: 3 + 2 + 1, of 2 tokens: 2 + 1, of 1 token: 1.
    assert len(listed) == 10
    assert listed == sorted(listed)
    for s, e in listed:
        assert sentence_ids[s] == sentence_ids[e - 1]
    brute = [(s, e) for s in range(6) for e in range(s + 1, min(s + 3, 6) + 1)
             if len(set(sentence_ids[s:e].tolist())) == 1]
    assert listed == brute


def test_enumerate_spans_rejects_bad_input():
    with pytest.raises(ValueError, match="E942"):
        enumerate_spans(3, 2, torch.tensor([1, 0, 0]))
    with pytest.raises(ValueError, match=r"E922\] sentence_ids"):
        enumerate_spans(3, 2, torch.tensor([0, 0]))
    with pytest.raises(ValueError, match=r"E922\] max_width"):
        enumerate_spans(3, 0)


# ------------------------------------------------------------------------------------------
# SpanEmbedder
# ------------------------------------------------------------------------------------------


def test_span_embedder_shapes_and_parts():
    torch.manual_seed(0)
    embedder = SpanEmbedder(width_in=4, max_width=3, width_emb=5, ffnn=6)
    tokens = torch.randn(7, 4)
    spans = enumerate_spans(7, 3)
    g = embedder(tokens, spans)
    assert embedder.out_width == 3 * 4 + 5
    assert g.shape == (spans.shape[0], embedder.out_width)
    assert torch.equal(g[:, :4], tokens[spans[:, 0]])  # x_start
    assert torch.equal(g[:, 4:8], tokens[spans[:, 1] - 1])  # x_end: last token (end exclusive)
    # Single-token spans: the head is the token itself.
    single = (spans[:, 1] - spans[:, 0]) == 1
    assert torch.allclose(g[single, 8:12], tokens[spans[single, 0]])
    assert torch.equal(g[:, 12:], embedder.width_embedding(spans[:, 1] - spans[:, 0] - 1))
    g.sum().backward()
    assert embedder.head_scorer[0].weight.grad is not None
    assert SpanEmbedder(4, 3, width_emb=0)(tokens, spans).shape == (spans.shape[0], 12)
    assert embedder(tokens, spans[:0]).shape == (0, embedder.out_width)


def test_head_attention_only_covers_the_span():
    torch.manual_seed(1)
    embedder = SpanEmbedder(width_in=3, max_width=4, width_emb=2, ffnn=5)
    tokens = torch.randn(8, 3)
    spans = torch.tensor([[2, 5], [0, 1], [5, 8], [3, 4]])
    weights = embedder.head_attention(tokens, spans)
    assert weights.shape == (4, 4)
    widths = spans[:, 1] - spans[:, 0]
    outside = torch.arange(4)[None, :] >= widths[:, None]
    assert torch.all(weights[outside] == 0)
    assert torch.allclose(weights.sum(dim=1), torch.ones(4))
    g = embedder(tokens, spans)
    for t in range(8):
        perturbed = tokens.clone()
        perturbed[t] += 10.0
        g2 = embedder(perturbed, spans)
        for row, (s, e) in enumerate(spans.tolist()):
            if s <= t < e:
                assert not torch.equal(g2[row], g[row])
            else:  # a token outside the span leaves g_i unchanged (exactly)
                assert torch.equal(g2[row], g[row])


def test_span_embedder_rejects_bad_spans():
    embedder = SpanEmbedder(width_in=2, max_width=2, width_emb=2, ffnn=3)
    tokens = torch.randn(5, 2)
    with pytest.raises(ValueError, match="E943"):
        embedder(tokens, torch.tensor([[0, 3]]))
    with pytest.raises(ValueError, match="E941"):
        embedder(tokens, torch.tensor([[2, 2]]))
    with pytest.raises(ValueError, match="E941"):
        embedder(tokens, torch.tensor([[4, 6]]))
    with pytest.raises(ValueError, match=r"E922\] token_vectors"):
        embedder(torch.randn(5, 3), torch.tensor([[0, 1]]))


# ------------------------------------------------------------------------------------------
# prune_spans
# ------------------------------------------------------------------------------------------


def _reference_prune(scores, spans, n_keep):
    order = sorted(range(len(spans)), key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if len(kept) == n_keep:
            break
        if not any(_crosses(spans[i], spans[j]) for j in kept):
            kept.append(i)
    return sorted(kept, key=lambda i: (spans[i], i))


def test_prune_spans_hand_example():
    spans = torch.tensor([[0, 2], [1, 3], [0, 3], [2, 4], [3, 4]])
    scores = torch.tensor([3.0, 2.0, 1.0, 0.5, 0.4])
    # (1, 3) crosses (0, 2); (0, 3) contains (0, 2): nested is fine; (2, 4) crosses (0, 3).
    kept = prune_spans(scores, spans, 10)
    assert [tuple(spans[i].tolist()) for i in kept] == [(0, 2), (0, 3), (3, 4)]
    assert prune_spans(scores, spans, 2).tolist() == [0, 2]
    assert prune_spans(scores, spans, 0).numel() == 0


@pytest.mark.parametrize("seed", range(5))
def test_prune_spans_non_crossing_sorted_top_n(seed):
    torch.manual_seed(seed)
    spans = enumerate_spans(12, 4)
    scores = torch.randn(spans.shape[0])
    scores[::7] = scores[0]  # ties
    n_keep = 6
    kept = prune_spans(scores, spans, n_keep)
    listed = [tuple(spans[i].tolist()) for i in kept]
    assert len(listed) == n_keep
    assert listed == sorted(listed)
    assert all(not _crosses(a, b) for a, b in itertools.combinations(listed, 2))
    ref = _reference_prune(scores.tolist(), [tuple(s) for s in spans.tolist()], n_keep)
    assert kept.tolist() == ref
    # The best span is always kept.
    assert int(torch.argmax(scores)) in kept.tolist()


@pytest.mark.parametrize("width_emb, bias", [(20, True), (0, True), (8, False)])
@pytest.mark.parametrize("n_tokens", [23, 3, 1])
def test_rows_by_width_give_the_first_layer_of_g_without_building_g(width_emb, bias, n_tokens):
    torch.manual_seed(0)
    embedder = SpanEmbedder(width_in=16, max_width=5, width_emb=width_emb, ffnn=12, dropout=0.3).eval()
    linear = torch.nn.Linear(embedder.out_width, 10, bias=bias)
    tokens = torch.randn(n_tokens, 16) * 3  # spread head scores: the streaming softmax rescales its running sums
    rows = list(embedder.rows_by_width(tokens, linear))
    assert [r.shape for r in rows] == [(n_tokens - w + 1, 10) for w in range(1, min(5, n_tokens) + 1)]
    for width, got in enumerate(rows, start=1):
        starts = torch.arange(n_tokens - width + 1)
        spans = torch.stack([starts, starts + width], dim=1)
        assert torch.allclose(got, linear(embedder(tokens, spans)), atol=1e-5)  # eval mode: no dropout


def test_rows_by_width_of_no_tokens_yield_nothing():
    embedder = SpanEmbedder(width_in=4, max_width=3, width_emb=2)
    assert list(embedder.rows_by_width(torch.randn(0, 4), torch.nn.Linear(embedder.out_width, 5))) == []


def test_rows_by_width_refuse_a_mismatched_layer_or_tokens():
    embedder = SpanEmbedder(width_in=4, max_width=2, width_emb=3)
    with pytest.raises(ValueError, match=r"E922\] linear .* 15 features"):
        next(embedder.rows_by_width(torch.randn(6, 4), torch.nn.Linear(14, 5)))
    with pytest.raises(ValueError, match=r"E922\] token_vectors"):
        next(embedder.rows_by_width(torch.randn(6, 5), torch.nn.Linear(embedder.out_width, 5)))




def test_pruning_scores_are_the_mention_ffnn_of_g_of_the_spans_asked_for():
    """The component's pruning pass (``JointCorefModule.pruning_scores``) scores every start and width and reads the
    spans asked for: the same scores as ``mention_ffnn(g)`` of those spans, whichever subset (within sentences)."""
    torch.manual_seed(0)
    embedder = SpanEmbedder(width_in=16, max_width=4, width_emb=6, ffnn=12).eval()
    scorer = JointCorefScorer(embedder.out_width, 8, ffnn=10, ffnn_depth=2).eval()
    module = SimpleNamespace(span_embedder=embedder, scorer=scorer)  # what pruning_scores reads of the module
    tokens = torch.randn(15, 16) * 3
    sentences = torch.tensor([0] * 6 + [1] * 2 + [2] * 7)
    for spans in (enumerate_spans(15, 4), enumerate_spans(15, 4, sentences), enumerate_spans(15, 4)[::5]):
        with torch.no_grad():
            got = JointCorefModule.pruning_scores(module, tokens, spans)
            expected = scorer.mention_ffnn(embedder(tokens, spans)).squeeze(-1)
        assert got.shape == (spans.shape[0],)
        assert torch.allclose(got, expected, atol=1e-5)

"""EntQA training objectives, eqs. (1) and (2) (spacy_el.ml.entqa.losses)."""
import math

import pytest

torch = pytest.importorskip("torch")

from spacy_el.ml.entqa.losses import multi_label_nce_loss, reader_loss, reader_loss_terms  # noqa: E402

F64 = torch.float64


# ------------------------------------------------------------------------------------------
# Eq. (1): multi-label NCE
# ------------------------------------------------------------------------------------------


def _nce_reference(scores, gold):
    """Explicit eq. (1) in Python floats: one NCE term per gold, negatives = non-gold only."""
    terms = []
    for row, mask in zip(scores, gold):
        negatives = [s for s, g in zip(row, mask) if not g]
        for s, g in zip(row, mask):
            if g:
                terms.append(-math.log(math.exp(s) / (math.exp(s) + sum(math.exp(n) for n in negatives))))
    return terms


def test_nce_hand_computed() -> None:
    scores = [[2.0, 1.0, 0.5, -1.0], [0.3, -0.2, 1.5, 0.0], [1.0, 2.0, 3.0, 4.0]]
    gold = [[True, True, False, False], [False, False, True, False], [False, False, False, False]]
    s, g = torch.tensor(scores, dtype=F64), torch.tensor(gold)
    terms = _nce_reference(scores, gold)
    assert len(terms) == 3
    torch.testing.assert_close(multi_label_nce_loss(s, g), torch.tensor(sum(terms) / 3, dtype=F64))
    torch.testing.assert_close(multi_label_nce_loss(s, g, reduction="sum"), torch.tensor(sum(terms), dtype=F64))
    per = multi_label_nce_loss(s, g, reduction="none")
    torch.testing.assert_close(per, torch.tensor([terms[0] + terms[1], terms[2], 0.0], dtype=F64))
    # Other golds are excluded: gold 1 (score 1.0) must not enter gold 0's normaliser.
    first = -math.log(math.exp(2.0) / (math.exp(2.0) + math.exp(0.5) + math.exp(-1.0)))
    assert terms[0] == pytest.approx(first)


def test_nce_other_gold_scores_do_not_matter() -> None:
    base = torch.tensor([[1.0, 0.0, -1.0, 0.5]], dtype=F64)
    gold = torch.tensor([[True, True, False, False]])
    changed = base.clone()
    changed[0, 1] = 50.0  # raising gold 1 changes only its own term, never gold 0's
    lse_neg = math.log(math.exp(-1.0) + math.exp(0.5))

    def own_term(x):
        return math.log(math.exp(x) + math.exp(lse_neg)) - x

    diff = multi_label_nce_loss(changed, gold, reduction="sum") - multi_label_nce_loss(base, gold, reduction="sum")
    assert diff.item() == pytest.approx(own_term(50.0) - own_term(0.0), abs=1e-12)
    grad_in = changed.clone().requires_grad_(True)
    multi_label_nce_loss(grad_in, gold, reduction="sum").backward()
    # d loss / d s_gold1 = -(1 - p_1) from its own term only (no +p_1 from gold 0's normaliser).
    negs = math.exp(lse_neg)
    assert grad_in.grad[0, 1].item() == pytest.approx(-(negs / (math.exp(50.0) + negs)), abs=1e-12)
    p0 = math.exp(1.0) / (math.exp(1.0) + negs)
    assert grad_in.grad[0, 0].item() == pytest.approx(-(1 - p0), abs=1e-12)


def test_nce_padding_and_no_negatives() -> None:
    scores = torch.tensor([[3.0, 1.0, float("-inf")], [0.5, 0.7, 0.0]], dtype=F64, requires_grad=True)
    gold = torch.tensor([[True, False, False], [True, True, False]])
    valid = torch.tensor([[True, True, False], [True, True, False]])
    loss = multi_label_nce_loss(scores, gold, candidate_mask=valid)
    expected = -math.log(math.exp(3.0) / (math.exp(3.0) + math.exp(1.0)))  # row 2: no negatives -> 0
    torch.testing.assert_close(loss, torch.tensor(expected / 3, dtype=F64))
    loss.backward()
    assert torch.isfinite(scores.grad).all()
    assert scores.grad[1].abs().max() == 0 and scores.grad[0, 2] == 0


def test_nce_no_gold_is_zero_with_graph() -> None:
    scores = torch.randn(3, 5, dtype=F64, requires_grad=True)
    loss = multi_label_nce_loss(scores, torch.zeros(3, 5, dtype=torch.bool))
    assert loss.item() == 0.0
    loss.backward()
    assert torch.equal(scores.grad, torch.zeros_like(scores))
    empty = multi_label_nce_loss(torch.zeros(0, 4), torch.zeros(0, 4, dtype=torch.bool))
    assert empty.item() == 0.0


def test_nce_stable_for_huge_logits() -> None:
    scores = torch.tensor([[1e4, -1e4, 1e4 - 3.0, 2e4], [-1e4, 1e4, 0.0, -2e4]], requires_grad=True)
    gold = torch.tensor([[True, False, False, False], [True, True, False, False]])
    loss = multi_label_nce_loss(scores, gold, reduction="none")
    assert torch.isfinite(loss).all()
    # Row 0: gold 1e4 vs negatives {-1e4, 1e4-3, 2e4}: loss ~ 1e4; row 1: gold -1e4 vs 0 -> 1e4,
    # gold 1e4 vs 0 -> ~0.
    torch.testing.assert_close(loss, torch.tensor([1e4, 1e4]), rtol=1e-6, atol=1e-2)
    loss.sum().backward()
    assert torch.isfinite(scores.grad).all()


def test_nce_gradcheck_and_nonnegative() -> None:
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        scores = torch.randn(3, 6, generator=gen, dtype=F64) * 5
        gold = torch.rand(3, 6, generator=gen) < 0.3
        assert multi_label_nce_loss(scores, gold).item() >= 0
        assert (multi_label_nce_loss(scores, gold, reduction="none") >= 0).all()
    scores = torch.randn(3, 6, generator=gen, dtype=F64, requires_grad=True)
    gold = torch.tensor([[1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0]]).bool()
    assert torch.autograd.gradcheck(lambda s: multi_label_nce_loss(s, gold), (scores,))


def test_nce_shape_errors() -> None:
    with pytest.raises(ValueError):
        multi_label_nce_loss(torch.zeros(2, 3), torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"E021\] Unknown reduction 'avg'"):
        multi_label_nce_loss(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.bool), reduction="avg")


# ------------------------------------------------------------------------------------------
# Eq. (2): reader
# ------------------------------------------------------------------------------------------


def _log_softmax(xs):
    m = max(xs)
    lse = m + math.log(sum(math.exp(x - m) for x in xs))
    return [x - lse for x in xs]


def _reader_reference(start, end, rerank, gold_spans, span_reduction="sum"):
    """Explicit eq. (2) (negated) per passage, in Python floats."""
    out = []
    for b in range(len(start)):
        total = 0.0
        lr = _log_softmax(rerank[b])
        for k in range(len(start[b])):
            ls, le = _log_softmax(start[b][k]), _log_softmax(end[b][k])
            spans = gold_spans[b][k] or [(0, 0)]
            lps = [ls[s] + le[t] for s, t in spans]
            if span_reduction == "sum":
                total -= sum(lps)
            else:
                total -= math.log(sum(math.exp(x) for x in lps))
            if gold_spans[b][k]:
                total -= lr[k]
        out.append(total)
    return out


def _random_case(seed, batch=2, k=3, length=6):
    gen = torch.Generator().manual_seed(seed)
    start = torch.randn(batch, k, length, generator=gen, dtype=F64) * 2
    end = torch.randn(batch, k, length, generator=gen, dtype=F64) * 2
    rerank = torch.randn(batch, k, generator=gen, dtype=F64) * 2
    gold_spans = [
        [[(1, 2), (4, 4)], [], [(3, 5)]],
        [[], [], []],  # a passage without gold entities: every candidate trained to [CLS]
    ][:batch]
    return start, end, rerank, gold_spans


@pytest.mark.parametrize("span_reduction", ["sum", "marginal"])
def test_reader_hand_computed(span_reduction) -> None:
    start, end, rerank, gold_spans = _random_case(1)
    ref = _reader_reference(start.tolist(), end.tolist(), rerank.tolist(), gold_spans, span_reduction)
    per = reader_loss(start, end, rerank, gold_spans, span_reduction=span_reduction, reduction="none")
    torch.testing.assert_close(per, torch.tensor(ref, dtype=F64))
    torch.testing.assert_close(
        reader_loss(start, end, rerank, gold_spans, span_reduction=span_reduction),
        torch.tensor(sum(ref) / 2, dtype=F64),
    )
    torch.testing.assert_close(
        reader_loss(start, end, rerank, gold_spans, span_reduction=span_reduction, reduction="sum"),
        torch.tensor(sum(ref), dtype=F64),
    )


def test_reader_tiny_explicit_numbers() -> None:
    # One passage, K=2, T=3 ([CLS], w1, w2). Candidate 0 is gold with mention (1, 2), candidate 1
    # is absent -> trained to (0, 0). Uniform start/end logits: p_span = 1/9 everywhere.
    start = torch.zeros(1, 2, 3, dtype=F64)
    end = torch.zeros(1, 2, 3, dtype=F64)
    rerank = torch.tensor([[math.log(3.0), 0.0]], dtype=F64)  # p_rerank(e_0) = 3/4
    span_nll, rerank_nll = reader_loss_terms(start, end, rerank, [[[(1, 2)], []]])
    torch.testing.assert_close(span_nll, torch.tensor([[math.log(9), math.log(9)]], dtype=F64))
    torch.testing.assert_close(rerank_nll, torch.tensor([[-math.log(0.75), 0.0]], dtype=F64))
    loss = reader_loss(start, end, rerank, [[[(1, 2)], []]], rerank_weight=0.5)
    torch.testing.assert_close(loss, torch.tensor(2 * math.log(9) - 0.5 * math.log(0.75), dtype=F64))


def test_reader_masks() -> None:
    start, end, rerank, gold_spans = _random_case(2, batch=1)
    # Mask candidate 1 entirely (padding candidate, all positions masked).
    token_mask = torch.ones_like(start, dtype=torch.bool)
    token_mask[..., 0] = False  # ignored: [CLS] always allowed
    candidate_mask = torch.tensor([[True, False, True]])
    gold_spans = [[[(1, 1), (4, 5)], [(2, 2)], [(3, 5)]]]  # candidate 1's span is padding-only
    token_mask[:, 1, :] = False
    per = reader_loss(start, end, rerank, gold_spans, token_mask, candidate_mask, reduction="none")
    # Reference: drop candidate 1 entirely, softmaxes over remaining positions/candidates.
    s, e, r = start[0].tolist(), end[0].tolist(), rerank[0].tolist()
    ref = _reader_reference([[s[0], s[2]]], [[e[0], e[2]]], [[r[0], r[2]]], [[gold_spans[0][0], gold_spans[0][2]]])
    torch.testing.assert_close(per, torch.tensor(ref, dtype=F64))
    # A gold span on a masked position is an error, not a silent infinite loss.
    token_mask = torch.ones_like(start, dtype=torch.bool)
    token_mask[0, 0, 4] = False
    with pytest.raises(ValueError, match="E936"):
        reader_loss(start, end, rerank, gold_spans, token_mask)


def test_reader_no_gold_trains_cls() -> None:
    start = torch.zeros(1, 2, 4, requires_grad=True)
    end = torch.zeros(1, 2, 4)
    rerank = torch.zeros(1, 2, requires_grad=True)
    loss = reader_loss(start, end, rerank, [[[], []]])
    torch.testing.assert_close(loss, torch.tensor(4 * math.log(4)))
    loss.backward()
    # The gradient pushes position 0 up and every other position down; no rerank gradient.
    assert (start.grad[..., 0] < 0).all() and (start.grad[..., 1:] > 0).all()
    assert torch.equal(rerank.grad, torch.zeros_like(rerank))
    # Perfect [CLS] predictions -> loss ~ 0.
    big = torch.full((1, 2, 4), -50.0)
    big[..., 0] = 50.0
    assert reader_loss(big, big, torch.zeros(1, 2), [[[], []]]).item() == pytest.approx(0.0, abs=1e-6)


def test_reader_stable_for_huge_logits() -> None:
    start = torch.tensor([[[1e4, -1e4, 0.0, 1e4], [-1e4, 1e4, 1e4, 0.0]]], requires_grad=True)
    end = torch.tensor([[[0.0, 1e4, -1e4, 1e4], [1e4, -1e4, 0.0, 0.0]]], requires_grad=True)
    rerank = torch.tensor([[1e4, -1e4]], requires_grad=True)
    gold_spans = [[[(1, 3)], []]]
    span_nll, rerank_nll = reader_loss_terms(start, end, rerank, gold_spans)
    # cand 0: -log p_s(1) = 2e4 + log 2, -log p_e(3) = log 2;
    # cand 1: -log p_s(0) = 2e4 + log 2, -log p_e(0) = 0 (up to exp(-1e4)).
    expected = torch.tensor([[2e4 + 2 * math.log(2), 2e4 + math.log(2)]])
    torch.testing.assert_close(span_nll, expected, rtol=0, atol=4e-3)  # float32 ulp at 2e4 ~ 2e-3
    torch.testing.assert_close(rerank_nll, torch.tensor([[0.0, 0.0]]))
    loss = reader_loss(start, end, rerank, gold_spans, span_reduction="marginal")
    assert torch.isfinite(loss)
    loss.backward()
    for t in (start, end, rerank):
        assert torch.isfinite(t.grad).all()


def test_reader_gradcheck_and_nonnegative() -> None:
    for seed in range(10):
        start, end, rerank, gold_spans = _random_case(seed)
        for mode in ("sum", "marginal"):
            assert (reader_loss(start, end, rerank, gold_spans, span_reduction=mode, reduction="none") >= 0).all()
    start, end, rerank, gold_spans = _random_case(3)
    inputs = tuple(t.clone().requires_grad_(True) for t in (start, end, rerank))
    token_mask = torch.ones_like(start, dtype=torch.bool)
    token_mask[1, :, 5] = False
    for mode in ("sum", "marginal"):
        assert torch.autograd.gradcheck(
            lambda s, e, r: reader_loss(s, e, r, gold_spans, token_mask, span_reduction=mode), inputs
        )


def test_reader_validation() -> None:
    start, end, rerank, gold_spans = _random_case(0)
    with pytest.raises(ValueError, match="E934"):
        reader_loss(start, end, rerank, [[[(2, 1)], [], []], [[], [], []]])  # s > t
    with pytest.raises(ValueError, match="E934"):
        reader_loss(start, end, rerank, [[[(1, 6)], [], []], [[], [], []]])  # t >= T
    with pytest.raises(ValueError, match="E935"):
        reader_loss(start, end, rerank, [[[(0, 3)], [], []], [[], [], []]])
    with pytest.raises(ValueError, match="E933"):
        reader_loss(start, end, rerank, [[[(0, 0), (1, 2)], [], []], [[], [], []]])
    with pytest.raises(ValueError, match=r"E922\] gold_spans"):
        reader_loss(start, end, rerank, [[[], []], [[], [], []]])
    with pytest.raises(ValueError, match=r"E922\] rerank_logits"):
        reader_loss(start, end, rerank[:, :2], gold_spans)
    with pytest.raises(ValueError, match=r"E021\] Unknown span_reduction"):
        reader_loss(start, end, rerank, gold_spans, span_reduction="max")
    # An explicit [(0, 0)] is the same as "absent".
    torch.testing.assert_close(
        reader_loss(start, end, rerank, [[[(1, 2), (4, 4)], [(0, 0)], [(3, 5)]], [[], [], []]]),
        reader_loss(start, end, rerank, gold_spans),
    )

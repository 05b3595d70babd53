"""EntQA inference rules (spacy_el.algorithms.entqa_decode) and reader inputs (spacy_el.ml.entqa.inputs)."""
import numpy as np
import pytest

from spacy_el.algorithms.entqa_decode import best_non_overlapping, merge_predictions, passage_predictions

BIG = 20.0


def logits(k: int, t: int, hot=()):
    """[K, T] logits: 0 everywhere, BIG at each (k, position) in ``hot``."""
    out = np.zeros((k, t))
    for row, position in hot:
        out[row, position] = BIG
    return out


def masks(k: int, t: int, n_passage: int):
    span_mask = np.zeros((k, t), dtype=bool)
    span_mask[:, 1:1 + n_passage] = True
    return span_mask, np.ones(k, dtype=bool)


def test_a_confident_span_of_the_reranked_entity_is_predicted():
    span_mask, cands = masks(2, 8, 5)
    start = logits(2, 8, [(0, 2), (1, 0)])  # candidate 1 points at [CLS]: "not in this passage"
    end = logits(2, 8, [(0, 3), (1, 0)])
    rerank = np.array([BIG, 0.0])
    preds = passage_predictions(start, end, rerank, span_mask, cands, top_p=3, max_length=4, threshold=0.5)
    assert [(s, t, k) for s, t, k, _ in preds] == [(2, 3, 0)]
    assert preds[0][3] == pytest.approx(1.0, abs=1e-6)


def test_spans_less_probable_than_cls_are_dropped_even_at_threshold_zero():
    span_mask, cands = masks(1, 6, 4)
    start = logits(1, 6, [(0, 0)])
    end = logits(1, 6, [(0, 0)])
    assert passage_predictions(start, end, np.zeros(1), span_mask, cands, 5, 4, threshold=0.0) == []


def test_threshold_top_p_and_max_length():
    span_mask, cands = masks(1, 10, 8)
    start = np.full((1, 10), -BIG)
    end = np.full((1, 10), -BIG)
    start[0, 0] = end[0, 0] = 0.0  # [CLS]: the weaker spans fall below it
    start[0, [1, 2]] = 5.0
    end[0, [2, 7]] = 5.0  # (1, 7) and (2, 7) are longer than max_length 3
    preds = passage_predictions(start, end, np.zeros(1), span_mask, cands, top_p=10, max_length=3, threshold=0.0)
    assert sorted((s, t) for s, t, _, _ in preds) == [(1, 2), (2, 2)]
    assert len(passage_predictions(start, end, np.zeros(1), span_mask, cands, top_p=1, max_length=3, threshold=0.0)) == 1
    assert passage_predictions(start, end, np.zeros(1), span_mask, cands, top_p=10, max_length=3, threshold=1.0) == []


def test_padding_candidates_are_never_predicted():
    span_mask, cands = masks(2, 6, 4)
    cands[1] = False
    start = logits(2, 6, [(0, 1), (1, 2)])
    end = logits(2, 6, [(0, 1), (1, 2)])
    preds = passage_predictions(start, end, np.zeros(2), span_mask, cands, 3, 4, 0.0)
    assert {k for _, _, k, _ in preds} == {0}


def test_bad_arguments():
    span_mask, cands = masks(1, 4, 2)
    with pytest.raises(ValueError, match="E037"):
        passage_predictions(np.zeros((1, 4)), np.zeros((1, 4)), np.zeros(1), span_mask, cands, 0, 3, 0.1)


def test_merge_keeps_the_best_score_per_span_and_entity():
    merged = merge_predictions([(0, 5, "A", 0.3), (0, 5, "A", 0.6), (0, 5, "B", 0.4), (7, 9, "C", 0.2)])
    assert merged == [(0, 5, "A", 0.6), (0, 5, "B", 0.4), (7, 9, "C", 0.2)]


def test_best_non_overlapping_is_greedy_by_score():
    preds = [(0, 2, "A", 0.5), (1, 3, "B", 0.9), (3, 4, "C", 0.4), (0, 2, "D", 0.45)]
    assert best_non_overlapping(preds) == [(1, 3, "B", 0.9), (3, 4, "C", 0.4)]


def test_reader_arrays_mark_the_passage_positions(tmp_path):
    pytest.importorskip("transformers")
    from spacy_el.algorithms.passages import make_passages
    from spacy_el.ml.entqa.inputs import QuestionSide, mention_wordpieces, reader_arrays
    from spacy_el.ml.torch_io import load_fast_tokenizer

    tokenizer = load_fast_tokenizer("", "test")
    text = "Ada Mercer painted Orvik ."
    passage = make_passages(text, tokenizer, 32, 16)[0]

    class Tokens:
        def __call__(self, row):
            return (1000 + row,) * (row + 1)

    arrays = reader_arrays(tokenizer, [QuestionSide(passage, (2000,))], [[0, 2]], Tokens(), k=3)
    n = len(passage)
    assert arrays.input_ids.shape[0] == 3 and arrays.rows.tolist() == [[0, 2, -1]]
    assert arrays.candidate_mask.tolist() == [[True, True, False]]
    assert arrays.span_mask[0].tolist()[: n + 2] == [False] + [True] * n + [False]
    assert arrays.input_ids[0, n + 1] == 2000 and arrays.token_type_ids[1].sum() == 3 + 1  # entity + [SEP]
    s, t = mention_wordpieces(passage, text.index("Orvik"), text.index("Orvik") + 5)
    assert tokenizer.decode(list(passage.input_ids[s:t + 1])).replace(" ", "") == "orvik"
    assert mention_wordpieces(passage, 0, 500) is None


def _greedy_reference(preds):
    """best_non_overlapping as the plain O(n^2) greedy it replaced."""
    kept = []
    for pred in sorted(preds, key=lambda x: (-x[3], x[0], -(x[1] - x[0]), x[2])):
        if all(pred[1] <= k[0] or pred[0] >= k[1] for k in kept):
            kept.append(pred)
    return sorted(kept, key=lambda x: (x[0], x[1]))


def test_best_non_overlapping_is_the_plain_greedy_on_random_predictions():
    rng = np.random.default_rng(0)
    for trial in range(500):
        starts = rng.integers(0, 40, size=rng.integers(0, 30))
        preds = [(int(s), int(s + rng.integers(0 if trial % 4 == 0 else 1, 6)), "ABC"[int(rng.integers(3))],
                  float(rng.integers(0, 10)) / 10) for s in starts]
        assert best_non_overlapping(preds) == _greedy_reference(preds), preds

"""The joint EntQA reader's inputs and module (spacy_el.ml.entqa.inputs / modules, issue 29)."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import numpy as np  # noqa: E402

from spacy_el.algorithms.passages import Passage  # noqa: E402
from spacy_el.ml.entqa.inputs import QuestionSide, joint_layout, joint_reader_arrays, marker_id  # noqa: E402
from spacy_el.ml.entqa.modules import JointReaderModule  # noqa: E402

NAMES = {0: (501, 502), 1: (503,), 2: (504, 505, 506), 3: (507,), 4: (508, 509)}


def names(row: int):
    return NAMES[row]


class Tok:
    cls_token_id, sep_token_id, pad_token_id = 101, 102, 0


def window(n: int, first: int = 1000) -> QuestionSide:
    ids = tuple(range(first, first + n))
    return QuestionSide(Passage(0, 0, ids, tuple((i, i + 1) for i in range(n)), 0, n), (900,))


@pytest.mark.parametrize("k, expected", [(20, (1, 20)), (41, (1, 41)), (42, (2, 21)), (50, (2, 25)), (100, (3, 34))])
def test_layout_depends_on_the_settings_only(k, expected):
    assert joint_layout(k, 128, 8, 8, 512) == expected


def test_layout_refuses_a_window_that_leaves_no_room():
    with pytest.raises(ValueError, match="E920"):
        joint_layout(10, 500, 8, 8, 512)


def test_rows_hold_the_window_then_the_marked_candidates():
    arrays = joint_reader_arrays(Tok(), [window(3), window(2, 2000)], [[2, 0, 1], [4]], names, 7, 3, (2, 2))
    assert arrays.shape == (2, 3) and arrays.rows_per_window == 2
    assert arrays.rows.tolist() == [[2, 0, 1], [4, -1, -1]]
    assert arrays.candidate_mask.tolist() == [[True, True, True], [True, False, False]]
    first = [101, 1000, 1001, 1002, 900, 102]
    assert arrays.input_ids[0].tolist()[:13] == first + [7, 504, 505, 506, 7, 501, 502]
    assert arrays.input_ids[1].tolist()[:9] == first + [7, 503, 102]
    assert arrays.marker_positions[:2].tolist() == [[6, 10], [6, 0]] and arrays.candidate_ends[:2].tolist() == [[10, 13], [8, 1]]
    assert arrays.token_type_ids[0].tolist()[:7] == [0] * 6 + [1]
    assert arrays.span_mask.shape == (2, 3, 4)
    assert arrays.span_mask[0, 0].tolist() == [False, True, True, True] and arrays.span_mask[1, 0].tolist() == [False, True, True, False]


@pytest.fixture(scope="module")
def module(tiny_encoder):
    torch.manual_seed(0)
    encoder = transformers.AutoModel.from_pretrained(tiny_encoder)
    return JointReaderModule(encoder, "float32", 16, 0.0).eval()


def test_module_outputs_and_loss(module, tiny_encoder):
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_encoder)
    marker = marker_id(tokenizer, "[unused0]")
    assert tokenizer.convert_ids_to_tokens([marker]) == ["[unused0]"]
    questions = [window(5), window(3, 2000)]
    candidates = [[0, 1, 2, 3], [4, 2]]
    layout = (2, 2)
    arrays = joint_reader_arrays(tokenizer, questions, candidates, names, marker, 4, layout)
    with torch.no_grad():
        _, start, end, rerank = module(arrays)
    assert start.shape == end.shape == (2, 4, 6) and rerank.shape == (2, 4)
    assert (start[1, :, 4:] <= -1e4 + 1).all(), "positions past the shorter window are masked"
    # A window's scores do not depend on the other windows of the batch.
    alone = joint_reader_arrays(tokenizer, questions[1:], candidates[1:], names, marker, 4, layout)
    with torch.no_grad():
        _, start_alone, _, rerank_alone = module(alone)
    torch.testing.assert_close(start_alone[0, :2], start[1, :2, :4], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rerank_alone[0, :2], rerank[1, :2], atol=1e-5, rtol=1e-5)
    # Candidates differ: each one's scores come from its own marker and name.
    assert not torch.allclose(start[0, 0], start[0, 1])
    gold = [[[(1, 2)], [], [(4, 4)], []], [[], [(2, 3)], [], []]]
    module.train()
    loss, *_ = module(arrays, gold_spans=gold)
    module.eval()
    assert torch.isfinite(loss) and loss.item() > 0
    loss.backward()
    assert module.start_query.weight.grad is not None and module.encoder.embeddings.word_embeddings.weight.grad is not None
    module.zero_grad()


def test_unknown_marker_is_refused(tiny_encoder):
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_encoder)
    with pytest.raises(ValueError, match="E919"):
        marker_id(tokenizer, "[not a token]")
    assert np.isscalar(marker_id(tokenizer, tokenizer.mask_token))

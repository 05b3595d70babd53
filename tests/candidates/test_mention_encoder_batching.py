"""How the mention encoder batches its work: shared, length-sorted windows; strides; fewer layers."""
import dataclasses

import numpy as np
import pytest

from spacy_el.candidates.mention_encoder import MentionEncoder
from spacy_el.candidates.mention_encoder.inputs import mention_batch, window_batches

TEXTS = [
    "Paris is the capital of France , and Lyon is its third city .",
    "Angela Merkel met Emmanuel Macron in Berlin on Tuesday to talk about Europe , trade and the budget "
    "of the European Union for the next seven years .",
    "Rain .",
]


@pytest.fixture
def mentions(nlp):
    docs = [nlp(text) for text in TEXTS]
    return [(doc, token.i, token.i + 1) for doc in docs for token in doc if token.text[0].isupper()]


def test_every_mention_is_in_exactly_one_pass_with_the_padding_cut(tiny_mention_encoder, mentions):
    batch = mention_batch(tiny_mention_encoder.tokenizer, mentions, 4, 64)
    seen = []
    for positions, sub in window_batches(batch, 2):
        assert sub.input_ids.shape[0] <= 2
        assert int(sub.attention_mask[:, -1].max()) == 1  # cut to its longest window
        for position, window in zip(positions, sub.mention_window.tolist()):
            # the sub-batch's window of a mention is its window in the whole batch
            original = int(batch.mention_window[position])
            width = sub.input_ids.shape[1]
            assert sub.input_ids[window].tolist() == batch.input_ids[original, :width].tolist()
        seen.extend(positions.tolist())
    assert sorted(seen) == list(range(len(mentions)))


def test_passes_of_any_size_give_the_same_vectors(tiny_mention_encoder, mentions):
    settings = dataclasses.replace(tiny_mention_encoder.settings, encoder_dtype="float32")
    one_pass = MentionEncoder(tiny_mention_encoder.module, tiny_mention_encoder._tokenizer,
                              dataclasses.replace(settings, windows_per_batch=64))
    small_passes = MentionEncoder(tiny_mention_encoder.module, tiny_mention_encoder._tokenizer,
                                  dataclasses.replace(settings, windows_per_batch=1, mentions_per_batch=3))
    np.testing.assert_allclose(one_pass.encode(mentions), small_passes.encode(mentions), atol=1e-5)


def test_a_stride_of_one_window_encodes_fewer_wordpieces(tiny_mention_encoder, mentions):
    def wordpieces(stride):
        batch = mention_batch(tiny_mention_encoder.tokenizer, mentions, 8, 64, stride)
        return int(batch.attention_mask.sum())

    assert wordpieces(8) < wordpieces(None)


def test_fewer_layers_are_kept_and_survive_saving(tmp_path):
    encoder = MentionEncoder.from_base(layers=2, window_stride=32)
    assert len(encoder.module.transformer.encoder.layer) == 2
    encoder.save(tmp_path / "encoder")
    loaded = MentionEncoder.load(tmp_path / "encoder")
    assert len(loaded.module.transformer.encoder.layer) == 2
    assert loaded.settings.window_stride == 32


@pytest.mark.parametrize("changes, message", [
    ({"layers": 0}, r"layers must be in \[1, 6\]"),
    ({"layers": 7}, r"layers must be in \[1, 6\]"),
    ({"window_stride": 40}, "window_stride=40"),
])
def test_bad_encoder_shapes_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        MentionEncoder.from_base(**changes)

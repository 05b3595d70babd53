"""The mention encoder: data-only save/load, carried by the KB, and refused against another encoder's vectors."""
import numpy as np
import pytest

from spacy_el.candidates import DenseCandidates, attach_mention_encoder, mention_encoder_of
from spacy_el.kb import ElKnowledgeBase
from spacy_el.candidates.mention_encoder import MentionEncoder

from .conftest import span_of


def test_save_load_and_bytes_give_identical_vectors(nlp, tiny_mention_encoder, tmp_path):
    doc = nlp("Paris Hilton met the Beatles in Paris.")
    mentions = [(doc, 0, 2), (doc, 4, 5), (doc, 6, 7)]
    expected = tiny_mention_encoder.encode(mentions)
    tiny_mention_encoder.save(tmp_path / "enc")
    assert sorted(p.name for p in (tmp_path / "enc").iterdir()) == ["mention_encoder.json", "model.safetensors", "tokenizer.json"]
    np.testing.assert_array_equal(MentionEncoder.load(tmp_path / "enc").encode(mentions), expected)
    np.testing.assert_array_equal(MentionEncoder.from_bytes(tiny_mention_encoder.to_bytes()).encode(mentions), expected)
    tiny_mention_encoder.save(tmp_path / "enc")  # replacing an encoder folder is allowed


def test_save_refuses_a_folder_that_is_not_an_encoder(tiny_mention_encoder, tmp_path):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a mention encoder folder"):
        tiny_mention_encoder.save(tmp_path / "other")
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_the_kb_carries_the_encoder_through_disk_and_bytes(nlp, tiny_toy_kb, tiny_mention_encoder, tmp_path):
    kb = tiny_toy_kb
    attach_mention_encoder(kb, tiny_mention_encoder)
    span = span_of(nlp, "Paris, a small city in Texas, held its rodeo.", "Paris")
    expected = DenseCandidates(top_k=4)(kb, [span])[0]
    kb.to_disk(tmp_path / "kb")
    for loaded in (ElKnowledgeBase.load(tmp_path / "kb"), ElKnowledgeBase(nlp.vocab).from_bytes(kb.to_bytes())):
        found = DenseCandidates(top_k=4)(loaded, [span])[0]
        assert found.rows.tolist() == expected.rows.tolist()
        np.testing.assert_array_equal(found.dense, expected.dense)


def test_a_kb_without_an_encoder_says_how_to_get_one(nlp, toy_kb_with_vectors):
    with pytest.raises(ValueError, match="E404"):
        mention_encoder_of(toy_kb_with_vectors)


def test_vectors_of_another_encoder_are_refused(nlp, tiny_toy_kb, tiny_mention_encoder):
    kb = tiny_toy_kb
    kb.vectors_encoder = {"name": "some-other-encoder", "sha256": "0" * 64}
    with pytest.raises(ValueError, match="E403.*some-other-encoder"):
        attach_mention_encoder(kb, tiny_mention_encoder)


def test_vectors_of_another_width_are_refused(toy_kb_with_vectors, tiny_mention_encoder):
    with pytest.raises(ValueError, match="E402"):
        attach_mention_encoder(toy_kb_with_vectors, tiny_mention_encoder)


def test_a_damaged_encoder_folder_is_refused_naming_it(tiny_mention_encoder, tmp_path):
    tiny_mention_encoder.save(tmp_path / "enc")
    (tmp_path / "enc" / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ValueError, match=r"mention encoder \(.*enc\) weights are corrupted"):
        MentionEncoder.load(tmp_path / "enc")
    (tmp_path / "enc" / "model.safetensors").unlink()
    with pytest.raises(ValueError, match="lacks model.safetensors"):
        MentionEncoder.load(tmp_path / "enc")
    with pytest.raises(ValueError, match="is not a mention encoder folder"):
        MentionEncoder.load(tmp_path)

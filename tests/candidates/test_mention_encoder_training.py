"""Training the mention encoder: the loss falls, and a run resumed after its first epoch ends with exactly
the weights of an uninterrupted run."""
import numpy as np

from spacy_el.candidates.mention_encoder import MentionEncoder
from spacy_el.candidates.mention_encoder.training import TrainingSettings, train_mention_encoder

TEXTS = [
    ("Paris Hilton sang at the gala .", 0, 2, "Paris_Hilton"),
    ("We flew to Paris for the museums .", 3, 4, "Paris"),
    ("The Beatles played in Hamburg .", 0, 2, "The_Beatles"),
    ("A rodeo in Paris , Texas drew crowds .", 3, 6, "Paris,_Texas"),
]


def examples(nlp, kb):
    return [((nlp(text), start, end), kb.entities.row_of(kb_id)) for text, start, end, kb_id in TEXTS]


def weights(encoder):
    return {k: v.detach().clone().numpy() for k, v in encoder.module.state_dict().items()}


def test_resumed_training_equals_an_uninterrupted_run(nlp, tiny_toy_kb, tiny_encoder, tmp_path):
    train = examples(nlp, tiny_toy_kb) * 4
    settings = TrainingSettings(epochs=2, batch_size=4, hard_negatives=2, lr=1e-3, seed=3)
    vectors, index = tiny_toy_kb.entities.vectors, tiny_toy_kb.dense_index

    straight = MentionEncoder.from_base(tiny_encoder)
    curve = train_mention_encoder(straight, vectors, index, train, train[:4], tmp_path / "a", settings, log=lambda _: None)
    assert [p["epoch"] for p in curve] == [1, 2] and curve[1]["loss"] < curve[0]["loss"]

    first = MentionEncoder.from_base(tiny_encoder)
    one_epoch = TrainingSettings(**{**vars(settings), "epochs": 1})
    train_mention_encoder(first, vectors, index, train, train[:4], tmp_path / "b", one_epoch, log=lambda _: None)
    resumed = MentionEncoder.from_base(tiny_encoder)
    again = train_mention_encoder(resumed, vectors, index, train, train[:4], tmp_path / "b", settings, resume=True,
                                  log=lambda _: None)
    assert [p["epoch"] for p in again] == [1, 2]
    expected, got = weights(straight), weights(resumed)
    untrained = weights(MentionEncoder.from_base(tiny_encoder))
    assert any(not np.array_equal(untrained[k], expected[k]) for k in expected), "training changed nothing"
    assert expected.keys() == got.keys()
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
    assert (tmp_path / "b" / "best" / "mention_encoder.json").is_file()

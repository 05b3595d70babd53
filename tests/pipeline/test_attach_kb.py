"""``python -m spacy_el kb attach``: a pipeline saved without its KB (trained heads) gets one, and loads and
predicts as the pipeline it came from; KBs that do not fit the trained component are refused. Invented data."""
import shutil

import pytest
import spacy
import srsly
from typer.testing import CliRunner

from spacy_el.package.attach_kb import META_KEY, attach_kb, kb_components
from spacy_el.cli import app

from ..conftest import build_invented_kb
from .conftest import texts
from .test_contract import outputs

pytest.importorskip("torch")
NAME = "joint_coref_linker_heads"
ENCODER = {"name": "invented-encoder", "sha256": "0" * 64}


@pytest.fixture
def heads_without_kb(trained_pipelines, tmp_path):
    """The heads-only pipeline saved, then its KB removed and the KB's vectors encoder recorded in meta.json."""
    nlp = trained_pipelines.get(NAME)
    nlp.to_disk(tmp_path / "heads")
    shutil.rmtree(tmp_path / "heads" / NAME / "kb")
    meta = srsly.read_json(tmp_path / "heads" / "meta.json")
    meta[META_KEY] = {"kb_vectors_encoder": {NAME: ENCODER}}
    srsly.write_json(tmp_path / "heads" / "meta.json", meta)
    return nlp, tmp_path / "heads"


def _kb(tmp_path, dim=8, encoder=ENCODER):
    kb = build_invented_kb(True, dim=dim)  # the vectors the component was trained with (seed 0)
    kb.vectors_encoder = dict(encoder)
    kb.to_disk(tmp_path / f"kb_{dim}")
    return tmp_path / f"kb_{dim}"


def test_attached_heads_predict_as_the_original(heads_without_kb, tmp_path):
    nlp, heads = heads_without_kb
    assert kb_components(heads) == [NAME]
    result = CliRunner().invoke(app, ["kb", "attach", str(heads), str(_kb(tmp_path)), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    loaded = spacy.load(tmp_path / "out")
    inputs = texts(3)
    assert [outputs(d) for d in loaded.pipe(inputs)] == [outputs(d) for d in nlp.pipe(inputs)]
    # Again onto the same output: replaced.
    assert attach_kb(heads, _kb(tmp_path), tmp_path / "out") == [NAME]


def test_a_kb_that_does_not_fit_is_refused(heads_without_kb, tmp_path):
    _, heads = heads_without_kb
    with pytest.raises(ValueError, match=r"\[spacy_el E011\].*width 4.*trained with width 8"):
        attach_kb(heads, _kb(tmp_path, dim=4), tmp_path / "out")
    other = _kb(tmp_path, encoder={"name": "another-encoder", "sha256": "1" * 64})
    with pytest.raises(ValueError, match=r"\[spacy_el E012\].*another-encoder"):
        attach_kb(heads, other, tmp_path / "out")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"\[spacy_el E015\]"):
        attach_kb(heads, _kb(tmp_path), tmp_path / "notes")
    with pytest.raises(ValueError, match=r"\[spacy_el E014\]"):
        attach_kb(heads, _kb(tmp_path), tmp_path / "out", components=["ner"])
    assert not (tmp_path / "out").exists() and (tmp_path / "notes" / "a.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no staging folder is left behind"


@pytest.mark.hostile("data loss")
@pytest.mark.parametrize("case", ["a foreign pipeline", "a file added to an attached copy", "an edited attached copy"])
def test_only_a_copy_kb_attach_wrote_is_replaced(heads_without_kb, tmp_path, case):
    """OUTPUT is replaced only when it is a copy ``kb attach`` wrote, as it wrote it: a pipeline folder that it did
    not write (a user's notes beside its config.cfg), or in which a file was added or changed, is refused whole."""
    _, heads = heads_without_kb
    kb = _kb(tmp_path)
    out = tmp_path / "out"
    if case == "a foreign pipeline":
        shutil.copytree(heads, out)
        (out / "notes.txt").write_text("keep me")
        kept = out / "notes.txt"
    else:
        attach_kb(heads, kb, out)
        if case == "a file added to an attached copy":
            kept = out / NAME / "notes.txt"
            kept.write_text("keep me")
        else:
            kept = out / "config.cfg"
            kept.write_text(kept.read_text() + "\n# my edit\n")
    before = kept.read_bytes()
    with pytest.raises(ValueError, match=r"\[spacy_el E745\]") as info:
        attach_kb(heads, kb, out)
    assert str(out) in str(info.value)
    assert kept.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no staging folder is left behind"

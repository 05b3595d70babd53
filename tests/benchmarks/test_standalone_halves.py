"""benchmarks.standalone_halves: a seed's Standalone pair scored from one half's model and the other's record."""
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import spacy

from benchmarks import joint_coref_linker
from benchmarks.common import set_mention_links
from benchmarks.standalone_halves import Half, half_path, read_half, write_half
from spacy_el.extensions import get_clusters, set_clusters

TEXTS = ["Ada Lovelace met Babbage . She wrote notes .", "Paris is in France ."]
FOLDER = "gum-converged-seed1"


def predicted(nlp, texts, clusters, kb_id):
    """Docs of ``texts`` with ``clusters`` (one list per doc) and every mention linked to ``kb_id``."""
    docs = []
    for text, doc_clusters in zip(texts, clusters):
        doc = nlp.make_doc(text)
        set_clusters(doc, doc_clusters)
        set_mention_links(doc, lambda span: kb_id)
        docs.append(doc)
    return docs


def fake_models(monkeypatch, nlp, predictions):
    """Models of the benchmark replaced: loading a model folder gives its name, predicting gives its docs."""
    monkeypatch.setattr(joint_coref_linker.spacy, "load", lambda path: Path(path).parent.name)
    monkeypatch.setattr(joint_coref_linker, "predict", lambda model, gold, batch_size: (predictions[model], 0.0))
    monkeypatch.setattr(joint_coref_linker, "training_steps", lambda model: f"{model}: 2,865 steps")
    monkeypatch.setattr(joint_coref_linker, "span_width_of", lambda model: 8)
    scored = []
    monkeypatch.setattr(joint_coref_linker, "score_rows",
                        lambda name, dataset, gold, pred, note, hard, max_span_width: scored.append((pred, note)) or ["row"])
    return scored


def test_a_half_is_recorded_and_read_back_once_its_model_is_gone(tmp_path: Path, monkeypatch):
    nlp = spacy.blank("en")
    gold = [nlp(text) for text in TEXTS]
    coref_docs = predicted(nlp, TEXTS, [[[(0, 2), (5, 6)]], [[(0, 1)]]], "NIL")
    link_docs = predicted(nlp, TEXTS, [[[(0, 2)], [(3, 4)]], [[(3, 4)]]], "Q1")
    scored = fake_models(monkeypatch, nlp, {"coref": coref_docs, "link": link_docs})
    models, halves = tmp_path / "models", tmp_path / "halves"
    args = SimpleNamespace(models=str(models), batch_size=1, halves=halves, limit=0)
    (models / FOLDER / "coref" / "model-best").mkdir(parents=True)

    def score():
        return joint_coref_linker.score_standalone(args, FOLDER, "standalone_converged_seed1", "gum-test", gold,
                                                   "trained on gum, seed 1", [])

    assert score() is None  # the link half is not trained yet: the coref half is recorded
    assert half_path(halves, FOLDER, "coref", "gum-test").exists()
    shutil.rmtree(models / FOLDER / "coref")  # the session ends; the next trains the link model
    (models / FOLDER / "link" / "model-best").mkdir(parents=True)
    assert score() == ["row"]
    pred, note = scored[0]
    # the coref model's clusters, with the link model's links, and its mention the coref model lacks as a singleton
    assert [get_clusters(doc) for doc in pred] == [[[(0, 2), (5, 6)], [(3, 4)]], [[(0, 1)], [(3, 4)]]]
    assert [[s.kb_id_ for s in doc.spans["coref_clusters_1"]] for doc in pred] == [["Q1", "NIL"], ["NIL"]]
    assert note == "trained on gum, seed 1, coref: 2,865 steps; predicted mentions"
    assert half_path(halves, FOLDER, "link", "gum-test").exists()


def test_a_limited_run_records_nothing(tmp_path: Path, monkeypatch):
    nlp = spacy.blank("en")
    gold = [nlp(text) for text in TEXTS]
    fake_models(monkeypatch, nlp, {"coref": predicted(nlp, TEXTS, [[], []], "NIL")})
    args = SimpleNamespace(models=str(tmp_path / "models"), batch_size=1, halves=tmp_path / "halves", limit=2)
    (tmp_path / "models" / FOLDER / "coref" / "model-best").mkdir(parents=True)
    assert joint_coref_linker.score_standalone(args, FOLDER, "standalone_converged_seed1", "gum-test", gold, "", []) is None
    assert not (tmp_path / "halves").exists()


def test_a_record_is_read_only_against_its_own_documents(tmp_path: Path):
    nlp = spacy.blank("en")
    gold = [nlp(text) for text in TEXTS]
    path = tmp_path / "coref-gum-test.json"
    write_half(path, gold, Half(predicted(nlp, TEXTS, [[[(0, 2)]], [[(0, 1)]]], "Q7"), "note", 8))
    half = read_half(path, gold, nlp)
    assert [get_clusters(doc) for doc in half.docs] == [[[(0, 2)]], [[(0, 1)]]]
    assert [s.kb_id_ for s in half.docs[0].spans["coref_clusters_1"]] == ["Q7"]
    assert (half.note, half.max_span_width) == ("note", 8)
    assert "Lovelace" not in path.read_text()  # offsets and ids, never text
    with pytest.raises(ValueError, match="other documents"):
        read_half(path, gold[:1], nlp)
    assert read_half(tmp_path / "missing.json", gold, nlp) is None


@pytest.mark.parametrize("text,message", [("{not json", "is not JSON"), ('{"version": 1}', "not a record of format 1"),
                                          ('{"version": 0, "docs": []}', "format 0"), ("[]", "not a record")])
def test_a_broken_record_is_refused_naming_its_file(tmp_path: Path, text: str, message: str):
    path = tmp_path / "coref-gum-test.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        read_half(path, [], spacy.blank("en"))
    assert str(path) in str(error.value)

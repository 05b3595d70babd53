"""Choosing a prediction setting on a dev corpus (spacy_el.training.tune and ``python -m spacy_el tune``), with the
tiny joint_coref_linker of the component tests and its invented sentences as the dev corpus."""
import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

import spacy_el.cli  # noqa: F401  (registers every command)
from spacy_el.cli._app import app
from spacy_el.training.tune import TUNED_META, kept_index, save_pipeline, tune_setting

from ..conftest import linked_cluster_doc
from ..pipeline.test_joint_coref_linker import NAME, TRAIN, saved_initialized

runner = CliRunner()


@pytest.fixture(scope="module")
def saved(tiny_encoder, tmp_path_factory):
    """A tiny initialised joint_coref_linker pipeline on disk and a .spacy dev corpus with gold clusters."""
    root = tmp_path_factory.mktemp("tune")
    nlp = saved_initialized(tiny_encoder, root)
    dev = root / "dev.spacy"
    DocBin(docs=[linked_cluster_doc(nlp.vocab, text, clusters) for text, clusters in TRAIN]).to_disk(dev)
    return root / "model", dev


def corpus(dev):
    from spacy.training import Corpus

    return Corpus(dev)


def test_each_value_is_scored_as_training_selects_and_the_best_kept(saved):
    model, dev = saved
    nlp = spacy.load(model)
    told = []
    tuned = tune_setting(nlp, corpus(dev), NAME, "predict_max_antecedents", [1, 2, 50],
                         on_value=lambda value, score: told.append((value, score)))
    assert [v for v, _ in tuned.scores] == [1, 2, 50] and told == tuned.scores
    best = max(score for _, score in tuned.scores)
    assert tuned.value == next(v for v, s in tuned.scores if s == best)  # the first of the best
    assert nlp.get_pipe(NAME).settings.predict_max_antecedents == tuned.value
    # the score is training's: the weighted sum of nlp.evaluate's scores by training.score_weights
    nlp.get_pipe(NAME).configure(predict_max_antecedents=50)
    scores = nlp.evaluate(corpus(dev)(nlp))
    weights = {k: w for k, w in nlp.config["training"]["score_weights"].items() if w}
    assert dict(tuned.scores)[50] == pytest.approx(sum(scores[k] * w for k, w in weights.items()))


@pytest.mark.parametrize("scores, min_gain, kept", [
    ([(50, 0.5), (100, 0.5025), (150, 0.503), (250, 0.5014)], 0.0, 150),  # the best
    ([(50, 0.5), (100, 0.5025), (150, 0.503), (250, 0.5014)], 0.005, 50),  # no costlier value earns its cost
    ([(50, 0.5), (100, 0.51), (150, 0.512), (250, 0.52)], 0.005, 250),  # each gain is measured from the value kept
    ([(50, 0.5), (100, 0.5), (150, 0.49)], 0.0, 50),  # ties: the cheaper
])
def test_a_costlier_value_is_kept_only_when_it_gains_more_than_min_gain(scores, min_gain, kept):
    assert scores[kept_index(scores, min_gain)][0] == kept


def test_min_gain_is_applied_and_recorded(saved):
    model, dev = saved
    tuned = tune_setting(spacy.load(model), corpus(dev), NAME, "predict_max_antecedents", [1, 50], min_gain=2.0)
    assert tuned.value == 1, "no weighted score (at most 1) can gain 2 over another"
    assert tuned.meta("dev.spacy")["min_gain"] == 2.0
    with pytest.raises(ValueError, match="E714"):
        tune_setting(spacy.load(model), corpus(dev), NAME, "predict_max_antecedents", [1, 50], min_gain=-0.1)


@pytest.mark.parametrize("component, setting, values, message", [
    ("ner", "predict_max_antecedents", [1], r"E832\].*'ner'"),
    (NAME, "no_such_setting", [1], "no_such_setting"),
    (NAME, "predict_max_antecedents", [50, -1], "predict_max_antecedents"),
    (NAME, "predict_max_antecedents", [], "E713"),
])
def test_bad_requests_are_refused_naming_what_to_fix(saved, component, setting, values, message):
    model, dev = saved
    scored = []
    with pytest.raises(ValueError, match=message):
        tune_setting(spacy.load(model), corpus(dev), component, setting, values,
                     on_value=lambda value, score: scored.append(value))
    assert scored == [], "nothing is scored before every value is checked"


def test_saving_goes_through_a_temporary_folder_and_replaces_only_with_force(saved, tmp_path):
    model, _ = saved
    nlp = spacy.load(model)
    nlp.get_pipe(NAME).configure(predict_max_antecedents=7)
    save_pipeline(nlp, tmp_path / "out")
    assert spacy.load(tmp_path / "out").get_pipe(NAME).settings.predict_max_antecedents == 7
    with pytest.raises(FileExistsError, match="E715"):
        save_pipeline(nlp, tmp_path / "out")
    nlp.get_pipe(NAME).configure(predict_max_antecedents=9)
    save_pipeline(nlp, tmp_path / "out", force=True)
    assert spacy.load(tmp_path / "out").get_pipe(NAME).settings.predict_max_antecedents == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no temporary folder left behind"


def test_the_command_saves_the_pipeline_with_the_value_kept_and_what_was_tried(saved, tmp_path):
    model, dev = saved
    out = tmp_path / "tuned"
    args = ["tune", str(model), str(dev), str(out), "--setting", "predict_max_antecedents", "--values", "1,50"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    tuned = spacy.load(out)
    record = tuned.meta[TUNED_META]
    assert record["setting"] == "predict_max_antecedents" and [v for v, _ in record["scores"]] == [1, 50]
    assert tuned.get_pipe(NAME).settings.predict_max_antecedents == record["value"]
    again = runner.invoke(app, args)
    assert again.exit_code == 1 and "E715" in again.output
    bad = runner.invoke(app, ["tune", str(model), str(dev), str(tmp_path / "x"), "--setting", "predict_max_antecedents",
                              "--values", "1,,50"])
    assert bad.exit_code != 0 and "E740" in bad.output


def test_values_are_read_exactly_as_written():
    from spacy_el.cli.tune import parse_values

    assert parse_values("0.3, 0.1,50,true,coarse") == [0.3, 0.1, 50, True, "coarse"]


def _bad_corpus(tmp_path, case):
    """A dev corpus that spaCy's Corpus reads as no document: (its path, the code that refuses it)."""
    if case == "jsonl":
        path = tmp_path / "dev.jsonl"
        path.write_text('{"text": "Ada Mercer painted the harbour ."}\n', encoding="utf8")
        return path, "E746"
    if case == "not a docbin":
        path = tmp_path / "dev.spacy"
        path.write_text('{"text": "Ada Mercer painted the harbour ."}\n', encoding="utf8")
        return path, "E747"
    path = tmp_path / "empty.spacy"
    DocBin().to_disk(path)
    return path, "E748"


@pytest.mark.hostile("silent wrong results")
@pytest.mark.parametrize("command", ["evaluate", "tune"])
@pytest.mark.parametrize("case", ["jsonl", "not a docbin", "empty"])
def test_a_corpus_of_no_documents_is_refused_naming_the_file(saved, tmp_path, command, case):
    """evaluate and tune on a file that is not a DocBin, or one without documents, reported 0.0 for everything
    and exited 0 (and tune saved the pipeline by those scores): now a coded error names the file, and nothing
    is saved."""
    model, _ = saved
    path, code = _bad_corpus(tmp_path, case)
    args = [command, str(model), str(path)]
    if command == "tune":
        args += [str(tmp_path / "tuned"), "--setting", "predict_max_antecedents", "--values", "1,2"]
    result = runner.invoke(app, args)
    output = " ".join(result.output.split())
    assert result.exit_code == 1 and f"[spacy_el {code}]" in output and path.name in output, result.output
    assert not (tmp_path / "tuned").exists()


def test_tune_setting_refuses_a_corpus_without_examples(saved):
    model, _ = saved
    with pytest.raises(ValueError, match=r"\[spacy_el E749\]"):
        tune_setting(spacy.load(model), lambda nlp: iter(()), NAME, "predict_max_antecedents", [1, 2])

"""Prediction settings of a pipeline's spacy_el components given to ``annotate``
(``--components.NAME.SETTING VALUE``; :mod:`spacy_el.pipeline.configure`), with the tiny joint_coref_linker of
the component tests: applied in every engine, recorded in the manifest, and refused naming what to fix."""
import json

import pytest
from typer.testing import CliRunner

from spacy_el.annotate import annotate, read_output
from spacy_el.annotate.compute import ConfiguredPipeline, InProcessEngine, load_pipeline
from spacy_el.cli import app
from spacy_el.pipeline.configure import configure_pipeline, settings_from_overrides

from ..pipeline.test_joint_coref_linker import NAME, saved_initialized
from .conftest import TEXTS, write_inputs

runner = CliRunner()
FEWER = {NAME: {"predict_max_antecedents": 1}}


@pytest.fixture(scope="module")
def jcl_dir(tiny_encoder, tmp_path_factory):
    """A tiny initialised joint_coref_linker pipeline on disk (predict_max_antecedents 0: the model's 50)."""
    root = tmp_path_factory.mktemp("annotate_settings")
    saved_initialized(tiny_encoder, root)
    return root / "model"


@pytest.fixture
def corpus(tmp_path):
    return write_inputs(tmp_path / "in", TEXTS)["jsonl"]


def antecedents(nlp) -> int:
    return nlp.get_pipe(NAME).settings.predict_max_antecedents


def test_every_engine_loads_the_pipeline_with_the_settings(jcl_dir):
    assert antecedents(load_pipeline(str(jcl_dir))) == 0
    assert antecedents(load_pipeline(ConfiguredPipeline(str(jcl_dir), FEWER))) == 1
    # the in-process engine, the process pool's driver and workers, and Ray's actors all load through it
    assert antecedents(InProcessEngine(ConfiguredPipeline(str(jcl_dir), FEWER), 8).nlp) == 1


def test_settings_are_recorded_and_resume_refuses_other_ones(jcl_dir, corpus, tmp_path):
    out = tmp_path / "out"
    annotate(jcl_dir, corpus, out, chunk_size=3, progress=False, component_settings=FEWER)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["settings"]["component_settings"] == FEWER
    with pytest.raises(ValueError, match="E510.*component_settings"):
        annotate(jcl_dir, corpus, out, resume=True, progress=False)
    with pytest.raises(ValueError, match="E510.*component_settings"):
        annotate(jcl_dir, corpus, out, resume=True, progress=False, component_settings={NAME: {"predict_max_antecedents": 2}})
    # the same settings resume (nothing is left to do)
    summary = annotate(jcl_dir, corpus, out, resume=True, progress=False, component_settings=FEWER)
    assert summary.resumed_from == len(TEXTS)


def test_worker_processes_give_what_the_configured_pipeline_gives(jcl_dir, corpus, tmp_path):
    annotate(jcl_dir, corpus, tmp_path / "one", chunk_size=4, batch_size=2, progress=False, component_settings=FEWER)
    annotate(jcl_dir, corpus, tmp_path / "two", chunk_size=4, batch_size=2, n_process=2, progress=False,
             component_settings=FEWER)
    configured = configure_pipeline(load_pipeline(str(jcl_dir)), FEWER, "test")
    annotate(configured, corpus, tmp_path / "loaded", chunk_size=4, batch_size=2, progress=False)
    assert read_output(tmp_path / "one") == read_output(tmp_path / "two") == read_output(tmp_path / "loaded")


def test_the_command_takes_settings_as_config_overrides(jcl_dir, corpus, tmp_path):
    result = runner.invoke(app, ["annotate", str(jcl_dir), str(corpus), str(tmp_path / "out"), "--no-progress",
                                 f"--components.{NAME}.predict_max_antecedents", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["settings"]["component_settings"] == FEWER


@pytest.mark.parametrize("overrides, message", [
    ({"training.max_steps": 3}, "--training.max_steps is not a component setting"),
    ({f"components.{NAME}": 3}, "--components.NAME.SETTING VALUE"),
    ({f"components.{NAME}.model.window": 3}, "--components.NAME.SETTING VALUE"),
])
def test_overrides_that_are_not_component_settings_are_refused(overrides, message):
    with pytest.raises(ValueError, match=r"^\[spacy_el E834\] annotate: .*" + message.replace(".", r"\.")):
        settings_from_overrides(overrides, "annotate")


@pytest.mark.parametrize("settings, message", [
    ({"ner": {"predict_max_antecedents": 1}}, "no component 'ner'"),
    ({NAME: {"no_such_setting": 1}}, "no_such_setting"),
    ({NAME: {"predict_max_antecedents": -1}}, "predict_max_antecedents"),
])
def test_bad_settings_are_refused_naming_them_and_nothing_is_changed(jcl_dir, settings, message):
    nlp = load_pipeline(str(jcl_dir))
    with pytest.raises(ValueError, match=rf"^\[spacy_el E(832|901|902)\] annotate: .*{message}"):
        configure_pipeline(nlp, {**FEWER, **settings} if NAME not in settings else settings, "annotate")
    assert antecedents(nlp) == 0


def test_the_command_refuses_a_bad_setting_naming_it(jcl_dir, corpus, tmp_path):
    result = runner.invoke(app, ["annotate", str(jcl_dir), str(corpus), str(tmp_path / "out"), "--no-progress",
                                 f"--components.{NAME}.no_such_setting", "1"])
    assert result.exit_code != 0
    assert "no_such_setting" in str(result.exception) + result.output

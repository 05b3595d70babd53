"""Settings given as config overrides when a pipeline is loaded (``spacy.load(path, config=...)``) are the ones a
spacy_el component predicts with; a setting the config leaves alone keeps its saved value, ``configure`` after
training included (``KBTorchPipe.from_disk``)."""
import shutil

import pytest
import spacy

from .test_joint_coref_linker import NAME, make_nlp, saved_initialized


@pytest.fixture(scope="module")
def configured_dir(tiny_encoder, tmp_path_factory):
    """A tiny joint_coref_linker pipeline saved after ``configure(predict_max_antecedents=7)``."""
    root = tmp_path_factory.mktemp("load_overrides")
    saved_initialized(tiny_encoder, root, predict_max_antecedents=7)
    return root / "model"


def antecedents(nlp) -> int:
    return nlp.get_pipe(NAME).settings.predict_max_antecedents


def test_without_overrides_the_saved_settings_load(configured_dir):
    assert antecedents(spacy.load(configured_dir)) == 7
    # the saved config says so too: nlp.config had 0 (configure does not change it), saving wrote what runs
    assert spacy.util.load_config(configured_dir / "config.cfg")["components"][NAME]["predict_max_antecedents"] == 7


@pytest.mark.parametrize("override, expected", [(None, 7), (3, 3), (7, 7)])
def test_a_pipeline_saved_before_its_config_recorded_configure_loads_as_before(configured_dir, tmp_path, override, expected):
    """A pipeline saved by an earlier spacy_el: its config.cfg still shows the factory's 0."""
    shutil.copytree(configured_dir, tmp_path / "old")
    config = spacy.util.load_config(tmp_path / "old" / "config.cfg", interpolate=False)
    config["components"][NAME]["predict_max_antecedents"] = 0
    config.to_disk(tmp_path / "old" / "config.cfg")
    overrides = {} if override is None else {"components": {NAME: {"predict_max_antecedents": override}}}
    assert antecedents(spacy.load(tmp_path / "old", config=overrides)) == expected


@pytest.mark.parametrize("value", [3, 0])
def test_a_config_override_is_what_the_component_predicts_with(configured_dir, value):
    nlp = spacy.load(configured_dir, config={"components": {NAME: {"predict_max_antecedents": value}}})
    assert antecedents(nlp) == value
    assert nlp.config["components"][NAME]["predict_max_antecedents"] == value
    assert nlp.get_pipe(NAME).cfg["predict_max_antecedents"] == value  # and what it saves


def test_an_override_of_another_setting_leaves_the_saved_ones(configured_dir):
    nlp = spacy.load(configured_dir, config={"components": {NAME: {"write_ents": True}}})
    assert nlp.get_pipe(NAME).settings.write_ents is True
    assert antecedents(nlp) == 7


def test_a_component_loaded_from_its_own_folder_keeps_its_saved_settings(configured_dir, tiny_encoder, tmp_path):
    shutil.copytree(configured_dir / NAME, tmp_path / "alone" / NAME)  # no config.cfg beside it
    nlp, _ = make_nlp(tiny_encoder, tmp_path)
    nlp.get_pipe(NAME).from_disk(tmp_path / "alone" / NAME, exclude=["vocab"])
    assert antecedents(nlp) == 7

"""Which value of a setting a loaded spacy_el component predicts with (``KBTorchPipe``, module docstring): the
pipeline's config, a config override at loading included, unless ``configure`` changed the setting after the
component was constructed; ``configure_pipeline`` writes its changes into the config, so an override wins over
them. The settings file holds nothing it does not know."""
import shutil

import pytest
import spacy
import srsly

from spacy_el.pipeline.configure import configure_pipeline

from .test_joint_coref_linker import NAME, make_nlp, saved_initialized


@pytest.fixture(scope="module")
def saved(tiny_encoder, tmp_path_factory):
    """A tiny joint_coref_linker pipeline saved three ways: as built ("plain"), after
    ``configure(predict_max_antecedents=7)`` ("configured"), after ``configure_pipeline`` with the same setting
    ("in_config")."""
    root = tmp_path_factory.mktemp("load_overrides")
    nlp = saved_initialized(tiny_encoder, root)
    nlp.to_disk(root / "plain")
    nlp.get_pipe(NAME).configure(predict_max_antecedents=7)
    nlp.to_disk(root / "configured")
    configure_pipeline(nlp, {NAME: {"predict_max_antecedents": 7}}, "test")
    nlp.to_disk(root / "in_config")
    return root


def antecedents(nlp) -> int:
    return nlp.get_pipe(NAME).settings.predict_max_antecedents


def cfg_file(path):
    return srsly.read_json(path / NAME / "cfg")


def config_value(path):
    return spacy.util.load_config(path / "config.cfg")["components"][NAME]["predict_max_antecedents"]


def test_a_setting_changed_by_configure_is_saved_with_the_component(saved):
    assert antecedents(spacy.load(saved / "configured")) == 7
    assert cfg_file(saved / "configured")["predict_max_antecedents"] == 7
    assert config_value(saved / "configured") == 0, "config.cfg is Language's: spacy_el never rewrites it"
    assert "predict_max_antecedents" not in cfg_file(saved / "plain"), "only changed settings are in the file"


def test_configure_pipeline_writes_the_settings_into_the_config(saved):
    assert config_value(saved / "in_config") == 7
    assert "predict_max_antecedents" not in cfg_file(saved / "in_config")
    assert antecedents(spacy.load(saved / "in_config")) == 7


@pytest.mark.parametrize("folder", ["plain", "in_config"])
@pytest.mark.parametrize("value", [3, 0])
def test_a_config_override_at_loading_is_what_the_component_predicts_with(saved, folder, value):
    nlp = spacy.load(saved / folder, config={"components": {NAME: {"predict_max_antecedents": value}}})
    assert antecedents(nlp) == value
    assert nlp.config["components"][NAME]["predict_max_antecedents"] == value


def test_a_setting_changed_by_configure_wins_over_the_config_at_loading(saved):
    nlp = spacy.load(saved / "configured", config={"components": {NAME: {"predict_max_antecedents": 3}}})
    assert antecedents(nlp) == 7


def test_an_override_of_another_setting_leaves_the_configured_one(saved):
    nlp = spacy.load(saved / "configured", config={"components": {NAME: {"write_ents": True}}})
    assert nlp.get_pipe(NAME).settings.write_ents is True
    assert antecedents(nlp) == 7


def test_save_load_save_keeps_the_configured_setting_byte_for_byte(saved, tmp_path):
    spacy.load(saved / "configured").to_disk(tmp_path / "again")
    assert (tmp_path / "again" / NAME / "cfg").read_bytes() == (saved / "configured" / NAME / "cfg").read_bytes()


def test_a_component_loaded_from_its_own_folder_keeps_its_configured_settings(saved, tiny_encoder, tmp_path):
    shutil.copytree(saved / "configured" / NAME, tmp_path / "alone" / NAME)  # no config.cfg beside it
    nlp, _ = make_nlp(tiny_encoder, tmp_path)
    nlp.get_pipe(NAME).from_disk(tmp_path / "alone" / NAME, exclude=["vocab"])
    assert antecedents(nlp) == 7


@pytest.mark.parametrize("key, value", [("top_kk", 3), ("mode", None)])
def test_an_unknown_key_in_the_settings_file_is_refused_naming_it_and_the_file(saved, tmp_path, key, value):
    shutil.copytree(saved / "plain", tmp_path / "edited")
    path = tmp_path / "edited" / NAME / "cfg"
    srsly.write_json(path, {**srsly.read_json(path), key: value})
    with pytest.raises(ValueError, match=rf"\[spacy_el E810\].*'{key}'") as info:
        spacy.load(tmp_path / "edited")
    assert str(path) in str(info.value)


def test_a_model_without_a_checksum_in_its_settings_file_is_refused(saved, tmp_path):
    shutil.copytree(saved / "plain", tmp_path / "edited")
    path = tmp_path / "edited" / NAME / "cfg"
    srsly.write_json(path, {k: v for k, v in srsly.read_json(path).items() if k != "model_checksum"})
    with pytest.raises(ValueError, match=r"\[spacy_el E811\].*model_checksum") as info:
        spacy.load(tmp_path / "edited")
    assert str(tmp_path / "edited" / NAME / "model") in str(info.value)


def test_cfg_is_a_read_only_view(saved):
    pipe = spacy.load(saved / "configured").get_pipe(NAME)
    assert pipe.cfg["predict_max_antecedents"] == 7 and pipe.cfg["write_ents"] is False
    with pytest.raises(TypeError, match="E815"):
        pipe.cfg["write_ents"] = True
    assert pipe.settings.write_ents is False

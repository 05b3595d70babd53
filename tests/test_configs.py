"""The joint_coref_linker training configs build their pipeline and resolve their [training] block.

(configs/ner_constrained_linker.cfg sources a trained NER pipeline, so it cannot be built here.)"""
from pathlib import Path

import pytest
from spacy.schemas import ConfigSchemaTraining
from spacy.util import load_config, load_model_from_config, registry

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
JOINT = sorted(CONFIGS.glob("joint_coref_linker*.cfg"))


def test_the_joint_configs_exist():
    assert {p.name for p in JOINT} >= {"joint_coref_linker.cfg", "joint_coref_linker_aida.cfg",
                                        "joint_coref_linker_coref.cfg", "joint_coref_linker_gpu.cfg"}


@pytest.mark.parametrize("path", JOINT, ids=lambda p: p.name)
def test_config_builds_and_resolves(path, tiny_encoder):
    overrides = {"paths.encoder": tiny_encoder} if "${paths.encoder}" in path.read_text() else {}
    config = load_config(path, overrides=overrides, interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names
    training = registry.resolve(nlp.config.interpolate()["training"], schema=ConfigSchemaTraining)
    assert training["max_steps"] > 0 and training["optimizer"] is not None


def test_coref_config_is_a_coreference_resolver():
    config = load_config(CONFIGS / "joint_coref_linker_coref.cfg", interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True)
    assert nlp.get_pipe("joint_coref_linker").mode == "coref"

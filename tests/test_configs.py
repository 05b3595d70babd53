"""The joint_coref_linker and ner_stack_lstm training configs build their pipeline and resolve their [training] block.

(configs/ner_constrained_linker.cfg, ner_stack_lstm_el_only.cfg and baselines/entity_linker*.cfg source trained
pipelines, so they cannot be built here.)"""
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


@pytest.mark.parametrize("path", [CONFIGS / "ner_stack_lstm.cfg", CONFIGS / "baselines" / "ner_glove.cfg"], ids=lambda p: p.name)
def test_ner_stack_lstm_and_its_peer_configs_build_and_resolve(path):
    # The GloVe vectors (corpus/glove50) are only needed at initialize, not to build the pipeline.
    config = load_config(path, interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    training = registry.resolve(nlp.config.interpolate()["training"], schema=ConfigSchemaTraining)
    assert training["max_steps"] > 0 and training["annotating_components"] == (["sentencizer"] if "stack" in path.name else [])
    tok2vec_embed = config["components"]["ner_stack_lstm"]["model"]["tok2vec"]["embed"] if "stack" in path.name else config["components"]["tok2vec"]["model"]["embed"]
    assert tok2vec_embed["@architectures"] == "spacy.CharacterEmbed.v2" and tok2vec_embed["include_static_vectors"] is True


def test_ner_only_override():
    config = load_config(CONFIGS / "ner_stack_lstm.cfg", overrides={"components.ner_stack_lstm.tasks": "ner"}, interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True)
    assert nlp.get_pipe("ner_stack_lstm").tasks == "ner"


def test_entqa_configs_build_and_resolve():
    """The retriever config as it is; the reader config with its sourced retriever replaced by the
    retriever config's own block (the trained retriever does not exist here)."""
    retriever_config = load_config(CONFIGS / "entity_retriever.cfg", interpolate=True)
    nlp = load_model_from_config(retriever_config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["entity_retriever"]
    reader_config = load_config(CONFIGS / "entqa_reader.cfg", interpolate=True)
    reader_config["components"]["entity_retriever"] = retriever_config["components"]["entity_retriever"]
    nlp = load_model_from_config(reader_config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["entity_retriever", "entqa_reader"]
    training = registry.resolve(nlp.config.interpolate()["training"], schema=ConfigSchemaTraining)
    assert training["frozen_components"] == training["annotating_components"] == ["entity_retriever"]


def test_entqa_joint_reader_config_builds_and_resolves():
    """configs/entqa_reader_joint.cfg: the per-candidate reader config's pipeline with the joint reader mode."""
    retriever_config = load_config(CONFIGS / "entity_retriever.cfg", interpolate=True)
    config = load_config(CONFIGS / "entqa_reader_joint.cfg", interpolate=True)
    config["components"]["entity_retriever"] = retriever_config["components"]["entity_retriever"]
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["entity_retriever", "entqa_reader"]
    reader = nlp.get_pipe("entqa_reader")
    assert reader.settings.reader_mode == "joint" and reader.settings.window_length > 32
    per_candidate = load_config(CONFIGS / "entqa_reader.cfg", interpolate=True)
    assert config["training"]["frozen_components"] == per_candidate["training"]["frozen_components"] == ["entity_retriever"]
    assert config["training"]["annotating_components"] == ["entity_retriever"]

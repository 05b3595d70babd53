"""Every component takes its settings from one typed settings class: the factory's defaults, the
construction checks, ``configure`` (and so ``spacy-el.ComponentSettings.v1``) and the reads agree."""
import pytest
import spacy

from spacy_el.pipeline.component_settings import component_settings

# component -> (a setting, an invalid value, a valid other value)
CASES = {
    "ner_stack_lstm": ("min_nil_prob", 0.0, 0.7),
    "entity_retriever": ("hard_negative_ratio", 1.5, 0.2),
    "entqa_reader": ("spans_key", "", "predictions"),
    "joint_coref_linker": ("mentions_from", "spans", "ents"),
    "ner_constrained_linker": ("decoding", "strict", "hard"),
}


@pytest.mark.parametrize("factory", sorted(CASES))
def test_factory_defaults_are_the_settings_class_defaults(factory):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory)
    defaults = pipe.settings_class.defaults()
    assert {name: pipe.cfg[name] for name in defaults} == defaults
    assert pipe.settings == pipe.settings_class()


@pytest.mark.parametrize("factory", sorted(CASES))
def test_invalid_settings_are_refused_at_construction_and_in_configure(factory):
    name, invalid, valid = CASES[factory]
    with pytest.raises(ValueError, match=rf"E901\].*{factory}: {name} must be"):
        spacy.blank("en").add_pipe(factory, config={name: invalid})
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory)
    with pytest.raises(ValueError, match=rf"E901\].*{factory}: {name} must be"):
        component_settings({factory: {name: invalid}})(nlp)
    with pytest.raises(ValueError, match=rf"E902\] {factory} has no setting"):
        pipe.configure(no_such_setting=1)
    assert getattr(pipe.settings, name) != invalid, "a refused value is not applied"
    pipe.configure(**{name: valid})
    assert getattr(pipe.settings, name) == valid and pipe.cfg[name] == valid


@pytest.mark.parametrize("factory", sorted(CASES))
def test_cfg_is_read_only(factory):
    name, invalid, _ = CASES[factory]
    pipe = spacy.blank("en").add_pipe(factory)
    with pytest.raises(TypeError, match="E815"):
        pipe.cfg[name] = invalid
    with pytest.raises(TypeError, match="E815"):
        pipe.cfg.update({name: invalid})
    assert getattr(pipe.settings, name) != invalid


@pytest.mark.parametrize("factory", ["ner_constrained_linker", "joint_coref_linker"])
def test_a_list_setting_is_a_list_in_cfg_and_a_tuple_in_settings(factory):
    pipe = spacy.blank("en").add_pipe(factory, config={"unlinkable_labels": ["DATE"]})
    assert pipe.cfg["unlinkable_labels"] == ["DATE"] and pipe.settings.unlinkable_labels == ("DATE",)
    pipe.cfg["unlinkable_labels"].append("TIME")  # a copy: the settings do not change
    assert pipe.settings.unlinkable_labels == ("DATE",)
    with pytest.raises(ValueError, match=r"E901\] ner_constrained_linker: unlinkable_labels|E901\] joint_coref_linker: unlinkable_labels"):
        pipe.configure(unlinkable_labels="DATE")

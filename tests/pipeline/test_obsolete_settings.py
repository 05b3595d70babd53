"""Settings saved by an earlier spacy_el that no longer exist (``spacy_el.pipeline.obsolete_settings``): loading
a component migrates each with a warning when its candidates generator already does what the saved value did, and
refuses it otherwise, naming the setting, the file and the config line that replaces it. Nothing is merged or
dropped silently. The components here are untrained: only their settings file is read (fast)."""
import warnings

import pytest
import spacy
import srsly

from spacy_el.pipeline.obsolete_settings import OBSOLETE_SETTINGS, ObsoleteSettingWarning

ONLY_CFG = ["vocab", "kb", "model"]  # from_disk reads only the settings file


def _pipe(factory, name=None, candidates=None):
    config = {} if candidates is None else {"candidates": candidates}
    return spacy.blank("en").add_pipe(factory, name=name or factory, config=config)


def _saved(pipe, **old):
    """The settings file of ``pipe`` as an earlier spacy_el wrote it: its settings plus ``old``."""
    return {**pipe.cfg, "dims": {}, **old}


def _from_disk(pipe, saved, tmp_path):
    folder = tmp_path / pipe.name
    folder.mkdir()
    srsly.write_json(folder / "cfg", saved)
    pipe.from_disk(folder, exclude=ONLY_CFG)
    return folder / "cfg"


def test_the_table_names_removed_settings_of_real_components():
    for factory, removed in OBSOLETE_SETTINGS.items():
        pipe = _pipe(factory)
        assert pipe.settings_class.component == factory
        assert not set(removed) & set(pipe.settings_class.names()), "a removed setting cannot be a current one"
        for entry in removed.values():
            assert hasattr(entry.generator_class(), entry.argument)


# What the defaults of the earlier versions saved; the current default generators do the same.
DEFAULT_OLD = [
    ("ner_stack_lstm", {"top_k": 30, "fuzzy_candidates": False}),
    ("joint_coref_linker", {"fuzzy_candidates": False}),
]


@pytest.mark.parametrize("factory,old", DEFAULT_OLD)
def test_a_setting_the_generator_already_keeps_is_migrated_with_a_warning(factory, old, tmp_path):
    pipe = _pipe(factory)
    settings = pipe.settings
    with pytest.warns(ObsoleteSettingWarning) as record:
        cfg_file = _from_disk(pipe, _saved(pipe, **old), tmp_path)
    messages = [str(w.message) for w in record if issubclass(w.category, ObsoleteSettingWarning)]
    assert len(messages) == len(old)
    for name, message in zip(sorted(old), messages):
        assert name in message and str(cfg_file) in message and "candidates generator" in message
    assert not set(old) & set(pipe.cfg)
    assert pipe.settings == settings
    saved_again = _saved(pipe)  # what saving writes (an untrained ner_stack_lstm cannot save its model dims)
    assert not set(old) & set(saved_again)
    with warnings.catch_warnings():  # the re-saved settings load without a warning
        warnings.simplefilter("error", ObsoleteSettingWarning)
        _pipe(factory).from_bytes(srsly.msgpack_dumps({"cfg": srsly.json_dumps(saved_again)}))


def test_migration_through_bytes_names_bytes():
    pipe = _pipe("joint_coref_linker")
    data = srsly.msgpack_dumps({"cfg": srsly.json_dumps(_saved(pipe, fuzzy_candidates=False))})
    with pytest.warns(ObsoleteSettingWarning, match=r"settings in bytes hold fuzzy_candidates = false"):
        pipe.from_bytes(data)
    assert "fuzzy_candidates" not in pipe.cfg


def test_a_value_the_generator_would_change_is_refused_naming_the_file_and_the_config_line(tmp_path):
    pipe = _pipe("ner_stack_lstm", name="nsl")
    before = dict(pipe.cfg)
    # nil_threshold is valid: it is not merged either when the file is refused.
    saved = {**_saved(pipe, top_k=50, fuzzy_candidates=False), "nil_threshold": 0.7}
    with pytest.raises(ValueError, match=r"^\[spacy_el\] The nsl settings in .* hold top_k = 50") as info:
        _from_disk(pipe, saved, tmp_path)
    message = str(info.value)
    assert str(tmp_path / "nsl" / "cfg") in message
    assert '[components.nsl.candidates] @misc = "spacy-el.AliasCandidates.v1", top_k = 50' in message
    assert "AliasCandidates has top_k = 30" in message and "docs/candidates.md" in message
    assert "fuzzy_candidates" not in message  # that one the generator keeps
    assert pipe.cfg == before


def test_every_conflicting_setting_is_named_in_one_error(tmp_path):
    pipe = _pipe("ner_stack_lstm")
    with pytest.raises(ValueError, match=r"hold fuzzy_candidates = true, top_k = 5: settings that") as info:
        _from_disk(pipe, _saved(pipe, top_k=5, fuzzy_candidates=True), tmp_path)
    assert '@misc = "spacy-el.AliasCandidates.v1", fuzzy = true, top_k = 5' in str(info.value)


def test_another_generator_class_does_not_keep_the_old_alias_setting(tmp_path):
    pipe = _pipe("ner_stack_lstm", candidates={"@misc": "spacy-el.DenseCandidates.v1", "top_k": 30})
    with pytest.raises(ValueError, match=r"generator is DenseCandidates, not AliasCandidates"):
        _from_disk(pipe, _saved(pipe, top_k=30), tmp_path)


def test_a_generator_set_as_the_error_says_loads_the_old_settings(tmp_path):
    pipe = _pipe("joint_coref_linker", candidates={"@misc": "spacy-el.AliasCandidates.v1", "top_k": 16, "fuzzy": True})
    with pytest.warns(ObsoleteSettingWarning):
        _from_disk(pipe, _saved(pipe, fuzzy_candidates=True), tmp_path)
    assert "fuzzy_candidates" not in pipe.cfg


def test_configure_says_what_replaced_a_removed_setting():
    pipe = _pipe("ner_stack_lstm")
    with pytest.raises(ValueError, match=r"no longer has the setting top_k: .*\[components\.ner_stack_lstm\.candidates\]"):
        pipe.configure(top_k=50)
    # A setting another component still has is no concern of this table.
    _pipe("ner_constrained_linker").configure(top_k=50)

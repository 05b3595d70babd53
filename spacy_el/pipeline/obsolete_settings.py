"""Settings that earlier spacy_el versions saved in a component's ``cfg`` and that no longer exist.

A pipeline saved before a setting was removed still holds it in its settings file. Loading one
(``spacy.load``, ``nlp.from_disk``, ``from_bytes``, a training checkpoint) handles every such setting
explicitly; none is merged or dropped silently:

* **migrated, with a warning**, when the component's current configuration already does what the old
  value did (e.g. an old ``ner_stack_lstm`` saved with ``top_k = 30`` whose ``candidates`` generator is
  the alias table's top 30): the setting is left out of ``cfg`` and an ``ObsoleteSettingWarning`` says
  so; saving the pipeline again writes its settings without it;
* **refused**, with a ``ValueError`` that names the setting, its value, the file and the config line
  that replaces it, when the current configuration would behave differently (another ``top_k``, another
  generator): set that line in the pipeline's ``config.cfg`` (or remove the setting from the file to
  accept the configured generator) and load again.

Each entry says which attribute of the component's ``candidates`` generator
(:mod:`spacy_el.candidates`, ``docs/candidates.md``) now holds the setting, and of which generator
class: only that class reads the old setting's meaning.

=====================  =====================  =======================================================
Component              Removed setting        Replaced by
=====================  =====================  =======================================================
``ner_stack_lstm``     ``top_k``              ``[components.<name>.candidates] top_k`` (alias)
``ner_stack_lstm``     ``fuzzy_candidates``   ``[components.<name>.candidates] fuzzy`` (alias)
``joint_coref_linker`` ``fuzzy_candidates``   ``[components.<name>.candidates] fuzzy`` (alias)
=====================  =====================  =======================================================

(``joint_coref_linker``'s ``top_k_candidates`` was an attribute of its model architecture, not a saved
setting; its config block fails spaCy's own validation, as does any removed argument in an old
``config.cfg``.)
"""
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Tuple, Type

from ..candidates import AliasCandidates, CandidateGenerator


class ObsoleteSettingWarning(UserWarning):
    """A saved setting that spacy_el no longer has was migrated (left out of ``cfg``) on loading."""


@dataclass(frozen=True)
class ObsoleteSetting:
    """A removed setting, now the argument ``argument`` of the component's ``candidates`` generator
    (the generator keeps it as an attribute of the same name) when that generator is a
    ``generator_class``, registered as ``registered_name``. ``meaning``: what the setting set."""

    argument: str
    generator_class: Type[CandidateGenerator]
    registered_name: str
    meaning: str


_ALIAS = "spacy-el.AliasCandidates.v1"
_TOP_K = ObsoleteSetting("top_k", AliasCandidates, _ALIAS, "the number of candidates per mention")
_FUZZY = ObsoleteSetting("fuzzy", AliasCandidates, _ALIAS, "the alias table's fuzzy tier")

#: Component (factory) name -> removed setting -> what replaces it.
OBSOLETE_SETTINGS: Mapping[str, Mapping[str, ObsoleteSetting]] = {
    "ner_stack_lstm": {"top_k": _TOP_K, "fuzzy_candidates": _FUZZY},  # removed in 96d83c8 (issue 26)
    "joint_coref_linker": {"fuzzy_candidates": _FUZZY},  # removed in 2382bfa (issue 26)
}


def obsolete_settings_of(component: str) -> Mapping[str, ObsoleteSetting]:
    """The removed settings of a component (factory) name: empty when it has none."""
    return OBSOLETE_SETTINGS.get(component, {})


def migrate_obsolete_settings(
    saved: Dict[str, Any], *, component: str, pipe_name: str, generator: Any, where: str
) -> Tuple[Dict[str, Any], Tuple[str, ...]]:
    """``saved`` (a settings file's content) without its removed settings, each checked against the
    component's ``generator``. RETURNS: (the settings to merge, the names migrated; one warning each).
    Raises a ValueError naming the setting, its value, ``where`` and what replaces it when the generator
    would not do what the saved value did."""
    obsolete = obsolete_settings_of(component)
    migrated, conflicts = [], []
    for name in sorted(set(saved) & set(obsolete)):
        entry, value = obsolete[name], saved[name]
        current = _generator_value(generator, entry)
        if current is _MISSING or not _same(current, value):
            conflicts.append((name, entry, value, current))
        else:
            migrated.append((name, entry, value))
    if conflicts:
        held = ", ".join(f"{name} = {_config_value(value)}" for name, _, value, _ in conflicts)
        meanings = "; ".join(
            f"{entry.meaning} ({name}) now comes from its {entry.argument}, and the configured "
            + (
                f"{type(generator).__name__} has {entry.argument} = {_config_value(current)}"
                if current is not _MISSING
                else f"generator is {type(generator).__name__}, not {entry.generator_class.__name__}"
            )
            for name, entry, value, current in conflicts
        )
        lines = {entry.registered_name: [] for _, entry, _, _ in conflicts}
        for _, entry, value, _ in conflicts:
            lines[entry.registered_name].append(f"{entry.argument} = {_config_value(value)}")
        config = "; ".join(
            f'[components.{pipe_name}.candidates] @misc = "{registered}", {", ".join(values)}'
            for registered, values in lines.items()
        )
        names = ", ".join(repr(name) for name, _, _, _ in conflicts)
        raise ValueError(
            f"[spacy_el] The {pipe_name} settings in {where} hold {held}: {'settings' if len(conflicts) > 1 else 'a setting'} "
            f"that {component} no longer has. The component's candidates generator replaces "
            f"{'them' if len(conflicts) > 1 else 'it'} "
            f"(docs/candidates.md), and it would not keep the saved behaviour: {meanings}. To keep the saved "
            f"behaviour, set {config} in the pipeline's config.cfg (or the config given to add_pipe); to use "
            f"the configured generator instead, remove {names} from those settings."
        )
    for name, entry, value in migrated:
        warnings.warn(
            f"[spacy_el] The {pipe_name} settings in {where} hold {name} = {_config_value(value)}, a setting that "
            f"{component} no longer has: {entry.meaning} now comes from the component's candidates generator, "
            f"whose {entry.argument} is {_config_value(value)} too ({type(generator).__name__}), so the setting "
            f"is left out. Save the pipeline again to write its settings without it.",
            ObsoleteSettingWarning,
            stacklevel=2,
        )
    dropped = {name for name, _, _ in migrated}
    return {k: v for k, v in saved.items() if k not in dropped}, tuple(sorted(dropped))


def refuse_obsolete(component: str, pipe_name: str, names: Any) -> None:
    """A ValueError when ``names`` (settings given to ``configure``) include a removed setting, saying
    what replaces it."""
    obsolete = obsolete_settings_of(component)
    for name in sorted(set(names) & set(obsolete)):
        entry = obsolete[name]
        raise ValueError(
            f"[spacy_el] {component} no longer has the setting {name}: {entry.meaning} now comes from the "
            f"component's candidates generator; set it in [components.{pipe_name}.candidates] "
            f'(@misc = "{entry.registered_name}", {entry.argument} = ...; docs/candidates.md).'
        )


_MISSING = object()


def _generator_value(generator: Any, entry: ObsoleteSetting) -> Any:
    if type(generator) is not entry.generator_class:  # a subclass may read the attribute otherwise
        return _MISSING
    return getattr(generator, entry.argument, _MISSING)


def _same(current: Any, value: Any) -> bool:
    """The same setting value, type included (``true`` is not ``1``)."""
    return type(current) is type(value) and current == value


def _config_value(value: Any) -> str:
    """A value as a config file writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if not isinstance(value, str) else f'"{value}"'


__all__ = ["OBSOLETE_SETTINGS", "ObsoleteSetting", "ObsoleteSettingWarning", "migrate_obsolete_settings",
           "obsolete_settings_of", "refuse_obsolete"]

"""Changing prediction settings of a loaded pipeline's spacy_el components, from the command line.

A trained component's prediction settings (``joint_coref_linker``'s ``predict_max_antecedents``, a linker's
``similarity_weight``) change with ``pipe.configure(...)`` without retraining, and are saved with the component.
``python -m spacy_el annotate`` takes them as spaCy takes config overrides, ``--components.NAME.SETTING VALUE``,
and applies them to the loaded pipeline (in every worker); ``python -m spacy_el tune`` chooses one on a dev
corpus; ``spacy-el.ComponentSettings.v1`` sets them in a composed pipeline's config. All three go through
:func:`configure_pipeline`. ``spacy.load(path, config={"components": {NAME: {SETTING: value}}})`` works too
(``KBTorchPipe.from_disk`` keeps a setting the config changed over the saved one).
"""
from typing import Any, Dict, Mapping, Optional

from spacy.language import Language

from .obsolete_settings import refuse_obsolete

__all__ = ["check_settings", "configurable_pipe", "configure_pipeline", "load_pipeline", "settings_from_overrides"]


def load_pipeline(name: str, settings: Optional[Mapping[str, Mapping[str, Any]]] = None,
                  command: str = "load") -> Language:
    """``spacy.load(name)`` (a package name or a pipeline folder), then ``settings`` applied
    (:func:`configure_pipeline`). A pipeline that cannot be loaded is an ``OSError`` that names it and says why in
    one line, which the command line prints instead of a traceback."""
    import spacy

    try:
        nlp = spacy.load(name)
    except (OSError, ValueError, ImportError) as err:
        first = " ".join(str(err).split())[:300]
        # spaCy's E050: nothing of that name, neither a folder nor an installed package.
        hint = (" Give a pipeline folder (one with a config.cfg, as spacy train or nlp.to_disk writes) or the name of "
                "an installed package." if "[E050]" in first else "")
        raise OSError(f"[spacy_el] Cannot load the pipeline {str(name)!r}: {first}{hint}") from err
    return configure_pipeline(nlp, settings, command) if settings else nlp


def configurable_pipe(nlp: Language, component: str, command: str) -> Any:
    """``nlp``'s component ``component``, refused (a ``ValueError`` that starts with ``command``) when the
    pipeline has none of that name or when it has no settings to change (not a spacy_el component)."""
    if component not in nlp.component_names:
        raise ValueError(f"[spacy_el] {command}: the pipeline has no component {component!r} "
                         f"(it has {', '.join(nlp.component_names) or 'none'}).")
    pipe = nlp.get_pipe(component)
    if not hasattr(pipe, "configure"):
        raise ValueError(f"[spacy_el] {command}: {component!r} ({type(pipe).__name__}) is not a spacy_el component: "
                         "set its options in its own [components] block.")
    return pipe


def settings_from_overrides(overrides: Mapping[str, Any], command: str) -> Dict[str, Dict[str, Any]]:
    """``{component: {setting: value}}`` from spaCy-style overrides (``spacy.cli._util.parse_config_overrides``
    of ``--components.NAME.SETTING VALUE``: ``{"components.NAME.SETTING": value}``). Any other key is refused,
    naming it: these commands change settings of loaded components, not the config a pipeline is built from."""
    settings: Dict[str, Dict[str, Any]] = {}
    for key, value in overrides.items():
        parts = key.split(".")
        if len(parts) != 3 or parts[0] != "components" or not all(parts):
            raise ValueError(
                f"[spacy_el] {command}: --{key} is not a component setting. Give settings of the pipeline's "
                "components as --components.NAME.SETTING VALUE, e.g. --components.joint_coref_linker.predict_max_antecedents 100."
            )
        settings.setdefault(parts[1], {})[parts[2]] = value
    return settings


def configure_pipeline(nlp: Language, settings: Mapping[str, Mapping[str, Any]], command: str) -> Language:
    """Apply ``settings`` (``{component: {setting: value}}``) to ``nlp``'s components with ``configure``, each
    checked as at construction: an unknown component or setting, or a bad value, is refused, naming it, before
    any is changed. RETURNS ``nlp``."""
    pipes = {component: configurable_pipe(nlp, component, command) for component in settings}
    for component, changes in settings.items():
        check_settings(pipes[component], component, changes, command)
    for component, changes in settings.items():
        pipes[component].configure(**changes)
    return nlp


def check_settings(pipe: Any, component: str, changes: Mapping[str, Any], command: str) -> None:
    """Refuse ``changes`` to ``pipe`` (the pipeline's ``component``) as ``configure`` would, without applying them:
    a removed setting (saying what replaced it), an unknown one or a bad value, in a ``ValueError`` that starts
    with ``command``."""
    try:
        refuse_obsolete(pipe.settings_class.component, component, changes)
        pipe.settings.updated(**changes)
    except (TypeError, ValueError) as err:
        raise ValueError(f"[spacy_el] {command}: {str(err).replace('[spacy_el] ', '', 1)}") from err

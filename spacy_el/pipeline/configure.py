"""Changing prediction settings of a loaded pipeline's spacy_el components, from the command line.

A trained component's prediction settings (``joint_coref_linker``'s ``predict_max_antecedents``, a linker's
``similarity_weight``) change with ``pipe.configure(...)`` without retraining, and are saved with the component.
``python -m spacy_el annotate`` takes them as spaCy takes config overrides, ``--components.NAME.SETTING VALUE``,
and applies them to the loaded pipeline (in every worker); ``spacy-el.ComponentSettings.v1`` sets them in a
composed pipeline's config. Both go through :func:`configure_pipeline`, which also writes them into the
pipeline's config, so that the ``config.cfg`` ``nlp.to_disk`` writes says what each component predicts with.
``spacy.load(path, config={"components": {NAME: {SETTING: value}}})`` gives a setting at loading
(:mod:`spacy_el.pipeline.kb_torch_pipe` says which value wins where).
"""
from typing import Any, Dict, Mapping, Optional

from spacy.language import Language

from ..errors import Errors, with_place


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
        raise OSError(Errors.E831.format(name=str(name), problem=first, hint=hint)) from err
    return configure_pipeline(nlp, settings, command) if settings else nlp


def configurable_pipe(nlp: Language, component: str, command: str) -> Any:
    """``nlp``'s component ``component``, refused (a ``ValueError`` that starts with ``command``) when the
    pipeline has none of that name or when it has no settings to change (not a spacy_el component)."""
    if component not in nlp.component_names:
        raise ValueError(Errors.E832.format(command=command, component=component,
                                            known=", ".join(nlp.component_names) or "none"))
    pipe = nlp.get_pipe(component)
    if not hasattr(pipe, "configure"):
        raise ValueError(Errors.E833.format(command=command, component=component, pipe_type=type(pipe).__name__))
    return pipe


def settings_from_overrides(overrides: Mapping[str, Any], command: str) -> Dict[str, Dict[str, Any]]:
    """``{component: {setting: value}}`` from spaCy-style overrides (``spacy.cli._util.parse_config_overrides``
    of ``--components.NAME.SETTING VALUE``: ``{"components.NAME.SETTING": value}``). Any other key is refused,
    naming it: these commands change settings of loaded components, not the config a pipeline is built from."""
    settings: Dict[str, Dict[str, Any]] = {}
    for key, value in overrides.items():
        parts = key.split(".")
        if len(parts) != 3 or parts[0] != "components" or not all(parts):
            raise ValueError(Errors.E834.format(command=command, key=key))
        settings.setdefault(parts[1], {})[parts[2]] = value
    return settings


def configure_pipeline(nlp: Language, settings: Mapping[str, Mapping[str, Any]], command: str) -> Language:
    """Apply ``settings`` (``{component: {setting: value}}``) to ``nlp``'s components with ``configure``, each
    checked as at construction: an unknown component or setting, or a bad value, is refused, naming it, before
    any is changed. Each component's changed settings are written into its block of ``nlp``'s config
    (``KBTorchPipe.record_settings_in``). RETURNS ``nlp``."""
    pipes = {component: configurable_pipe(nlp, component, command) for component in settings}
    for component, changes in settings.items():
        check_settings(pipes[component], component, changes, command)
    for component, changes in settings.items():
        pipes[component].configure(**changes)
        pipes[component].record_settings_in(nlp.get_pipe_config(component))
    return nlp


def check_settings(pipe: Any, component: str, changes: Mapping[str, Any], command: str) -> None:
    """Refuse ``changes`` to ``pipe`` (the pipeline's ``component``) as ``configure`` would, without applying them:
    an unknown setting or a bad value, in a ``ValueError`` that starts with ``command``."""
    try:
        pipe.checked_settings(**changes)
    except (TypeError, ValueError) as err:
        raise ValueError(with_place(str(err), command)) from err  # the code of what was refused, located

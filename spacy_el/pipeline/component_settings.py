"""``spacy-el.ComponentSettings.v1``: change settings of components sourced into a composed pipeline.

spaCy copies a sourced component with the config it was trained with, and ignores any other key of
its ``[components.*]`` block. A composed pipeline sometimes needs another inference setting, e.g. a
``joint_coref_linker`` that clusters the entities of an upstream tagger (``mentions_from = "ents"``).
This callback sets them, checked as the component's constructor checks them::

    [nlp.after_pipeline_creation]
    @callbacks = "spacy-el.ComponentSettings.v1"

    [nlp.after_pipeline_creation.settings]

    [nlp.after_pipeline_creation.settings.joint_coref_linker]
    mentions_from = "ents"
    cluster_link = "upstream"

The callback also writes the settings into the component's own ``[components.*]`` block of the pipeline's
config, so the saved ``config.cfg`` says what the component predicts with; the callback stays in it too, and
gives the same values again when the pipeline is loaded.
"""
from typing import Any, Callable, Dict

from spacy.language import Language
from spacy.util import registry

from .configure import configure_pipeline


@registry.callbacks("spacy-el.ComponentSettings.v1")
def component_settings(settings: Dict[str, Dict[str, Any]]) -> Callable[[Language], Language]:
    """settings: component name -> {setting: value}, applied with the components' ``configure``, every one
    checked before any is changed (:func:`spacy_el.pipeline.configure.configure_pipeline`)."""

    def apply(nlp: Language) -> Language:
        return configure_pipeline(nlp, settings, "spacy-el.ComponentSettings.v1")

    return apply


__all__ = ["component_settings"]

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

The settings are saved with the component and the callback stays in the saved config, so a pipeline
loaded with ``spacy.load`` has them too (the component's own ``[components.*]`` block still shows the
source's values: this block is what changes them).
"""
from typing import Any, Callable, Dict

from spacy.language import Language
from spacy.util import registry


@registry.callbacks("spacy-el.ComponentSettings.v1")
def component_settings(settings: Dict[str, Dict[str, Any]]) -> Callable[[Language], Language]:
    """settings: component name -> {setting: value}, applied with the component's ``configure``."""

    def apply(nlp: Language) -> Language:
        for name, values in settings.items():
            if name not in nlp.component_names:
                raise ValueError(
                    f"[spacy_el] spacy-el.ComponentSettings.v1: no component {name!r} in the pipeline "
                    f"{nlp.component_names}."
                )
            pipe = nlp.get_pipe(name)
            if not hasattr(pipe, "configure"):
                raise ValueError(
                    f"[spacy_el] spacy-el.ComponentSettings.v1: {name!r} ({type(pipe).__name__}) is not a spacy_el "
                    "component; set its options in its own [components] block."
                )
            pipe.configure(**dict(values))
        return nlp

    return apply


__all__ = ["component_settings"]

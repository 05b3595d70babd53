"""One typed settings object per component: its defaults, its checks and its documentation in one place.

A component declares its settings as a frozen dataclass deriving from :class:`ComponentSettings`, typed
arguments as the architectures' (:mod:`spacy_el.ml.arguments`, which checks both). Each field's annotation
gives the setting's type (``int``, ``float``, ``bool``, ``str``, ``Literal[...]`` for a choice,
``Tuple[str, ...]`` for a list of strings, ``Optional[...]`` where ``null`` is allowed) and :func:`setting`
its default and range::

    @dataclass(frozen=True)
    class RetrieverSettings(ComponentSettings):
        owner: ClassVar[str] = "entity_retriever"
        entities_per_passage: int = setting(100, low=1)
        hard_negative_ratio: float = setting(0.1, low=0.0, high=1.0)

The one class serves the factory's default config (``default_config={**RetrieverSettings.defaults(), ...}``,
the only place a default is written: the factory takes every setting without a default), the factory
(``RetrieverSettings.from_arguments(locals())``, given to the component's constructor as ``settings``),
``configure`` and the settings file (``settings.updated(**changes)``, which refuses unknown names), so they
can no longer disagree. Every check fails with a ``ValueError`` that names the component, the setting, what it
must be and what it got.

A ``Tuple[str, ...]`` setting accepts a list or a tuple of strings (a config and a JSON cfg give lists)
and is stored as a tuple, so that the settings object stays immutable; ``defaults()`` and ``to_dict()``
give it as a list, as spaCy's config and a JSON cfg hold it.
"""
from dataclasses import dataclass
from typing import ClassVar

from ..ml.arguments import Arguments, argument

#: A setting's field: its default and range (:func:`spacy_el.ml.arguments.argument`).
setting = argument


@dataclass(frozen=True)
class ComponentSettings(Arguments):
    """Base of the components' settings classes (see the module docstring); ``owner`` is the factory's name."""

    owner: ClassVar[str] = "component"
    kind: ClassVar[str] = "setting"


__all__ = ["ComponentSettings", "setting"]

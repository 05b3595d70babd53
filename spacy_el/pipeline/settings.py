"""One typed settings object per component: its defaults, its checks and its documentation in one place.

A component declares its settings as a frozen dataclass deriving from :class:`ComponentSettings`. Each
field's annotation gives the setting's type (``int``, ``float``, ``bool``, ``str``, ``Literal[...]`` for
a choice, ``Tuple[str, ...]`` for a list of strings, ``Optional[...]`` where ``null`` is allowed) and
:func:`setting` its range::

    @dataclass(frozen=True)
    class RetrieverSettings(ComponentSettings):
        component: ClassVar[str] = "entity_retriever"
        top_k: int = setting(100, low=1)
        hard_negative_ratio: float = setting(0.1, low=0.0, high=1.0)

The one class serves the factory's default config (``default_config={**RetrieverSettings.defaults(), ...}``,
the only place a default is written: the factory takes every setting without a default), the factory
(``RetrieverSettings.from_arguments(locals())``, given to the component's constructor as ``settings``) and
``configure`` and the settings file (``settings.updated(**changes)``, which refuses unknown names), so they
can no longer disagree. Every check fails with a ``ValueError`` that names the component, the setting, what it
must be and what it got.

A ``Tuple[str, ...]`` setting accepts a list or a tuple of strings (a config and a JSON cfg give lists)
and is stored as a tuple, so that the settings object stays immutable; ``defaults()`` and ``to_cfg()``
give it as a list, as spaCy's config and a JSON cfg hold it.
"""
import functools
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Dict, Literal, Mapping, Optional, Tuple, TypeVar, Union, get_args, get_origin, get_type_hints

S = TypeVar("S", bound="ComponentSettings")


def setting(
    default: Any,
    *,
    low: Optional[float] = None,
    high: Optional[float] = None,
    low_open: bool = False,
    high_open: bool = False,
    non_empty: bool = False,
) -> Any:
    """A settings field with its default and range: ``low``/``high`` bound numbers (``*_open``: the bound
    itself is excluded); ``non_empty`` refuses the empty string (for ``Tuple[str, ...]``: as an item)."""
    bounds = {"low": low, "high": high, "low_open": low_open, "high_open": high_open, "non_empty": non_empty}
    return field(default=default, metadata=bounds)


@dataclass(frozen=True)
class ComponentSettings:
    """Base of the components' settings classes (see the module docstring)."""

    component: ClassVar[str] = "component"

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for f in fields(self):
            value = _checked(self.component, f.name, getattr(self, f.name), hints[f.name], f.metadata)
            object.__setattr__(self, f.name, value)  # an int given for a float setting is stored as a float
        self.check()

    def check(self) -> None:
        """Checks that involve several settings (subclasses); raise ``self.invalid(...)``."""

    def invalid(self, name: str, expected: str) -> ValueError:
        """The error for setting ``name``, which must be ``expected``."""
        return ValueError(f"[spacy_el] {self.component}: {name} must be {expected}, got {getattr(self, name)!r}.")

    @classmethod
    @functools.lru_cache(maxsize=None)  # a class's fields never change; KBTorchPipe.settings reads this per access
    def names(cls) -> Tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def defaults(cls) -> Dict[str, Any]:
        """Setting -> default, for the factory's ``default_config``."""
        return {f.name: config_value(f.default) for f in fields(cls) if f.default is not MISSING}

    @classmethod
    def from_cfg(cls: "type[S]", cfg: Mapping[str, Any]) -> S:
        """The settings of a component's ``cfg``; unknown names are refused (a typo must not pass)."""
        unknown = sorted(set(cfg) - set(cls.names()))
        if unknown:
            raise ValueError(
                f"[spacy_el] {cls.component} has no setting {unknown}; its settings are {sorted(cls.names())}."
            )
        return cls(**cfg)

    @classmethod
    def from_arguments(cls: "type[S]", arguments: Mapping[str, Any]) -> S:
        """The settings among a factory's ``arguments`` (its ``locals()``), which must hold every setting."""
        return cls(**{name: arguments[name] for name in cls.names()})

    def updated(self: S, **changes: Any) -> S:
        """A copy with ``changes`` applied, checked as at construction."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ValueError(
                f"[spacy_el] {self.component} has no setting {unknown}; its settings are {sorted(self.names())}."
            )
        return replace(self, **changes)

    def to_cfg(self) -> Dict[str, Any]:
        """Setting -> value, as saved in the component's ``cfg``."""
        return {name: config_value(value) for name, value in asdict(self).items()}


def config_value(value: Any) -> Any:
    """A setting's value as config and JSON hold it: a tuple (``Tuple[str, ...]``) as a list."""
    return list(value) if isinstance(value, tuple) else value


def _checked(component: str, name: str, value: Any, annotation: Any, bounds: Mapping[str, Any]) -> Any:
    """``value`` if it fits ``annotation`` and ``bounds`` (an int for a float becomes a float), else a ValueError."""

    def fail(expected: str) -> ValueError:
        return ValueError(f"[spacy_el] {component}: {name} must be {expected}, got {value!r}.")

    origin = get_origin(annotation)
    if origin is Union:
        options = [a for a in get_args(annotation) if a is not type(None)]
        if value is None:
            return None
        annotation = options[0] if len(options) == 1 else annotation
        origin = get_origin(annotation)
        nullable = " or null"
    else:
        nullable = ""
    if origin is Literal:
        choices = get_args(annotation)
        if value not in choices or isinstance(value, bool) != any(isinstance(c, bool) for c in choices):
            raise fail(f"one of {list(choices)}{nullable}")
        return value
    if origin is tuple:
        if get_args(annotation) != (str, Ellipsis):
            raise TypeError(f"[spacy_el] {component}: setting {name} has an unsupported type {annotation!r}.")
        item = "non-empty string" if bounds.get("non_empty") else "string"
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, str) and (v or not bounds.get("non_empty")) for v in value
        ):
            raise fail(f"a list of {item}s{nullable}")
        return tuple(value)
    if annotation is bool:
        if not isinstance(value, bool):
            raise fail(f"true or false{nullable}")
        return value
    if annotation is str:
        if not isinstance(value, str) or (bounds.get("non_empty") and not value):
            raise fail(f"{'a non-empty' if bounds.get('non_empty') else 'a'} string{nullable}")
        return value
    if annotation in (int, float):
        allowed = (int,) if annotation is int else (int, float)
        # bool is an int to Python, but true for a count is a mistake
        kind = "an int" if annotation is int else "a finite number"
        if isinstance(value, bool) or not isinstance(value, allowed) or not math.isfinite(value):
            raise fail(f"{kind}{_range_text(bounds)}{nullable}")
        if not _in_range(value, bounds):
            raise fail(f"{kind}{_range_text(bounds)}{nullable}")
        return float(value) if annotation is float else value
    raise TypeError(f"[spacy_el] {component}: setting {name} has an unsupported type {annotation!r}.")


def _in_range(value: float, bounds: Mapping[str, Any]) -> bool:
    low, high = bounds.get("low"), bounds.get("high")
    if low is not None and (value <= low if bounds.get("low_open") else value < low):
        return False
    if high is not None and (value >= high if bounds.get("high_open") else value > high):
        return False
    return True


def _range_text(bounds: Mapping[str, Any]) -> str:
    low, high = bounds.get("low"), bounds.get("high")
    if low is not None and high is not None:
        return f" in {'(' if bounds.get('low_open') else '['}{low}, {high}{')' if bounds.get('high_open') else ']'}"
    if low is not None:
        return f" {'>' if bounds.get('low_open') else '>='} {low}"
    if high is not None:
        return f" {'<' if bounds.get('high_open') else '<='} {high}"
    return ""


__all__ = ["ComponentSettings", "setting"]

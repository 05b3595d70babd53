"""Typed, checked arguments: how spacy_el checks what a config gives its architectures and its components.

A frozen dataclass deriving from :class:`Arguments` declares named arguments. Each field's annotation gives the
type (``int``, ``float``, ``bool``, ``str``, ``Literal[...]`` for a choice, ``Tuple[str, ...]`` for a list of
strings, ``Optional[...]`` where ``null`` is allowed) and :func:`argument` its default and range::

    @dataclass(frozen=True)
    class RetrieverArguments(Arguments):
        owner: ClassVar[str] = "EntityRetriever"
        passage_length: int = argument(32, low=1)
        pooling: Literal["mean", "cls"] = "mean"

Constructing one checks every value, then :meth:`Arguments.check` (the checks across arguments), and fails with
a ``ValueError`` that names the owner (an architecture or a component), the argument, what it must be and what
it got. An int given for a float is stored as a float; a list given for a ``Tuple[str, ...]`` is stored as a
tuple, so that the object stays immutable (:meth:`Arguments.defaults` and :meth:`Arguments.to_dict` give it
back as a list, as a config and JSON hold it).

Two kinds derive from it, and nothing else checks what a config gives:

* the architectures' arguments (``spacy_el/ml/*/model.py``): a registered architecture takes each argument,
  typed, without a default, and builds its arguments object from them (:meth:`Arguments.from_arguments`); the
  defaults give the component's default model config;
* the components' settings (:class:`spacy_el.pipeline.settings.ComponentSettings`): a factory takes each
  setting, typed, without a default; the defaults give the factory's default config.
"""
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Dict, Literal, Mapping, Optional, Tuple, TypeVar, Union, get_args, get_origin, get_type_hints

from ..errors import Errors

A = TypeVar("A", bound="Arguments")


def argument(
    default: Any,
    *,
    low: Optional[float] = None,
    high: Optional[float] = None,
    low_open: bool = False,
    high_open: bool = False,
    non_empty: bool = False,
) -> Any:
    """A field with its default and range: ``low``/``high`` bound numbers (``*_open``: the bound itself is
    excluded); ``non_empty`` refuses the empty string (for ``Tuple[str, ...]``: as an item)."""
    bounds = {"low": low, "high": high, "low_open": low_open, "high_open": high_open, "non_empty": non_empty}
    return field(default=default, metadata=bounds)


@dataclass(frozen=True)
class Arguments:
    """Base of the architectures' arguments and the components' settings (see the module docstring)."""

    #: What the arguments belong to, named in every error (an architecture or a component).
    owner: ClassVar[str] = "arguments"
    #: What one of them is called in an error ("argument"; "setting" for a component).
    kind: ClassVar[str] = "argument"

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for f in fields(self):
            value = _checked(self.owner, f.name, getattr(self, f.name), hints[f.name], f.metadata)
            object.__setattr__(self, f.name, value)  # an int given for a float is stored as a float
        self.check()

    def check(self) -> None:
        """Checks that involve several arguments (subclasses); raise ``self.invalid(...)``."""

    def invalid(self, name: str, expected: str) -> ValueError:
        """The error for argument ``name``, which must be ``expected``."""
        return ValueError(Errors.E901.format(owner=self.owner, name=name, expected=expected, value=getattr(self, name)))

    @classmethod
    def names(cls) -> Tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def defaults(cls) -> Dict[str, Any]:
        """Name -> default, as a config holds it: the default config of a component or of its model."""
        return {f.name: config_value(f.default) for f in fields(cls) if f.default is not MISSING}

    @classmethod
    def from_arguments(cls: "type[A]", arguments: Mapping[str, Any]) -> A:
        """The arguments of this class among ``arguments`` (a registered function's or a factory's ``locals()``),
        which must hold every one of them."""
        return cls(**{name: arguments[name] for name in cls.names()})

    def updated(self: A, **changes: Any) -> A:
        """A copy with ``changes`` applied, checked as at construction; an unknown name is refused."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ValueError(Errors.E902.format(owner=self.owner, kind=self.kind, unknown=unknown, known=sorted(self.names())))
        return replace(self, **changes)

    def to_dict(self) -> Dict[str, Any]:
        """Name -> value, as a config and JSON hold it (a list for a tuple)."""
        return {name: config_value(value) for name, value in asdict(self).items()}


def config_value(value: Any) -> Any:
    """A value as config and JSON hold it: a tuple (``Tuple[str, ...]``) as a list."""
    return list(value) if isinstance(value, tuple) else value


def _checked(owner: str, name: str, value: Any, annotation: Any, bounds: Mapping[str, Any]) -> Any:
    """``value`` if it fits ``annotation`` and ``bounds`` (an int for a float becomes a float), else a ValueError."""

    def fail(expected: str) -> ValueError:
        return ValueError(Errors.E901.format(owner=owner, name=name, expected=expected, value=value))

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
            raise TypeError(Errors.E903.format(owner=owner, name=name, annotation=annotation))
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
    raise TypeError(Errors.E903.format(owner=owner, name=name, annotation=annotation))


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


__all__ = ["Arguments", "argument", "config_value"]

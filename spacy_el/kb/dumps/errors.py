"""Errors and the bad-input tally of the dump readers.

Every problem with a dump is a ``DumpFormatError`` that names the file and the line or byte offset, in
spaCy's style ("[spacy_el E313] path, line 1: what is wrong. What to do."), from a coded template of
``spacy_el.kb.errors.KBErrors``. With ``skip_bad`` a reader counts the bad record in a ``BadInput`` tally
instead (per reason, with the first few places), and the build report prints it: nothing is dropped silently.
"""
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional


class DumpFormatError(ValueError):
    """A dump file is truncated, malformed, not UTF-8, or has a structure the reader does not know.

    ``reason``: the short name under which ``skip_bad`` counts such a record ("malformed JSON line", ...)."""

    def __init__(self, message: str, reason: str = "bad record") -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # raised in a worker process, it keeps its reason on its way back
        return type(self), (str(self), self.reason)


def dump_error(
    path: object, where: Optional[str], template: str, *, reason: str = "bad record", **fields: object
) -> DumpFormatError:
    """The error of a ``KBErrors`` template whose ``{place}`` is filled with the file and ``where`` (e.g.
    "line 12" or "decompressed byte offset 4096"), its other placeholders with ``fields``."""
    place = f"{path}, {where}" if where else f"{path}"
    return DumpFormatError(template.format(place=place, **fields), reason=reason)


@dataclass
class BadInput:
    """Bad records skipped under ``skip_bad``: counts by reason and the first places they occurred."""

    counts: Counter = field(default_factory=Counter)
    examples: List[str] = field(default_factory=list)
    max_examples: int = 5

    def add(self, reason: str, where: str) -> None:
        self.counts[reason] += 1
        if len(self.examples) < self.max_examples:
            self.examples.append(f"{where}: {reason}")

    def merge(self, other: "BadInput") -> None:
        self.counts.update(other.counts)
        self.examples.extend(other.examples[: max(0, self.max_examples - len(self.examples))])

    @property
    def total(self) -> int:
        return int(sum(self.counts.values()))

    def to_dict(self) -> Dict[str, object]:
        return {"total": self.total, "by_reason": dict(sorted(self.counts.items())), "examples": list(self.examples)}

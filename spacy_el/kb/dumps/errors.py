"""Errors and the bad-input tally of the dump readers.

Every problem with a dump is a ``DumpFormatError`` that names the file and the line or byte offset, in
spaCy's style ("[spacy_el] path:line: what is wrong. What to do."). With ``skip_bad`` a reader counts the
bad record in a ``BadInput`` tally instead (per reason, with the first few places), and the build
report prints it: nothing is dropped silently.
"""
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional


class DumpFormatError(ValueError):
    """A dump file is truncated, malformed, not UTF-8, or has a structure the reader does not know."""


def dump_error(path: object, where: Optional[str], problem: str, hint: str = "") -> DumpFormatError:
    """``[spacy_el] path:where: problem hint``; ``where`` is e.g. "line 12" or "byte offset 4096"."""
    place = f"{path}, {where}" if where else f"{path}"
    text = f"[spacy_el] {place}: {problem}"
    return DumpFormatError(f"{text} {hint}".rstrip())


SKIP_HINT = "Pass --skip-bad (skip_bad=True) to skip such records and count them in the report."


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

"""Parse the bracketed coreference column of CoNLL-style files.

``(12`` opens a mention of cluster 12, ``12)`` closes it, ``(3)`` is a one-token mention; several
brackets may be stacked (``(1(2)``, ``1)4)``) or ``|``-separated (``(0)|(5``). ``_``, ``-`` and the
empty string mean no mention. The text between the brackets (the *body*) is returned as is; GUM's
CoNLL files put ``type-cluster[-Title]`` there.
"""

import re
from typing import List, Tuple

from ..errors import Errors

OPEN, CLOSE, SINGLE = "open", "close", "single"
_EMPTY = ("", "_", "-")
_BRACKET = re.compile(r"\((?P<single>[^()|]+)\)|\((?P<open>[^()|]+)|(?P<close>[^()|]+)\)")


def parse_coref_column(value: str) -> List[Tuple[str, str]]:
    """``'(1(2)'`` -> [('open', '1'), ('single', '2')]. Raises ValueError on anything unparsable."""
    if value in _EMPTY:
        return []
    result: List[Tuple[str, str]] = []
    for part in value.split("|"):
        if part in _EMPTY:
            continue
        pos = 0
        for match in _BRACKET.finditer(part):
            if match.start() != pos:
                break
            pos = match.end()
            kind = match.lastgroup
            assert kind is not None
            result.append(({"single": SINGLE, "open": OPEN, "close": CLOSE}[kind], match.group(kind)))
        if pos != len(part):
            raise ValueError(Errors.E628.format(value=value))
    return result

"""Parse GUM's WebAnno TSV 3.2 coreference files (``coref/gum/tsv/*.tsv``).

Columns (after ``sentence-token`` id, ``start-end`` char offsets and the token): 4 entity type,
5 infstat, 6 salience, 7 Wikipedia identity, 8 centering, 9 coref relation type, 10 coref target.
Multi-token or stacked annotations carry a ``[n]`` mention id, stacked values are ``|``-separated.
Column 10 is ``TOKEN[target_source]`` and points to the next mention of the chain.

This module only parses; :mod:`.gum` builds ``Doc`` objects.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from ..errors import Errors
from ._util import CorpusFormatError, PathLike, read_lines

# Identity relations build clusters; ``bridge*`` relations (bridging) are excluded.
IDENTITY_RELATIONS = frozenset({"coref", "ana", "cata", "appos", "disc", "pred"})
BRIDGING_PREFIX = "bridge"
_VALUE = re.compile(r"^(.*?)(?:\[(\d+)\])?$")
_TARGET = re.compile(r"^(\d+-\d+)(?:\[(\d+)_(\d+)\])?$")
_N_COLUMNS = 10


@dataclass
class GumMention:
    key: str  # "n" for id [n]; "@S-T" for an id-less single-token mention at token S-T
    label: str
    start: int  # first token, document-level
    end: int  # exclusive
    line: int
    title: Optional[str] = None  # Wikipedia identity as annotated (percent-encoded)


@dataclass
class GumRelation:
    kind: str
    source: str  # mention keys
    target: str
    line: int


@dataclass
class GumTsvDocument:
    path: str
    words: List[str] = field(default_factory=list)
    spaces: List[bool] = field(default_factory=list)
    sent_starts: List[bool] = field(default_factory=list)
    mentions: Dict[str, GumMention] = field(default_factory=dict)
    relations: List[GumRelation] = field(default_factory=list)


def _values(cell: str) -> List[Tuple[str, Optional[str]]]:
    """``'abstract[6]|person[7]'`` -> [('abstract', '6'), ('person', '7')]; ``'_'`` -> []."""
    if cell in ("_", ""):
        return []
    result = []
    for value in cell.split("|"):
        match = _VALUE.match(value)
        assert match is not None  # the pattern matches every string
        result.append((match.group(1), match.group(2)))
    return result


def _key(mention_id: Optional[str], address: str) -> str:
    return mention_id if mention_id not in (None, "0") else f"@{address}"


def read_gum_tsv(path: PathLike) -> GumTsvDocument:
    """Parse one GUM WebAnno TSV file; raises CorpusFormatError naming the line on malformed input."""
    doc = GumTsvDocument(path=str(path))
    addresses: Dict[str, int] = {}
    prev_sentence = None
    prev_end: Optional[int] = None
    for line_no, line in enumerate(read_lines(path, "GUM TSV file"), start=1):
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < _N_COLUMNS:
            raise CorpusFormatError(path, line_no, Errors.E632.format(expected=_N_COLUMNS, got=len(cols)))
        if any(extra not in ("", "_") for extra in cols[_N_COLUMNS:]):
            raise CorpusFormatError(path, line_no, Errors.E633.format(n_columns=_N_COLUMNS))
        address, offsets, word = cols[0], cols[1], cols[2]
        try:
            sentence = address.split("-")[0]
            char_start, char_end = (int(x) for x in offsets.split("-"))
        except ValueError:
            raise CorpusFormatError(path, line_no, Errors.E634.format(address=address, offsets=offsets)) from None
        if address in addresses:
            raise CorpusFormatError(path, line_no, Errors.E635.format(address=address))
        i = len(doc.words)
        addresses[address] = i
        if prev_end is not None:
            doc.spaces[-1] = char_start > prev_end
        doc.words.append(word)
        doc.spaces.append(False)
        doc.sent_starts.append(sentence != prev_sentence)
        prev_sentence, prev_end = sentence, char_end
        _add_mentions(doc, cols[3], address, i, path, line_no)
        _add_titles(doc, cols[6], address, path, line_no)
        _add_relations(doc, cols[8], cols[9], address, path, line_no)
    for rel in doc.relations:
        for key in (rel.source, rel.target):
            if key not in doc.mentions:
                raise CorpusFormatError(path, rel.line, Errors.E642.format(key=key))
    return doc


def _add_mentions(doc: GumTsvDocument, cell: str, address: str, i: int, path: PathLike, line_no: int) -> None:
    for label, mention_id in _values(cell):
        if not label:
            raise CorpusFormatError(path, line_no, Errors.E636.format(mention_id=mention_id))
        key = _key(mention_id, address)
        mention = doc.mentions.get(key)
        if mention is None:
            doc.mentions[key] = GumMention(key, label, i, i + 1, line_no)
        elif mention.end != i or mention.label != label:
            raise CorpusFormatError(path, line_no, Errors.E637.format(key=key))
        else:
            mention.end = i + 1


def _add_titles(doc: GumTsvDocument, cell: str, address: str, path: PathLike, line_no: int) -> None:
    for title, mention_id in _values(cell):
        key = _key(mention_id, address)
        mention = doc.mentions.get(key)
        if mention is None:
            raise CorpusFormatError(path, line_no, Errors.E638.format(title=title, key=key))
        if mention.title not in (None, title):
            raise CorpusFormatError(path, line_no, Errors.E639.format(key=key, first=mention.title, second=title))
        mention.title = title


def _add_relations(
    doc: GumTsvDocument, kinds: str, targets: str, address: str, path: PathLike, line_no: int
) -> None:
    kind_values = [] if kinds in ("_", "") else kinds.split("|")
    target_values = [] if targets in ("_", "") else targets.split("|")
    if len(kind_values) != len(target_values):
        message = Errors.E640.format(n_kinds=len(kind_values), n_targets=len(target_values))
        raise CorpusFormatError(path, line_no, message)
    seen: Set[Tuple[str, str, str]] = set()
    for kind, target in zip(kind_values, target_values):
        match = _TARGET.match(target)
        if not match:
            raise CorpusFormatError(path, line_no, Errors.E641.format(target=target))
        target_address, target_id, source_id = match.groups()
        rel = (kind, _key(source_id, address), _key(target_id, target_address))
        if rel not in seen:
            seen.add(rel)
            doc.relations.append(GumRelation(kind, rel[1], rel[2], line_no))

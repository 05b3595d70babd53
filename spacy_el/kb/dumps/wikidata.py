"""The Wikidata JSON dump (``latest-all.json.bz2``), one entity per line, parsed in worker processes.

The dump is a JSON array written one entity per line: ``[`` on the first line, every entity line ending
in ``,`` (the last one too in some copies), ``]`` on the last line. Lines are read on their own, so a
head cut from a dump (no ``]``) reads like the whole file. A line that is not valid JSON (a truncated
last line, a corrupt block) is an error naming the file and line, or skipped and counted with ``skip_bad``.
"""
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from .coarse_types import DEFAULT_COARSE_MAP, coarse_type
from ..errors import KBErrors
from .errors import BadInput, dump_error
from .titles import normalize_title

DISAMBIGUATION_ITEM = "Q4167410"  # P31 "Wikimedia disambiguation page"

# Filter reasons, as the report names them.
NOT_AN_ITEM = "not an item (property or lexeme)"
NO_SITELINK = "no enwiki sitelink"
DISAMBIGUATION = "disambiguation item (P31 Q4167410)"
NOT_ALLOWED = "no P31 in the allow-list"


class WikidataItem(NamedTuple):
    """What the KB keeps of an item; ``title`` is the canonical enwiki title (spaces), "" without one."""

    qid: str
    title: str
    label: str
    description: str
    aliases: Tuple[str, ...]
    p31: Tuple[str, ...]
    coarse: str


@dataclass
class WikidataConfig:
    """Which items to keep and how to read them.

    require_sitelink: keep only items with a sitelink to ``site`` (the KB id is then its title).
    p31_allow: keep only items with one of these P31 values (None: no such filter).
    coarse_map: P31 QID -> coarse label (``coarse_types``).
    language: the language of labels, descriptions and aliases.
    """

    path: str = ""
    skip_bad: bool = False
    require_sitelink: bool = True
    site: str = "enwiki"
    language: str = "en"
    p31_allow: Optional[FrozenSet[str]] = None
    coarse_map: Dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COARSE_MAP))


def parse_line(raw: bytes, line_no: int, config: WikidataConfig) -> Optional[Dict[str, Any]]:
    """The entity on one dump line, or None for the array brackets and blank lines.

    Raises DumpFormatError (naming the file and line) for a line that is not UTF-8 or not a JSON object."""
    line = raw.strip()
    if line.endswith(b","):
        line = line[:-1].rstrip()
    if line in (b"", b"[", b"]"):
        return None
    try:
        text = line.decode("utf8")
    except UnicodeDecodeError as err:
        where = f"line {line_no}"
        raise dump_error(config.path, where, KBErrors.E320, byte=line[err.start], position=err.start) from err
    try:
        record = json.loads(text)
    except ValueError as err:
        truncated = " It looks truncated (the dump was cut off mid-line?)." if not text.endswith("}") else ""
        raise dump_error(config.path, f"line {line_no}", KBErrors.E321, err=err, truncated=truncated) from err
    if not isinstance(record, dict) or "id" not in record:
        raise dump_error(config.path, f"line {line_no}", KBErrors.E322)
    return record


def _text(values: Any, language: str) -> str:
    value = values.get(language) if isinstance(values, dict) else None
    return value.get("value", "") if isinstance(value, dict) else ""


def _p31(claims: Any) -> Tuple[str, ...]:
    out: List[str] = []
    statements = claims.get("P31", []) if isinstance(claims, dict) else []
    for statement in statements:
        if statement.get("rank") == "deprecated":
            continue
        value = statement.get("mainsnak", {}).get("datavalue", {}).get("value")
        qid = value.get("id") if isinstance(value, dict) else None
        if isinstance(qid, str) and qid not in out:
            out.append(qid)
    return tuple(out)


def item_of(record: Dict[str, Any], config: WikidataConfig) -> Tuple[Optional[WikidataItem], Optional[str]]:
    """(the item to keep, None) or (None, the reason it is filtered out)."""
    if record.get("type") != "item":
        return None, NOT_AN_ITEM
    sitelink = (record.get("sitelinks") or {}).get(config.site)
    title = normalize_title(sitelink.get("title", "")) if isinstance(sitelink, dict) else None
    if config.require_sitelink and not title:
        return None, NO_SITELINK
    p31 = _p31(record.get("claims"))
    if DISAMBIGUATION_ITEM in p31:
        return None, DISAMBIGUATION
    if config.p31_allow is not None and not config.p31_allow.intersection(p31):
        return None, NOT_ALLOWED
    language = config.language
    label = _text(record.get("labels"), language)
    aliases = (record.get("aliases") or {}).get(language) or []
    alias_texts = tuple(a["value"] for a in aliases if isinstance(a, dict) and isinstance(a.get("value"), str) and a["value"].strip())
    item = WikidataItem(
        qid=str(record["id"]),
        title=title or "",
        label=label,
        description=_text(record.get("descriptions"), language),
        aliases=alias_texts,
        p31=p31,
        coarse=coarse_type(p31, config.coarse_map),
    )
    return item, None


@dataclass
class LinesResult:
    items: List[WikidataItem] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # "entities read", and one count per filter reason
    bad: BadInput = field(default_factory=BadInput)


def process_lines(lines: Sequence[Tuple[int, bytes]], config: WikidataConfig) -> LinesResult:
    """Parse and filter a chunk of dump lines (in a worker process)."""
    result = LinesResult()
    for line_no, raw in lines:
        try:
            record = parse_line(raw, line_no, config)
        except ValueError as err:
            if not config.skip_bad:
                raise
            reason = "not UTF-8" if "UTF-8" in str(err) else "malformed JSON line"
            result.bad.add(reason, f"{config.path}, line {line_no}")
            continue
        if record is None:
            continue
        result.counts["entities read"] += 1
        item, reason = item_of(record, config)
        if item is None:
            result.counts[f"filtered: {reason}"] += 1
        else:
            result.items.append(item)
    return result

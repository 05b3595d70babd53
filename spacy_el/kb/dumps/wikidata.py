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
from .errors import BadInput, DumpFormatError, dump_error
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
    where = f"line {line_no}"
    try:
        text = line.decode("utf8")
    except UnicodeDecodeError as err:
        raise dump_error(config.path, where, KBErrors.E320, reason=NOT_UTF8, byte=line[err.start], position=err.start) from err
    try:
        record = json.loads(text)
    except ValueError as err:
        truncated = " It looks truncated (the dump was cut off mid-line?)." if not text.endswith("}") else ""
        raise dump_error(config.path, where, KBErrors.E321, reason=MALFORMED, err=err, truncated=truncated) from err
    if not isinstance(record, dict) or "id" not in record:
        raise dump_error(config.path, where, KBErrors.E322, reason=NOT_AN_ENTITY)
    return record


# Reasons of bad lines, as the report counts them under skip_bad.
NOT_UTF8 = "not UTF-8"
MALFORMED = "malformed JSON line"
NOT_AN_ENTITY = "not a JSON object with an id"
ODD_STRUCTURE = "unknown entity structure"
LONE_SURROGATE = "lone surrogate escape"


class OddStructure(Exception):
    """A field the reader uses has a type the Wikidata JSON format does not give it (raised by ``item_of``)."""


class LoneSurrogate(Exception):
    """A kept string holds a lone surrogate (from an escape such as ``\\ud800``): UTF-8 cannot write it."""


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _object(value: Any, what: str) -> Dict[str, Any]:
    """``value`` as a JSON object; missing (None) or an empty array (how PHP writes an empty map) is empty."""
    if isinstance(value, dict):
        return value
    if value is None or (isinstance(value, list) and not value):
        return {}
    raise OddStructure(f"{what} is {_type_name(value)}, expected an object")


def _string(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    raise OddStructure(f"{what} is {_type_name(value)}, expected a string")


def _text(values: Any, language: str, what: str) -> str:
    """``values[language]["value"]`` of a labels/descriptions map, "" when the language is missing."""
    value = _object(values, what).get(language)
    if value is None:
        return ""
    return _string(_object(value, f"{what}.{language}").get("value", ""), f"{what}.{language}.value")


def _aliases(values: Any, language: str) -> Tuple[str, ...]:
    entries = _object(values, "aliases").get(language)
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise OddStructure(f"aliases.{language} is {_type_name(entries)}, expected an array")
    texts = (_string(_object(a, f"aliases.{language}[]").get("value", ""), f"aliases.{language}[].value") for a in entries)
    return tuple(a for a in texts if a.strip())


def _p31(claims: Any) -> Tuple[str, ...]:
    statements = _object(claims, "claims").get("P31")
    if statements is None:
        return ()
    if not isinstance(statements, list):
        raise OddStructure(f"claims.P31 is {_type_name(statements)}, expected an array of statements")
    out: List[str] = []
    for statement in statements:
        if not isinstance(statement, dict):
            raise OddStructure(f"a claims.P31 statement is {_type_name(statement)}, expected an object")
        if statement.get("rank") == "deprecated":
            continue
        mainsnak = statement.get("mainsnak")
        if not isinstance(mainsnak, dict):
            raise OddStructure(f"a claims.P31 mainsnak is {_type_name(mainsnak)}, expected an object")
        datavalue = mainsnak.get("datavalue")  # absent for "somevalue" and "novalue" snaks
        if datavalue is None:
            continue
        value = _object(datavalue, "a claims.P31 datavalue").get("value")
        if not isinstance(value, dict):
            raise OddStructure(f"a claims.P31 value is {_type_name(value)}, expected an entity id object")
        qid = value.get("id")
        if isinstance(qid, str) and qid not in out:
            out.append(qid)
    return tuple(out)


def _check_encodable(item: WikidataItem) -> None:
    """Raise LoneSurrogate naming the first field of ``item`` that UTF-8 cannot encode."""
    fields = [("id", item.qid), ("title", item.title), ("label", item.label), ("description", item.description)]
    fields += [("alias", a) for a in item.aliases] + [("P31 value", q) for q in item.p31]
    for name, value in fields:
        try:
            value.encode("utf8")
        except UnicodeEncodeError:
            raise LoneSurrogate(name) from None


def item_of(record: Dict[str, Any], config: WikidataConfig) -> Tuple[Optional[WikidataItem], Optional[str]]:
    """(the item to keep, None) or (None, the reason it is filtered out).

    Raises OddStructure when a field it reads has a type the format does not give it (a list of sitelinks,
    a number as label, a null mainsnak...): such a record is no item the reader understands."""
    if record.get("type") != "item":
        return None, NOT_AN_ITEM
    qid = _string(record.get("id"), "id")
    sitelink = _object(record.get("sitelinks"), "sitelinks").get(config.site)
    title = None
    if sitelink is not None:
        title = normalize_title(_string(_object(sitelink, f"sitelinks.{config.site}").get("title", ""), f"sitelinks.{config.site}.title"))
    if config.require_sitelink and not title:
        return None, NO_SITELINK
    p31 = _p31(record.get("claims"))
    if DISAMBIGUATION_ITEM in p31:
        return None, DISAMBIGUATION
    if config.p31_allow is not None and not config.p31_allow.intersection(p31):
        return None, NOT_ALLOWED
    language = config.language
    item = WikidataItem(
        qid=qid,
        title=title or "",
        label=_text(record.get("labels"), language, "labels"),
        description=_text(record.get("descriptions"), language, "descriptions"),
        aliases=_aliases(record.get("aliases"), language),
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
    """Parse and filter a chunk of dump lines (in a worker process). A bad line is a DumpFormatError naming
    the file and line, or, with ``config.skip_bad``, counted in ``result.bad`` by its reason."""
    result = LinesResult()
    for line_no, raw in lines:
        try:
            record = parse_line(raw, line_no, config)
            if record is None:
                continue
            item, reason = _item_of_line(record, raw, line_no, config)
        except DumpFormatError as err:
            if not config.skip_bad:
                raise
            result.bad.add(err.reason, f"{config.path}, line {line_no}")
            continue
        result.counts["entities read"] += 1
        if item is None:
            result.counts[f"filtered: {reason}"] += 1
        else:
            result.items.append(item)
    return result


def _item_of_line(
    record: Dict[str, Any], raw: bytes, line_no: int, config: WikidataConfig
) -> Tuple[Optional[WikidataItem], Optional[str]]:
    """``item_of``, with its OddStructure and an unencodable kept string as DumpFormatError naming the line."""
    where = f"line {line_no}"
    try:
        item, reason = item_of(record, config)
        # Only a \uD800-\uDFFF escape can give a lone surrogate (the line was valid UTF-8): the check runs
        # on the few lines that hold one (mostly valid pairs, which json.loads joins).
        if item is not None and (b"\\ud" in raw or b"\\uD" in raw):
            _check_encodable(item)
    except OddStructure as err:
        raise dump_error(config.path, where, KBErrors.E323, reason=ODD_STRUCTURE, problem=err) from None
    except LoneSurrogate as err:
        raise dump_error(config.path, where, KBErrors.E324, reason=LONE_SURROGATE, field=err) from None
    return item, reason

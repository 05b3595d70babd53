"""The enwiki ``page_props`` SQL dump: which pages MediaWiki itself marks as disambiguation pages.

The Disambiguator extension sets the page property ``disambiguation`` on every page that uses a
disambiguation template (after template expansion, so it also catches templates that wrap one). When
the file is given, ``from-dumps`` uses it in addition to the template names of ``wikitext``.

The dump is mysqldump output: ``INSERT INTO `page_props` VALUES (page,'name','value',sortkey),(...);``
statements, usually one per line, but several may share a line (the shared excerpt has all of them on
one). Rows are matched by a regular expression over the fixed four-column layout; MySQL escapes
(``\\'``, ``\\\\``) in the values are undone.
"""
import re
from collections import Counter
from pathlib import Path
from typing import Iterator, NamedTuple, Set, Tuple, Union

from ..errors import KBErrors
from .errors import dump_error
from .streams import iter_lines

_INSERT = re.compile(rb"INSERT INTO `page_props` VALUES ")
_ROW = re.compile(rb"\((\d+),'((?:[^'\\]|\\.)*)','((?:[^'\\]|\\.)*)',(NULL|-?[\d.eE+-]+)\)")
_ESCAPE = re.compile(rb"\\(.)")
_UNESCAPED = {b"0": b"\0", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a"}


def _unescape(value: bytes) -> bytes:
    return _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(1)), value) if b"\\" in value else value


class PageProp(NamedTuple):
    page_id: int
    name: str
    value: str


def iter_page_props(path: Union[str, Path]) -> Iterator[PageProp]:
    """Every row of every INSERT statement of the dump."""
    n_inserts = 0
    for line_no, line in iter_lines(path):
        inserts = len(_INSERT.findall(line))
        if not inserts:
            continue
        n_inserts += inserts
        # Rows only occur inside the INSERT statements, so one scan of the line finds those of all of them.
        for row in _ROW.finditer(line):
            try:
                name = _unescape(row.group(2)).decode("utf8")
                value = _unescape(row.group(3)).decode("utf8")
            except UnicodeDecodeError as err:
                raise dump_error(path, f"line {line_no}, byte {row.start()}", KBErrors.E318, err=err) from err
            yield PageProp(int(row.group(1)), name, value)
    if n_inserts == 0:
        raise dump_error(path, None, KBErrors.E319)


def read_page_props(path: Union[str, Path]) -> Tuple[Set[int], Counter]:
    """(ids of the pages with the ``disambiguation`` property, rows per property name)."""
    disambiguation: Set[int] = set()
    counts: Counter = Counter()
    for prop in iter_page_props(path):
        counts[prop.name] += 1
        if prop.name == "disambiguation":
            disambiguation.add(prop.page_id)
    return disambiguation, counts

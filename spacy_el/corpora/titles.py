"""KB id conventions for Wikipedia titles and the GUM title -> Wikidata QID map.

KB ids are Wikipedia titles in URL form: underscores for spaces, percent-escapes decoded, first letter
as given (``"Lord_Byron"``, ``"Aberdeen_Grammar_School"``, ``"iPad"``).
"""

import re
from typing import Dict

from ..errors import Errors
from ._util import CorpusFormatError, PathLike, read_lines

_U_ESCAPE = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")
_QID = re.compile(r"^Q[1-9][0-9]*$")


def _decode_u_run(match: "re.Match[str]") -> str:
    raw = match.group(0)
    units = [int(raw[i + 2 : i + 6], 16) for i in range(0, len(raw), 6)]
    data = b"".join(unit.to_bytes(2, "big") for unit in units)
    # surrogatepass keeps lone surrogates instead of failing; pairs decode to one character.
    return data.decode("utf-16-be", errors="surrogatepass")


def decode_aida_title(title: str) -> str:
    """Decode the ``\\uXXXX`` escapes of an AIDA-YAGO2 title (``People\\u0027s`` -> ``People's``)."""
    return _U_ESCAPE.sub(_decode_u_run, title) if "\\u" in title else title


def decode_url_title(title: str) -> str:
    """Percent-decode a Wikipedia URL title (``Mesa%2C_Arizona`` -> ``Mesa,_Arizona``)."""
    from urllib.parse import unquote

    return unquote(title).replace(" ", "_") if "%" in title or " " in title else title


def is_qid(value: str) -> bool:
    """Whether ``value`` looks like a Wikidata item id (``Q42``)."""
    return bool(_QID.match(value))


def load_wiki_map(path: PathLike) -> Dict[str, str]:
    """Read GUM's ``coref/wiki_map.tab`` into {title as annotated in GUM: QID}.

    Columns: FormattedTitle, URLTitle, WikidataID, DateUpdated; ``#`` lines are comments. Rows whose
    WikidataID is ``None`` give no QID (another row for the same title may). Two different QIDs for
    one title raise a CorpusFormatError.
    """
    mapping: Dict[str, str] = {}
    for line_no, line in enumerate(read_lines(path, "GUM wiki map"), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3:
            raise CorpusFormatError(path, line_no, Errors.E632.format(expected=">= 3", got=len(cols)))
        title, qid = cols[0], cols[2]
        if qid == "None":
            continue
        if not is_qid(qid):
            raise CorpusFormatError(path, line_no, Errors.E644.format(qid=qid))
        if mapping.get(title, qid) != qid:
            raise CorpusFormatError(path, line_no, Errors.E645.format(title=title, first=mapping[title], second=qid))
        mapping[title] = qid
    return mapping

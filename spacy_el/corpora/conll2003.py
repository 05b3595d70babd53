"""Parse CoNLL-2003 NER files (``token POS chunk NER`` per line, ``-DOCSTART-`` documents).

This module only parses; :mod:`.conll2003_aida` turns the result into ``Doc`` objects with links.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..errors import Errors, Warnings
from ._util import CorpusFormatError, PathLike, read_lines, warn

DOCSTART = "-DOCSTART-"


@dataclass
class ConllEntity:
    start: int  # first token, document-level
    end: int  # one past the last token
    label: str


@dataclass
class ConllDocument:
    """One ``-DOCSTART-`` document of a CoNLL-2003 file."""

    path: str
    line: int  # line number of the -DOCSTART- line (or of the first token if there is none)
    words: List[str] = field(default_factory=list)
    tags: List[Optional[str]] = field(default_factory=list)  # POS column, None if absent
    sent_starts: List[bool] = field(default_factory=list)
    token_lines: List[int] = field(default_factory=list)  # line number of every token
    entities: List[ConllEntity] = field(default_factory=list)


def _split_tag(tag: str, path: PathLike, line_no: int) -> Tuple[str, str]:
    if tag == "O":
        return "O", ""
    if len(tag) > 2 and tag[1] == "-" and tag[0] in "BI":
        return tag[0], tag[2:]
    raise CorpusFormatError(path, line_no, Errors.E614.format(tag=tag))


def read_conll2003(path: PathLike) -> List[ConllDocument]:
    """Read every document of a CoNLL-2003 file.

    Columns are space-separated; the NER tag is the last column and the POS tag the second when there
    are at least three. Blank lines end sentences, ``-DOCSTART-`` lines start documents (tokens before
    the first one form a document of their own). Tags are read as IOB2; an ``I-`` tag that does not
    continue an entity of its type starts a new entity, and the number of such repairs is reported
    with a warning.
    """
    docs: List[ConllDocument] = []
    doc: Optional[ConllDocument] = None
    new_sentence = True
    open_entity: Optional[ConllEntity] = None
    repaired = 0
    for line_no, line in enumerate(read_lines(path, "CoNLL-2003 file"), start=1):
        if line.startswith(DOCSTART):
            doc = ConllDocument(path=str(path), line=line_no)
            docs.append(doc)
            new_sentence, open_entity = True, None
            continue
        if not line.strip():
            new_sentence, open_entity = True, None
            continue
        cols = line.split()
        if len(cols) < 2:
            raise CorpusFormatError(path, line_no, Errors.E615.format(line=line))
        if doc is None:
            doc = ConllDocument(path=str(path), line=line_no)
            docs.append(doc)
        prefix, label = _split_tag(cols[-1], path, line_no)
        i = len(doc.words)
        doc.words.append(cols[0])
        doc.tags.append(cols[1] if len(cols) >= 3 else None)
        doc.sent_starts.append(new_sentence)
        doc.token_lines.append(line_no)
        new_sentence = False
        if prefix == "O":
            open_entity = None
        elif prefix == "I" and open_entity is not None and open_entity.label == label:
            open_entity.end = i + 1
        else:
            if prefix == "I":
                repaired += 1
            open_entity = ConllEntity(start=i, end=i + 1, label=label)
            doc.entities.append(open_entity)
    if repaired:
        warn(Warnings.W602.format(path=path, repaired=repaired))
    return docs

"""CoNLL-2012-style coreference files -> ``Doc`` objects (LitBank, OntoGUM, GUM's CoNLL files).

Supported layouts (tab-separated, coreference brackets in the LAST column, see :mod:`.coref_column`):

* full CoNLL-2012 / LitBank: ``doc part index word ... coref`` (word = 4th column);
* 3 columns (GUM, OntoGUM): ``index word coref``.

``#begin document (name); part N`` / ``# begin document name`` starts a document (a file may hold
several), ``#end document`` ends it, blank lines end sentences, other ``#`` lines are comments. A
document without a name gets the file stem (plus ``-<n>`` when the file holds several).

Result per document: ``doc.spans["mentions"]`` (every mention, in order; label/kb_id_ from the body
parser, empty for plain numeric cluster ids), clusters via ``set_clusters`` grouped by cluster id
(singletons included when the file has them), sentence starts when the file has blank lines between
sentences (GUM/OntoGUM CoNLL files have none: sentence starts are then left unset),
``doc.user_data["doc_id"]``. An empty token column (OntoGUM writes the token "|" as "") becomes
``"_"`` with a warning, since spaCy tokens cannot be empty.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from ..errors import Errors, Warnings
from ..extensions import register_extensions, set_clusters
from ._util import CorpusFormatError, PathLike, get_vocab, progress, read_lines, warn
from .coref_column import CLOSE, OPEN, parse_coref_column
from .splits import load_splits, select_files

MENTIONS_KEY = "mentions"
EMPTY_TOKEN = "_"  # stands in for an empty token column
_BEGIN = re.compile(r"^#\s*begin document\s*(.*?)\s*$")
_END = re.compile(r"^#\s*end document")
_NAMED = re.compile(r"^\((.*)\);\s*part\s+(\d+)$")

# body -> (cluster id, label, kb title or None)
BodyParser = Callable[[str], Tuple[str, str, Optional[str]]]


def plain_body(body: str) -> Tuple[str, str, Optional[str]]:
    """The body is just the cluster id."""
    return body.strip(), "", None


@dataclass
class CorefMention:
    start: int
    end: int
    cluster: str
    label: str = ""
    title: Optional[str] = None


@dataclass
class CorefDocument:
    name: str
    path: str
    line: int
    words: List[str] = field(default_factory=list)
    sent_starts: List[bool] = field(default_factory=list)
    has_sentences: bool = False
    mentions: List[CorefMention] = field(default_factory=list)


def _doc_name(header: str) -> str:
    named = _NAMED.match(header)
    if named:
        name, part = named.groups()
        return name if int(part) == 0 else f"{name}-part{int(part)}"
    return header


class _Parser:
    def __init__(self, path: PathLike, parse_body: BodyParser):
        self.path = path
        self.parse_body = parse_body
        self.docs: List[CorefDocument] = []
        self.doc: Optional[CorefDocument] = None
        self.open: Dict[str, List[Tuple[int, str, Optional[str], int]]] = {}
        self.new_sentence = True
        self.empty_tokens: List[int] = []

    def begin(self, header: str, line_no: int) -> None:
        self.end(line_no)
        self.doc = CorefDocument(_doc_name(header), str(self.path), line_no)
        self.docs.append(self.doc)
        self.new_sentence = True

    def end(self, line_no: int) -> None:
        unclosed = [(c, start_line) for c, stack in self.open.items() for (_, _, _, start_line) in stack]
        if unclosed:
            cluster, start_line = unclosed[0]
            raise CorpusFormatError(self.path, start_line, Errors.E629.format(cluster=cluster))
        self.doc = None

    def token(self, cols: List[str], line_no: int) -> None:
        if self.doc is None:
            self.begin("", line_no)
        assert self.doc is not None
        word = cols[3] if len(cols) >= 6 else cols[1] if len(cols) >= 3 else cols[0]
        if not word:
            # spaCy tokens cannot be empty (OntoGUM has one token "|" written as "")
            word = EMPTY_TOKEN
            self.empty_tokens.append(line_no)
        i = len(self.doc.words)
        self.doc.words.append(word)
        self.doc.sent_starts.append(self.new_sentence)
        self.new_sentence = False
        try:
            items = parse_coref_column(cols[-1]) if len(cols) >= 2 else []
            parsed = [(kind, self.parse_body(body)) for kind, body in items]
        except ValueError as err:
            raise CorpusFormatError(self.path, line_no, str(err)) from None
        for kind, (cluster, label, title) in parsed:
            if kind == OPEN:
                self.open.setdefault(cluster, []).append((i, label, title, line_no))
            elif kind == CLOSE:
                stack = self.open.get(cluster)
                if not stack:
                    raise CorpusFormatError(self.path, line_no, Errors.E630.format(cluster=cluster))
                start, label, title, _ = stack.pop()
                if not stack:
                    del self.open[cluster]
                self.doc.mentions.append(CorefMention(start, i + 1, cluster, label, title))
            else:
                self.doc.mentions.append(CorefMention(i, i + 1, cluster, label, title))

    def blank(self) -> None:
        if self.doc is not None and self.doc.words and not self.new_sentence:
            self.doc.has_sentences = True
        self.new_sentence = True


def read_conll2012(path: PathLike, parse_body: BodyParser = plain_body) -> List[CorefDocument]:
    """Parse every document of a CoNLL-2012-style file (see the module docstring)."""
    parser = _Parser(path, parse_body)
    line_no = 0
    for line_no, line in enumerate(read_lines(path, "CoNLL coreference file"), start=1):
        begin = _BEGIN.match(line)
        if begin:
            parser.begin(begin.group(1), line_no)
        elif _END.match(line):
            parser.end(line_no)
        elif line.startswith("#"):
            continue
        elif not line.strip():
            parser.blank()
        else:
            parser.token(line.split("\t") if "\t" in line else line.split(), line_no)
    parser.end(line_no)
    if parser.empty_tokens:
        lines = ", ".join(str(n) for n in parser.empty_tokens[:5])
        warn(Warnings.W603.format(path=path, n_empty=len(parser.empty_tokens), replacement=EMPTY_TOKEN, lines=lines))
    stem = Path(path).stem
    unnamed = [d for d in parser.docs if not d.name]
    for n, doc in enumerate(unnamed, start=1):
        doc.name = stem if len(unnamed) == 1 else f"{stem}-{n}"
    return parser.docs


def coref_document_to_doc(
    vocab: Vocab,
    parsed: CorefDocument,
    wiki_map: Optional[Mapping[str, str]] = None,
    decode_title: Callable[[str], str] = lambda title: title,
) -> Doc:
    """Build a ``Doc`` with mentions and clusters from a parsed CoNLL coreference document."""
    register_extensions()
    spaces = [True] * len(parsed.words)
    if spaces:
        spaces[-1] = False
    sent_starts = parsed.sent_starts if parsed.has_sentences else None
    doc = Doc(vocab, words=parsed.words, spaces=spaces, sent_starts=sent_starts)
    mentions = sorted(parsed.mentions, key=lambda m: (m.start, -m.end))
    spans = [
        Span(doc, m.start, m.end, label=m.label, kb_id=decode_title(m.title) if m.title else "")
        for m in mentions
    ]
    doc.spans[MENTIONS_KEY] = spans
    if wiki_map:
        for mention, span in zip(mentions, spans):
            qid = wiki_map.get(mention.title) if mention.title else None
            if qid is not None:
                span._.qid = qid
    clusters: Dict[str, List[Tuple[int, int]]] = {}
    for m in mentions:
        clusters.setdefault(m.cluster, []).append((m.start, m.end))
    set_clusters(doc, clusters.values())
    doc.user_data["doc_id"] = parsed.name
    return doc


def read_conll2012_dir(
    path: PathLike,
    split: Optional[str] = None,
    *,
    splits_path: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    suffix: str = ".conll",
    limit: int = 0,
    show_progress: bool = False,
) -> List[Doc]:
    """Convert the CoNLL coreference files of one split (or all when ``split`` is None).

    path: a directory of ``*<suffix>`` files (or with ``<split>/`` subdirectories).
    splits_path: LitBank ``splits.json`` or GUM ``splits.md``; needed to select a split unless there
        are split subdirectories.
    """
    splits = load_splits(splits_path) if splits_path is not None else None
    files = select_files(path, suffix, split, splits)
    vocab = get_vocab(nlp)
    docs: List[Doc] = []
    for f in progress(files, f"CoNLL {split or 'all'}", show_progress):
        docs.extend(coref_document_to_doc(vocab, parsed) for parsed in read_conll2012(f))
        if limit and len(docs) >= limit:
            return docs[:limit]
    return docs

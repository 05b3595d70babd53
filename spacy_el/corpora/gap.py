"""GAP pronoun-name coreference (``gap-{development,validation,test}.tsv``) -> ``Doc`` objects.

Header: ``ID Text Pronoun Pronoun-offset A A-offset A-coref B B-offset B-coref URL`` (tab-separated,
offsets are character offsets into Text, coref columns TRUE/FALSE).

Result per row (``doc.user_data["doc_id"]`` = the row ID):

* text tokenised with ``nlp`` and split at the three spans' boundaries (:mod:`.char_spans`);
* ``doc.spans["gap"]``: the pronoun (label ``PRONOUN``), name A (label ``A``) and name B (label ``B``);
* clusters (:func:`~spacy_el.extensions.set_clusters`): one cluster [name, pronoun] for each
  name marked coreferent; rows where neither is coreferent have no clusters;
* ``doc.user_data["gap"]``: ``{"A-coref": bool, "B-coref": bool, "url": str}``.
"""

from typing import Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import Errors
from ..extensions import register_extensions, set_clusters
from ._util import CorpusFormatError, PathLike, get_nlp, progress, read_lines
from .char_spans import make_doc_with_boundaries

SPANS_KEY = "gap"
GAP_COLUMNS = (
    "ID",
    "Text",
    "Pronoun",
    "Pronoun-offset",
    "A",
    "A-offset",
    "A-coref",
    "B",
    "B-offset",
    "B-coref",
    "URL",
)
_BOOL = {"TRUE": True, "FALSE": False}


def _span(doc: Doc, row: Dict[str, str], name: str, label: str, path: PathLike, line_no: int) -> Span:
    surface = row[name]
    try:
        start = int(row[f"{name}-offset"])
    except ValueError:
        raise CorpusFormatError(path, line_no, Errors.E657.format(name=name, value=row[f"{name}-offset"])) from None
    end = start + len(surface)
    if not surface or row["Text"][start:end] != surface:
        raise CorpusFormatError(path, line_no, Errors.E658.format(name=name, surface=surface, start=start))
    span = doc.char_span(start, end, label=label)
    if span is None:  # only if the span starts or ends on whitespace
        raise CorpusFormatError(path, line_no, Errors.E659.format(name=name, surface=surface))
    return span


def gap_row_to_doc(row: Dict[str, str], nlp: Language, path: PathLike, line_no: int) -> Doc:
    """Convert one GAP row (a dict keyed by :data:`GAP_COLUMNS`)."""
    text = row["Text"]
    boundaries = []
    for name in ("Pronoun", "A", "B"):
        if row[f"{name}-offset"].isdigit():
            start = int(row[f"{name}-offset"])
            boundaries += [start, start + len(row[name])]
    doc = make_doc_with_boundaries(nlp, text, boundaries)
    pronoun = _span(doc, row, "Pronoun", "PRONOUN", path, line_no)
    names = {"A": _span(doc, row, "A", "A", path, line_no), "B": _span(doc, row, "B", "B", path, line_no)}
    doc.spans[SPANS_KEY] = [pronoun, names["A"], names["B"]]
    coref = {}
    for name in ("A", "B"):
        value = row[f"{name}-coref"].upper()
        if value not in _BOOL:
            raise CorpusFormatError(path, line_no, Errors.E660.format(name=name, value=row[f"{name}-coref"]))
        coref[name] = _BOOL[value]
    set_clusters(
        doc, [[(names[n].start, names[n].end), (pronoun.start, pronoun.end)] for n in ("A", "B") if coref[n]]
    )
    doc.user_data["doc_id"] = row["ID"]
    doc.user_data["gap"] = {"A-coref": coref["A"], "B-coref": coref["B"], "url": row["URL"]}
    return doc


def read_gap(
    path: PathLike, *, nlp: Optional[Language] = None, limit: int = 0, show_progress: bool = False
) -> List[Doc]:
    """Convert a GAP tsv file (see the module docstring); ``limit`` > 0 stops after that many rows."""
    register_extensions()
    nlp = get_nlp(nlp)
    lines = enumerate(read_lines(path, "GAP tsv file"), start=1)
    header_no, header = next(((n, line) for n, line in lines if line.strip()), (1, ""))
    if tuple(header.split("\t")) != GAP_COLUMNS:
        raise CorpusFormatError(path, header_no, Errors.E656.format(header=" ".join(GAP_COLUMNS)))
    docs: List[Doc] = []
    for line_no, line in progress(lines, f"GAP {path}", show_progress):
        if not line.strip():
            continue
        if limit and len(docs) >= limit:
            break
        cols = line.split("\t")
        if len(cols) != len(GAP_COLUMNS):
            raise CorpusFormatError(path, line_no, Errors.E632.format(expected=len(GAP_COLUMNS), got=len(cols)))
        docs.append(gap_row_to_doc(dict(zip(GAP_COLUMNS, cols)), nlp, path, line_no))
    return docs

"""ELEVANT / GERBIL-style benchmark JSONL (one document per line) -> ``Doc`` objects.

Each line: ``{"id", "title", "text", "evaluation_span", "labels": [{"id", "span": [start, end),
"entity_id", "name", "type", "parent", "children", ...}]}``.

Result per document:

* text tokenised with ``nlp`` and split at every label boundary (see :mod:`.char_spans`);
* ``doc.spans["elevant_labels"]``: ALL labels, nested ones included, in file order, label = the
  label's ``type`` string (``"Q215627|Q43229"``, ``"OTHER"``; ``"OTHER"`` when missing or empty,
  since spaCy drops entities with an empty label);
* ``doc.ents``: the non-nested labels (no ``parent``), same label;
* ``kb_id_`` = the Wikidata QID (ELEVANT has no Wikipedia titles, so here the KB id IS the QID), or
  ``"NIL"`` for ``<NIL>``, ``<NO_MAPPING>`` and ``Unknown``; ``span._.qid`` = the QID or None;
* ``doc.user_data``: ``doc_id`` (the document's ``id``, or its 0-based line index where ``id`` is
  -1), ``title``, ``evaluation_span`` and ``elevant_labels`` (the raw label objects, so the
  NIL/NO_MAPPING distinction and ``optional``/``name`` fields are kept).

A label whose offsets are not on token boundaries even after splitting (e.g. it starts on whitespace)
is expanded to the enclosing tokens and counted in a warning; a label that cannot be represented at
all raises a CorpusFormatError.
"""

from typing import Any, Dict, Iterator, List, Optional, Tuple

import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from ..errors import Errors, Warnings
from ..extensions import NIL, register_extensions
from ._util import CorpusFormatError, PathLike, ensure_file, get_nlp, progress, warn
from .char_spans import char_span_or_expand, make_doc_with_boundaries
from .titles import is_qid

SPANS_KEY = "elevant_labels"
NIL_ENTITY_IDS = ("<NIL>", "<NO_MAPPING>", "Unknown")
DEFAULT_TYPE = "OTHER"  # ELEVANT's type for untyped labels; also used when "type" is missing


def elevant_kb_id(entity_id: Any) -> Optional[str]:
    """The kb_id for an ELEVANT ``entity_id``: the QID, ``"NIL"``, or None if it is neither."""
    if not isinstance(entity_id, str):
        return None
    if entity_id in NIL_ENTITY_IDS:
        return NIL
    return entity_id if is_qid(entity_id) else None


class _Counts:
    def __init__(self) -> None:
        self.labels = 0
        self.expanded = 0
        self.overlapping = 0


def _label_span(
    doc: Doc, label: Dict[str, Any], text_len: int, path: PathLike, line_no: int, counts: _Counts
) -> Span:
    span_offsets = label.get("span")
    if not (
        isinstance(span_offsets, list)
        and len(span_offsets) == 2
        and all(isinstance(x, int) for x in span_offsets)
    ):
        raise CorpusFormatError(path, line_no, Errors.E649.format(label_id=label.get("id"), span=span_offsets))
    start, end = span_offsets
    if not 0 <= start < end <= text_len:
        message = Errors.E650.format(label_id=label.get("id"), span=span_offsets, n_chars=text_len)
        raise CorpusFormatError(path, line_no, message)
    kb_id = elevant_kb_id(label.get("entity_id"))
    if kb_id is None:
        message = Errors.E651.format(
            label_id=label.get("id"), entity_id=label.get("entity_id"), nil_ids=", ".join(NIL_ENTITY_IDS)
        )
        raise CorpusFormatError(path, line_no, message)
    span, expanded = char_span_or_expand(
        doc, start, end, label=str(label.get("type") or DEFAULT_TYPE), kb_id=kb_id
    )
    if span is None:
        raise CorpusFormatError(path, line_no, Errors.E652.format(label_id=label.get("id"), span=span_offsets))
    counts.expanded += expanded
    counts.labels += 1
    return span


def elevant_record_to_doc(
    record: Dict[str, Any], nlp: Language, index: int, path: PathLike, line_no: int, counts: _Counts
) -> Doc:
    """Convert one parsed JSONL record (see the module docstring)."""
    text = record.get("text")
    labels = record.get("labels")
    if not isinstance(text, str) or not isinstance(labels, list):
        raise CorpusFormatError(path, line_no, Errors.E648)
    boundaries = [x for label in labels for x in (label.get("span") or []) if isinstance(x, int)]
    doc = make_doc_with_boundaries(nlp, text, boundaries)
    spans = [_label_span(doc, label, len(text), path, line_no, counts) for label in labels]
    doc.spans[SPANS_KEY] = spans
    top_level = [span for span, label in zip(spans, labels) if label.get("parent") is None]
    ents = filter_spans(top_level)
    counts.overlapping += len(top_level) - len(ents)
    doc.ents = ents
    for span in spans:
        if is_qid(span.kb_id_):
            span._.qid = span.kb_id_
    doc_id = record.get("id", -1)
    doc.user_data["doc_id"] = str(index) if doc_id in (-1, None) else str(doc_id)
    doc.user_data["title"] = record.get("title", "")
    doc.user_data["evaluation_span"] = record.get("evaluation_span", [0, len(text)])
    doc.user_data["elevant_labels"] = labels
    return doc


def iter_elevant_records(path: PathLike) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """Yield (line number, record) for every non-blank line of an ELEVANT JSONL file."""
    path = ensure_file(path, "ELEVANT JSONL file")
    with path.open(encoding="utf8") as fileh:
        for line_no, line in enumerate(fileh, start=1):
            if not line.strip():
                continue
            try:
                record = srsly.json_loads(line)
            except ValueError as err:
                raise CorpusFormatError(path, line_no, Errors.E646.format(err=err)) from None
            if not isinstance(record, dict):
                raise CorpusFormatError(path, line_no, Errors.E647.format(value_type=type(record).__name__))
            yield line_no, record


def read_elevant(
    path: PathLike, *, nlp: Optional[Language] = None, limit: int = 0, show_progress: bool = False
) -> List[Doc]:
    """Convert an ELEVANT benchmark JSONL file (see the module docstring); ``limit`` > 0 stops early."""
    register_extensions()
    nlp = get_nlp(nlp)
    counts = _Counts()
    docs: List[Doc] = []
    for index, (line_no, record) in enumerate(
        progress(iter_elevant_records(path), f"ELEVANT {path}", show_progress)
    ):
        if limit and index >= limit:
            break
        docs.append(elevant_record_to_doc(record, nlp, index, path, line_no, counts))
    if counts.expanded:
        warn(Warnings.W604.format(path=path, expanded=counts.expanded, labels=counts.labels))
    if counts.overlapping:
        warn(Warnings.W605.format(path=path, overlapping=counts.overlapping, spans_key=SPANS_KEY))
    return docs

"""displaCy pictures of links and coreference clusters.

:func:`render` draws documents with displaCy's ``span`` style (manual mode), which allows nested and
overlapping mentions:

* every mention of a coreference cluster (``doc.spans["coref_clusters_N"]``) is underlined in its
  cluster's colour and labelled ``CN``; entities of ``doc.ents`` outside every cluster are labelled with
  their NER label;
* a mention linked to the KB shows its KB id as a link (``kb_url_template``); a NIL mention gets ``NIL``
  after its label;
* hovering a label shows the mention's link score, NIL probability, NIL reason and top candidates with
  their scores (``span._.link_score``, ``_.nil_prob``, ``_.nil_reason``, ``_.candidate_scores``).

Labels are built from ``doc`` content, so everything that comes from the document or the KB is
HTML-escaped before it goes into the page.
"""
from html import escape
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence, Union

from spacy import displacy
from spacy.tokens import Doc, Span

from ..extensions import CLUSTER_PREFIX, NIL, is_linked, register_extensions
from ..kb.files import write_text
from ..scoring.scorers import cluster_groups

DEFAULT_KB_URL = "https://en.wikipedia.org/wiki/{}"
#: Cluster colours (cycled): light, distinguishable tints on which black label text stays readable.
PALETTE = (
    "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99",
    "#8dd3c7", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
)
ENTITY_COLOUR = "#dddddd"
CANDIDATES_SHOWN = 5


def hover_text(span: Span) -> str:
    """The mention's link, scores and candidates as plain text (one line per item)."""
    register_extensions()
    lines = [f"link: {span.kb_id_ or '(none)'}"]
    if span._.link_score is not None:
        lines.append(f"link score: {span._.link_score:.3f}")
    if span._.nil_prob is not None:
        lines.append(f"NIL probability: {span._.nil_prob:.3f}")
    if span._.nil_reason:
        lines.append(f"NIL reason: {span._.nil_reason}")
    for kb_id, score in list(span._.candidate_scores or [])[:CANDIDATES_SHOWN]:
        lines.append(f"candidate {kb_id}: {float(score):.3f}")
    return "\n".join(lines)


def _label(name: str, span: Span) -> str:
    nil = " NIL" if span.kb_id_ == NIL else ""
    # The label goes into displaCy's markup as it is: escape what comes from the document.
    return f'<span title="{escape(hover_text(span), quote=True)}">{escape(name)}{nil}</span>'


def doc_to_spans(doc: Doc, *, prefix: str = CLUSTER_PREFIX, kb_url_template: str = DEFAULT_KB_URL) -> Dict[str, Any]:
    """displaCy manual ``span`` data for ``doc`` and the colour of every label (module docstring)."""
    spans: List[Dict[str, Any]] = []
    colours: Dict[str, str] = {}
    seen = set()

    def add(span: Span, name: str, colour: str) -> None:
        label = _label(name, span)
        colours[label.upper()] = colour  # displaCy looks colours up by the upper-cased label
        entry: Dict[str, Any] = {"start_token": span.start, "end_token": span.end, "label": label}
        if is_linked(span.kb_id_):
            entry["kb_id"] = escape(span.kb_id_)
            entry["kb_url"] = escape(kb_url_template.format(span.kb_id_), quote=True)
        spans.append(entry)
        seen.add((span.start, span.end))

    for n, group in enumerate(cluster_groups(doc, prefix), start=1):
        for span in group:
            add(span, f"C{n}", PALETTE[(n - 1) % len(PALETTE)])
    for ent in doc.ents:
        if (ent.start, ent.end) not in seen:
            add(ent, ent.label_, ENTITY_COLOUR)
    return {"text": doc.text, "tokens": [t.text for t in doc], "spans": spans, "colours": colours}


def render(
    docs: Union[Doc, Sequence[Doc]],
    *,
    page: bool = True,
    prefix: str = CLUSTER_PREFIX,
    kb_url_template: str = DEFAULT_KB_URL,
) -> str:
    """HTML of ``docs`` (a full standalone page with ``page``, else a fragment for a notebook)."""
    docs = [docs] if isinstance(docs, Doc) else list(docs)
    data = [doc_to_spans(doc, prefix=prefix, kb_url_template=kb_url_template) for doc in docs]
    colours: Dict[str, str] = {}
    for item in data:
        colours.update(item.pop("colours"))
    if not data:
        data = [{"text": "", "tokens": [], "spans": []}]
    return displacy.render(data, style="span", manual=True, page=page, jupyter=False, options={"colors": colours})


def save_html(docs: Iterable[Doc], path: Union[str, Path], **kwargs: Any) -> Path:
    """Write :func:`render`'s standalone page to ``path`` (folders created; through a temporary file renamed into
    place) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, render(list(docs), page=True, **kwargs))
    return path


__all__ = ["render", "save_html", "doc_to_spans", "hover_text", "DEFAULT_KB_URL"]

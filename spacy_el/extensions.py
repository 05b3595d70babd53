"""The Doc conventions of spacy_el, defined once: link values, coreference clusters and the custom
``Doc`` / ``Span`` extension attributes.

Every converter, component, scorer and benchmark reads and writes these through this module, never
through its own copy of a constant. Importing it is cheap and does not import spaCy (the metrics in
:mod:`spacy_el.scoring` use :data:`NIL` without paying for spaCy); the functions that touch a ``Doc``
import spaCy when called.

Links
-----
Links live in ``span.kb_id_`` (``doc.ents`` and span groups): the KB id (a Wikipedia title in URL
form, e.g. ``"Lord_Byron"``, or a Wikidata QID for corpora that only have QIDs), :data:`NIL`
(``"NIL"``) for a mention annotated or predicted as having no KB entity, and :data:`NO_LINK`
(``""``) for a mention without link annotation. :func:`is_linked` tells a real KB id from both.
``span._.qid`` holds the Wikidata QID when it is known, else ``None``: the value set on the span (corpus
readers set it from their annotations), else the QID the KB stores for the span's ``kb_id_``, which a
linker records for the Doc's linked ids with :func:`record_qids` (in ``doc.user_data[QIDS_KEY]``, a
``{kb_id: qid}`` mapping that survives ``DocBin(store_user_data=True)``).

A linker that writes :data:`NIL` says why in ``span._.nil_reason``, one of :data:`NIL_REASONS`.
Entities whose label is one of :data:`UNLINKABLE_LABELS` (OntoNotes' dates, times and numbers: the
default of the ``unlinkable_labels`` setting of the components that link upstream entities) are never
linked: they get :data:`NIL` with the reason :data:`NOT_LINKABLE_LABEL`. The EL scorers never count
a :data:`NIL` prediction, so they are never scored as errors (``docs/drop_in.md``).

Coreference clusters
--------------------
Clusters live both in the span groups ``doc.spans["coref_clusters_1"]``, ``"coref_clusters_2"``, ...
(spaCy's coref convention: :data:`CLUSTER_PREFIX`, 1-based, one group per cluster) and in
``doc._.coref_clusters`` (plain ``[[start, end], ...]`` token offsets, end exclusive, which survive
``DocBin(store_user_data=True)``). Always write them with :func:`set_clusters` and read them with
:func:`get_clusters`. A cluster may have a single mention (singleton).

Extension attributes
--------------------
:func:`register_extensions` registers all of them; it is idempotent and is run on import of
:mod:`spacy_el.corpora` and by every spacy_el component. ``doc._.doc_id`` is a view on
``doc.user_data["doc_id"]`` (a string), so it survives ``DocBin`` although it is a getter/setter
extension.

Span extension values are stored by spaCy in ``doc.user_data`` keyed by the span's *character
offsets*: two spans with the same offsets (say an entity in ``doc.ents`` and the same mention in a
span group) share their values. All defaults are plain JSON/msgpack data (``None``, lists), so values
survive ``DocBin(store_user_data=True)``. Sequences may come back from a DocBin as tuples rather
than lists (``doc._.coref_clusters`` included), so read clusters with :func:`get_clusters` and
replace values rather than mutating them in place.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .errors import Errors

if TYPE_CHECKING:  # spaCy is imported where a Doc is touched, not on import (see the docstring)
    from spacy.tokens import Doc, Span

# -- links -----------------------------------------------------------------------------------------
NIL = "NIL"  # kb_id_ of a mention that has no KB entity (annotated or predicted)
NO_LINK = ""  # kb_id_ of a mention without link annotation (or, in coref-only mode, not linked)


# Why a linker wrote NIL (``span._.nil_reason``).
NO_CANDIDATES = "no_candidates"  # the mention (or no mention of its cluster) has an alias-table candidate
TYPE_CONSTRAINT = "type_constraint"  # hard type-constrained decoding refused every candidate
BELOW_THRESHOLD = "below_threshold"  # the best candidate scored below the threshold, or below NIL's edge
NIL_CLASSIFIER = "nil_classifier"  # ner_stack_lstm's NIL classifier said the mention has no KB entity
NOT_LINKABLE_LABEL = "not_linkable_label"  # the entity's label is never linked (UNLINKABLE_LABELS)
NIL_REASONS: Tuple[str, ...] = (NO_CANDIDATES, TYPE_CONSTRAINT, BELOW_THRESHOLD, NIL_CLASSIFIER, NOT_LINKABLE_LABEL)
# Entity labels never linked by default (OntoNotes values: dates, times, amounts, ordinals, numbers).
UNLINKABLE_LABELS: Tuple[str, ...] = ("DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL")


def is_linked(kb_id: Optional[str], nil: str = NIL) -> bool:
    """True for a real KB id; False for :data:`NIL`, :data:`NO_LINK` and None."""
    return bool(kb_id) and kb_id != nil


# -- coreference clusters --------------------------------------------------------------------------
CLUSTER_PREFIX = "coref_clusters"  # span-group keys are f"{CLUSTER_PREFIX}_{n}", n = 1, 2, ...

# One doc's clusters: each a list of (start_token, end_token) pairs, end exclusive.
ClusterList = List[List[Tuple[int, int]]]


def cluster_key(n: int, prefix: str = CLUSTER_PREFIX) -> str:
    """The span-group key of the ``n``-th (1-based) cluster."""
    return f"{prefix}_{n}"


def cluster_keys(doc: "Doc", prefix: str = CLUSTER_PREFIX) -> List[str]:
    """The ``{prefix}_<n>`` span-group keys of ``doc``, sorted by ``n``."""
    pattern = re.compile(rf"^{re.escape(prefix)}_(\d+)$")
    found = [(int(m.group(1)), key) for key in doc.spans for m in [pattern.match(key)] if m]
    return [key for _, key in sorted(found)]


def set_clusters(doc: "Doc", clusters: Iterable[Iterable[Sequence[int]]], *, sort: bool = True) -> None:
    """Replace the coreference clusters of ``doc`` (span groups and ``doc._.coref_clusters``).

    clusters: one entry per cluster, each an iterable of ``(start_token, end_token)`` pairs (end
        exclusive, like ``Span.start``/``Span.end``).
    sort: order mentions within a cluster and clusters by their first mention, so the numbering of
        ``coref_clusters_<n>`` is deterministic.
    Raises ValueError for empty clusters and out-of-range or empty mentions.
    """
    register_extensions()
    normalised = _normalise_clusters(doc, clusters, sort)
    for key in cluster_keys(doc):
        del doc.spans[key]
    for n, cluster in enumerate(normalised, start=1):
        doc.spans[cluster_key(n)] = [doc[start:end] for start, end in cluster]
    doc._.coref_clusters = [[list(m) for m in cluster] for cluster in normalised]


def get_clusters(doc: "Doc") -> ClusterList:
    """The coreference clusters of ``doc`` as lists of ``(start, end)`` tuples.

    Read from the ``coref_clusters_<n>`` span groups when there are any (they also survive a DocBin
    without user data), otherwise from ``doc._.coref_clusters``. Returns ``[]`` when there are none.
    """
    register_extensions()
    keys = cluster_keys(doc)
    if keys:
        return [[(span.start, span.end) for span in doc.spans[key]] for key in keys]
    return [[(int(m[0]), int(m[1])) for m in cluster] for cluster in (doc._.coref_clusters or [])]


def get_cluster_spans(doc: "Doc") -> List[List["Span"]]:
    """The coreference clusters of ``doc`` as lists of ``Span`` objects."""
    return [[doc[start:end] for start, end in cluster] for cluster in get_clusters(doc)]


def _normalise_clusters(doc: "Doc", clusters: Iterable[Iterable[Sequence[int]]], sort: bool) -> ClusterList:
    result: ClusterList = []
    for i, cluster in enumerate(clusters):
        mentions: List[Tuple[int, int]] = []
        for mention in cluster:
            if len(mention) != 2:
                raise ValueError(Errors.E002.format(i=i, mention=mention))
            start, end = int(mention[0]), int(mention[1])
            if not 0 <= start < end <= len(doc):
                raise ValueError(Errors.E003.format(i=i, start=start, end=end, n_tokens=len(doc)))
            mentions.append((start, end))
        if not mentions:
            raise ValueError(Errors.E001.format(i=i))
        result.append(sorted(mentions) if sort else mentions)
    if sort:
        result.sort()
    return result


# -- extension attributes --------------------------------------------------------------------------
DOC_ID_KEY = "doc_id"

# name -> default value. ``coref_clusters``: a ClusterList. spaCy copies mutable defaults per object.
DOC_EXTENSIONS: Dict[str, Any] = {
    "coref_clusters": [],
    # entity_retriever: per passage [start_char, end_char, [kb_id, ...], [score, ...]], best first
    "entqa_passages": [],
}
SPAN_EXTENSIONS: Dict[str, Any] = {
    "nil_prob": None,  # probability that the mention has no KB entity
    "candidate_scores": None,  # [[kb_id, score], ...] in rank order, or None
    "link_score": None,  # score of the chosen kb_id
    "cluster_id": None,  # 1-based index of the mention's coref cluster (coref_clusters_<id>)
    "nil_reason": None,  # why a linker wrote NIL: one of NIL_REASONS
}


# doc.user_data key of the {kb_id: qid} mapping behind span._.qid (see record_qids).
QIDS_KEY = "spacy_el.qids"


def _qid_key(span: "Span") -> Tuple[str, str, int, int]:
    # spaCy's own key of a span attribute extension, so values written before ``qid`` became a getter
    # (and DocBins holding them) read the same.
    return ("._.", "qid", span.start_char, span.end_char)


def _get_qid(span: "Span") -> Optional[str]:
    """The QID set on the span, else the one recorded for its ``kb_id_`` (None when neither exists)."""
    user_data = span.doc.user_data
    key = _qid_key(span)
    if key in user_data:
        return user_data[key]
    kb_id = span.kb_id_
    if not is_linked(kb_id):
        return None
    qids = user_data.get(QIDS_KEY)
    return qids.get(kb_id) if isinstance(qids, dict) else None


def _set_qid(span: "Span", value: Optional[str]) -> None:
    span.doc.user_data[_qid_key(span)] = value


def record_qids(doc: "Doc", qid_of: Callable[[str], Optional[str]]) -> None:
    """Record the QID of every KB id linked in ``doc`` (``doc.ents`` and the span groups), for ``span._.qid``.

    qid_of: KB id -> QID or None, e.g. ``ElKnowledgeBase.qid_of``. Nothing is written for a Doc without
    linked ids that have a QID, so the Doc's user data stays empty where there is nothing to say.
    """
    ids = {span.kb_id_ for span in doc.ents}
    for group in doc.spans.values():
        ids.update(span.kb_id_ for span in group)
    found = {kb_id: qid for kb_id in ids if is_linked(kb_id) for qid in [qid_of(kb_id)] if qid}
    if found:
        existing = doc.user_data.get(QIDS_KEY)
        doc.user_data[QIDS_KEY] = {**existing, **found} if isinstance(existing, dict) else found


def _get_doc_id(doc: "Doc") -> Optional[str]:
    return doc.user_data.get(DOC_ID_KEY)


def _set_doc_id(doc: "Doc", value: Optional[str]) -> None:
    doc.user_data[DOC_ID_KEY] = value


def register_extensions(force: bool = False) -> None:
    """Register every spacy_el extension attribute on ``Doc`` and ``Span``.

    Extensions already present are left alone (so registering twice, or after another package has
    registered a compatible extension, is harmless) unless ``force`` is True, which re-registers them
    with spacy_el's defaults.
    """
    from spacy.tokens import Doc, Span

    for name, default in DOC_EXTENSIONS.items():
        if force or not Doc.has_extension(name):
            Doc.set_extension(name, default=default, force=True)
    for name, default in SPAN_EXTENSIONS.items():
        if force or not Span.has_extension(name):
            Span.set_extension(name, default=default, force=True)
    if force or not Span.has_extension("qid"):
        Span.set_extension("qid", getter=_get_qid, setter=_set_qid, force=True)
    if force or not Doc.has_extension("doc_id"):
        Doc.set_extension("doc_id", getter=_get_doc_id, setter=_set_doc_id, force=True)


__all__ = [
    "NIL",
    "NO_LINK",
    "is_linked",
    "NIL_REASONS",
    "NO_CANDIDATES",
    "TYPE_CONSTRAINT",
    "BELOW_THRESHOLD",
    "NIL_CLASSIFIER",
    "NOT_LINKABLE_LABEL",
    "UNLINKABLE_LABELS",
    "CLUSTER_PREFIX",
    "ClusterList",
    "cluster_key",
    "cluster_keys",
    "set_clusters",
    "get_clusters",
    "get_cluster_spans",
    "register_extensions",
    "DOC_EXTENSIONS",
    "SPAN_EXTENSIONS",
    "DOC_ID_KEY",
    "QIDS_KEY",
    "record_qids",
]

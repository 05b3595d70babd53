"""All custom ``Doc`` / ``Span`` extension attributes of spacy_el, registered in one place.

Call :func:`register_extensions` before touching ``doc._`` or ``span._``; it is idempotent and is run on
import of :mod:`spacy_el.corpora` and by every spacy_el component.

Storage conventions shared by all converters and components
-----------------------------------------------------------
* Links live in ``span.kb_id_`` (``doc.ents`` and span groups): the KB id (a Wikipedia title in URL
  form, e.g. ``"Lord_Byron"``, or a Wikidata QID for corpora that only have QIDs), the string
  ``"NIL"`` for a mention annotated as having no KB entity, and ``""`` for a mention without link
  annotation.
* ``span._.qid`` holds the Wikidata QID when it is known, else ``None``.
* Coreference clusters live both in the span groups ``doc.spans["coref_clusters_1"]``,
  ``"coref_clusters_2"``, ... (spaCy's coref convention, 1-based, one group per cluster) and in
  ``doc._.coref_clusters``; always write them with :func:`spacy_el.corpora.clusters.set_clusters`.
* ``doc._.doc_id`` is a view on ``doc.user_data["doc_id"]`` (a string), so it survives ``DocBin``
  even though it is a getter/setter extension.

Span extension values are stored by spaCy in ``doc.user_data`` keyed by the span's *character
offsets*: two spans with the same offsets (say an entity in ``doc.ents`` and the same mention in a
span group) share their values. All defaults are plain JSON/msgpack data (``None``, lists), so values
survive ``DocBin(store_user_data=True)``. Sequences may come back from a DocBin as tuples rather
than lists (``doc._.coref_clusters`` included), so read clusters with
:func:`spacy_el.corpora.clusters.get_clusters` and replace values rather than mutating them in place.
"""

from typing import Any, Dict, List, Optional, Tuple

from spacy.tokens import Doc, Span

DOC_ID_KEY = "doc_id"

# name -> default value. ``coref_clusters``: list of clusters, each a list of (start_token, end_token)
# pairs with end exclusive (``span.start``/``span.end``). spaCy copies mutable defaults per object.
DOC_EXTENSIONS: Dict[str, Any] = {
    "coref_clusters": [],
    # entity_retriever: per passage [start_char, end_char, [kb_id, ...], [score, ...]], best first
    "entqa_passages": [],
}
SPAN_EXTENSIONS: Dict[str, Any] = {
    "qid": None,  # Wikidata QID ("Q42") or None
    "nil_prob": None,  # probability that the mention has no KB entity
    "candidate_scores": None,  # [[kb_id, score], ...] in rank order, or None
    "link_score": None,  # score of the chosen kb_id
    "cluster_id": None,  # 1-based index of the mention's coref cluster (coref_clusters_<id>)
    "nil_reason": None,  # why a linker wrote NIL: "no_candidates", "type_constraint", "below_threshold"
}

ClusterList = List[List[Tuple[int, int]]]


def _get_doc_id(doc: Doc) -> Optional[str]:
    return doc.user_data.get(DOC_ID_KEY)


def _set_doc_id(doc: Doc, value: Optional[str]) -> None:
    doc.user_data[DOC_ID_KEY] = value


def register_extensions(force: bool = False) -> None:
    """Register every spacy_el extension attribute on ``Doc`` and ``Span``.

    Extensions already present are left alone (so registering twice, or after another package has
    registered a compatible extension, is harmless) unless ``force`` is True, which re-registers them
    with spacy_el's defaults.
    """
    for name, default in DOC_EXTENSIONS.items():
        if force or not Doc.has_extension(name):
            Doc.set_extension(name, default=default, force=True)
    for name, default in SPAN_EXTENSIONS.items():
        if force or not Span.has_extension(name):
            Span.set_extension(name, default=default, force=True)
    if force or not Doc.has_extension("doc_id"):
        Doc.set_extension("doc_id", getter=_get_doc_id, setter=_set_doc_id, force=True)


__all__ = ["register_extensions", "DOC_EXTENSIONS", "SPAN_EXTENSIONS", "DOC_ID_KEY", "ClusterList"]

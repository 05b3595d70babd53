"""One annotated ``Doc`` as one output record (a JSON-ready dict), the same for JSONL and Parquet.

``{"id", <carried fields>, "entities": [...], "clusters": [...]}``:

* an entity (from ``doc.ents``): ``start_char``, ``end_char``, ``text``, ``label``, ``kb_id`` (the KB id,
  ``"NIL"`` or ``""``), ``qid``, ``link_score``, ``nil_prob`` and ``candidates``, the first
  ``top_candidates`` of ``span._.candidate_scores`` as ``{"kb_id", "score"}`` objects (``None`` where the
  pipeline wrote none);
* a cluster (from the ``coref_clusters_<n>`` span groups, read with :mod:`spacy_el.extensions`):
  ``kb_id``, the link its mentions agree on (``None`` when they have none or disagree), and ``mentions``,
  ``[start_char, end_char]`` pairs. A pipeline without coreference gives ``[]``.

The output keys win over carried fields of the same name.
"""
from typing import Any, Dict, List, Optional, Tuple

from ..extensions import cluster_keys, get_cluster_spans, register_extensions
from ..scoring.cluster_el import cluster_link

OUTPUT_KEYS = ("id", "entities", "clusters")


def _float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def entity_record(span, top_candidates: int) -> Dict[str, Any]:
    scores = span._.candidate_scores
    candidates = None
    if scores is not None:
        candidates = [{"kb_id": str(kb_id), "score": _float(score)} for kb_id, score in list(scores)[:top_candidates]]
    return {
        "start_char": span.start_char,
        "end_char": span.end_char,
        "text": span.text,
        "label": span.label_,
        "kb_id": span.kb_id_,
        "qid": span._.qid,
        "link_score": _float(span._.link_score),
        "nil_prob": _float(span._.nil_prob),
        "candidates": candidates,
    }


def cluster_records(doc) -> List[Dict[str, Any]]:
    ent_links = {(ent.start, ent.end): ent.kb_id_ for ent in doc.ents}
    # The span groups' spans carry their links; clusters kept only in doc._.coref_clusters (a DocBin
    # without span groups) come back as plain slices, linked through the entities at their offsets.
    groups = [list(doc.spans[key]) for key in cluster_keys(doc)] or get_cluster_spans(doc)
    out = []
    for spans in groups:
        link = cluster_link([s.kb_id_ or ent_links.get((s.start, s.end), "") for s in spans], gold=False)
        out.append({"kb_id": link if isinstance(link, str) else None, "mentions": [[s.start_char, s.end_char] for s in spans]})
    return out


def doc_annotations(doc, top_candidates: int = 5) -> Dict[str, Any]:
    """``{"entities", "clusters"}`` of one annotated document: the part of its record that the pipeline makes
    (the Ray engine computes it in its actors and the driver adds the id and carried fields)."""
    register_extensions()
    return {"entities": [entity_record(ent, top_candidates) for ent in doc.ents], "clusters": cluster_records(doc)}


def merge_record(doc_id: str, fields: Dict[str, Any], annotations: Dict[str, Any]) -> Dict[str, Any]:
    """The output record from a document's id, carried fields and :func:`doc_annotations`, keys in output order."""
    record = {k: v for k, v in fields.items() if k not in OUTPUT_KEYS}
    return {"id": doc_id, **record, "entities": annotations["entities"], "clusters": annotations["clusters"]}


def doc_record(doc, doc_id: str, fields: Dict[str, Any], top_candidates: int = 5) -> Dict[str, Any]:
    """The output record of one annotated document."""
    return merge_record(doc_id, fields, doc_annotations(doc, top_candidates))


def encodable(text: str) -> str:
    """``text`` as UTF-8 can write it: a lone surrogate (``"a\\ud800"`` from a JSON escape, ``"\\udcff"`` from a
    file name that is not UTF-8) becomes its escape, as text (``"a\\\\ud800"``). For the error log, which
    must be writable whatever the document held."""
    return text.encode("utf8", "backslashreplace").decode("utf8")


def unencodable(value: Any, where: str = "") -> Optional[Tuple[str, str]]:
    """Where ``value`` (a string, or dicts and lists of them, keys included) holds text that UTF-8 cannot
    encode, and why: ``("field 'note'[0]", "surrogates not allowed at 1")``; None when nothing does."""
    if isinstance(value, str):
        try:
            value.encode("utf8")
        except UnicodeEncodeError as err:
            return where, f"{err.reason} at {err.start}"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unencodable(key, f"{where} key") or unencodable(item, f"{where}[{encodable(str(key))!r}]")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = unencodable(item, f"{where}[{i}]")
            if found:
                return found
    return None


def arrow_schema(carried=None):
    """The Arrow schema of the Parquet output: ``id``, the carried columns (``carried``, an Arrow schema,
    or None to infer them), ``entities`` and ``clusters``."""
    import pyarrow as pa

    candidate = pa.struct([("kb_id", pa.string()), ("score", pa.float64())])
    entity = pa.struct([
        ("start_char", pa.int64()), ("end_char", pa.int64()), ("text", pa.string()), ("label", pa.string()),
        ("kb_id", pa.string()), ("qid", pa.string()), ("link_score", pa.float64()), ("nil_prob", pa.float64()),
        ("candidates", pa.list_(candidate)),
    ])
    cluster = pa.struct([("kb_id", pa.string()), ("mentions", pa.list_(pa.list_(pa.int64())))])
    fields = [pa.field("id", pa.string())]
    fields += [f for f in (carried or []) if f.name not in OUTPUT_KEYS]
    fields += [pa.field("entities", pa.list_(entity)), pa.field("clusters", pa.list_(cluster))]
    return pa.schema(fields)

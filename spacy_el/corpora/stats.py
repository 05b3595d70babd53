"""Corpus statistics computed from converted ``Doc`` objects (used by the CLI summary and the tests)."""

from collections import Counter
from typing import Dict, Iterable, Optional

from spacy.tokens import Doc

from ..extensions import NIL, cluster_keys, get_clusters, register_extensions


def corpus_stats(docs: Iterable[Doc], mentions_key: Optional[str] = "mentions") -> Dict[str, int]:
    """Counts over ``docs``.

    ents: ``doc.ents``; ents_annotated: ents with a non-empty kb_id (linked or NIL); ents_linked /
    ents_nil: kb_id a KB id / ``"NIL"``; mentions: spans in ``doc.spans[mentions_key]``;
    mentions_linked: those with a kb_id other than ``""``/``"NIL"``; clusters / clusters_2plus:
    coreference clusters (all / with at least two mentions); clusters_linked: clusters containing a
    linked mention; titles: distinct kb_ids of linked mentions.
    """
    stats = dict.fromkeys(
        [
            "docs",
            "tokens",
            "sentences",
            "ents",
            "ents_annotated",
            "ents_linked",
            "ents_nil",
            "mentions",
            "mentions_linked",
            "clusters",
            "clusters_2plus",
            "clusters_linked",
            "titles",
        ],
        0,
    )
    titles = set()
    for doc in docs:
        stats["docs"] += 1
        stats["tokens"] += len(doc)
        if doc.has_annotation("SENT_START"):
            stats["sentences"] += sum(1 for _ in doc.sents)
        for ent in doc.ents:
            stats["ents"] += 1
            stats["ents_annotated"] += ent.kb_id_ != ""
            stats["ents_linked"] += ent.kb_id_ not in ("", NIL)
            stats["ents_nil"] += ent.kb_id_ == NIL
        linked_offsets = set()
        if mentions_key and mentions_key in doc.spans:
            for span in doc.spans[mentions_key]:
                stats["mentions"] += 1
                if span.kb_id_ not in ("", NIL):
                    stats["mentions_linked"] += 1
                    titles.add(span.kb_id_)
                    linked_offsets.add((span.start, span.end))
        for cluster in get_clusters(doc):
            stats["clusters"] += 1
            stats["clusters_2plus"] += len(cluster) >= 2
            stats["clusters_linked"] += any(mention in linked_offsets for mention in cluster)
    stats["titles"] = len(titles)
    return stats


def mention_widths(docs: Iterable[Doc]) -> Counter:
    """How many gold mentions of ``docs`` are how many tokens wide: ``{width: count}`` over the mentions of
    the coreference clusters and the linked ``doc.ents`` (each offset pair once per doc), the mentions a
    span-enumerating model such as ``joint_coref_linker`` must find."""
    widths: Counter = Counter()
    for doc in docs:
        offsets = {mention for cluster in get_clusters(doc) for mention in cluster}
        offsets.update((ent.start, ent.end) for ent in doc.ents if ent.kb_id_ not in ("", NIL))
        widths.update(end - start for start, end in offsets)
    return widths


def share_wider_than(widths: Counter, max_width: int) -> float:
    """The share of the mentions counted in ``widths`` (:func:`mention_widths`) wider than ``max_width``
    tokens (0.0 when there are none)."""
    total = sum(widths.values())
    return sum(n for width, n in widths.items() if width > max_width) / total if total else 0.0


def doc_annotations(doc: Doc) -> Dict[str, object]:
    """The gold annotation of ``doc`` as plain data (for comparisons, e.g. before/after a DocBin).

    Keys: ``doc_id``, ``words``, ``sent_starts`` (None if unset), ``ents`` and ``spans`` (every span
    group except the ``coref_clusters_<n>`` ones, as (start, end, label, kb_id, qid) tuples) and
    ``clusters``.
    """

    register_extensions()

    def spans(group: Iterable) -> list:
        return [(s.start, s.end, s.label_, s.kb_id_, s._.qid) for s in group]

    skip = set(cluster_keys(doc))
    return {
        "doc_id": doc.user_data.get("doc_id"),
        "words": [t.text for t in doc],
        "sent_starts": [t.is_sent_start for t in doc] if doc.has_annotation("SENT_START") else None,
        "ents": spans(doc.ents),
        "spans": {key: spans(group) for key, group in sorted(doc.spans.items()) if key not in skip},
        "clusters": get_clusters(doc),
    }

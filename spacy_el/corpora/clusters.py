"""Read and write coreference clusters on a ``Doc`` in spacy_el's one storage convention.

Clusters are stored twice, always together (use :func:`set_clusters`, never write one of them alone):

* span groups ``doc.spans["coref_clusters_1"]``, ``"coref_clusters_2"``, ... (spaCy's experimental
  coref convention: 1-based, one group per cluster);
* ``doc._.coref_clusters``: the same clusters as plain ``[[start, end], ...]`` token offsets (end
  exclusive), which survive ``DocBin(store_user_data=True)``.

A cluster may have a single mention (singleton); corpora that annotate singletons keep them.
"""

import re
from typing import Iterable, List, Sequence, Tuple

from spacy.tokens import Doc, Span

from ..extensions import ClusterList, register_extensions

CLUSTER_PREFIX = "coref_clusters_"
_CLUSTER_KEY = re.compile(r"^coref_clusters_(\d+)$")


def cluster_keys(doc: Doc) -> List[str]:
    """The ``coref_clusters_<n>`` span-group keys of ``doc``, sorted by ``n``."""
    found = [(int(m.group(1)), key) for key in doc.spans for m in [_CLUSTER_KEY.match(key)] if m]
    return [key for _, key in sorted(found)]


def _normalise(doc: Doc, clusters: Iterable[Iterable[Sequence[int]]], sort: bool) -> ClusterList:
    result: ClusterList = []
    for i, cluster in enumerate(clusters):
        mentions: List[Tuple[int, int]] = []
        for mention in cluster:
            if len(mention) != 2:
                raise ValueError(f"Cluster {i}: mention {mention!r} is not a (start, end) pair.")
            start, end = int(mention[0]), int(mention[1])
            if not 0 <= start < end <= len(doc):
                raise ValueError(
                    f"Cluster {i}: mention ({start}, {end}) is not a non-empty token range of a "
                    f"Doc with {len(doc)} tokens."
                )
            mentions.append((start, end))
        if not mentions:
            raise ValueError(f"Cluster {i} is empty; every cluster needs at least one mention.")
        result.append(sorted(mentions) if sort else mentions)
    if sort:
        result.sort()
    return result


def set_clusters(doc: Doc, clusters: Iterable[Iterable[Sequence[int]]], *, sort: bool = True) -> None:
    """Replace the coreference clusters of ``doc``.

    clusters: one entry per cluster, each an iterable of ``(start_token, end_token)`` pairs (end
        exclusive, like ``Span.start``/``Span.end``).
    sort: order mentions within a cluster and clusters by their first mention, so the numbering of
        ``coref_clusters_<n>`` is deterministic.
    Raises ValueError for empty clusters and out-of-range or empty mentions.
    """
    register_extensions()
    normalised = _normalise(doc, clusters, sort)
    for key in cluster_keys(doc):
        del doc.spans[key]
    for n, cluster in enumerate(normalised, start=1):
        doc.spans[f"{CLUSTER_PREFIX}{n}"] = [doc[start:end] for start, end in cluster]
    doc._.coref_clusters = [[list(m) for m in cluster] for cluster in normalised]


def get_clusters(doc: Doc) -> ClusterList:
    """The coreference clusters of ``doc`` as lists of ``(start, end)`` tuples.

    Read from the ``coref_clusters_<n>`` span groups when there are any (they also survive a DocBin
    without user data), otherwise from ``doc._.coref_clusters``. Returns ``[]`` when there are none.
    """
    register_extensions()
    keys = cluster_keys(doc)
    if keys:
        return [[(span.start, span.end) for span in doc.spans[key]] for key in keys]
    return [[(int(m[0]), int(m[1])) for m in cluster] for cluster in (doc._.coref_clusters or [])]


def get_cluster_spans(doc: Doc) -> List[List[Span]]:
    """The coreference clusters of ``doc`` as lists of ``Span`` objects."""
    return [[doc[start:end] for start, end in cluster] for cluster in get_clusters(doc)]


__all__ = ["set_clusters", "get_clusters", "get_cluster_spans", "cluster_keys", "CLUSTER_PREFIX"]

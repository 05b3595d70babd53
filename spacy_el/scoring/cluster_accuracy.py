"""Cluster accuracy (Zaporojets et al. 2022, Table 3): the share of gold linked clusters predicted exactly.

Input: per document, gold and predicted clusters as collections of ``(mention, kb_id)`` pairs (a mention any
hashable span such as character offsets; ``doc_linked_clusters`` of :mod:`spacy_el.scoring.scorers` gives
them). A gold cluster counts when all its mentions carry one InKB id; it is correct when a predicted cluster
has exactly its mentions and that id. Gold clusters of one mention ("singleton") and of several ("multi") are
counted apart, as the paper's table does: only the second need coreference to be right.
"""
from typing import Dict, FrozenSet, Hashable, Iterable, Optional, Sequence, Set, Tuple

from ..extensions import is_linked

Mention = Hashable
LinkedCluster = Sequence[Tuple[Mention, Optional[str]]]
DocClusters = Tuple[Sequence[LinkedCluster], Sequence[LinkedCluster]]
#: The two groups of gold clusters, by their number of mentions.
GROUPS = ("singleton", "multi")


def single_link(cluster: LinkedCluster) -> Optional[str]:
    """The one non-empty id of the cluster's mentions; None when they have none or several."""
    ids = {kb_id for _, kb_id in cluster if kb_id}
    return next(iter(ids)) if len(ids) == 1 else None


def cluster_accuracy_counts(documents: Iterable[DocClusters]) -> Dict[str, Tuple[int, int]]:
    """``{"singleton": (correct, total), "multi": (correct, total)}`` over the gold InKB clusters of ``documents``
    (``(gold clusters, predicted clusters)`` per document)."""
    counts = {group: [0, 0] for group in GROUPS}
    for gold, pred in documents:
        predicted: Set[Tuple[FrozenSet[Mention], str]] = set()
        for cluster in pred:
            kb_id = single_link(cluster)
            if kb_id is not None:
                predicted.add((frozenset(m for m, _ in cluster), kb_id))
        for cluster in gold:
            kb_id = single_link(cluster)
            if kb_id is None or not is_linked(kb_id):
                continue
            group = counts["singleton" if len(cluster) == 1 else "multi"]
            group[1] += 1
            group[0] += (frozenset(m for m, _ in cluster), kb_id) in predicted
    return {group: (right, total) for group, (right, total) in counts.items()}

"""Hard cases (Zaporojets et al. 2022, Table 4): mentions that only coreference can link.

A hard case is a gold mention of a linked cluster whose own candidates lack the cluster's entity while another
mention of the cluster ("a mate") has it among its own: linking it on its own candidates is impossible, and a
joint model can pass the mate's link on to it. Which mention has which candidates is the caller's
(``has_candidate``: an alias table's top k, or a generator's lists), so this module needs neither a KB nor spaCy.

Input clusters are per document, collections of ``(mention, kb_id)`` pairs as in :mod:`.cluster_accuracy`.
"""
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Hashable, List, Optional, Sequence, Tuple

from ..extensions import is_linked
from .cluster_accuracy import LinkedCluster, single_link

Mention = Hashable
#: ``has_candidate(doc_index, mentions, kb_id)``: for each of the document's ``mentions``, whether its own
#: candidates include ``kb_id``.
HasCandidate = Callable[[int, Sequence[Mention], str], Sequence[bool]]


@dataclass(frozen=True)
class HardCase:
    """A gold mention whose own candidates lack its gold entity while a cluster mate's have it."""

    mention: Mention
    kb_id: str
    mates: FrozenSet[Mention]  # the mentions of its gold cluster whose own candidates have the entity


def linked_gold_clusters(clusters: Sequence[LinkedCluster]) -> List[Tuple[List[Mention], str]]:
    """The clusters of two mentions or more whose mentions share one InKB id: ``(mentions, kb_id)``."""
    found = []
    for cluster in clusters:
        kb_id = single_link(cluster)
        if len(cluster) >= 2 and kb_id is not None and is_linked(kb_id):
            found.append(([m for m, _ in cluster], kb_id))
    return found


def find_hard_cases(gold: Sequence[Sequence[LinkedCluster]], has_candidate: HasCandidate) -> List[List[HardCase]]:
    """The hard cases of each document of ``gold`` (its gold linked clusters). They depend on the gold clusters
    and the candidates only, so they are found once per dataset and shared by every system scored on it."""
    found: List[List[HardCase]] = []
    for index, clusters in enumerate(gold):
        cases: List[HardCase] = []
        for mentions, kb_id in linked_gold_clusters(clusters):
            own = dict(zip(mentions, has_candidate(index, mentions, kb_id)))
            mates = frozenset(m for m in mentions if own[m])
            if mates:
                cases += [HardCase(m, kb_id, mates) for m in mentions if not own[m]]
        found.append(cases)
    return found


def count_hard_cases(cases: Sequence[Sequence[HardCase]], pred: Sequence[Sequence[LinkedCluster]]) -> Dict[str, int]:
    """Over the ``total`` hard cases (``cases``, per document of ``pred``, its predicted clusters), how many were
    predicted as a mention (``found``), in one cluster with a mate (``with_mate``: only then can a joint decoding
    pass the mate's link on) and with the gold link (``correct``)."""
    counts = {"total": 0, "found": 0, "with_mate": 0, "correct": 0}
    for doc_cases, predicted in zip(cases, pred):
        link_of: Dict[Mention, Optional[str]] = {m: kb_id for cluster in predicted for m, kb_id in cluster}
        cluster_of = {m: i for i, cluster in enumerate(predicted) for m, _ in cluster}
        for case in doc_cases:
            mate_clusters = {cluster_of[m] for m in case.mates if m in cluster_of}
            counts["total"] += 1
            counts["found"] += case.mention in cluster_of
            counts["with_mate"] += cluster_of.get(case.mention, -1) in mate_clusters
            counts["correct"] += link_of.get(case.mention) == case.kb_id
    return counts

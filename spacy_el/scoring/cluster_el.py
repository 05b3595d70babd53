"""ELm and ELh: entity linking scored on mentions and on coreference clusters.

From "Joint coreference resolution and entity linking as spanning trees" (Zaporojets et al.,
§3 Experimental Setup): "(i) mention-level F1 score (ELm), and (ii) cluster-level hard F1
score (ELh) that counts a true positive only if both the coreference cluster (in terms of all
its mention spans) and the entity link are correctly predicted. These EL metrics are executed
in a strong matching setting that requires predicted spans to exactly match the boundaries of
gold mentions. Furthermore, for EL we only report the performance on non-NIL mentions".

Input: per document, gold and predicted clusters; a cluster is a collection of
`(mention, kb_id)` pairs, a mention being a hashable span such as `(start, end)` and kb_id
following the project convention (KB id / "NIL" / "" or None for no annotation).

* The link of a cluster is the single distinct non-empty id among its mentions; unannotated
  mentions inherit it (in the paper the link belongs to the cluster). A gold cluster with two
  different ids is bad data (ValueError). A predicted cluster with two different ids (e.g. from
  a pipeline that links mentions independently) has no correct link: it counts as a predicted
  linked cluster for ELh that can never be a true positive, and its mentions keep their own ids
  for ELm.
* ELm: F1 over (mention, link) pairs whose link is an InKB id.
* ELh: F1 over (exact mention set, link) pairs of clusters whose link is an InKB id; clusters
  linked to NIL or unlinked are left out on both sides.
* A mention in two clusters of one side raises ValueError; identical duplicates collapse.

P, R and F1 sum tp/fp/fn over documents; 0.0 where a denominator is 0.
"""
from typing import Collection, Dict, FrozenSet, Hashable, Iterable, List, Optional, Set, Tuple, Union

from ..errors import Errors
from ..extensions import NIL, is_linked
from .prf import Counts, prf_dict

Mention = Hashable
MentionLink = Tuple[Mention, Optional[str]]
LinkedClusterInput = Collection[MentionLink]
DocClusters = Tuple[Iterable[LinkedClusterInput], Iterable[LinkedClusterInput]]


class _Inconsistent:
    """Link of a predicted cluster whose mentions carry different ids: never correct."""

    def __repr__(self) -> str:
        return "<inconsistent link>"


INCONSISTENT = _Inconsistent()
Link = Union[str, _Inconsistent]


def cluster_link(kb_ids: Iterable[Optional[str]], *, gold: bool) -> Optional[Link]:
    """The link of a cluster from its mentions' ids.

    None if no mention is annotated, the id if all annotated mentions agree (NIL included),
    else ValueError for gold and `INCONSISTENT` for predictions.
    """
    distinct = sorted({kb_id for kb_id in kb_ids if kb_id})
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    if gold:
        raise ValueError(Errors.E044.format(kb_ids=distinct))
    return INCONSISTENT


def _checked_clusters(
    clusters: Iterable[LinkedClusterInput], side: str
) -> List[Dict[Mention, Set[str]]]:
    """Per cluster, each mention's set of non-empty ids; rejects a mention in two clusters."""
    owner: Dict[Mention, int] = {}
    result: List[Dict[Mention, Set[str]]] = []
    for index, cluster in enumerate(clusters):
        mentions: Dict[Mention, Set[str]] = {}
        for pair in cluster:
            # kb_id must be a string (or None): a bare (start, end) mention is also a pair
            if (
                not isinstance(pair, (tuple, list))
                or len(pair) != 2
                or not isinstance(pair[1], (str, type(None)))
            ):
                raise ValueError(Errors.E042.format(side=side, pair=pair))
            mention, kb_id = pair
            first = owner.setdefault(mention, index)
            if first != index:
                raise ValueError(Errors.E043.format(side=side, mention=mention, first=first, index=index))
            ids = mentions.setdefault(mention, set())
            if kb_id:
                ids.add(kb_id)
        if mentions:
            result.append(mentions)
    return result


def _link_sets(
    clusters: Iterable[LinkedClusterInput], *, gold: bool, nil_id: str
) -> Tuple[Set[Tuple[Mention, Link]], Set[Tuple[FrozenSet[Mention], Link]]]:
    """InKB (mention, link) pairs for ELm and InKB (mention set, link) pairs for ELh."""
    side = "gold" if gold else "predicted"
    mention_links: Set[Tuple[Mention, Link]] = set()
    cluster_links: Set[Tuple[FrozenSet[Mention], Link]] = set()
    for mentions in _checked_clusters(clusters, side):
        link = cluster_link((i for ids in mentions.values() for i in ids), gold=gold)
        if isinstance(link, _Inconsistent):
            cluster_links.add((frozenset(mentions), link))
            for mention, ids in mentions.items():
                own = cluster_link(ids, gold=False)  # a lone mention with two ids stays wrong
                if own is not None and (isinstance(own, _Inconsistent) or is_linked(own, nil_id)):
                    mention_links.add((mention, own))
        elif link is not None and is_linked(link, nil_id):
            cluster_links.add((frozenset(mentions), link))
            mention_links.update((mention, link) for mention in mentions)
    return mention_links, cluster_links


def _counts(gold: Set, pred: Set) -> Counts:
    tp = len(gold & pred)
    return Counts(tp=tp, fp=len(pred) - tp, fn=len(gold) - tp)


def cluster_el_counts(
    gold: Iterable[LinkedClusterInput],
    pred: Iterable[LinkedClusterInput],
    *,
    nil_id: str = NIL,
) -> Tuple[Counts, Counts]:
    """(ELm counts, ELh counts) of one document."""
    gold_mentions, gold_clusters = _link_sets(gold, gold=True, nil_id=nil_id)
    pred_mentions, pred_clusters = _link_sets(pred, gold=False, nil_id=nil_id)
    return _counts(gold_mentions, pred_mentions), _counts(gold_clusters, pred_clusters)


def cluster_el_scores(
    documents: Iterable[DocClusters], *, nil_id: str = NIL
) -> Dict[str, float]:
    """Corpus ELm and ELh over (gold clusters, predicted clusters) documents.

    Returns `elm_p/r/f` and `elh_p/r/f`.
    """
    elm_total = Counts()
    elh_total = Counts()
    for gold, pred in documents:
        elm, elh = cluster_el_counts(gold, pred, nil_id=nil_id)
        elm_total = elm_total + elm
        elh_total = elh_total + elh
    return {**prf_dict("elm", elm_total.prf()), **prf_dict("elh", elh_total.prf())}

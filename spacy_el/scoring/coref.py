"""Coreference metrics: MUC, B-cubed, CEAF-e, the CoNLL-2012 average and LEA.

A mention is any hashable value, normally a `(start, end)` span tuple; a cluster is a
collection of mentions; a document is scored from its key (gold) and response (predicted)
clusters. The definitions follow the CoNLL-2012 reference scorer
(github.com/conll/reference-coreference-scorers, v8+) and, for LEA, Moosavi & Strube (2016)
as implemented in that scorer and in coval:

* Twinless mentions (in only one side) count: a key mention missing from the response lowers
  recall, a response mention missing from the key lowers precision.
* Singletons: MUC is link-based, so singleton clusters contribute nothing to it. B-cubed,
  CEAF-e and LEA score whatever singletons are given; LEA gives a singleton one self-link,
  resolved only when the other side also has that mention as a singleton. Pass
  `keep_singletons=False` to drop singleton clusters from both sides first (the CoNLL-2012
  evaluation on OntoNotes has no singletons in the key).
* A mention listed twice in one cluster is counted once (reference test TC-A-7).
* A mention in two clusters of the same side is ambiguous: by default a ValueError;
  `on_overlap="first"` keeps it in the first cluster only, as the reference scorer's
  de-duplication does (TC-A-8, TC-A-9).
* Empty clusters are dropped. A ratio whose denominator is 0 (e.g. no response at all for
  precision, or no coreference link for MUC) is 0.0.

Corpus scores sum numerators and denominators over documents before dividing, as the
reference scorer does. `coref_avg_f` is the CoNLL-2012 score: the mean of the MUC, B-cubed
and CEAF-e F1 values.
"""
from collections import Counter
from typing import Callable, Collection, Dict, FrozenSet, Hashable, Iterable, List, Sequence, Tuple

import numpy as np

from ..errors import Errors
from .assignment import max_weight_assignment
from .prf import PRCounts, prf_dict

Mention = Hashable
Cluster = FrozenSet[Mention]
ClusterInput = Iterable[Collection[Mention]]
OVERLAP_POLICIES = ("error", "first")


def normalize_clusters(
    clusters: ClusterInput,
    *,
    keep_singletons: bool = True,
    on_overlap: str = "error",
    side: str = "clusters",
) -> List[Cluster]:
    """Validate clusters and return them as frozensets, in input order.

    Removes duplicate mentions inside a cluster and empty clusters; handles a mention in two
    clusters according to `on_overlap` ("error" or "first"); drops singleton clusters when
    `keep_singletons` is False. `side` names the input in error messages.
    """
    if on_overlap not in OVERLAP_POLICIES:
        known = ", ".join(OVERLAP_POLICIES)
        raise ValueError(Errors.E021.format(what="on_overlap policy", name=on_overlap, known=known))
    owner: Dict[Mention, int] = {}
    result: List[Cluster] = []
    for index, cluster in enumerate(clusters):
        if isinstance(cluster, (str, bytes)) or not isinstance(cluster, Iterable):
            raise TypeError(Errors.E045.format(side=side, index=index, cluster_type=type(cluster).__name__))
        members = set()
        for mention in cluster:
            try:
                first_index = owner.get(mention)
            except TypeError as err:
                raise TypeError(Errors.E046.format(side=side, mention=mention)) from err
            if mention in members:
                continue  # duplicate inside the same cluster
            if first_index is not None:
                if on_overlap == "error":
                    raise ValueError(Errors.E047.format(side=side, mention=mention, first=first_index, index=index))
                continue
            members.add(mention)
            owner[mention] = index
        if members and (keep_singletons or len(members) > 1):
            result.append(frozenset(members))
    return result


def _mention_map(clusters: Sequence[Cluster]) -> Dict[Mention, int]:
    return {mention: index for index, cluster in enumerate(clusters) for mention in cluster}


def _prepare(key: ClusterInput, response: ClusterInput) -> Tuple[List[Cluster], List[Cluster]]:
    return (
        normalize_clusters(key, side="key"),
        normalize_clusters(response, side="response"),
    )


def _muc_side(clusters: Sequence[Cluster], other: Dict[Mention, int]) -> Tuple[int, int]:
    """MUC numerator/denominator of `clusters` partitioned by the other side.

    Each mention absent from the other side is its own partition (Vilain et al., 1995).
    """
    numerator = 0
    denominator = 0
    for cluster in clusters:
        parts = set()
        missing = 0
        for mention in cluster:
            index = other.get(mention)
            if index is None:
                missing += 1
            else:
                parts.add(index)
        numerator += len(cluster) - len(parts) - missing
        denominator += len(cluster) - 1
    return numerator, denominator


def _muc(key_c: Sequence[Cluster], resp_c: Sequence[Cluster]) -> PRCounts:
    r_num, r_den = _muc_side(key_c, _mention_map(resp_c))
    p_num, p_den = _muc_side(resp_c, _mention_map(key_c))
    return PRCounts(p_num, p_den, r_num, r_den)


def _b3_side(clusters: Sequence[Cluster], other: Dict[Mention, int]) -> Tuple[float, int]:
    """Sum over mentions m of |C(m) ∩ O(m)| / |C(m)|, and the number of mentions."""
    numerator = 0.0
    denominator = 0
    for cluster in clusters:
        overlaps = Counter(other[m] for m in cluster if m in other)
        numerator += sum(n * n for n in overlaps.values()) / len(cluster)
        denominator += len(cluster)
    return numerator, denominator


def _b_cubed(key_c: Sequence[Cluster], resp_c: Sequence[Cluster]) -> PRCounts:
    r_num, r_den = _b3_side(key_c, _mention_map(resp_c))
    p_num, p_den = _b3_side(resp_c, _mention_map(key_c))
    return PRCounts(p_num, p_den, r_num, r_den)


def _ceafe(key_c: Sequence[Cluster], resp_c: Sequence[Cluster]) -> PRCounts:
    total = 0.0
    if key_c and resp_c:
        resp_map = _mention_map(resp_c)
        common = np.zeros((len(key_c), len(resp_c)))
        for i, cluster in enumerate(key_c):
            for mention in cluster:
                j = resp_map.get(mention)
                if j is not None:
                    common[i, j] += 1
        key_sizes = np.array([len(c) for c in key_c], dtype=float)
        resp_sizes = np.array([len(c) for c in resp_c], dtype=float)
        similarity = 2 * common / (key_sizes[:, None] + resp_sizes[None, :])
        rows, cols = max_weight_assignment(similarity)
        total = float(similarity[rows, cols].sum())
    return PRCounts(total, len(resp_c), total, len(key_c))


def _links(size: int) -> float:
    return size * (size - 1) / 2


def _lea_side(
    clusters: Sequence[Cluster], other_clusters: Sequence[Cluster], other: Dict[Mention, int]
) -> Tuple[float, int]:
    """Sum over entities e of |e| * resolution(e), and the summed entity sizes."""
    numerator = 0.0
    denominator = 0
    for cluster in clusters:
        size = len(cluster)
        if size == 1:
            # A singleton has one self-link, resolved iff the other side has it as a singleton.
            (mention,) = cluster
            index = other.get(mention)
            resolution = 1.0 if index is not None and len(other_clusters[index]) == 1 else 0.0
        else:
            overlaps = Counter(other[m] for m in cluster if m in other)
            resolution = sum(_links(n) for n in overlaps.values()) / _links(size)
        numerator += size * resolution
        denominator += size
    return numerator, denominator


def _lea(key_c: Sequence[Cluster], resp_c: Sequence[Cluster]) -> PRCounts:
    r_num, r_den = _lea_side(key_c, resp_c, _mention_map(resp_c))
    p_num, p_den = _lea_side(resp_c, key_c, _mention_map(key_c))
    return PRCounts(p_num, p_den, r_num, r_den)


def _mentions(key_c: Sequence[Cluster], resp_c: Sequence[Cluster]) -> PRCounts:
    """Mention detection: the response mentions that are key mentions, whatever their clusters."""
    key_m = {m for cluster in key_c for m in cluster}
    resp_m = {m for cluster in resp_c for m in cluster}
    found = len(key_m & resp_m)
    return PRCounts(found, len(resp_m), found, len(key_m))


# Metric functions over already normalized clusters, keyed by their results name.
_METRICS: Dict[str, Callable[[Sequence[Cluster], Sequence[Cluster]], PRCounts]] = {
    "muc": _muc,
    "b3": _b_cubed,
    "ceafe": _ceafe,
    "lea": _lea,
    "mention": _mentions,
}


def muc(key: ClusterInput, response: ClusterInput) -> PRCounts:
    """MUC (link-based, Vilain et al. 1995) counts of one document."""
    return _muc(*_prepare(key, response))


def b_cubed(key: ClusterInput, response: ClusterInput) -> PRCounts:
    """B-cubed (mention-based, Bagga & Baldwin 1998) counts of one document."""
    return _b_cubed(*_prepare(key, response))


def ceafe(key: ClusterInput, response: ClusterInput) -> PRCounts:
    """CEAF-e (entity-based, Luo 2005, similarity phi4) counts of one document.

    phi4(K, R) = 2 |K ∩ R| / (|K| + |R|); the key and response entities are aligned one-to-one
    by Kuhn-Munkres to maximise the summed similarity; recall divides it by the number of key
    entities, precision by the number of response entities.
    """
    return _ceafe(*_prepare(key, response))


def lea(key: ClusterInput, response: ClusterInput) -> PRCounts:
    """LEA (link-based entity-aware, Moosavi & Strube 2016) counts of one document.

    recall = sum_k |k| * (sum_r link(k ∩ r) / link(k)) / sum_k |k| with link(n) = n(n-1)/2;
    precision swaps key and response.
    """
    return _lea(*_prepare(key, response))


def coref_scores(
    documents: Iterable[Tuple[ClusterInput, ClusterInput]],
    *,
    keep_singletons: bool = True,
    on_overlap: str = "error",
) -> Dict[str, float]:
    """Corpus-level coreference scores over (key clusters, response clusters) documents.

    Returns `coref_{muc,b3,ceafe,lea}_{p,r,f}`, `coref_avg_f` (CoNLL-2012: mean of MUC, B3 and
    CEAF-e F1), for convenience `coref_avg_p`/`coref_avg_r` (means of the three P and R), and
    `coref_mention_{p,r,f}`: mention detection, exact spans, clusters ignored (singleton clusters
    count as the other metrics count them: kept unless `keep_singletons=False`).
    """
    totals = {name: PRCounts() for name in _METRICS}
    for key, response in documents:
        key_c = normalize_clusters(
            key, keep_singletons=keep_singletons, on_overlap=on_overlap, side="key"
        )
        resp_c = normalize_clusters(
            response, keep_singletons=keep_singletons, on_overlap=on_overlap, side="response"
        )
        for name, metric in _METRICS.items():
            totals[name] = totals[name] + metric(key_c, resp_c)
    scores: Dict[str, float] = {}
    for name, counts in totals.items():
        scores.update(prf_dict(f"coref_{name}", counts.prf()))
    conll = ("muc", "b3", "ceafe")
    for suffix in ("p", "r", "f"):
        scores[f"coref_avg_{suffix}"] = sum(scores[f"coref_{n}_{suffix}"] for n in conll) / 3
    return scores

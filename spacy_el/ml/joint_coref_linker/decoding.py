"""Decoding of joint coreference + entity linking: clusters and their links from the scores.

The prediction of the ``joint_coref_linker`` component (:func:`decode`): a parent for every mention --
Global: the maximum spanning arborescence (Edmonds, section 2.2) of the joint graph; Local: each
mention's argmax of eq. (2) over root, its candidates and the *preceding* mentions (parents precede
children, so this is always a tree); Coref: the same without entities; Link: argmax over root and
candidates. Clusters are the subtrees hanging from the root: mentions connected by mention->mention
edges *or* sharing an entity node (all mentions below one entity are one cluster, the paper's premise
and the gold convention of the Global loss). A cluster's link is the entity node at the top of its
subtree, ``None`` (NIL) when a mention hangs from the root. Link-only decoding predicts no
coreference: one singleton cluster per mention.

Sparse scores (prediction: :attr:`JointScores.coref_edges`, each mention's ``K`` antecedents) are decoded on
their edges, in memory linear in ``M K``, to the same parents as the matrix: Local and Coref take the best
earlier edge per mention with the dense argmax's tie order (root, candidates, mentions by index); Global runs
Edmonds on the edge list (:func:`~spacy_el.algorithms.arborescence.max_spanning_arborescence_sparse`) after
dropping every edge that scores below its head's root-side edge, which no maximum tree uses (swapping it for
the root-side edge keeps a tree and scores more). Decoding is an argmax over trees: no normaliser (the
Matrix-Tree partition function is the Global loss's, in training only).
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

from ...algorithms.arborescence import max_spanning_arborescence, max_spanning_arborescence_sparse
from .scorer import JointScores, check_mode, entity_axis, local_logits

__all__ = ["JointDecoding", "decode"]


@dataclass
class JointDecoding:
    """Decoded structure of one document.

    Attributes:
        parents: ``(M,)`` int64, parent node of each mention in the joint-graph numbering:
            ``0`` root (NIL), ``1 + e`` entity ``entity_ids[e]``, ``1 + E + j`` mention ``j``.
        entity_ids: ``(E,)`` int64 KB ids of the entity nodes (empty for ``coref`` mode).
        clusters: mention-index lists, each sorted, ordered by first mention; every mention is in
            exactly one cluster.
        links: per cluster, its KB entity id or ``None`` (NIL).
    """

    parents: np.ndarray
    entity_ids: np.ndarray
    clusters: List[List[int]]
    links: List[Optional[int]]

    def parent_of(self, mention: int) -> Tuple[str, Optional[int]]:
        """``("root", None)``, ``("entity", kb_id)`` or ``("mention", j)`` for ``mention``."""
        node = int(self.parents[mention])
        n_entities = len(self.entity_ids)
        if node == 0:
            return "root", None
        if node <= n_entities:
            return "entity", int(self.entity_ids[node - 1])
        return "mention", node - 1 - n_entities


def _clusters_from_parents(parents: np.ndarray, n_entities: int, entity_ids: np.ndarray):
    """Subtrees below the root: clusters (sorted lists) and their links."""
    m = parents.shape[0]
    if m == 0:
        return [], []
    offset = 1 + n_entities
    # up[v]: v's parent, except that children of the root point to themselves; pointer jumping then
    # maps every node to the top of its subtree (a child of the root) in O(log depth) steps.
    up = np.arange(offset + m)
    up[offset:] = np.where(parents == 0, np.arange(offset, offset + m), parents)
    while True:
        nxt = up[up]
        if np.array_equal(nxt, up):
            break
        up = nxt
    top = up[offset:]
    groups: Dict[int, List[int]] = {}
    for mention, t in enumerate(top.tolist()):
        groups.setdefault(t, []).append(mention)
    clusters = sorted(groups.items(), key=lambda item: item[1][0])
    links = [int(entity_ids[t - 1]) if 1 <= t <= n_entities else None for t, _ in clusters]
    return [ms for _, ms in clusters], links


def _global_parents(scores: JointScores, candidate_entities: np.ndarray, n_entities: int) -> np.ndarray:
    """Global decoding (maximum spanning arborescence) without the entity nodes.

    An entity node's only entering edge is ``root -> e`` (score 0), so no entity is ever in a cycle
    and every tree of the joint graph is "root -> every entity" plus a tree over root and mentions
    in which a mention hangs from root *or* from an entity. The best tree therefore hangs each
    mention that hangs from the root side from its best root-side parent: the maximum
    arborescence of the ``(1 + M)`` graph whose ``root -> s_i`` edge scores
    ``max(Phi_cl(s_i, r), max_c Phi_cl(s_i, e_c))`` is the joint graph's, with each such edge
    then resolved to NIL or to the best candidate. Memory is ``O(M^2)``, not ``O((M + E)^2)``.

    Returns:
        ``(M,)`` parents in the joint-graph numbering (:class:`JointDecoding`).
    """
    m = scores.n_mentions
    use_link, best_c, root_score = _root_side(scores, candidate_entities)
    graph = np.full((m + 1, m + 1), -np.inf)
    graph[0, 1:] = root_score
    graph[1:, 1:] = scores.coref_scores.detach().double().cpu().numpy().T  # parent-first
    tree = max_spanning_arborescence(graph, root=0)[1:]
    root_side = np.where(use_link, 1 + candidate_entities[np.arange(m), best_c], 0)
    return np.where(tree == 0, root_side, tree + n_entities).astype(np.int64)


def _root_side(scores: JointScores, candidate_entities: np.ndarray):
    """Per mention, its best root-side parent (``(M,)`` use a link, best candidate column) and its score ``(M,)``
    ``max(Phi_cl(s_i, r), max_c Phi_cl(s_i, e_c))`` (float64)."""
    m = scores.n_mentions
    nil = scores.nil_scores.detach().double().cpu().numpy()
    links = scores.link_scores.detach().double().cpu().numpy()
    valid = candidate_entities >= 0
    links = np.where(valid, links, -np.inf)
    best_c = links.argmax(axis=1) if links.shape[1] else np.zeros(m, dtype=np.int64)
    best_link = links[np.arange(m), best_c] if links.shape[1] else np.full(m, -np.inf)
    use_link = best_link > nil  # ties go to the root (NIL), as the dense decoding's first maximum
    return use_link, best_c, np.maximum(nil, best_link)


def _global_parents_sparse(scores: JointScores, candidate_entities: np.ndarray, n_entities: int) -> np.ndarray:
    """:func:`_global_parents` on the sparse edges (module docstring): Edmonds on the ``(1 + M)`` graph's edge list,
    less the edges below their head's root-side edge. ``O(M + P)`` memory for ``P`` edges."""
    m = scores.n_mentions
    use_link, best_c, root_score = _root_side(scores, candidate_entities)
    edges = scores.edges()
    rows, cols = edges.rows.cpu().numpy(), edges.cols.cpu().numpy()
    values = edges.values.detach().double().cpu().numpy()
    keep = np.isfinite(values) & (values >= root_score[rows])
    tails = np.concatenate([np.zeros(m, dtype=np.int64), cols[keep] + 1])
    heads = np.concatenate([np.arange(1, m + 1), rows[keep] + 1])
    tree = max_spanning_arborescence_sparse(m + 1, tails, heads, np.concatenate([root_score, values[keep]]), root=0)[1:]
    root_side = np.where(use_link, 1 + candidate_entities[np.arange(m), best_c], 0)
    return np.where(tree == 0, root_side, tree + n_entities).astype(np.int64)


def _best_earlier(scores: JointScores) -> Tuple[np.ndarray, np.ndarray]:
    """Per mention its best preceding mention on the sparse edges: ``(M,)`` index (``-1``: none) and score
    (``-inf``: none), float32 as the scores; of equal scores the lowest index, as the dense argmax's."""
    m = scores.n_mentions
    edges = scores.edges()
    rows, cols = edges.rows.cpu().numpy(), edges.cols.cpu().numpy()
    values = edges.values.detach().cpu().numpy()
    earlier = cols < rows
    rows, cols, values = rows[earlier], cols[earlier], values[earlier]
    order = np.lexsort((cols, -values, rows))
    child, first = np.unique(rows[order], return_index=True)
    best = np.full(m, -1, dtype=np.int64)
    best_score = np.full(m, -np.inf, dtype=values.dtype if values.size else np.float32)
    best[child], best_score[child] = cols[order][first], values[order][first]
    return best, best_score


def _local_best_sparse(scores: JointScores, with_entities: bool) -> np.ndarray:
    """The argmax of :func:`~spacy_el.ml.joint_coref_linker.scorer.local_logits` ``(M,)`` (column ``0`` root,
    ``1 + c`` candidate ``c``, ``1 + C' + j`` mention ``j``) from the sparse edges, the same first maximum."""
    root_and_links = [scores.nil_scores[:, None]] + ([scores.link_scores] if with_entities else [])
    first = torch.cat(root_and_links, dim=1)
    first_best = first.argmax(dim=1).cpu().numpy()
    first_score = first.max(dim=1).values.detach().cpu().numpy()
    mention, mention_score = _best_earlier(scores)
    later = mention_score > first_score  # a mention wins only when strictly better: it comes last in the row
    return np.where(later, first.shape[1] + mention, first_best)


def decode(scores: JointScores, mode: str) -> JointDecoding:
    """Decode clusters and links (module docstring, "Decoding").

    Args:
        scores: :class:`JointScores` of one document (detached internally).
        mode: ``"global"`` (Edmonds over the joint graph), ``"local"`` (argmax of eq. (2)),
            ``"coref"`` (argmax over root and preceding spans) or ``"link"`` (argmax over root and
            candidates; singleton clusters).

    Returns:
        :class:`JointDecoding`.

    Raises:
        ValueError: unknown ``mode``.
    """
    check_mode(mode)
    m = scores.n_mentions
    with torch.no_grad():
        if mode == "coref":
            entity_ids = np.zeros(0, dtype=np.int64)
            n_entities = 0
            if scores.is_sparse:
                parents = _local_best_sparse(scores, False)
            else:
                logits = local_logits(scores, False, True)
                parents = logits.argmax(dim=1).cpu().numpy()  # column 0 = root, 1 + j = mention node 1 + j
        elif mode == "global":
            entity_ids_t, candidate_entities = entity_axis(scores.candidate_ids())
            entity_ids = entity_ids_t.cpu().numpy()
            n_entities = int(entity_ids.shape[0])
            global_parents = _global_parents_sparse if scores.is_sparse else _global_parents
            parents = global_parents(scores, candidate_entities.cpu().numpy(), n_entities)
        else:
            entity_ids_t, candidate_entities = entity_axis(scores.candidate_ids())
            entity_ids = entity_ids_t.cpu().numpy()
            n_entities = int(entity_ids.shape[0])
            if mode == "link" or not scores.is_sparse:
                logits = local_logits(scores, True, mode == "local")  # "link" reads no coreference score
                best = logits.argmax(dim=1).cpu().numpy()
            else:
                best = _local_best_sparse(scores, True)
            c = scores.n_candidates
            cand = candidate_entities.cpu().numpy()
            rows = np.arange(m)
            parents = np.zeros(m, dtype=np.int64)
            is_link = (best >= 1) & (best <= c)
            parents[is_link] = 1 + cand[rows[is_link], best[is_link] - 1]
            is_mention = best > c
            parents[is_mention] = 1 + n_entities + (best[is_mention] - 1 - c)
    parents = np.asarray(parents, dtype=np.int64)
    if mode == "link":
        clusters = [[i] for i in range(m)]
        links = [int(entity_ids[p - 1]) if p > 0 else None for p in parents.tolist()]
    else:
        clusters, links = _clusters_from_parents(parents, n_entities, entity_ids)
    return JointDecoding(parents=parents, entity_ids=entity_ids, clusters=clusters, links=links)

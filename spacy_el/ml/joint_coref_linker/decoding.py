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
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

from ...algorithms.arborescence import max_spanning_arborescence
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
    nil = scores.nil_scores.detach().double().cpu().numpy()
    links = scores.link_scores.detach().double().cpu().numpy()
    valid = candidate_entities >= 0
    links = np.where(valid, links, -np.inf)
    best_c = links.argmax(axis=1) if links.shape[1] else np.zeros(m, dtype=np.int64)
    best_link = links[np.arange(m), best_c] if links.shape[1] else np.full(m, -np.inf)
    use_link = best_link > nil  # ties go to the root (NIL), as the dense decoding's first maximum
    graph = np.full((m + 1, m + 1), -np.inf)
    graph[0, 1:] = np.maximum(nil, best_link)
    graph[1:, 1:] = scores.coref_scores.detach().double().cpu().numpy().T  # parent-first
    tree = max_spanning_arborescence(graph, root=0)[1:]
    root_side = np.where(use_link, 1 + candidate_entities[np.arange(m), best_c], 0)
    return np.where(tree == 0, root_side, tree + n_entities).astype(np.int64)


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
            logits = local_logits(scores, False, True)
            parents = logits.argmax(dim=1).cpu().numpy()  # column 0 = root, 1 + j = mention node 1 + j
        elif mode == "global":
            entity_ids_t, candidate_entities = entity_axis(scores.candidate_ids())
            entity_ids = entity_ids_t.cpu().numpy()
            n_entities = int(entity_ids.shape[0])
            parents = _global_parents(scores, candidate_entities.cpu().numpy(), n_entities)
        else:
            entity_ids_t, candidate_entities = entity_axis(scores.candidate_ids())
            entity_ids = entity_ids_t.cpu().numpy()
            n_entities = int(entity_ids.shape[0])
            logits = local_logits(scores, True, mode == "local")
            best = logits.argmax(dim=1).cpu().numpy()
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

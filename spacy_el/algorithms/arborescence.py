"""Maximum spanning arborescence (Chu-Liu/Edmonds) over a dense score matrix, numpy only.

Decoder of the Global joint coreference + entity-linking model (``joint_coref_linker``; seed paper section 2.2:
"We use Edmonds' algorithm for decoding the maximum spanning tree"). The graph is dense: node 0
is usually the virtual root, the other nodes are candidate entities and mention spans.

Convention (shared with :mod:`spacy_el.ml.joint_coref_linker.matrix_tree`): ``scores[i, j]`` is the score of the
directed edge ``i -> j``, i.e. of node ``i`` being the *parent* of node ``j``. A tree is rooted at
``root`` with every edge pointing away from it, so each non-root node has exactly one incoming
edge. ``-inf`` means "no edge". Self-loops and edges into the root are ignored whatever their
score.

Algorithm: Chu-Liu/Edmonds (Chu & Liu 1965; Edmonds 1967) in the dense O(n^2) organisation of
Tarjan (1977) with the expansion of Camerini, Fratta & Maffioli (1979). Every non-root node wants
its best incoming edge; following those edges from an unvisited node either reaches the root (or
a node already known to reach it), and the whole path is final, or closes a cycle. A cycle ``C``
is contracted into one supernode whose incoming edge ``u -> C`` scores
``max_{v in C} s(u, v) - s(parent(v), v)`` (the gain of breaking ``C`` at ``v``) and whose
outgoing edge ``C -> w`` scores ``max_{v in C} s(v, w)``; the walk then continues from the
supernode. Each contraction costs O(n |C|) array work (the rows/columns of the cycle are merged
into the representative's slot of one n x n matrix), each step of the walk one O(n) ``argmax``,
so the total is O(n^2) numpy work in O(n) Python iterations, with no per-round recomputation of
the whole matrix (a "contract all cycles, rebuild the matrix, repeat" loop degenerates to O(n)
rounds of O(n^2) on dense random graphs, where a growing supernode absorbs one node per round).
The expansion replays the contractions newest first: a supernode's chosen entering edge
``u -> v`` replaces the cycle edge of the member containing ``v``; the other members keep theirs.

The expansion climbs each supernode's nesting once, O(n * nesting depth) Python steps in the worst
case (shallow in practice). Ties are broken deterministically (every ``argmax`` takes its first
maximum: the lowest-index parent, the first cycle member along the walk), so the same input always
gives the same tree.
"""
import heapq
from typing import Dict, List

import numpy as np

from ..errors import Errors

__all__ = ["max_spanning_arborescence", "max_spanning_arborescence_sparse", "reachable_from", "arborescence_score"]


def reachable_from(adjacency: np.ndarray, root: int = 0) -> np.ndarray:
    """Nodes reachable from ``root`` following directed edges ``i -> j`` where ``adjacency[i, j]``.

    Breadth-first, one frontier per step: O(n^2) work in total because every node enters the
    frontier at most once, and only depth-many Python iterations.

    Args:
        adjacency: ``[n, n]`` boolean matrix, ``adjacency[i, j]`` = edge ``i -> j`` exists.
        root: start node.

    Returns:
        ``[n]`` boolean mask, ``True`` for ``root`` and every node reachable from it.
    """
    adjacency = np.asarray(adjacency, dtype=bool)
    n = adjacency.shape[0]
    seen = np.zeros(n, dtype=bool)
    seen[root] = True
    frontier = np.array([root])
    while frontier.size:
        new = adjacency[frontier].any(axis=0) & ~seen
        seen |= new
        frontier = np.flatnonzero(new)
    return seen


def arborescence_score(scores: np.ndarray, parents: np.ndarray) -> float:
    """Total score ``sum_j scores[parents[j], j]`` of a tree given as a parents array (root: -1)."""
    scores = np.asarray(scores, dtype=np.float64)
    parents = np.asarray(parents)
    children = np.flatnonzero(parents >= 0)
    return float(scores[parents[children], children].sum())


def _validate(scores: np.ndarray, root: int) -> np.ndarray:
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(Errors.E027.format(shape=scores.shape))
    n = scores.shape[0]
    if n == 0:
        raise ValueError(Errors.E028)
    if not -n <= root < n:
        raise ValueError(Errors.E029.format(root=root, n=n))
    if not (np.issubdtype(scores.dtype, np.floating) or np.issubdtype(scores.dtype, np.integer)
            or scores.dtype == bool):
        raise ValueError(Errors.E030.format(dtype=scores.dtype))
    scores = scores.astype(np.float64)  # always a copy: the caller's array is never modified
    if np.isnan(scores).any():
        raise ValueError(Errors.E031.format(value="NaN"))
    if np.isposinf(scores).any():
        raise ValueError(Errors.E031.format(value="+inf"))
    return scores


def max_spanning_arborescence(scores: np.ndarray, root: int = 0) -> np.ndarray:
    """Maximum-score spanning arborescence rooted at ``root`` (Chu-Liu/Edmonds).

    Args:
        scores: ``[n, n]`` array, ``scores[i, j]`` = score of edge ``i -> j`` (``i`` is the parent
            of ``j``); ``-inf`` = no edge. The diagonal and column ``root`` are ignored.
        root: the root node (default 0, the virtual root of the joint coref+EL graph).

    Returns:
        ``[n]`` int64 array of parents, ``parents[root] == -1``; ``parents[j]`` is the parent of
        ``j``. The tree maximises ``sum_j scores[parents[j], j]``.

    Raises:
        ValueError: ``scores`` is not a square numeric matrix, contains NaN or +inf, or some node
            cannot be reached from ``root`` through finite edges (then no spanning arborescence
            exists; the message lists the unreachable nodes).
    """
    s = _validate(scores, root)
    n = s.shape[0]
    root = root % n
    np.fill_diagonal(s, -np.inf)
    s[:, root] = -np.inf

    reachable = reachable_from(np.isfinite(s), root)
    if not reachable.all():
        missing = np.flatnonzero(~reachable)
        no_in = missing[~np.isfinite(s[:, missing]).any(axis=0)]
        nodes = f"{missing[:20].tolist()}{' ...' if missing.size > 20 else ''}"
        raise ValueError(Errors.E032.format(n_missing=missing.size, root=root, n_no_in=no_in.size, nodes=nodes))
    if n == 1:
        return np.array([-1], dtype=np.int64)

    return _edmonds_dense(s, root)


def _edmonds_dense(s: np.ndarray, root: int) -> np.ndarray:
    """Chu-Liu/Edmonds on a validated, feasible ``[n, n]`` float64 score matrix (modified in place).

    ``s`` has ``-inf`` on the diagonal and in column ``root`` and every node reachable from ``root``.
    """
    n = s.shape[0]
    # Incoming edges as rows: inc[v, u] = score of u -> v, so the hot "best parent of v" scan and
    # the merge of a cycle's incoming edges read contiguous memory.
    inc = np.ascontiguousarray(s.T)
    # The original edge behind every current entry, kept up to date through contractions.
    orig_u = np.tile(np.arange(n, dtype=np.int32), (n, 1))  # orig_u[v, u]: original tail
    orig_v = np.tile(np.arange(n, dtype=np.int32)[:, None], (1, n))  # orig_v[v, u]: original head

    slot_id: List[int] = list(range(n))  # id of the (super)node occupying each matrix slot
    # Per node id (originals 0..n-1, supernodes appended): chosen entering edge, container.
    enter_u: List[int] = [-1] * n
    enter_v: List[int] = [-1] * n
    container: List[int] = [-1] * n
    chosen = np.zeros(n)  # score of the entering edge currently chosen by each slot
    UNSEEN, ON_PATH, DONE = 0, 1, 2
    state = np.zeros(n, dtype=np.int8)
    state[root] = DONE

    for start in range(n):
        if state[start] != UNSEEN:
            continue
        path = [start]
        state[start] = ON_PATH
        a = start
        while True:
            b = int(np.argmax(inc[a]))  # first maximum: deterministic tie-breaking
            if not np.isfinite(inc[a, b]):  # pragma: no cover - excluded by the reachability check
                raise AssertionError("supernode without entering edge despite reachability")
            node = slot_id[a]
            enter_u[node], enter_v[node] = int(orig_u[a, b]), int(orig_v[a, b])
            chosen[a] = inc[a, b]
            if state[b] == DONE:
                state[path] = DONE
                break
            if state[b] == UNSEEN:
                state[b] = ON_PATH
                path.append(b)
                a = b
                continue
            # b is on the current path: path[i:] is a cycle (b -> ... -> a -> b). Contract it into
            # the slot of b (the representative), which stays on the path.
            i = path.index(b)
            cyc = np.array(path[i:])
            del path[i + 1:]
            # Incoming edges of the supernode: best gain of breaking the cycle at any member.
            gain = inc[cyc] - chosen[cyc, None]  # [|C|, n]
            best_m = np.argmax(gain, axis=0)
            cols = np.arange(n)
            new_in = gain[best_m, cols]
            new_in_u = orig_u[cyc[best_m], cols]
            new_in_v = orig_v[cyc[best_m], cols]
            # Outgoing edges of the supernode: best edge from any member.
            out = inc[:, cyc]  # [n, |C|]
            best_o = np.argmax(out, axis=1)
            rows = np.arange(n)
            new_out = out[rows, best_o]
            new_out_u = orig_u[rows, cyc[best_o]]
            new_out_v = orig_v[rows, cyc[best_o]]
            inc[b], orig_u[b], orig_v[b] = new_in, new_in_u, new_in_v
            inc[:, b], orig_u[:, b], orig_v[:, b] = new_out, new_out_u, new_out_v
            # Members other than the representative disappear; edges inside the cycle vanish.
            inc[:, cyc] = np.where(cyc == b, inc[:, cyc], -np.inf)
            inc[cyc, b] = -np.inf
            inc[cyc[cyc != b]] = -np.inf
            _record_supernode(cyc.tolist(), b, slot_id, enter_u, enter_v, container)
            a = b

    return _expand(enter_u, enter_v, container, n, root)


def _record_supernode(cycle: List[int], b: int, slot_id: List[int], enter_u: List[int], enter_v: List[int],
                      container: List[int]) -> None:
    """Record, for both Edmonds variants, the contraction of the slots ``cycle`` into a new supernode that
    slot ``b`` holds from now on (its entering edge is chosen later, its container is none yet)."""
    super_id = len(enter_u)
    for m in cycle:
        container[slot_id[m]] = super_id
    enter_u.append(-1)
    enter_v.append(-1)
    container.append(-1)
    slot_id[b] = super_id


def _expand(enter_u: List[int], enter_v: List[int], container: List[int], n: int, root: int) -> np.ndarray:
    """The parents ``[n]`` from the contraction's records, shared by both Edmonds variants: ``enter_u/enter_v[x]``
    the edge chosen into node or supernode ``x``, ``container[x]`` the supernode holding ``x`` (-1: none).

    Newest supernode first: its entering edge u -> v goes to the member containing v (found by climbing v's
    containers); every other member keeps the cycle edge it had chosen."""
    final_u, final_v = list(enter_u), list(enter_v)
    for c in range(len(enter_u) - 1, n - 1, -1):
        u, v = final_u[c], final_v[c]
        if v < 0:  # the root's id never gets an edge; supernodes always do
            continue
        x = v
        while container[x] != c:
            x = container[x]
        final_u[x], final_v[x] = u, v
    parents = np.asarray(final_u[:n], dtype=np.int64)
    parents[root] = -1
    return parents


def _reachable_sparse(n: int, tails: np.ndarray, heads: np.ndarray, root: int) -> np.ndarray:
    """``[n]`` mask of the nodes reachable from ``root`` along the edges ``tails[k] -> heads[k]`` (breadth-first
    over the edges sorted by tail: each edge is read once, when its tail joins the frontier)."""
    order = np.argsort(tails, kind="stable")
    sorted_heads = heads[order]
    bounds = np.searchsorted(tails[order], np.arange(n + 1))
    seen = np.zeros(n, dtype=bool)
    seen[root] = True
    frontier = np.array([root])
    while frontier.size:
        lo, hi = bounds[frontier], bounds[frontier + 1]
        counts = hi - lo
        if not counts.sum():
            break
        picks = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        new = np.unique(sorted_heads[picks])
        new = new[~seen[new]]
        seen[new] = True
        frontier = new
    return seen


def max_spanning_arborescence_sparse(n: int, tails: np.ndarray, heads: np.ndarray, scores: np.ndarray,
                                     root: int = 0) -> np.ndarray:
    """Maximum-score spanning arborescence of a graph given as an edge list, in memory linear in its edges.

    The same Chu-Liu/Edmonds walk as :func:`max_spanning_arborescence` (Tarjan 1977, with the expansion of
    Camerini, Fratta & Maffioli 1979), with each (super)node's entering edges in a heap instead of a matrix row:
    a contraction merges its members' heaps, the smaller into the larger, each entry's score shifted by the
    cycle edge it would break (one lazy offset per heap), and edges that became internal to a supernode are
    dropped when they reach the top. Time ``O(E log^2 E)``, memory ``O(n + E)``, where the dense version needs
    ``O(n^2)``. Ties are broken by the lowest original tail, then head: where the best tree is unique (scores
    without ties) both versions return the same tree.

    Args:
        n: the number of nodes (``0 .. n - 1``).
        tails, heads: int ``(E,)`` edges ``tails[k] -> heads[k]`` (``tails[k]`` is the parent); at most one
            edge per ordered pair is expected (of repeated ones the best wins). Self-loops, edges into the
            root and ``-inf`` edges are ignored.
        scores: float ``(E,)`` edge scores.
        root: the root node.

    Returns:
        ``[n]`` int64 parents, ``parents[root] == -1``.

    Raises:
        ValueError: arrays of different lengths (E975), a node id outside ``0 .. n - 1`` (E976), NaN or +inf
            scores, or a node unreachable from ``root`` (E032).
    """
    tails = np.asarray(tails, dtype=np.int64).reshape(-1)
    heads = np.asarray(heads, dtype=np.int64).reshape(-1)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if n < 1:
        raise ValueError(Errors.E028)
    if not -n <= root < n:
        raise ValueError(Errors.E029.format(root=root, n=n))
    root = root % n
    if not tails.shape == heads.shape == scores.shape:
        raise ValueError(Errors.E975.format(shapes=(tails.shape, heads.shape, scores.shape)))
    if tails.size and (min(tails.min(), heads.min()) < 0 or max(tails.max(), heads.max()) >= n):
        low, high = int(min(tails.min(), heads.min())), int(max(tails.max(), heads.max()))
        raise ValueError(Errors.E976.format(node=low if low < 0 else high, last=n - 1))
    if np.isnan(scores).any():
        raise ValueError(Errors.E031.format(value="NaN"))
    if np.isposinf(scores).any():
        raise ValueError(Errors.E031.format(value="+inf"))
    keep = (tails != heads) & (heads != root) & np.isfinite(scores)
    tails, heads, scores = tails[keep], heads[keep], scores[keep]
    reachable = _reachable_sparse(n, tails, heads, root)
    if not reachable.all():
        missing = np.flatnonzero(~reachable)
        no_in = np.setdiff1d(missing, heads)
        nodes = f"{missing[:20].tolist()}{' ...' if missing.size > 20 else ''}"
        raise ValueError(Errors.E032.format(n_missing=missing.size, root=root, n_no_in=no_in.size, nodes=nodes))
    if n == 1:
        return np.array([-1], dtype=np.int64)
    return _edmonds_heaps(n, tails, heads, scores, root)


def _edmonds_heaps(n: int, tails: np.ndarray, heads: np.ndarray, scores: np.ndarray, root: int) -> np.ndarray:
    """The walk of :func:`_edmonds_dense` over per-slot heaps of entering edges (validated, feasible input).

    A heap entry is ``(-stored, tail, head)`` with the original edge; its current score is ``stored`` plus the
    heap's ``offset``. ``rep`` is a union-find over the original nodes giving the slot that holds each one."""
    order = np.lexsort((tails, -scores, heads))  # by head, then best first (a sorted list is a heap)
    tails, heads, scores = tails[order], heads[order], scores[order]
    bounds = np.searchsorted(heads, np.arange(n + 1)).tolist()
    negated, tail_list, head_list = (-scores).tolist(), tails.tolist(), heads.tolist()
    heaps: List[list] = [list(zip(negated[bounds[v]:bounds[v + 1]], tail_list[bounds[v]:bounds[v + 1]],
                                  head_list[bounds[v]:bounds[v + 1]])) for v in range(n)]
    offset = [0.0] * n
    rep = list(range(n))

    def find(x: int) -> int:
        top = x
        while rep[top] != top:
            top = rep[top]
        while rep[x] != top:
            rep[x], x = top, rep[x]
        return top

    slot_id: List[int] = list(range(n))
    enter_u: List[int] = [-1] * n
    enter_v: List[int] = [-1] * n
    container: List[int] = [-1] * n
    chosen = [0.0] * n
    UNSEEN, ON_PATH, DONE = 0, 1, 2
    state = [UNSEEN] * n
    state[root] = DONE
    for start in range(n):
        if state[start] != UNSEEN:
            continue
        path = [start]
        position: Dict[int, int] = {start: 0}
        state[start] = ON_PATH
        a = start
        while True:
            heap = heaps[a]
            while heap and find(heap[0][1]) == a:  # an edge inside the supernode: gone for good
                heapq.heappop(heap)
            if not heap:  # pragma: no cover - excluded by the reachability check
                raise AssertionError("supernode without entering edge despite reachability")
            negative, u, v = heap[0]
            b = find(u)
            node = slot_id[a]
            enter_u[node], enter_v[node] = u, v
            chosen[a] = -negative + offset[a]
            if state[b] == DONE:
                for p in path:
                    state[p] = DONE
                break
            if state[b] == UNSEEN:
                state[b] = ON_PATH
                position[b] = len(path)
                path.append(b)
                a = b
                continue
            # b is on the path: path[i:] is a cycle; contract it into b's slot.
            i = position[b]
            cycle = path[i:]
            for p in path[i + 1:]:
                del position[p]
            del path[i + 1:]
            # Entering edges of the supernode: each member's, shifted by the cycle edge it breaks; the
            # smaller heaps are pushed into the largest.
            largest = max(cycle, key=lambda m: len(heaps[m]))
            merged, merged_offset = heaps[largest], offset[largest] - chosen[largest]
            for m in cycle:
                if m == largest:
                    continue
                shift = merged_offset - offset[m] + chosen[m]  # -stored' = -stored + shift
                for negative, u, v in heaps[m]:
                    heapq.heappush(merged, (negative + shift, u, v))
                heaps[m] = []
            heaps[largest] = []
            heaps[b], offset[b] = merged, merged_offset
            for m in cycle:
                if m != b:
                    rep[m] = b
            _record_supernode(cycle, b, slot_id, enter_u, enter_v, container)
            a = b

    return _expand(enter_u, enter_v, container, n, root)

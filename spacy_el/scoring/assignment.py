"""Maximum-weight bipartite assignment (Kuhn-Munkres) for CEAF.

scipy is not a dependency of spacy_el, so it is used when importable and a pure-Python
Hungarian algorithm (shortest augmenting paths with potentials, O(n^2 m)) is used otherwise.
CEAF matrices are entities-per-document sized, so the fallback is fast enough.
"""
from typing import List, Tuple

import numpy as np

from ..errors import Errors

try:  # scipy's C implementation is much faster on big documents
    from scipy.optimize import linear_sum_assignment as _scipy_lsa
except ImportError:  # pragma: no cover - depends on the environment
    _scipy_lsa = None


def _hungarian_min_cost(cost: np.ndarray) -> Tuple[List[int], List[int]]:
    """Minimum-cost assignment of every row of `cost` (rows <= columns) to distinct columns."""
    n, m = cost.shape
    inf = float("inf")
    # 1-based arrays; index 0 of p/way is the virtual source column.
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)  # p[j]: row matched to column j (0 = none)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            row = cost[i0 - 1]
            for j in range(1, m + 1):
                if not used[j]:
                    reduced = float(row[j - 1]) - u[i0] - v[j]
                    if reduced < minv[j]:
                        minv[j] = reduced
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:  # augment along the alternating path back to the source
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    pairs = sorted((p[j] - 1, j - 1) for j in range(1, m + 1) if p[j])
    return [r for r, _ in pairs], [c for _, c in pairs]


def max_weight_assignment(
    weights: np.ndarray, *, use_scipy: bool = True
) -> Tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a maximum-weight matching of a (possibly rectangular) matrix.

    Every row (or every column, whichever are fewer) is matched. `use_scipy=False` forces the
    pure-Python fallback (used in tests to check it against scipy).
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(Errors.E048.format(shape=weights.shape))
    if weights.size == 0:
        empty = np.zeros(0, dtype=int)
        return empty, empty.copy()
    if use_scipy and _scipy_lsa is not None:
        rows, cols = _scipy_lsa(weights, maximize=True)
        return np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)
    transposed = weights.shape[0] > weights.shape[1]
    cost = -(weights.T if transposed else weights)
    rows, cols = _hungarian_min_cost(cost)
    if transposed:
        pairs = sorted(zip(cols, rows))
        rows, cols = [r for r, _ in pairs], [c for _, c in pairs]
    return np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)

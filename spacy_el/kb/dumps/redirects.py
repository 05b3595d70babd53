"""Redirects as two sorted uint64 arrays of title hashes: resolving millions of them costs 16 bytes each
and no Python object per title. Chains (A -> B -> C) are followed; cycles (A -> B -> A) and chains
longer than ``max_hops`` resolve to nothing and are counted."""
from typing import List, Tuple

import numpy as np

NOWHERE = np.uint64(0)  # resolved hash of a title caught in a redirect cycle (spaCy never hashes to 0 in practice)


class RedirectMap:
    """source title hash -> target title hash. ``sources`` is sorted; for a source redirected twice in the
    dump, the first redirect wins."""

    def __init__(self, sources: np.ndarray, targets: np.ndarray) -> None:
        order = np.argsort(sources, kind="stable")
        sources, targets = sources[order], targets[order]
        first = np.ones(len(sources), dtype=bool)
        first[1:] = sources[1:] != sources[:-1]
        self.sources = sources[first]
        self.targets = targets[first]

    @classmethod
    def from_chunks(cls, chunks: List[Tuple[np.ndarray, np.ndarray]]) -> "RedirectMap":
        if not chunks:
            return cls(np.zeros(0, np.uint64), np.zeros(0, np.uint64))
        return cls(np.concatenate([s for s, _ in chunks]), np.concatenate([t for _, t in chunks]))

    def __len__(self) -> int:
        return len(self.sources)

    def resolve(self, hashes: np.ndarray, max_hops: int = 16) -> Tuple[np.ndarray, int]:
        """The final target of each hash (itself when it is no redirect), and the number of hashes that
        end in a cycle or a chain longer than ``max_hops`` (returned as ``NOWHERE``)."""
        current = np.asarray(hashes, dtype=np.uint64).copy()
        if not len(self.sources) or not len(current):
            return current, 0
        active = np.ones(len(current), dtype=bool)
        for _ in range(max_hops + 1):
            at = np.searchsorted(self.sources, current[active])
            at = np.minimum(at, len(self.sources) - 1)
            hit = self.sources[at] == current[active]
            if not hit.any():
                return current, 0
            idx = np.flatnonzero(active)
            current[idx[hit]] = self.targets[at[hit]]
            active[idx[~hit]] = False
        # Still redirecting after max_hops + 1 steps: a cycle (or an absurdly long chain).
        current[active] = NOWHERE
        return current, int(active.sum())

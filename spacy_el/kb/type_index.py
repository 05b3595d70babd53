"""Entity types as an index: which entities have a type, and same-type negative sampling (NER4EL)."""
from typing import Collection, Optional, Sequence

import numpy as np

from .entity_store import EntityStore
from .errors import KBErrors


class TypeIndex:
    """The inverse of the entity store's type lists: type -> entity rows, in CSR form.

    Derived from the store on demand (never serialised): sorting T type assignments costs O(T log T).

    type_entity_offsets (np.ndarray): int64 (n_types + 1,); type t holds rows
        ``type_entity_rows[type_entity_offsets[t]:type_entity_offsets[t+1]]``.
    type_entity_rows (np.ndarray): int64 (T,), entity rows, ascending within each type.
    """

    def __init__(self, store: EntityStore) -> None:
        self.type_names = store.type_names
        self._type_to_id = {name: i for i, name in enumerate(store.type_names)}
        owners = np.repeat(np.arange(len(store), dtype=np.int64), np.diff(store.type_offsets))
        order = np.lexsort((owners, store.type_ids))
        self.type_entity_rows = owners[order]
        counts = np.bincount(store.type_ids, minlength=len(store.type_names))
        self.type_entity_offsets = np.zeros(len(store.type_names) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.type_entity_offsets[1:])
        self._store = store

    def entities_of_type(self, type_name: str) -> np.ndarray:
        """Entity rows (int64, ascending) with ``type_name``; empty for an unknown type."""
        t = self._type_to_id.get(type_name)
        if t is None:
            return np.zeros(0, dtype=np.int64)
        return self.type_entity_rows[self.type_entity_offsets[t] : self.type_entity_offsets[t + 1]]

    def has_any_type(self, row: int, types: Collection[str]) -> bool:
        return any(t in types for t in self._store.types_of(row))

    def sample_same_type(
        self, row: int, n: int, rng: np.random.Generator, exclude: Sequence[int] = ()
    ) -> np.ndarray:
        """Up to ``n`` distinct entity rows sharing at least one type with entity ``row`` (NER4EL's
        same-type negatives), never ``row`` itself nor ``exclude``. An entity without types, or whose
        types have too few other members, gets fewer (possibly zero) rows: callers fill up with
        random negatives, so a sampler never silently returns wrong-type entities as same-type ones.
        RETURNS: int64 array of shape (<= n,).
        """
        if n < 0:
            raise ValueError(KBErrors.E171.format(n=n))
        pools = [self.entities_of_type(t) for t in self._store.types_of(row)]
        if not pools or n == 0:
            return np.zeros(0, dtype=np.int64)
        pool = np.unique(np.concatenate(pools))
        pool = pool[~np.isin(pool, np.asarray([row, *exclude], dtype=np.int64))]
        if len(pool) <= n:
            return rng.permutation(pool)
        return rng.choice(pool, size=n, replace=False)


def select_typed_first(ranked_rows: Sequence[int], is_typed: Sequence[bool], k: Optional[int]) -> list:
    """Indices into ``ranked_rows`` of the ``k`` candidates to keep, mention-type matches first.

    NER4EL's type-aware candidate selection: when a candidate list is cut to ``k``, candidates of the
    mention's type are kept before others so that a typed gold entity ranked below ``k`` survives.
    The kept candidates are returned in their original rank order.
    """
    if k is None or len(ranked_rows) <= k:
        return list(range(len(ranked_rows)))
    typed = [i for i, flag in enumerate(is_typed) if flag]
    untyped = [i for i, flag in enumerate(is_typed) if not flag]
    return sorted((typed + untyped)[:k])

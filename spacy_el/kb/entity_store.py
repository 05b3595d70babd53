"""Columnar entity storage: ids, names, descriptions, types, frequencies and optional vectors."""
from typing import Dict, List, Optional, Sequence

import numpy as np

from .string_array import HashIndex, StringArray


class EntityStore:
    """All entities of a KB as parallel arrays; entity ``row`` i is described by index i of every array.

    ids, names, descriptions (StringArray): n strings each.
    type_names (List[str]): the type inventory; types are stored as indices into it.
    type_offsets (np.ndarray): int64 (n + 1,); entity i has types ``type_ids[type_offsets[i]:type_offsets[i+1]]``.
    type_ids (np.ndarray): int32 (T,).
    frequencies (np.ndarray): float32 (n,), popularity/frequency counts (>= 0).
    vectors (Optional[np.ndarray]): float32 (n, d), or None when the KB has no entity vectors.
    id_index (HashIndex): entity id -> row.
    type_probs (Optional[np.ndarray]): float32 (n, T), a distribution over the T labels of
        ``type_prob_names`` per entity (NER4EL entity typing), or None when the KB has none.
    type_prob_names (List[str]): the T labels of ``type_probs`` in column order; [] when absent.
    qids (Optional[StringArray]): n Wikidata QIDs ("" for an entity without one), or None when the KB has
        none (the column is stored only when some entity has a QID).
    """

    def __init__(
        self,
        ids: StringArray,
        names: StringArray,
        descriptions: StringArray,
        type_names: List[str],
        type_offsets: np.ndarray,
        type_ids: np.ndarray,
        frequencies: np.ndarray,
        vectors: Optional[np.ndarray],
        id_index: HashIndex,
        type_probs: Optional[np.ndarray] = None,
        type_prob_names: Optional[List[str]] = None,
        qids: Optional[StringArray] = None,
    ) -> None:
        self.ids = ids
        self.names = names
        self.descriptions = descriptions
        self.type_names = type_names
        self.type_offsets = type_offsets
        self.type_ids = type_ids
        self.frequencies = frequencies
        self.vectors = vectors
        self.id_index = id_index
        self.type_probs = type_probs
        self.type_prob_names: List[str] = list(type_prob_names or [])
        self.qids = qids

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        names: Sequence[str],
        descriptions: Sequence[str],
        types: Sequence[Sequence[str]],
        frequencies: Sequence[float],
        vectors: Optional[np.ndarray] = None,
        qids: Optional[Sequence[str]] = None,
    ) -> "EntityStore":
        """The store of these entities; ``qids`` (one per entity, "" for none) is stored only when given."""
        type_names = sorted({t for entity_types in types for t in entity_types})
        type_to_id = {t: i for i, t in enumerate(type_names)}
        type_lengths = np.fromiter((len(ts) for ts in types), dtype=np.int64, count=len(types))
        type_offsets = np.zeros(len(types) + 1, dtype=np.int64)
        np.cumsum(type_lengths, out=type_offsets[1:])
        type_ids = np.fromiter(
            (type_to_id[t] for ts in types for t in ts), dtype=np.int32, count=int(type_offsets[-1])
        )
        return cls(
            ids=StringArray.from_strings(ids),
            names=StringArray.from_strings(names),
            descriptions=StringArray.from_strings(descriptions),
            type_names=type_names,
            type_offsets=type_offsets,
            type_ids=type_ids,
            frequencies=np.asarray(frequencies, dtype=np.float32).reshape(len(ids)),
            vectors=vectors,
            id_index=HashIndex.build(ids),
            qids=StringArray.from_strings(qids) if qids is not None else None,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def row_of(self, entity_id: str) -> Optional[int]:
        """The row of ``entity_id``, or None if it is not in the KB."""
        for row in self.id_index.candidate_rows(entity_id):
            if self.ids[int(row)] == entity_id:
                return int(row)
        return None

    def qid_at(self, row: int) -> Optional[str]:
        """The Wikidata QID of entity ``row``, or None when it has none (or the KB has no QID column)."""
        return (self.qids[row] or None) if self.qids is not None else None

    def types_of(self, row: int) -> List[str]:
        start, end = self.type_offsets[row], self.type_offsets[row + 1]
        return [self.type_names[t] for t in self.type_ids[start:end]]

    @property
    def vector_dim(self) -> int:
        return 0 if self.vectors is None else int(self.vectors.shape[1])

    def to_arrays(self) -> Dict[str, np.ndarray]:
        arrays: Dict[str, np.ndarray] = {}
        arrays.update(self.ids.to_arrays("entities.ids"))
        arrays.update(self.names.to_arrays("entities.names"))
        arrays.update(self.descriptions.to_arrays("entities.descriptions"))
        arrays["entities.type_offsets"] = self.type_offsets
        arrays["entities.type_ids"] = self.type_ids
        arrays["entities.frequencies"] = self.frequencies
        arrays.update(self.id_index.to_arrays("entities.id_index"))
        if self.vectors is not None:
            arrays["entities.vectors"] = self.vectors
        if self.type_probs is not None:
            arrays["entities.type_probs"] = self.type_probs
        if self.qids is not None:
            arrays.update(self.qids.to_arrays("entities.qids"))
        return arrays

    @classmethod
    def from_arrays(
        cls, arrays: Dict[str, np.ndarray], type_names: List[str], type_prob_names: Sequence[str] = ()
    ) -> "EntityStore":
        """The store from ``to_arrays`` output; ``type_prob_names`` are the column labels of
        ``entities.type_probs`` (absent array and no names: no type distributions)."""
        return cls(
            ids=StringArray.from_arrays(arrays, "entities.ids"),
            names=StringArray.from_arrays(arrays, "entities.names"),
            descriptions=StringArray.from_arrays(arrays, "entities.descriptions"),
            type_names=type_names,
            type_offsets=arrays["entities.type_offsets"],
            type_ids=arrays["entities.type_ids"],
            frequencies=arrays["entities.frequencies"],
            vectors=arrays.get("entities.vectors"),
            id_index=HashIndex.from_arrays(arrays, "entities.id_index"),
            type_probs=arrays.get("entities.type_probs"),
            type_prob_names=list(type_prob_names),
            # Stored only when some entity has a QID (KBBuilder, add_entities).
            qids=StringArray.from_arrays(arrays, "entities.qids") if "entities.qids.offsets" in arrays else None,
        )

    def validate(self) -> Dict[str, str]:
        """Structural problems by array name (empty when consistent)."""
        n = len(self.ids)
        problems: Dict[str, str] = {}
        columns = [("ids", self.ids), ("names", self.names), ("descriptions", self.descriptions)]
        if self.qids is not None:
            columns.append(("qids", self.qids))
        for name, strings in columns:
            problem = strings.validate()
            if problem is None and len(strings) != n:
                problem = f"holds {len(strings)} strings, expected {n}"
            if problem:
                problems[f"entities.{name}"] = problem
        if len(self.type_offsets) != n + 1 or self.type_offsets[-1] != len(self.type_ids):
            problems["entities.type_offsets"] = "does not match the number of entities and type ids"
        if len(self.type_ids) and (self.type_ids.min() < 0 or self.type_ids.max() >= len(self.type_names)):
            problems["entities.type_ids"] = f"type ids out of range [0, {len(self.type_names)})"
        if self.frequencies.shape != (n,):
            problems["entities.frequencies"] = f"shape {self.frequencies.shape}, expected ({n},)"
        if self.vectors is not None and (self.vectors.ndim != 2 or self.vectors.shape[0] != n):
            problems["entities.vectors"] = f"shape {self.vectors.shape}, expected ({n}, dim)"
        problem = self.id_index.validate(n)
        if problem:
            problems["entities.id_index"] = problem
        problem = self._type_probs_problem()
        if problem:
            problems["entities.type_probs"] = problem
        return problems

    def _type_probs_problem(self) -> Optional[str]:
        """What is wrong with ``type_probs`` / ``type_prob_names``, or None when they are consistent."""
        probs, names, n = self.type_probs, self.type_prob_names, len(self.ids)
        if probs is None:
            return f"missing, but {len(names)} type_prob_names are given" if names else None
        if not all(isinstance(name, str) for name in names) or len(set(names)) != len(names):
            return "type_prob_names must be distinct strings"
        if probs.ndim != 2 or probs.shape != (n, len(names)) or not names:
            return f"shape {probs.shape}, expected (n_entities={n}, len(type_prob_names)={len(names)} >= 1)"
        if probs.dtype != np.float32:
            return f"dtype {probs.dtype}, expected float32"
        if probs.size and not np.all(np.isfinite(probs)):
            return "contains NaN or infinite values"
        if probs.size and (float(probs.min()) < 0.0 or float(probs.max()) > 1.0 + 1e-4):
            return "probabilities must lie in [0, 1]"
        return None

    def memory_usage(self) -> Dict[str, int]:
        return {
            "entity_strings": self.ids.nbytes + self.names.nbytes + self.descriptions.nbytes
            + (self.qids.nbytes if self.qids is not None else 0),
            "entity_types": int(self.type_offsets.nbytes + self.type_ids.nbytes),
            "entity_frequencies": int(self.frequencies.nbytes),
            "entity_id_index": self.id_index.nbytes,
            "entity_vectors": 0 if self.vectors is None else int(self.vectors.nbytes),
            "entity_type_probs": 0 if self.type_probs is None else int(self.type_probs.nbytes),
        }

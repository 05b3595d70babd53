"""Entity types for NER4EL, as data: a type inventory, the known type mass of KB entities, and the
type agreement of a mention with its candidates (numpy only).

NER4EL compares the type a mention is predicted to have (from NER) with the type of each candidate
entity. Entities get a distribution over an inventory of T labels (``TypeInventory``):

1. known entities: their KB types (mapped through ``kb_type_map``) plus the NER labels of training
   mentions linked to them (``observed_type_counts``), normalised (``known_type_mass``);
2. all other entities: predicted by a classifier on the KB's entity vectors, which is training code
   and lives in :mod:`spacy_el.ml.ner_constrained_linker.entity_typing` (``entity_type_distributions``).

The result is stored in the KB with ``ElKnowledgeBase.set_type_probs(inventory.labels, probs)`` and read
back with ``get_type_probs(inventory.labels)``.
"""
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from .errors import KBErrors

__all__ = [
    "TypeInventory",
    "INVENTORY_NAMES",
    "observed_type_counts",
    "known_type_mass",
    "type_agreement",
]

TOPIC_PREFIX = "topic:"
# Wikipedia-summary topics other than People / Geography (which map to PER / LOC).
FINE_TOPICS = [
    "topic:Arts",
    "topic:Biology and health sciences",
    "topic:Everyday life",
    "topic:History",
    "topic:Mathematics",
    "topic:Philosophy and religion",
    "topic:Physical sciences",
    "topic:Society and social sciences",
    "topic:Technology",
]
_NER_MAP = {
    "PER": "PER", "PERSON": "PER",
    "LOC": "LOC", "GPE": "LOC", "FAC": "LOC",
    "ORG": "ORG", "NORP": "ORG",
    "MISC": "MISC",
}  # fmt: skip
_KB_MAP = {"PER": "PER", "topic:People": "PER", "LOC": "LOC", "topic:Geography": "LOC", "ORG": "ORG"}
INVENTORY_NAMES = ("coarse", "fine")


@dataclass
class TypeInventory:
    """The T type labels entity and mention type distributions are over, and how to map onto them.

    name (str): the inventory's name ("coarse", "fine" or a custom one).
    labels (List[str]): the T labels; column t of every type distribution is ``labels[t]``.
    kb_type_map (Dict[str, str]): KB type name (``EntityStore.type_names``) -> label.
    ner_label_map (Dict[str, str]): NER label (e.g. "PERSON", "GPE") -> label.
    fallback_label (Optional[str]): label of an NER label missing from ``ner_label_map`` (e.g. "MISC");
        None: such a mention has no label.
    kb_topic_fallback (Optional[str]): label of a KB type that starts with "topic:" and is missing from
        ``kb_type_map`` (the "every other topic" rule); None: such a type is ignored. Other unmapped
        KB types are always ignored.
    """

    name: str
    labels: List[str]
    kb_type_map: Dict[str, str]
    ner_label_map: Dict[str, str]
    fallback_label: Optional[str] = None
    kb_topic_fallback: Optional[str] = None
    _index: Dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.labels = [str(label) for label in self.labels]
        if not self.labels or len(set(self.labels)) != len(self.labels):
            raise ValueError(KBErrors.E166.format(name=self.name, labels=self.labels))
        self._index = {label: i for i, label in enumerate(self.labels)}
        targets = [
            *(("kb_type_map", v) for v in self.kb_type_map.values()),
            *(("ner_label_map", v) for v in self.ner_label_map.values()),
            ("fallback_label", self.fallback_label),
            ("kb_topic_fallback", self.kb_topic_fallback),
        ]
        for where, label in targets:
            if label is not None and label not in self._index:
                raise ValueError(KBErrors.E169.format(name=self.name, where=where, label=label, labels=self.labels))

    @classmethod
    def from_name(cls, name: str) -> "TypeInventory":
        """A built-in inventory. "coarse": PER, LOC, ORG, MISC (every other Wikipedia topic -> MISC);
        "fine": PER, LOC, ORG, one label per other Wikipedia-summary topic, MISC."""
        if name == "coarse":
            return cls("coarse", ["PER", "LOC", "ORG", "MISC"], dict(_KB_MAP), dict(_NER_MAP), "MISC", "MISC")
        if name == "fine":
            kb_map = {**_KB_MAP, **{topic: topic for topic in FINE_TOPICS}}
            labels = ["PER", "LOC", "ORG", *FINE_TOPICS, "MISC"]
            return cls("fine", labels, kb_map, dict(_NER_MAP), "MISC", "MISC")
        raise ValueError(KBErrors.E164.format(name=name, names=", ".join(INVENTORY_NAMES)))

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    def mention_label(self, ner_label: str) -> Optional[int]:
        """Index into ``labels`` of an NER label (through ``ner_label_map``, else ``fallback_label``);
        None when it has none."""
        label = self.ner_label_map.get(ner_label, self.fallback_label)
        return None if label is None else self._index[label]

    def kb_label(self, type_name: str) -> Optional[int]:
        """Index into ``labels`` of one KB type name, or None when the inventory ignores it."""
        label = self.kb_type_map.get(type_name)
        if label is None and type_name.startswith(TOPIC_PREFIX):
            label = self.kb_topic_fallback
        return None if label is None else self._index[label]


def observed_type_counts(kb: Any, inventory: TypeInventory, mentions: Iterable[Tuple[str, str]]) -> np.ndarray:
    """How often each entity was linked from a mention of each label.

    kb (ElKnowledgeBase): the KB whose entity rows the counts are for.
    mentions (Iterable[Tuple[str, str]]): (kb_id, ner_label) per training mention. Mentions whose kb_id
        is not in the KB ("NIL", "") or whose NER label has no inventory label are skipped.
    RETURNS (np.ndarray): float32 (n_entities, T), T = len(inventory.labels).
    """
    counts = np.zeros((kb.n_entities, inventory.n_labels), dtype=np.float32)
    rows: Dict[str, Optional[int]] = {}
    labels: Dict[str, Optional[int]] = {}
    for kb_id, ner_label in mentions:
        if kb_id not in rows:
            rows[kb_id] = kb.entities.row_of(kb_id) if kb_id else None
        if ner_label not in labels:
            labels[ner_label] = inventory.mention_label(ner_label)
        row, label = rows[kb_id], labels[ner_label]
        if row is not None and label is not None:
            counts[row, label] += 1.0
    return counts


def known_type_mass(kb: Any, inventory: TypeInventory, observed: Optional[np.ndarray] = None) -> np.ndarray:
    """Unnormalised known type mass: ``observed`` counts + 1.0 for each distinct label of the entity's
    KB types. RETURNS: float32 (n_entities, T); an all-zero row means the entity's type is unknown."""
    store = kb.entities
    n, n_labels = len(store), inventory.n_labels
    mass = np.zeros((n, n_labels), dtype=np.float32)
    if observed is not None:
        observed = np.asarray(observed, dtype=np.float32)
        if observed.shape != (n, n_labels):
            raise ValueError(KBErrors.E167.format(n=n, n_labels=n_labels, shape=observed.shape))
        if not np.all(np.isfinite(observed)) or (observed.size and observed.min() < 0):
            raise ValueError(KBErrors.E168)
        mass += observed
    type_labels = [inventory.kb_label(type_name) for type_name in store.type_names]
    label_of_type = np.array([-1 if i is None else i for i in type_labels], dtype=np.int64)
    owners = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.asarray(store.type_offsets)))
    labels = label_of_type[np.asarray(store.type_ids, dtype=np.int64)]
    keep = labels >= 0
    one_hot = np.zeros((n, n_labels), dtype=np.float32)
    one_hot[owners[keep], labels[keep]] = 1.0  # assignment: several KB types of one label count once
    return mass + one_hot


def type_agreement(mention_probs: np.ndarray, entity_probs: np.ndarray) -> np.ndarray:
    """Probability that a mention and each of its candidates have the same type: sum_t q(t) p(t).

    mention_probs (np.ndarray): (M, T), the mentions' type distributions q.
    entity_probs (np.ndarray): (M, C, T), the type distributions p of each mention's C candidates.
    RETURNS (np.ndarray): (M, C), float32.
    """
    q = np.asarray(mention_probs, dtype=np.float32)
    p = np.asarray(entity_probs, dtype=np.float32)
    if q.ndim != 2 or p.ndim != 3 or p.shape[0] != q.shape[0] or p.shape[2] != q.shape[1]:
        raise ValueError(KBErrors.E165.format(mention_shape=q.shape, entity_shape=p.shape))
    return np.einsum("mt,mct->mc", q, p)

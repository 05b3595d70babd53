"""Entity type distributions for NER4EL: a type inventory, known types, and an entity-typing classifier.

NER4EL compares the type a mention is predicted to have (from NER) with the type of each candidate
entity. Entities get a distribution over an inventory of T labels (``TypeInventory``):

1. known entities: their KB types (mapped through ``kb_type_map``) plus the NER labels of training
   mentions linked to them (``observed_type_counts``), normalised;
2. all other entities: predicted by a softmax regression on the KB's entity vectors (MiniLM encodings
   of "title. description"), trained on the known ones (``entity_type_distributions``).

The result is stored in the KB with ``ElKnowledgeBase.set_type_probs(inventory.labels, probs)`` and read
back with ``get_type_probs(inventory.labels)``. torch is imported only when the classifier is trained.
"""
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from wasabi import msg

__all__ = [
    "TypeInventory",
    "INVENTORY_NAMES",
    "observed_type_counts",
    "entity_type_distributions",
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

# Classifier settings: full-batch Adam on standardised vectors, zero initialisation (deterministic).
_LEARNING_RATE = 0.05
_L2 = 1e-4
_MAX_BATCH = 16384  # larger known sets are trained on minibatches of this size


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
            raise ValueError(f"[spacy_el] Type inventory {self.name!r} needs distinct labels, got {self.labels!r}.")
        self._index = {label: i for i, label in enumerate(self.labels)}
        targets = [
            *(("kb_type_map", v) for v in self.kb_type_map.values()),
            *(("ner_label_map", v) for v in self.ner_label_map.values()),
            ("fallback_label", self.fallback_label),
            ("kb_topic_fallback", self.kb_topic_fallback),
        ]
        for where, label in targets:
            if label is not None and label not in self._index:
                raise ValueError(
                    f"[spacy_el] Type inventory {self.name!r}: {where} names label {label!r}, "
                    f"which is not one of its labels {self.labels}."
                )

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
        raise ValueError(f"[spacy_el] Unknown type inventory {name!r}; valid names: {', '.join(INVENTORY_NAMES)}.")

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

    def kb_labels(self, type_names: Sequence[str]) -> List[int]:
        """Distinct label indices of an entity's KB types, in first-seen order (ignored types left out):
        e.g. coarse ["LOC", "topic:Geography", "topic:Arts"] -> [1, 3]."""
        seen: List[int] = []
        for type_name in type_names:
            index = self.kb_label(type_name)
            if index is not None and index not in seen:
                seen.append(index)
        return seen

    def to_dict(self) -> Dict[str, Any]:
        """JSON-safe dict (for a component's cfg); ``from_dict`` restores it."""
        return {
            "name": self.name,
            "labels": list(self.labels),
            "kb_type_map": dict(self.kb_type_map),
            "ner_label_map": dict(self.ner_label_map),
            "fallback_label": self.fallback_label,
            "kb_topic_fallback": self.kb_topic_fallback,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "TypeInventory":
        try:
            return cls(
                name=str(data["name"]),
                labels=list(data["labels"]),
                kb_type_map=dict(data["kb_type_map"]),
                ner_label_map=dict(data["ner_label_map"]),
                fallback_label=data.get("fallback_label"),
                kb_topic_fallback=data.get("kb_topic_fallback"),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"[spacy_el] Not a type inventory dict ({err!r}): {data!r}") from err


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
            raise ValueError(
                f"[spacy_el] Observed type counts must have shape (n_entities={n}, T={n_labels}); "
                f"got {observed.shape}."
            )
        if not np.all(np.isfinite(observed)) or (observed.size and observed.min() < 0):
            raise ValueError("[spacy_el] Observed type counts must be finite and >= 0.")
        mass += observed
    type_labels = [inventory.kb_label(type_name) for type_name in store.type_names]
    label_of_type = np.array([-1 if i is None else i for i in type_labels], dtype=np.int64)
    owners = np.repeat(np.arange(n, dtype=np.int64), np.diff(np.asarray(store.type_offsets)))
    labels = label_of_type[np.asarray(store.type_ids, dtype=np.int64)]
    keep = labels >= 0
    one_hot = np.zeros((n, n_labels), dtype=np.float32)
    one_hot[owners[keep], labels[keep]] = 1.0  # assignment: several KB types of one label count once
    return mass + one_hot


def entity_type_distributions(
    kb: Any,
    inventory: TypeInventory,
    observed: Optional[np.ndarray] = None,
    *,
    epochs: int = 200,
    seed: int = 0,
    progress: bool = True,
) -> Tuple[np.ndarray, np.ndarray]:
    """A type distribution for every KB entity.

    An entity with known type mass (``known_type_mass``: its KB types and ``observed`` mention counts,
    float32 (n_entities, T) as ``observed_type_counts`` returns) gets that mass normalised. The others
    get the prediction of a softmax regression on the KB's entity vectors, trained with soft-target
    cross-entropy on the known entities (Adam, ``epochs`` full-batch steps, or minibatch steps of
    16384 rows for larger known sets; zero-initialised, so deterministic given ``seed``). Without
    entity vectors, or with fewer than 2 distinct known labels, they get the class prior: the mean
    known distribution (uniform when nothing is known).

    RETURNS: (probs, source): probs float32 (n_entities, T), rows summing to 1; source int8
        (n_entities,), 1 = from KB types and/or observed mentions, 0 = predicted.
    """
    if epochs < 0:
        raise ValueError(f"[spacy_el] epochs must be >= 0, got {epochs}.")
    n, n_labels = kb.n_entities, inventory.n_labels
    mass = known_type_mass(kb, inventory, observed)
    total = mass.sum(axis=1)
    known = total > 0
    probs = np.zeros((n, n_labels), dtype=np.float32)
    probs[known] = mass[known] / total[known, None]
    source = known.astype(np.int8)
    n_known = int(known.sum())
    if progress:
        msg.info(f"Entity types ({inventory.name}, {n_labels} labels): {n_known} of {n} entities known")
    unknown = ~known
    if not unknown.any():
        return probs, source
    known_labels = int((probs[known].sum(axis=0) > 0).sum()) if n_known else 0
    vectors = kb.entities.vectors
    if vectors is None or known_labels < 2 or epochs == 0:
        prior = probs[known].mean(axis=0) if n_known else np.full(n_labels, 1.0 / n_labels, dtype=np.float32)
        probs[unknown] = prior / prior.sum()
        if progress:
            if vectors is None:
                why = "no entity vectors"
            elif known_labels < 2:
                why = f"{known_labels} distinct known label(s)"
            else:
                why = "epochs=0"
            msg.warn(f"Entity typing: {why}; {int(unknown.sum())} entities get the class prior")
        return probs, source
    probs[unknown] = _train_and_predict(
        np.asarray(vectors), known, probs[known], epochs=epochs, seed=seed, progress=progress
    )
    return probs, source


def _train_and_predict(
    vectors: np.ndarray, known: np.ndarray, targets: np.ndarray, *, epochs: int, seed: int, progress: bool
) -> np.ndarray:
    """Softmax regression: fit on ``vectors[known]`` -> ``targets`` (float32 (K, T)), predict the rest.
    RETURNS: float32 (n_unknown, T)."""
    import torch
    from tqdm import tqdm

    start = time.perf_counter()
    vectors = vectors.astype(np.float32, copy=False)
    # Standardise each dimension: MiniLM components are small (unit-norm 384-d vectors), and Adam on
    # standardised inputs converges in far fewer steps.
    mean = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
    std = vectors.std(axis=0, dtype=np.float64).astype(np.float32)
    std[std < 1e-6] = 1.0
    x_known = torch.from_numpy((vectors[known] - mean) / std)
    y_known = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
    n_known, dim = x_known.shape
    model = torch.nn.Linear(dim, y_known.shape[1])
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    optimizer = torch.optim.Adam(model.parameters(), lr=_LEARNING_RATE)
    rng = np.random.default_rng(seed)
    batch = min(n_known, _MAX_BATCH)
    loss_value = float("nan")
    # disable=None: tqdm shows no bar when stderr is not a terminal (training logs stay readable).
    steps = tqdm(range(epochs), desc="Entity typing", unit="step", disable=None if progress else True, leave=False)
    for _ in steps:
        if batch < n_known:
            idx = torch.from_numpy(rng.choice(n_known, size=batch, replace=False))
            xb, yb = x_known[idx], y_known[idx]
        else:
            xb, yb = x_known, y_known
        optimizer.zero_grad()
        log_p = torch.log_softmax(model(xb), dim=1)
        loss = -(yb * log_p).sum(dim=1).mean() + _L2 * model.weight.pow(2).sum()
        loss.backward()
        optimizer.step()
        loss_value = float(loss.detach())
    out = []
    unknown_rows = np.flatnonzero(~known)
    with torch.no_grad():
        for lo in range(0, len(unknown_rows), 65536):
            chunk = (vectors[unknown_rows[lo : lo + 65536]] - mean) / std
            out.append(torch.softmax(model(torch.from_numpy(chunk)), dim=1).numpy())
    predicted = np.concatenate(out).astype(np.float32)
    if progress:
        msg.good(
            f"Entity typing classifier: trained on {n_known} entities ({epochs} steps, final loss "
            f"{loss_value:.3f}), predicted {len(unknown_rows)} in {time.perf_counter() - start:.1f}s"
        )
    return predicted


def type_agreement(mention_probs: np.ndarray, entity_probs: np.ndarray) -> np.ndarray:
    """Probability that a mention and each of its candidates have the same type: sum_t q(t) p(t).

    mention_probs (np.ndarray): (M, T), the mentions' type distributions q.
    entity_probs (np.ndarray): (M, C, T), the type distributions p of each mention's C candidates.
    RETURNS (np.ndarray): (M, C), float32.
    """
    q = np.asarray(mention_probs, dtype=np.float32)
    p = np.asarray(entity_probs, dtype=np.float32)
    if q.ndim != 2 or p.ndim != 3 or p.shape[0] != q.shape[0] or p.shape[2] != q.shape[1]:
        raise ValueError(
            f"[spacy_el] type_agreement needs mention_probs (M, T) and entity_probs (M, C, T); "
            f"got {q.shape} and {p.shape}."
        )
    return np.einsum("mt,mct->mc", q, p)

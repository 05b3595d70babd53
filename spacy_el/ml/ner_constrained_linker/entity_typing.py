"""The entity-typing classifier of NER4EL: a type distribution for every KB entity.

Entities with known types (:func:`spacy_el.kb.type_inventory.known_type_mass`: KB types and the NER
labels of training mentions linked to them) keep them; the others get the prediction of a softmax
regression on the KB's entity vectors (MiniLM encodings of "title. description"), trained on the
known ones. torch is imported only when the classifier is trained.
"""
import time
from typing import Any, Optional, Tuple

import numpy as np
from wasabi import msg

from ...kb.type_inventory import TypeInventory, known_type_mass
from ...errors import Errors

__all__ = ["entity_type_distributions", "train_type_classifier"]

# Classifier settings: full-batch Adam on standardised vectors, zero initialisation (deterministic).
_LEARNING_RATE = 0.05
_L2 = 1e-4
_MAX_BATCH = 16384  # larger known sets are trained on minibatches of this size


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
        raise ValueError(Errors.E922.format(name="epochs", expected=">= 0", value=epochs))
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
    probs[unknown] = train_type_classifier(
        np.asarray(vectors), known, probs[known], epochs=epochs, seed=seed, progress=progress
    )
    return probs, source


def train_type_classifier(
    vectors: np.ndarray, known: np.ndarray, targets: np.ndarray, *, epochs: int, seed: int, progress: bool
) -> np.ndarray:
    """Softmax regression: fit on ``vectors[known]`` -> ``targets`` (float32 (K, T)), predict the rest.

    vectors: float (n_entities, dim); known: bool (n_entities,).
    RETURNS: float32 (n_unknown, T), rows for ``~known`` in row order."""
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

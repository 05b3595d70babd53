"""Optional KB build steps: entity vectors (computed or loaded) and the dense FAISS index."""
from pathlib import Path
from typing import List, Optional

import numpy as np

from .knowledge_base import ElKnowledgeBase
from .serialization import KBFormatError


def entity_texts(kb: ElKnowledgeBase) -> List[str]:
    """The text each entity is encoded from: its name followed by its description."""
    from .encoder import entity_text

    names, descriptions = kb.entities.names, kb.entities.descriptions
    return [entity_text(names[i], descriptions[i]) for i in range(kb.n_entities)]


def compute_entity_vectors(
    kb: ElKnowledgeBase, encoder: Optional[str] = None, batch_size: int = 64, gpu_id: int = -1, progress: bool = True
) -> np.ndarray:
    """Encode every entity's name + description. RETURNS: float32 (n_entities, dim), L2-normalised."""
    from .encoder import TextEncoder

    device = "cpu" if gpu_id < 0 else f"cuda:{gpu_id}"
    text_encoder = TextEncoder(encoder, device=device, batch_size=batch_size)
    return text_encoder.encode(entity_texts(kb), progress=progress)


def load_vectors_npy(path: Path, n_entities: int) -> np.ndarray:
    """Load a (n_entities, dim) float matrix from a .npy file, refusing pickled data."""
    try:
        vectors = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as err:
        raise KBFormatError(f"[spacy_el] Cannot read entity vectors from {path}: {err}") from err
    if vectors.ndim != 2 or vectors.shape[0] != n_entities:
        raise ValueError(
            f"[spacy_el] Entity vectors in {path} have shape {vectors.shape}; expected ({n_entities}, dim), "
            "one row per entity in the order of the entities file."
        )
    if vectors.dtype.kind not in "fiu":
        raise ValueError(f"[spacy_el] Entity vectors in {path} have dtype {vectors.dtype}; expected numbers.")
    vectors = vectors.astype(np.float32, copy=False)
    if not np.all(np.isfinite(vectors)):
        bad_row = int(np.argmin(np.isfinite(vectors).all(axis=1)))
        raise ValueError(
            f"[spacy_el] Entity vectors in {path} contain NaN or infinite values (first in row {bad_row})."
        )
    return vectors


def attach_vectors(
    kb: ElKnowledgeBase, source: str, encoder: Optional[str] = None, batch_size: int = 64, gpu_id: int = -1
) -> None:
    """Set the KB's vectors from ``source``: "compute" (encode name + description) or a .npy path."""
    if source == "compute":
        from .encoder import encoder_fingerprint

        vectors = compute_entity_vectors(kb, encoder=encoder, batch_size=batch_size, gpu_id=gpu_id)
        kb.set_vectors(vectors, encoder=encoder_fingerprint(encoder))
    else:  # vectors from a file: which encoder made them is unknown
        kb.set_vectors(load_vectors_npy(Path(source), kb.n_entities))


def attach_dense_index(kb: ElKnowledgeBase, factory: str) -> None:
    """Build a FAISS index of the KB's vectors with the given factory string and attach it."""
    from .dense_index import DenseIndex

    if kb.entities.vectors is None:
        raise ValueError("[spacy_el] A dense index needs entity vectors: pass --vectors compute (or a .npy file).")
    index = DenseIndex(kb.entities.vector_dim, factory=factory)
    index.add(np.ascontiguousarray(kb.entities.vectors, dtype=np.float32))
    kb.set_dense_index(index)

"""Optional KB build steps: entity vectors (computed or loaded) and the dense FAISS index."""
from pathlib import Path
from typing import Any, List, Optional

import numpy as np

from .errors import KBErrors
from .knowledge_base import ElKnowledgeBase
from .serialization import KBFormatError
from .vector_chunks import DEFAULT_CHUNK_SIZE, encode_in_chunks


def entity_texts(kb: ElKnowledgeBase, start: int = 0, end: Optional[int] = None) -> List[str]:
    """The text each entity of rows ``start..end-1`` (default: all) is encoded from: its name followed by its
    description."""
    from .encoder import entity_text

    names, descriptions = kb.entities.names, kb.entities.descriptions
    end = kb.n_entities if end is None else min(end, kb.n_entities)
    return [entity_text(names[i], descriptions[i]) for i in range(start, end)]


def compute_entity_vectors(
    kb: ElKnowledgeBase, encoder: Optional[str] = None, batch_size: int = 64, gpu_id: int = -1, progress: bool = True,
    resume_dir: Optional[Path] = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> np.ndarray:
    """Encode every entity's name + description. RETURNS: float32 (n_entities, dim), L2-normalised.

    resume_dir: a work folder for a resumable encoding (``vector_chunks``): the rows are encoded
        ``chunk_size`` at a time into chunk files there, a run that was interrupted continues from its
        finished chunks, and the result is memory-mapped from that folder (keep it until the KB is saved).
        None encodes everything in memory.
    """
    from .encoder import TextEncoder, encoder_fingerprint

    device = "cpu" if gpu_id < 0 else f"cuda:{gpu_id}"
    if resume_dir is None:
        text_encoder = TextEncoder(encoder, device=device, batch_size=batch_size)
        return text_encoder.encode(entity_texts(kb), progress=progress)
    text_encoder = TextEncoder(encoder, device=device, batch_size=batch_size)
    return encode_in_chunks(
        lambda start, end: entity_texts(kb, start, end), kb.n_entities, text_encoder, encoder_fingerprint(encoder),
        Path(resume_dir), chunk_size=chunk_size, progress=progress,
    )


def load_vectors_npy(path: Path, n_entities: int) -> np.ndarray:
    """Load a (n_entities, dim) float matrix from a .npy file, refusing pickled data."""
    try:
        vectors = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as err:
        raise KBFormatError(KBErrors.E152.format(path=path, err=err)) from err
    if vectors.ndim != 2 or vectors.shape[0] != n_entities:
        raise ValueError(KBErrors.E148.format(path=path, shape=vectors.shape, n_entities=n_entities))
    if vectors.dtype.kind not in "fiu":
        raise ValueError(KBErrors.E149.format(path=path, dtype=vectors.dtype))
    vectors = vectors.astype(np.float32, copy=False)
    if not np.all(np.isfinite(vectors)):
        bad_row = int(np.argmin(np.isfinite(vectors).all(axis=1)))
        raise ValueError(KBErrors.E150.format(path=path, bad_row=bad_row))
    return vectors


def attach_vectors(
    kb: ElKnowledgeBase, source: str, encoder: Optional[str] = None, batch_size: int = 64, gpu_id: int = -1,
    resume_dir: Optional[Path] = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> None:
    """Set the KB's vectors from ``source``: "compute" (encode name + description; resumable in
    ``resume_dir``, see ``compute_entity_vectors``) or a .npy path."""
    if source == "compute":
        from .encoder import encoder_fingerprint

        vectors = compute_entity_vectors(
            kb, encoder=encoder, batch_size=batch_size, gpu_id=gpu_id, resume_dir=resume_dir, chunk_size=chunk_size
        )
        kb.set_vectors(vectors, encoder=encoder_fingerprint(encoder))
    else:  # vectors from a file: which encoder made them is unknown
        kb.set_vectors(load_vectors_npy(Path(source), kb.n_entities))


def attach_dense_index(kb: ElKnowledgeBase, factory: str, **settings: Any) -> None:
    """Build a FAISS index of the KB's vectors with the given factory string and attach it. settings:
    ``DenseIndex``'s keyword arguments (``ef_construction``, ``ef_search``, ``nprobe``, ...)."""
    from .dense_index import DenseIndex

    if kb.entities.vectors is None:
        raise ValueError(KBErrors.E151)
    index = DenseIndex(kb.entities.vector_dim, factory=factory, **settings)
    index.add(np.ascontiguousarray(kb.entities.vectors, dtype=np.float32))
    kb.set_dense_index(index)

"""``spacy-el.DenseCandidates.v1``: a mention encoder reads each mention in its context window and the
KB's FAISS index returns the nearest entity vectors (BLINK's first stage, a bi-encoder).

The mention encoder travels with the KB: it is carried as the KB's ``mention_encoder`` attachment, so
every pipeline that serialises its KB (each spacy_el linker, and spaCy's ``entity_linker``) carries the
encoder too, and ``spacy package`` output needs nothing else. A generator given an ``encoder`` folder
attaches that encoder to the KB it is first used with (see ``DenseCandidates.prepare``).
"""
import hashlib
import threading
import warnings
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.tokens import Span

from ..errors import Errors, Warnings
from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts
from .types import TIER_NONE, CandidateGenerator, MentionCandidates

ATTACHMENT = "mention_encoder"

_DECODED: "weakref.WeakKeyDictionary[ElKnowledgeBase, Tuple[int, Any]]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


def attach_mention_encoder(kb: ElKnowledgeBase, encoder: Union[str, Path, Any]) -> None:
    """Make ``kb`` carry a mention encoder (a ``MentionEncoder`` or its folder), after checking that its
    vectors and the encoder's entity side are the same vector space."""
    from .mention_encoder.runtime import MentionEncoder

    if not isinstance(encoder, MentionEncoder):
        encoder = MentionEncoder.load(encoder)
    check_vector_space(kb, encoder)
    with _LOCK:
        kb.set_attachment(ATTACHMENT, encoder.to_bytes())
        _DECODED[kb] = (id(kb.attachment(ATTACHMENT)), encoder)


def check_vector_space(kb: ElKnowledgeBase, encoder: Any) -> None:
    """Refuse a KB whose entity vectors another encoder made than the one ``encoder`` was trained against."""
    if kb.entities.vectors is not None and kb.entities.vector_dim != encoder.dim:
        raise ValueError(Errors.E402.format(dim=encoder.dim, vector_dim=kb.entities.vector_dim))
    expected, actual = encoder.settings.entity_encoder, kb.vectors_encoder
    if expected and actual and expected.get("sha256") != actual.get("sha256"):
        raise ValueError(Errors.E403.format(
            kb_encoder=actual.get("name"), kb_sha256=actual.get("sha256", "")[:12],
            encoder=expected.get("name"), encoder_sha256=expected.get("sha256", "")[:12],
        ))
    if expected and not actual:
        warnings.warn(Warnings.W401, stacklevel=3)


def mention_encoder_of(kb: ElKnowledgeBase) -> Any:
    """The ``MentionEncoder`` the KB carries (decoded once per KB object)."""
    from .mention_encoder.runtime import MentionEncoder

    with _LOCK:
        data = kb.attachment(ATTACHMENT)
        if data is None:
            raise ValueError(Errors.E404)
        cached = _DECODED.get(kb)
        if cached is None or cached[0] != id(data):
            encoder = MentionEncoder.from_bytes(data).to(_torch_device())
            check_vector_space(kb, encoder)
            cached = _DECODED[kb] = (id(data), encoder)
        return cached[1]


def _torch_device() -> str:
    """The GPU that spaCy/Thinc were told to use (``--gpu-id``), else the CPU."""
    from thinc.api import get_current_ops

    ops = get_current_ops()
    return f"cuda:{getattr(ops, 'device_id', 0)}" if getattr(ops, "device_type", "cpu") == "gpu" else "cpu"


class DenseCandidates(CandidateGenerator):
    """Nearest entities of each mention's vector in the KB's dense index.

    top_k: candidates per mention. encoder: a mention encoder folder; None uses the one the KB carries.
    cache_size: mention vectors kept (least recently used first out), keyed by the document text, the
    mention's characters and the encoder: a linker in training reads the same gold mentions every
    epoch (0: no cache). The KB needs entity vectors and a dense index (``kb build --vectors compute --index Flat``).
    """

    name = "dense"

    def __init__(self, top_k: int = 30, encoder: Optional[Union[str, Path]] = None, cache_size: int = 20000) -> None:
        if top_k is None or int(top_k) < 1:
            raise ValueError(Errors.E405.format(top_k=top_k))
        if int(cache_size) < 0:
            raise ValueError(Errors.E406.format(cache_size=cache_size))
        self.top_k = int(top_k)
        self.encoder_path = str(encoder) if encoder else None
        self.cache_size = int(cache_size)
        self._attached: "weakref.WeakSet[ElKnowledgeBase]" = weakref.WeakSet()
        self._cache: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
        self._cache_lock = threading.Lock()

    def prepare(self, kb: ElKnowledgeBase) -> Any:
        """The KB's mention encoder. On first use with a KB, an ``encoder`` folder that exists is attached
        to it (replacing what it carried). A folder that no longer exists is no error when the KB carries
        an encoder: that is a saved pipeline, loaded where its training files are not."""
        if self.encoder_path and kb not in self._attached:
            with _LOCK:
                if kb not in self._attached:
                    if Path(self.encoder_path).is_dir() or kb.attachment(ATTACHMENT) is None:
                        attach_mention_encoder(kb, self.encoder_path)
                    self._attached.add(kb)
        return mention_encoder_of(kb)

    def encode(self, kb: ElKnowledgeBase, mentions: Sequence[Span]) -> np.ndarray:
        """float32 (M, dim) mention vectors; zero rows for empty or whitespace-only mentions."""
        encoder = self.prepare(kb)
        vectors = np.zeros((len(mentions), encoder.dim), dtype=np.float32)
        keys: List[Optional[tuple]] = [None] * len(mentions)
        if self.cache_size:
            digests: Dict[int, bytes] = {}  # one digest per document, not per mention
            for i, span in enumerate(mentions):
                if id(span.doc) not in digests:
                    digests[id(span.doc)] = hashlib.blake2b(span.doc.text.encode("utf8"), digest_size=16).digest()
                # The window a mention is read in depends on the whole document, hence its text's digest.
                keys[i] = (id(encoder), digests[id(span.doc)], span.start_char, span.end_char)
        todo = []
        with self._cache_lock:
            for i, (span, key) in enumerate(zip(mentions, keys)):
                if not span.text.strip():
                    continue
                if key is not None and key in self._cache:
                    self._cache.move_to_end(key)
                    vectors[i] = self._cache[key]
                else:
                    todo.append(i)
        if todo:
            vectors[todo] = encoder.encode([(mentions[i].doc, mentions[i].start, mentions[i].end) for i in todo])
            if self.cache_size:
                with self._cache_lock:
                    for i in todo:
                        self._cache[keys[i]] = vectors[i].copy()
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return vectors


    def search(self, kb: ElKnowledgeBase, vectors: np.ndarray, k: int) -> Tuple[np.ndarray, np.ndarray]:
        """(similarities float32 (M, k'), rows int64 (M, k')) with k' = min(k, entities); rows -1 pad."""
        if kb.dense_index is None:
            raise ValueError(Errors.E407)
        k = min(k, kb.n_entities)
        if k == 0 or len(vectors) == 0:
            return np.zeros((len(vectors), 0), np.float32), np.zeros((len(vectors), 0), np.int64)
        scores, rows = kb.dense_index.search(np.ascontiguousarray(vectors, dtype=np.float32), k)
        return scores.astype(np.float32), rows.astype(np.int64)

    def __call__(
        self, kb: ElKnowledgeBase, mentions: Sequence[Span], held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        # held_out is ignored: the dense list does not read the alias table's counts.
        if not mentions:
            return []
        if kb.is_empty():
            return [MentionCandidates.empty() for _ in mentions]
        vectors = self.encode(kb, mentions)
        scores, rows = self.search(kb, vectors, self.top_k)
        out = []
        for span, sims, found, query in zip(mentions, scores, rows, vectors):
            keep = found >= 0
            blank = not span.text.strip()
            if blank:
                keep[:] = False
            n = int(keep.sum())
            out.append(MentionCandidates.from_lists(found[keep], [0.0] * n, [TIER_NONE] * n, sims[keep], sims[keep],
                                                    None if blank else query))
        return out


__all__ = ["DenseCandidates", "attach_mention_encoder", "mention_encoder_of", "check_vector_space", "ATTACHMENT"]

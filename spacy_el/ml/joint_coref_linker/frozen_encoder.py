"""Training with the encoder's lower layers frozen, their outputs cached per document (issue 30).

With ``frozen_layers = N > 0`` (the component's ``frozen_encoder_layers``), training runs the encoder in two
parts: the embeddings and the lowest ``N`` transformer layers without gradient and without dropout (their
weights never change: the optimizer sees no gradient for them), then the upper layers as usual. The lower
part's output is then a function of the document and the frozen weights only, so it can be kept across
epochs: :class:`LowerLayerCache` holds it per document, keyed by a hash of the document's encoder windows
(the wordpiece ids and mask, which the text and the tokenizer give) and the checksum (SHA-256) of the frozen
weights, least recently used first out beyond ``cache_mb`` megabytes. The checksum is recomputed when a
frozen tensor is replaced or changed in place (``load_state_dict``), which also empties the cache. The cache
is a plain attribute of the torch module: never saved, never in the Thinc model's attrs.

A document's lower layers are computed on its own windows only (not padded to a batch's longest), so a
cached output is bit for bit the one computing it again gives. Prediction does not use this path: it runs
the whole encoder, as without freezing.

Encoders: BERT-like Hugging Face models with ``embeddings`` and ``encoder.layer`` (BERT, MiniLM, RoBERTa,
ELECTRA); others raise a ValueError naming the setting.
"""
import hashlib
from collections import OrderedDict
from typing import Any, Iterator, List, Optional, Tuple

import numpy as np
import torch

from ...errors import Errors

__all__ = ["LowerLayerCache", "encoder_layers", "frozen_parameters", "split_encode"]


def encoder_layers(encoder: Any) -> Tuple[Any, List[Any]]:
    """The encoder's embedding module and its list of transformer layers."""
    layers = getattr(getattr(encoder, "encoder", None), "layer", None)
    embeddings = getattr(encoder, "embeddings", None)
    if embeddings is None or layers is None:
        raise ValueError(Errors.E917.format(encoder_type=type(encoder).__name__))
    return embeddings, list(layers)


def frozen_parameters(encoder: Any, n: int) -> Iterator[Tuple[str, torch.nn.Parameter]]:
    """The parameters that ``n`` frozen layers keep fixed: the embeddings' and those of layers ``0..n-1``."""
    embeddings, layers = encoder_layers(encoder)
    yield from (("embeddings." + name, p) for name, p in embeddings.named_parameters())
    for i, layer in enumerate(layers[:n]):
        yield from ((f"layer.{i}.{name}", p) for name, p in layer.named_parameters())


class LowerLayerCache:
    """Outputs of the frozen lower layers per document (module docstring): an LRU bounded in bytes."""

    def __init__(self) -> None:
        self.entries: "OrderedDict[Tuple[Any, ...], torch.Tensor]" = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._fingerprint: Optional[Tuple[Any, ...]] = None
        self._checksum = ""

    def checksum(self, encoder: Any, n: int) -> str:
        """SHA-256 of the frozen weights, recomputed (and the cache emptied) when one of them changed."""
        params = [p for _, p in frozen_parameters(encoder, n)]
        fingerprint = (n, *((p.data_ptr(), p._version, tuple(p.shape)) for p in params))
        if fingerprint != self._fingerprint:
            digest = hashlib.sha256()
            for p in params:
                digest.update(p.detach().float().cpu().contiguous().numpy().tobytes())
            self._checksum = digest.hexdigest()
            self._fingerprint = fingerprint
            self.clear()
        return self._checksum

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def get(self, key: Tuple[Any, ...]) -> Optional[torch.Tensor]:
        value = self.entries.get(key)
        if value is None:
            self.misses += 1
            return None
        self.entries.move_to_end(key)
        self.hits += 1
        return value

    def put(self, key: Tuple[Any, ...], value: torch.Tensor, limit_mb: float) -> None:
        size = value.element_size() * value.nelement()
        limit = limit_mb * 2**20
        if size > limit:
            return
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= old.element_size() * old.nelement()
        self.entries[key] = value
        self.bytes += size
        while self.bytes > limit:
            _, dropped = self.entries.popitem(last=False)
            self.bytes -= dropped.element_size() * dropped.nelement()


def _doc_key(input_ids: np.ndarray, attention_mask: np.ndarray) -> str:
    digest = hashlib.sha1(np.ascontiguousarray(input_ids).tobytes())
    digest.update(np.ascontiguousarray(attention_mask).tobytes())
    digest.update(repr(input_ids.shape).encode())
    return digest.hexdigest()


def _attention_mask(encoder: Any, mask: torch.Tensor) -> torch.Tensor:
    return encoder.get_extended_attention_mask(mask, tuple(mask.shape))


def split_encode(
    encoder: Any, docs: List[Any], n: int, batch: int, device: Any, autocast: Any, cache: Optional[LowerLayerCache],
    cache_mb: float, dtype_name: str,
) -> torch.Tensor:
    """``(P_total, L, d)`` last hidden states of the documents' windows (as the whole encoder gives them),
    with the embeddings and layers ``0..n-1`` frozen (no gradient, no dropout) and their outputs cached
    when ``cache_mb > 0``. ``autocast``: a callable giving the encoder's autocast context."""
    embeddings, layers = encoder_layers(encoder)
    if not 0 < n <= len(layers):
        raise ValueError(Errors.E918.format(depth=len(layers), n=n))
    embeddings.eval()
    for layer in layers[:n]:
        layer.eval()
    for _, param in frozen_parameters(encoder, n):
        param.grad = None  # a zeroed gradient left by earlier steps would still let Adam's momentum move it
    checksum = cache.checksum(encoder, n) if cache is not None and cache_mb > 0 else ""
    lower: List[torch.Tensor] = []
    for d in docs:
        key = (checksum, n, dtype_name, _doc_key(d.input_ids, d.attention_mask))
        hidden = cache.get(key) if checksum else None
        if hidden is None:
            ids = torch.as_tensor(d.input_ids, device=device)
            mask = torch.as_tensor(d.attention_mask, device=device)
            chunks = []
            with torch.no_grad(), autocast():
                for i in range(0, ids.shape[0], batch):
                    h = embeddings(input_ids=ids[i:i + batch])
                    extended = _attention_mask(encoder, mask[i:i + batch])
                    for layer in layers[:n]:
                        h = layer(h, attention_mask=extended)[0]
                    chunks.append(h)
            hidden = torch.cat(chunks, dim=0)
            if checksum:
                cache.put(key, hidden, cache_mb)
        lower.append(hidden)
    length = max(h.shape[1] for h in lower)
    hidden = torch.cat([torch.nn.functional.pad(h, (0, 0, 0, length - h.shape[1])) for h in lower], dim=0)
    mask = torch.cat([
        torch.nn.functional.pad(torch.as_tensor(d.attention_mask, device=device), (0, length - d.attention_mask.shape[1]))
        for d in docs
    ], dim=0)
    if n == len(layers):
        return hidden.float()
    chunks = []
    with autocast():
        for i in range(0, hidden.shape[0], batch):
            h = hidden[i:i + batch]
            extended = _attention_mask(encoder, mask[i:i + batch])
            for layer in layers[n:]:
                h = layer(h, attention_mask=extended)[0]
            chunks.append(h)
    return torch.cat(chunks, dim=0).float()

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

Encoders: Hugging Face models with ``embeddings`` and ``encoder.layer``. BERT-like ones (BERT, MiniLM, RoBERTa,
ELECTRA) run their layers on the additive attention mask; DeBERTa (v2/v3), whose layers also take the relative
positions and the shared relative embeddings (and whose first layer is followed by a convolution in some
sizes), runs them as its own encoder does (:class:`_DebertaStack`), with the shared relative embeddings frozen
with the lower layers (the cached outputs depend on them). Others raise a ValueError naming the setting.
"""
import hashlib
from collections import OrderedDict
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch

from ...errors import Errors

__all__ = ["LowerLayerCache", "encoder_layers", "frozen_parameters", "layer_stack", "split_encode"]


def encoder_layers(encoder: Any) -> Tuple[Any, List[Any]]:
    """The encoder's embedding module and its list of transformer layers."""
    layers = getattr(getattr(encoder, "encoder", None), "layer", None)
    embeddings = getattr(encoder, "embeddings", None)
    if embeddings is None or layers is None or getattr(encoder, "z_steps", 0):
        raise ValueError(Errors.E917.format(encoder_type=type(encoder).__name__))
    return embeddings, list(layers)


class _BertStack:
    """How a BERT-like encoder runs its parts: embeddings of the ids, then each layer on the additive mask."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.embeddings, self.layers = encoder_layers(encoder)

    def shared_parameters(self) -> Iterator[Tuple[str, torch.nn.Parameter]]:
        """Parameters outside the embeddings and the layers that every layer uses (none here)."""
        return iter(())

    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.embeddings(input_ids=ids)

    def context(self, hidden: torch.Tensor, mask: torch.Tensor) -> Dict[str, Any]:
        """What every layer takes besides its input, for windows ``(B, L)`` of ``mask``."""
        return {"attention_mask": self.encoder.get_extended_attention_mask(mask, tuple(mask.shape))}

    def layer(self, i: int, hidden: torch.Tensor, embedded: torch.Tensor, mask: torch.Tensor,
              context: Dict[str, Any]) -> torch.Tensor:
        return self.layers[i](hidden, **context)[0]


class _DebertaStack(_BertStack):
    """DeBERTa's: embeddings scaled by the mask, layers on the pairwise mask, the relative positions and the
    shared relative embeddings (frozen: computed without gradient), the convolution after the first layer."""

    def shared_parameters(self) -> Iterator[Tuple[str, torch.nn.Parameter]]:
        inner = self.encoder.encoder
        for part in ("rel_embeddings", "LayerNorm", "conv"):
            module = getattr(inner, part, None)
            if isinstance(module, torch.nn.Module):
                yield from ((f"encoder.{part}.{name}", p) for name, p in module.named_parameters())

    def embed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.embeddings(input_ids=ids, mask=mask)

    def context(self, hidden: torch.Tensor, mask: torch.Tensor) -> Dict[str, Any]:
        inner = self.encoder.encoder
        with torch.no_grad():
            rel_embeddings = inner.get_rel_embedding()
        return {"attention_mask": inner.get_attention_mask(mask), "relative_pos": inner.get_rel_pos(hidden),
                "rel_embeddings": rel_embeddings}

    def layer(self, i: int, hidden: torch.Tensor, embedded: torch.Tensor, mask: torch.Tensor,
              context: Dict[str, Any]) -> torch.Tensor:
        out = self.layers[i](hidden, context["attention_mask"], relative_pos=context["relative_pos"],
                             rel_embeddings=context["rel_embeddings"])[0]
        conv = getattr(self.encoder.encoder, "conv", None)
        if i == 0 and conv is not None:
            out = conv(embedded, out, mask)
        return out


def layer_stack(encoder: Any) -> _BertStack:
    """How ``encoder``'s embeddings and layers run one after the other (module docstring)."""
    inner = getattr(encoder, "encoder", None)
    if hasattr(inner, "get_rel_embedding") and hasattr(inner, "get_rel_pos"):
        return _DebertaStack(encoder)
    return _BertStack(encoder)


def frozen_parameters(encoder: Any, n: int) -> Iterator[Tuple[str, torch.nn.Parameter]]:
    """The parameters that ``n`` frozen layers keep fixed: the embeddings', those of layers ``0..n-1`` and those
    every layer shares (DeBERTa's relative embeddings)."""
    stack = layer_stack(encoder)
    yield from (("embeddings." + name, p) for name, p in stack.embeddings.named_parameters())
    yield from stack.shared_parameters()
    for i, layer in enumerate(stack.layers[:n]):
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


def split_encode(
    encoder: Any, docs: List[Any], n: int, batch: int, device: Any, autocast: Any, cache: Optional[LowerLayerCache],
    cache_mb: float, dtype_name: str,
) -> torch.Tensor:
    """``(P_total, L, d)`` last hidden states of the documents' windows (as the whole encoder gives them),
    with the embeddings and layers ``0..n-1`` frozen (no gradient, no dropout) and their outputs cached
    when ``cache_mb > 0``. ``autocast``: a callable giving the encoder's autocast context."""
    stack = layer_stack(encoder)
    layers = stack.layers
    if not 0 < n <= len(layers):
        raise ValueError(Errors.E918.format(depth=len(layers), n=n))
    stack.embeddings.eval()
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
                    window_mask = mask[i:i + batch]
                    embedded = h = stack.embed(ids[i:i + batch], window_mask)
                    context = stack.context(h, window_mask)
                    for j in range(n):
                        h = stack.layer(j, h, embedded, window_mask, context)
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
            window_mask = mask[i:i + batch]
            context = stack.context(h, window_mask)
            for j in range(n, len(layers)):
                h = stack.layer(j, h, h, window_mask, context)  # the convolution follows layer 0 only (frozen)
            chunks.append(h)
    return torch.cat(chunks, dim=0).float()

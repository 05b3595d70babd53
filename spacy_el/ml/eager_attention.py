"""SDPA self-attention that drops out through its ``nn.Dropout`` layer in training: :data:`TRAINING_EAGER_ATTENTION`.

A Hugging Face BERT loaded with SDPA attention (``BertSdpaSelfAttention``, transformers' default) applies its
attention dropout inside ``scaled_dot_product_attention`` (``dropout_p``), where the masks are torch's
``aten::bernoulli_`` and no dropout layer can be swapped. ``TrainingEagerBertAttention`` is that class with one
change: in training on CPU it runs the parent's eager forward (``BertSelfAttention.forward``: the same attention,
whose dropout is the module's ``self.dropout`` layer, so it draws the masks that
:func:`spacy_el.ml.dropout.set_dropout_masks` chose); in prediction, and on other devices, where SDPA's fused kernel
draws the masks itself (as :class:`~spacy_el.ml.dropout.UniformDropout` leaves them to torch there), it is SDPA,
unchanged. The weights are the same modules, so the state dict is unchanged.

Other encoders: every transformers family whose SDPA attention is the same pair, ``<Family>SdpaSelfAttention``
derived from its eager ``<Family>SelfAttention`` (RoBERTa, XLM-RoBERTa, CamemBERT: copies of BERT's), gets its
own ``TrainingEager<Family>Attention`` the same way. An encoder whose attention is not such a pair falls back
cleanly: its attention is left as it is (0 modules changed). DeBERTa's disentangled attention is eager already
and drops out through its ``nn.Dropout`` layer, so uniform masks reach it without a swap; an attention that
calls SDPA without such a pair keeps torch's masks for its attention dropout only.

The classes derive from transformers' own, which take seconds to import, so each is made on first use: this
module's ``__getattr__`` builds it by name, and pickling finds it again by its name in a new process.
"""
import importlib
import sys
from typing import Any, Dict, Optional

from torch import nn

__all__ = ["TRAINING_EAGER_ATTENTION", "set_training_eager_attention", "training_eager_name"]

#: The name of BERT's class in this module (built on first use by :func:`__getattr__`).
TRAINING_EAGER_ATTENTION = "TrainingEagerBertAttention"
_PREFIX, _SUFFIX = "TrainingEager", "Attention"
_SDPA, _EAGER = "SdpaSelfAttention", "SelfAttention"
#: Where transformers defines the SDPA attention of a family (found there when unpickling in a new process).
_KNOWN_MODULES = {
    "Bert": "transformers.models.bert.modeling_bert",
    "Roberta": "transformers.models.roberta.modeling_roberta",
    "XLMRoberta": "transformers.models.xlm_roberta.modeling_xlm_roberta",
    "XLMRobertaXL": "transformers.models.xlm_roberta_xl.modeling_xlm_roberta_xl",
    "Camembert": "transformers.models.camembert.modeling_camembert",
}
_CLASSES: Dict[str, type] = {}


def _family(sdpa: type) -> Optional[str]:
    """``"Bert"`` for ``BertSdpaSelfAttention`` when its first base is the eager ``BertSelfAttention``, else None."""
    name = sdpa.__name__
    if not name.endswith(_SDPA) or name.startswith(_PREFIX):
        return None
    family = name[: -len(_SDPA)]
    eager = sdpa.__bases__[0] if sdpa.__bases__ else None
    if eager is None or eager.__name__ != family + _EAGER or "forward" not in vars(eager):
        return None
    return family


def training_eager_name(sdpa: type) -> Optional[str]:
    """The name of the training-eager class of an SDPA attention class (None where it has no eager twin)."""
    family = _family(sdpa)
    return None if family is None else f"{_PREFIX}{family}{_SUFFIX}"


def _build_class(sdpa: type) -> type:
    eager = sdpa.__bases__[0]
    name = training_eager_name(sdpa)

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        hidden_states = args[0] if args else kwargs["hidden_states"]
        # Off the CPU, SDPA's fused kernel draws the attention masks cheaply: eager would only be slower there
        if self.training and hidden_states.device.type == "cpu":
            return eager.forward(self, *args, **kwargs)
        return sdpa.forward(self, *args, **kwargs)

    return type(name, (sdpa,), {
        "forward": forward, "__module__": __name__, "__qualname__": name, "_sdpa_class": sdpa,
        "__doc__": f"{sdpa.__name__}, eager in training (module docstring of spacy_el.ml.eager_attention).",
    })


def _training_eager_class(sdpa: type) -> Optional[type]:
    """The training-eager class of ``sdpa``, built once and kept in this module (None: no eager twin)."""
    name = training_eager_name(sdpa)
    if name is None:
        return None
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = _build_class(sdpa)
        globals()[name] = cls
    return cls


def _find_sdpa(family: str) -> Optional[type]:
    """transformers' ``<family>SdpaSelfAttention``: in an imported transformers module, else in the known ones."""
    wanted = family + _SDPA
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("transformers.models.") and isinstance(getattr(module, wanted, None), type):
            return getattr(module, wanted)
    if family in _KNOWN_MODULES:
        try:
            return getattr(importlib.import_module(_KNOWN_MODULES[family]), wanted, None)
        except ImportError:  # a transformers without that family
            return None
    return None


def __getattr__(name: str) -> Any:
    """A class on first use of its name (by :func:`set_training_eager_attention`, or by an unpickling)."""
    if name.startswith(_PREFIX) and name.endswith(_SUFFIX) and len(name) > len(_PREFIX) + len(_SUFFIX):
        sdpa = _find_sdpa(name[len(_PREFIX): -len(_SUFFIX)])
        cls = _training_eager_class(sdpa) if sdpa is not None else None
        if cls is None or cls.__name__ != name:
            raise AttributeError(f"{name} needs transformers' {name[len(_PREFIX): -len(_SUFFIX)]}{_SDPA}")
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def set_training_eager_attention(module: nn.Module, eager: bool) -> int:
    """Make every SDPA self-attention of ``module`` that has an eager twin (module docstring) eager in training
    (``eager``), or SDPA throughout again, in place.

    Returns:
        The number of attention modules changed (0 where the module has none, as an encoder with another
        attention: it is left as it is).
    """
    changed = 0
    for child in module.modules():
        cls = type(child)
        sdpa = vars(cls).get("_sdpa_class")  # a training-eager class: its SDPA class
        if eager and sdpa is None:
            wanted = _training_eager_class(cls) if cls.__name__.endswith(_SDPA) else None
        elif not eager and sdpa is not None:
            wanted = sdpa
        else:
            wanted = None
        if wanted is not None:
            child.__class__ = wanted
            changed += 1
    return changed

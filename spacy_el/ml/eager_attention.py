"""BERT self-attention that drops out through its ``nn.Dropout`` layer in training: :data:`TRAINING_EAGER_ATTENTION`.

A Hugging Face BERT loaded with SDPA attention (``BertSdpaSelfAttention``, transformers' default) applies its
attention dropout inside ``scaled_dot_product_attention`` (``dropout_p``), where the masks are torch's
``aten::bernoulli_`` and no dropout layer can be swapped. ``TrainingEagerBertAttention`` is that class with one
change: in training on CPU it runs the parent's eager forward (``BertSelfAttention.forward``: the same attention,
whose dropout is the module's ``self.dropout`` layer, so it draws the masks that
:func:`spacy_el.ml.dropout.set_dropout_masks` chose); in prediction, and on other devices, where SDPA's fused kernel
draws the masks itself (as :class:`~spacy_el.ml.dropout.UniformDropout` leaves them to torch there), it is SDPA,
unchanged. The weights are the same modules, so the state dict is unchanged.

The class derives from transformers' own, which takes seconds to import, so it is made on first use: this module's
``__getattr__`` builds it, and pickling finds it again by its name in a new process.
"""
import sys
from typing import Any, Optional

from torch import nn

__all__ = ["TRAINING_EAGER_ATTENTION", "set_training_eager_attention"]

#: The name of the class in this module (built on first use by :func:`__getattr__`).
TRAINING_EAGER_ATTENTION = "TrainingEagerBertAttention"


def _build_class() -> Optional[type]:
    try:
        from transformers.models.bert.modeling_bert import BertSdpaSelfAttention, BertSelfAttention
    except ImportError:  # a transformers without BERT's SDPA class: attention keeps torch's masks
        return None

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        hidden_states = args[0] if args else kwargs["hidden_states"]
        # Off the CPU, SDPA's fused kernel draws the attention masks cheaply: eager would only be slower there
        if self.training and hidden_states.device.type == "cpu":
            return BertSelfAttention.forward(self, *args, **kwargs)
        return BertSdpaSelfAttention.forward(self, *args, **kwargs)

    cls = type(TRAINING_EAGER_ATTENTION, (BertSdpaSelfAttention,), {
        "forward": forward, "__module__": __name__, "__qualname__": TRAINING_EAGER_ATTENTION,
        "__doc__": "BERT's SDPA self-attention, eager in training (module docstring of spacy_el.ml.eager_attention).",
    })
    return cls


def _training_eager_class() -> Optional[type]:
    """The class, built once and kept in this module (None without transformers' BERT SDPA class)."""
    cls = globals().get(TRAINING_EAGER_ATTENTION)
    if cls is None:
        cls = _build_class()
        if cls is not None:
            globals()[TRAINING_EAGER_ATTENTION] = cls
    return cls


def __getattr__(name: str) -> Any:
    """The class on first use of its name (by :func:`set_training_eager_attention`, or by an unpickling)."""
    if name == TRAINING_EAGER_ATTENTION:
        cls = _training_eager_class()
        if cls is None:
            raise AttributeError(f"{name} needs transformers' BertSdpaSelfAttention")
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def set_training_eager_attention(module: nn.Module, eager: bool) -> int:
    """Make every BERT SDPA self-attention of ``module`` eager in training (``eager``) or SDPA throughout, in place.

    Returns:
        The number of attention modules changed (0 where the module has none, as an encoder with another
        attention, or a transformers without the class).
    """
    sdpa = _sdpa_class()
    training_eager = _training_eager_class() if sdpa is not None else None
    if training_eager is None:
        return 0
    wanted, other = (training_eager, sdpa) if eager else (sdpa, training_eager)
    changed = 0
    for child in module.modules():
        if type(child) is other:
            child.__class__ = wanted
            changed += 1
    return changed


def _sdpa_class() -> Optional[type]:
    """transformers' ``BertSdpaSelfAttention`` where it is already imported (an encoder that has one was built from
    it), else None: no transformers import only to find that a module has none."""
    bert = sys.modules.get("transformers.models.bert.modeling_bert")
    return getattr(bert, "BertSdpaSelfAttention", None)

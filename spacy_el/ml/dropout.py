"""Dropout with masks drawn as uniform numbers: ``dropout_masks = "bernoulli" | "uniform"``.

``torch.nn.Dropout`` draws its mask with ``aten::bernoulli_``, which on CPU draws element by element: about a
tenth of a ``joint_coref_linker`` training step on GUM. :class:`UniformDropout` keeps an element where a uniform
draw in ``[0, 1)`` is at least ``p``: the same Bernoulli(``1 - p``) mask in distribution, from a vectorised
generator, and one multiplication by the scaled mask instead of two. On a GPU it leaves the masks to torch, whose dropout draws and
applies them in one fused kernel there. :func:`set_dropout_masks` puts it in place of every ``nn.Dropout`` of a
module (the encoder's too), or puts ``nn.Dropout`` back: dropout layers hold no weights, so the state dict and
its files stay the same.

The draws are different numbers from those of ``nn.Dropout``, so a model trained with one kind of mask is
not bit for bit the model trained with the other; a resumed training keeps the kind it started with
(``spacy_el.training.resume`` refuses a changed setting). Dropout that a module applies without a
``nn.Dropout`` layer keeps torch's masks, but for BERT's attention dropout: SDPA applies it inside
``scaled_dot_product_attention``, so with uniform masks the attention runs its eager forward in training
(:mod:`spacy_el.ml.eager_attention`; prediction stays SDPA).
"""
from typing import Tuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..errors import Errors

from .eager_attention import set_training_eager_attention

__all__ = ["DROPOUT_MASKS", "UniformDropout", "set_dropout_masks", "uniform_dropout"]

#: Valid values of every ``dropout_masks`` setting: torch's ``nn.Dropout``, or :class:`UniformDropout`.
DROPOUT_MASKS: Tuple[str, ...] = ("bernoulli", "uniform")


def uniform_dropout(x: Tensor, p: float) -> Tensor:
    """``x`` with each element zeroed with probability ``p`` and the rest scaled by ``1 / (1 - p)``.

    Args:
        x: any shape and floating dtype.
        p: the probability of zeroing, in ``[0, 1]``.

    Returns:
        A new tensor of ``x``'s shape and dtype. The gradient is the same scaled mask.
    """
    if p <= 0.0:
        return x
    if p >= 1.0:
        return x * 0.0
    # float32 draws whatever x's dtype: a bfloat16 uniform has too few values to compare with p exactly
    mask = torch.rand(x.shape, device=x.device).ge_(p).mul_(1.0 / (1.0 - p))
    return x * mask.to(x.dtype)


class UniformDropout(nn.Dropout):
    """``nn.Dropout`` with the mask of :func:`uniform_dropout` on CPU (an ``nn.Dropout`` still, for code that
    finds dropout layers by type). On another device it is torch's dropout, which there draws and applies the
    mask in one fused kernel. In eval mode, or with ``p = 0``, it returns its input."""

    def forward(self, x: Tensor) -> Tensor:
        if not self.training:
            return x
        if x.device.type != "cpu":
            return F.dropout(x, self.p, training=True)
        return uniform_dropout(x, self.p)


def set_dropout_masks(module: nn.Module, masks: str) -> int:
    """Make every dropout layer of ``module`` draw its masks the ``masks`` way (:data:`DROPOUT_MASKS`), in place.

    Each ``nn.Dropout`` (or :class:`UniformDropout`) is replaced by the other class with the same ``p`` and
    training mode where it is not already of the wanted class. With ``"uniform"``, BERT's SDPA self-attention
    layers run their eager forward in training (:mod:`spacy_el.ml.eager_attention`), so that their attention
    dropout is their dropout layer, uniform too; ``"bernoulli"`` makes them SDPA throughout again.

    Returns:
        The number of dropout layers replaced.

    Raises:
        ValueError: ``masks`` is not one of :data:`DROPOUT_MASKS`.
    """
    if masks not in DROPOUT_MASKS:
        raise ValueError(Errors.E021.format(what="dropout_masks", name=masks, known=DROPOUT_MASKS))
    wanted = UniformDropout if masks == "uniform" else nn.Dropout
    replaced = 0
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Dropout) and type(child) is not wanted:
                layer = wanted(child.p)
                layer.train(child.training)
                setattr(parent, name, layer)
                replaced += 1
    # BERT's SDPA attention drops out inside scaled_dot_product_attention: eager in training, it uses its layer
    set_training_eager_attention(module, eager=masks == "uniform")
    return replaced

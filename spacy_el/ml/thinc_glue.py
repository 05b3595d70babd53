"""The Thinc glue every torch model of spacy_el shares: calling its torch layer, the scalar-loss pattern,
and numpy outputs.

**The scalar-loss pattern** (``joint_coref_linker``, ``ner_stack_lstm``, ``entqa``): the torch module computes its
training loss itself and returns ``(loss, outputs)``; :func:`scalar_loss_outputs` (the layer's
``convert_outputs``) hands the loss to Thinc as a ``(1,)`` array and backpropagates it with the gradient it
is given, ``dY = (d_loss, _)``: the component's ``get_loss`` gives ``d_loss = 1`` (``KBTorchPipe.get_loss``)
and the backward pass runs ``torch.autograd.backward(loss, grad_tensors=d_loss)``. That is how
spacy-transformers and Thinc's own examples pass a custom gradient through ``PyTorchWrapper``; the
gradient given here is that of the identity on the loss. A loss that is a log-determinant (the
``joint_coref_linker``'s Global loss) is easiest differentiated by torch autograd, not by a Thinc
``get_loss`` over score arrays. The other outputs are detached and carry no gradient.

**Numpy outputs**: at prediction every model gives the pipeline numpy arrays (:func:`torch_to_numpy`,
from any device), so ``spacy_el/pipeline`` never handles a tensor. Training outputs are left as the
component's loss needs them.
"""
from typing import Any, Callable, Optional, Tuple

import numpy as np
import torch
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch

__all__ = ["scalar_loss_outputs", "torch_layer_forward", "torch_to_numpy"]


def torch_to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A detached numpy copy (a view on CPU) of ``tensor``, from any device; bfloat16/float16 become
    float32 (numpy has no bfloat16)."""
    tensor = tensor.detach()
    if tensor.dtype in (torch.bfloat16, torch.float16):
        tensor = tensor.float()
    return tensor.cpu().numpy()


def torch_layer_forward(model: Model, X: Any, is_train: bool) -> Tuple[Any, Callable]:
    """``forward`` through the model's torch layer (its last layer) on numpy inputs ``X``, which take no
    gradient: the backprop callback runs the torch backward pass and returns ``X``."""
    Y, backprop_layer = model.layers[-1](X, is_train)

    def backprop(dY: Any) -> Any:
        backprop_layer(dY)
        return X

    return Y, backprop


def scalar_loss_outputs(model: Model, loss: Optional[torch.Tensor], outputs: Any) -> Tuple[Tuple[Any, Any], Callable]:
    """The ``convert_outputs`` result of a torch module that returns its own loss (module docstring):
    ``((loss as a (1,) array, or None, outputs), convert_for_torch_backward)``; the backward call runs
    autograd from ``loss`` with the gradient ``dY[0]`` (shaped as the loss)."""

    def convert_for_torch_backward(dY: Any) -> ArgsKwargs:
        d_loss = xp2torch(model.ops.asarray(dY[0]), device=loss.device).reshape(loss.shape).to(loss.dtype)
        return ArgsKwargs(args=((loss,),), kwargs={"grad_tensors": (d_loss,)})

    loss_out = None if loss is None else torch2xp(loss.detach().reshape(1))
    return (loss_out, outputs), convert_for_torch_backward

"""One way for tests to reach the torch module behind a component's Thinc model, so that the layout of the
Thinc wrapper (which layer holds the PyTorchShim) is written down once."""
from typing import Any

import torch
from thinc.api import Model


def torch_module(owner: Any, layer: int = 0) -> torch.nn.Module:
    """The torch module wrapped by `layer` of a Thinc model, or of a pipe's model when given a pipe."""
    model = owner if isinstance(owner, Model) else owner.model
    return model.layers[layer].shims[0]._model

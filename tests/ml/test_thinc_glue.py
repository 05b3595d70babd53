"""The Thinc glue the models share (spacy_el.ml.thinc_glue): the scalar-loss pattern and numpy outputs."""
import numpy as np
import torch
from thinc.api import ArgsKwargs, Model

from spacy_el.ml.thinc_glue import scalar_loss_outputs, torch_layer_forward, torch_to_numpy
from spacy_el.ml.torch_io import torch_layer


class SquareLoss(torch.nn.Module):
    """loss = sum(w * x)^2 / 2 (shape ``loss_shape``), outputs: w * x."""

    def __init__(self, loss_shape=()):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
        self.loss_shape = loss_shape

    def forward(self, x):
        y = self.w * torch.as_tensor(x)
        return (y.sum() ** 2 / 2).reshape(self.loss_shape), y


def _convert_inputs(model, X, is_train):
    return ArgsKwargs(args=(X,), kwargs={}), lambda d: X


def _convert_outputs(model, inputs_outputs, is_train):
    _, (loss, y) = inputs_outputs
    return scalar_loss_outputs(model, loss, y.detach() if is_train else torch_to_numpy(y))


def make_model(loss_shape=()):
    module = SquareLoss(loss_shape)
    layer = torch_layer(module, _convert_inputs, _convert_outputs, "test")
    return Model("scalar_loss", torch_layer_forward, layers=[layer]), module


def test_torch_to_numpy():
    x = torch.tensor([1.5, -2.0], dtype=torch.bfloat16, requires_grad=True)
    array = torch_to_numpy(x)
    assert isinstance(array, np.ndarray) and array.dtype == np.float32 and array.tolist() == [1.5, -2.0]
    assert torch_to_numpy(torch.arange(3)).dtype == np.int64


def test_scalar_loss_backpropagates_the_gradient_given():
    x = np.array([1.0, 1.0, 2.0], dtype=np.float32)
    for loss_shape in [(), (1,)]:  # joint_coref and entqa return a 0-d loss, stack_lstm a (1,) one
        model, module = make_model(loss_shape)
        (loss, y), backprop = model.begin_update(x)
        assert loss.shape == (1,) and float(loss[0]) == 9 ** 2 / 2
        assert isinstance(y, torch.Tensor) and not y.requires_grad
        assert backprop((model.ops.alloc1f(1) + 1.0, None)) is x  # numpy inputs take no gradient
        assert module.w.grad.tolist() == [9.0, 9.0, 18.0]  # d/dw of sum(w x)^2 / 2 = sum(w x) x


def test_predictions_are_numpy():
    model, _ = make_model()
    loss, y = model.predict(np.array([1.0, 1.0, 2.0], dtype=np.float32))
    assert isinstance(y, np.ndarray) and y.tolist() == [1.0, 2.0, 6.0]

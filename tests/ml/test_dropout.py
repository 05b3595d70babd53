"""spacy_el.ml.dropout: uniform-draw dropout masks (issue 30: a training step's dropout masks cost 11% of it).
The masks keep the Bernoulli(1 - p) distribution and nn.Dropout's scaling, the gradient is the same mask, and
set_dropout_masks swaps a module's dropout layers both ways without touching its state."""
from typing import Any, Tuple

import pytest
import torch
from torch import nn

from spacy_el.ml.dropout import DROPOUT_MASKS, UniformDropout, set_dropout_masks, uniform_dropout

from ..torch_modules import torch_module
from .test_joint_coref_linker_train_speed import build


@pytest.mark.parametrize("p", [0.1, 0.5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_masks_keep_the_rate_and_the_scale(p, dtype):
    torch.manual_seed(0)
    x = torch.ones(400, 500, dtype=dtype)
    out = uniform_dropout(x, p)
    assert out.dtype == dtype and out.shape == x.shape
    dropped = (out == 0).float().mean().item()
    assert abs(dropped - p) < 0.005  # 200,000 draws: the standard error is at most 0.0012
    kept = out[out != 0].float()
    assert torch.allclose(kept, torch.full_like(kept, 1 / (1 - p)), rtol=1e-2)


def test_the_gradient_is_the_scaled_mask():
    torch.manual_seed(0)
    x = torch.randn(64, 32, requires_grad=True)
    out = uniform_dropout(x, 0.3)
    out.sum().backward()
    expected = torch.where(out != 0, torch.tensor(1 / 0.7), torch.tensor(0.0))
    assert torch.allclose(x.grad, expected)


def test_the_same_seed_draws_the_same_mask_and_another_seed_another():
    x = torch.ones(1000)
    masks = []
    for seed in (0, 0, 1):
        torch.manual_seed(seed)
        masks.append(uniform_dropout(x, 0.2))
    assert torch.equal(masks[0], masks[1]) and not torch.equal(masks[0], masks[2])


def test_rates_zero_and_one_and_eval_mode():
    x = torch.randn(8, 4)
    assert uniform_dropout(x, 0.0) is x
    assert torch.equal(uniform_dropout(x, 1.0), torch.zeros_like(x))
    layer = UniformDropout(0.5).eval()
    assert layer(x) is x


def test_other_devices_keep_torchs_fused_dropout(monkeypatch):
    import spacy_el.ml.dropout as dropout

    def uniform_draws(x, p):
        raise AssertionError("uniform draws off the CPU")

    monkeypatch.setattr(dropout, "uniform_dropout", uniform_draws)
    out = UniformDropout(0.5)(torch.empty(4, 3, device="meta"))
    assert out.shape == (4, 3) and out.device.type == "meta"
    with pytest.raises(AssertionError, match="uniform draws"):
        UniformDropout(0.5)(torch.ones(4, 3))


def small_model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Sequential(nn.ReLU(), nn.Dropout(0.3)), nn.Linear(4, 1))


def test_set_dropout_masks_swaps_both_ways_keeping_rates_modes_and_state():
    model = small_model()
    model[2].eval()  # a layer in eval mode stays in eval mode
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert set_dropout_masks(model, "uniform") == 2
    assert [type(m) for m in model.modules() if isinstance(m, nn.Dropout)] == [UniformDropout, UniformDropout]
    assert [m.p for m in model.modules() if isinstance(m, nn.Dropout)] == [0.2, 0.3]
    assert model[1].training and not model[2][1].training
    assert set_dropout_masks(model, "uniform") == 0  # already so
    assert set_dropout_masks(model, "bernoulli") == 2
    assert all(type(m) is nn.Dropout for m in model.modules() if isinstance(m, nn.Dropout))
    assert model.state_dict().keys() == state.keys()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())


def test_set_dropout_masks_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match=r"E021\] Unknown dropout_masks"):
        set_dropout_masks(small_model(), "gaussian")
    assert DROPOUT_MASKS == ("bernoulli", "uniform")


def dropout_types(module: nn.Module) -> Tuple[Any, ...]:
    return tuple(sorted({type(m).__name__ for m in module.modules() if isinstance(m, nn.Dropout)}))


@pytest.mark.parametrize("masks, expected", [(None, ("UniformDropout",)), ("bernoulli", ("Dropout",)),
                                             ("uniform", ("UniformDropout",))])
def test_joint_coref_linker_draws_the_masks_its_config_names(two_layer_encoder, tmp_path, one_torch_thread, masks,
                                                              expected):
    model = {} if masks is None else {"dropout_masks": masks}
    nlp, pipe, examples = build(two_layer_encoder, tmp_path, model=model)
    module = torch_module(pipe)
    assert dropout_types(module) == expected  # the encoder's layers and the heads' alike
    assert dropout_types(module.encoder) == expected
    optimizer = nlp.create_optimizer()
    losses: dict = {}
    for _ in range(2):
        for eg in examples:
            pipe.update([eg], sgd=optimizer, losses=losses)
    assert all(torch.isfinite(torch.tensor(v)) for v in losses.values())


def _retriever(encoder: str, **kwargs: Any) -> Any:
    from spacy_el.ml.entqa.model import EntityRetrieverArguments, build_entity_retriever

    model = build_entity_retriever(**{**EntityRetrieverArguments.defaults(), "encoder": encoder, **kwargs})
    model.set_dim("nE", 32)  # the tiny encoder's width, which the retriever's entity vectors must have
    return model


def _reader(encoder: str, **kwargs: Any) -> Any:
    from spacy_el.ml.entqa.model import EntQAReaderArguments, build_entqa_reader

    model = build_entqa_reader(**{**EntQAReaderArguments.defaults(), "encoder": encoder, **kwargs})
    model.set_dim("nE", 32)
    return model


def _ner4el(encoder: str, **kwargs: Any) -> Any:
    from spacy_el.ml.ner_constrained_linker.model import Ner4elArguments, build_ner_constrained_linker

    model = build_ner_constrained_linker(**{**Ner4elArguments.defaults(), "encoder": encoder, "hidden_width": 16, **kwargs})
    model.set_dim("nE", 8)
    model.set_dim("nT", 4)
    return model


def _stack_lstm(encoder: str, **kwargs: Any) -> Any:
    from thinc.api import noop

    from spacy_el.ml.ner_stack_lstm.model import StackLstmArguments, build_ner_stack_lstm

    small = {"hidden_width": 8, "action_width": 4, "attention_width": 8, "el_hidden_width": 8, "nil_hidden_width": 8,
             "learned_width": 4}
    model = build_ner_stack_lstm(tok2vec=noop(), **{**StackLstmArguments.defaults(), **small, **kwargs})
    for dim, size in (("nW", 16), ("nA", 5), ("nE", 8), ("nL", 0)):
        model.set_dim(dim, size)
    return model


#: component -> (a builder of its architecture with dims set, the spacy_el.ml package whose build_torch_layer builds it)
OTHER_MODELS = {"entity_retriever": (_retriever, "entqa"), "entqa_reader": (_reader, "entqa"),
                "ner_constrained_linker": (_ner4el, "ner_constrained_linker"), "ner_stack_lstm": (_stack_lstm, "ner_stack_lstm")}


def _built_module(component: str, encoder: str, **kwargs: Any) -> nn.Module:
    """The torch module of ``component``'s architecture, built (lazily, as at initialize) with ``kwargs``."""
    import importlib

    build, package = OTHER_MODELS[component]
    model = build(encoder, **kwargs)
    importlib.import_module(f"spacy_el.ml.{package}.model").build_torch_layer(model)
    return next(shim._model for node in model.walk() for shim in node.shims)


@pytest.mark.parametrize("component", sorted(OTHER_MODELS))
@pytest.mark.parametrize("masks, expected", [("bernoulli", ("Dropout",)), ("uniform", ("UniformDropout",))])
def test_the_other_torch_components_draw_the_masks_their_model_names(tiny_encoder, component, masks, expected):
    module = _built_module(component, tiny_encoder, dropout_masks=masks)
    assert dropout_types(module) == expected  # the encoder's layers and the heads' alike


@pytest.mark.parametrize("component", sorted(OTHER_MODELS))
def test_the_other_torch_components_refuse_an_unknown_kind_of_masks(tiny_encoder, component):
    with pytest.raises(ValueError, match=r"E901\] .*: dropout_masks must be one of"):
        OTHER_MODELS[component][0](tiny_encoder, dropout_masks="gaussian")


@pytest.mark.parametrize("module_name", sorted(OTHER_MODELS))
def test_the_components_default_configs_draw_uniform_masks(module_name):
    import importlib

    assert importlib.import_module(f"spacy_el.pipeline.{module_name}").DEFAULT_MODEL["dropout_masks"] == "uniform"

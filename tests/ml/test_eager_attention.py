"""spacy_el.ml.eager_attention: with uniform dropout masks, BERT's SDPA self-attention runs its eager forward in
training, so that its attention dropout is its (uniform) dropout layer; prediction stays SDPA, bit for bit; the
weights and their state dict stay the same; the class pickles by name, also where it is not built yet."""
import pickle

import pytest
import torch

import spacy_el.ml.eager_attention as eager_attention
from spacy_el.ml.dropout import UniformDropout, set_dropout_masks
from spacy_el.ml.torch_io import load_encoder


@pytest.fixture
def encoder(two_layer_encoder):
    torch.manual_seed(0)
    return load_encoder(two_layer_encoder)


def attention_classes(encoder) -> set:
    return {type(layer.attention.self).__name__ for layer in encoder.encoder.layer}


def inputs():
    ids = torch.randint(1000, 20000, (2, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 9:] = 0  # a padded row: the SDPA-shaped attention mask must work in the eager forward
    return {"input_ids": ids, "attention_mask": mask}


def test_uniform_masks_make_attention_eager_in_training_and_bernoulli_undoes_it(encoder):
    assert attention_classes(encoder) == {"BertSdpaSelfAttention"}
    state = {k: v.clone() for k, v in encoder.state_dict().items()}
    set_dropout_masks(encoder, "uniform")
    assert attention_classes(encoder) == {eager_attention.TRAINING_EAGER_ATTENTION}
    assert all(isinstance(layer.attention.self.dropout, UniformDropout) for layer in encoder.encoder.layer)
    assert all(torch.equal(encoder.state_dict()[k], v) for k, v in state.items())
    set_dropout_masks(encoder, "bernoulli")
    assert attention_classes(encoder) == {"BertSdpaSelfAttention"}


def test_prediction_is_unchanged_and_training_without_dropout_computes_the_same(encoder):
    encoder.eval()
    with torch.no_grad():
        before = encoder(**inputs()).last_hidden_state
    set_dropout_masks(encoder, "uniform")
    with torch.no_grad():
        assert torch.equal(encoder(**inputs()).last_hidden_state, before)  # SDPA in prediction
        encoder.train()
        for module in encoder.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        trained = encoder(**inputs()).last_hidden_state  # the eager forward, no dropout
    assert torch.allclose(trained[0], before[0], atol=1e-5)
    assert torch.allclose(trained[1, :9], before[1, :9], atol=1e-5)


def test_training_draws_attention_dropout_outside_sdpa(encoder, monkeypatch):
    set_dropout_masks(encoder, "uniform")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    calls = []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("dropout_p"))
        return sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", counted)
    encoder.train()
    encoder(**inputs())
    assert calls == []
    encoder.eval()
    with torch.no_grad():
        encoder(**inputs())
    assert calls == [0.0, 0.0]  # two layers, no dropout in prediction


def test_training_off_the_cpu_keeps_sdpa(encoder, monkeypatch):
    # Off the CPU, SDPA's fused kernel draws the attention masks: eager would only be slower (the meta device
    # stands in for a GPU: it runs the same code without computing)
    set_dropout_masks(encoder, "uniform")
    calls = []
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def counted(*args, **kwargs):
        calls.append(kwargs.get("dropout_p"))
        return sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", counted)
    attention = encoder.encoder.layer[0].attention.self.to("meta").train()
    attention(torch.zeros(2, 12, encoder.config.hidden_size, device="meta"))
    assert calls == [attention.dropout.p] and calls[0] > 0  # the dropout inside SDPA


def test_the_class_pickles_by_name_where_it_is_not_built_yet(encoder, monkeypatch):
    set_dropout_masks(encoder, "uniform")
    data = pickle.dumps(encoder)
    # as in a new process: the class is not in the module until something asks for it
    monkeypatch.delitem(vars(eager_attention), eager_attention.TRAINING_EAGER_ATTENTION)
    restored = pickle.loads(data)
    assert attention_classes(restored) == {eager_attention.TRAINING_EAGER_ATTENTION}
    restored.eval()
    encoder.eval()
    with torch.no_grad():
        assert torch.equal(restored(**inputs()).last_hidden_state, encoder(**inputs()).last_hidden_state)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        eager_attention.Nope

"""joint_coref_linker's training-speed switches (issue 30). frozen_encoder_layers and encoder_cache_mb: the frozen
layers' weights do not change while the upper ones train, cached lower-layer outputs are exactly the computed
ones, and the cache is bounded and emptied when the frozen weights change. early_steps and
early_max_antecedents: the first updates score a smaller antecedent window, counted in cfg."""
import numpy as np
from typing import Any, Tuple

import pytest
import spacy
import torch

from spacy_el.kb.loaders import kb_from_disk
from spacy_el.ml.joint_coref_linker.frozen_encoder import LowerLayerCache, frozen_parameters

from ..conftest import build_invented_kb, linked_cluster_examples
from ..torch_modules import torch_module


def build(encoder: str, tmp_path: Any, **settings: Any) -> Tuple[Any, Any, list]:
    build_invented_kb(True, dim=8).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    model = {"encoder": encoder, "max_span_width": 3, "window": 16, "stride": 8, "ffnn": 16, "ffnn_depth": 1,
             "width_emb": 8, "distance_width": 8, "entity_proj": 16, "dropout": 0.1, "encoder_batch": 2,
             "encoder_dtype": "float32", **settings.pop("model", {})}
    pipe = nlp.add_pipe("joint_coref_linker", config={"model": model, **settings})
    examples = linked_cluster_examples(nlp)
    pipe.initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))
    return nlp, pipe, examples


def test_frozen_layers_keep_their_weights_and_the_upper_ones_train(two_layer_encoder, tmp_path, one_torch_thread):
    nlp, pipe, examples = build(two_layer_encoder, tmp_path, frozen_encoder_layers=1, encoder_cache_mb=16)
    module = torch_module(pipe)
    before = {name: p.detach().clone() for name, p in module.encoder.named_parameters()}
    optimizer = nlp.create_optimizer()
    for _ in range(3):
        for eg in examples:
            pipe.update([eg], sgd=optimizer)
    after = dict(module.encoder.named_parameters())
    frozen = {"embeddings." + n for n, _ in module.encoder.embeddings.named_parameters()}
    frozen |= {"encoder.layer.0." + n for n, _ in module.encoder.encoder.layer[0].named_parameters()}
    assert frozen and all(torch.equal(before[name], after[name]) for name in frozen)
    assert not all(torch.equal(before[name], after[name]) for name in set(before) - frozen)
    assert module.lower_cache.hits == 4 and module.lower_cache.misses == 2  # two documents, three epochs


def test_cached_lower_layers_give_exactly_the_computed_outputs(two_layer_encoder, tmp_path, one_torch_thread):
    nlp, pipe, examples = build(two_layer_encoder, tmp_path)
    module = torch_module(pipe)
    docs = pipe._batch([eg.predicted for eg in examples]).docs
    module.train()  # dropout on in the upper layer: the same seed must give the same draws

    def vectors(cache_mb: float) -> list:
        torch.manual_seed(0)
        return [v.detach() for v in module.token_vectors(docs, frozen_layers=1, cache_mb=cache_mb)]

    uncached = vectors(0.0)
    assert module.lower_cache.misses == 0
    stored = vectors(16.0)
    hit = vectors(16.0)
    assert module.lower_cache.misses == 2 and module.lower_cache.hits == 2
    for a, b, c in zip(uncached, stored, hit):
        assert torch.equal(a, b) and torch.equal(a, c)
    # The split encoder computes what the whole one does (dropout off in the lower layers, as frozen)...
    torch.manual_seed(0)
    whole = [v.detach() for v in module.token_vectors(docs)]
    assert all(torch.equal(a, b) for a, b in zip(uncached, whole))
    # ... and without freezing, training runs the whole encoder as before, dropout everywhere.
    module.train()
    torch.manual_seed(0)
    whole = [v.detach() for v in module.token_vectors(docs)]
    assert not all(torch.equal(a, b) for a, b in zip(uncached, whole))


def test_cache_is_bounded_and_emptied_when_frozen_weights_change(two_layer_encoder, tmp_path, one_torch_thread):
    nlp, pipe, examples = build(two_layer_encoder, tmp_path)
    module = torch_module(pipe)
    cache = LowerLayerCache()
    checksum = cache.checksum(module.encoder, 1)
    value = torch.zeros(256, 1024)  # 1 MB
    for key in range(5):
        cache.put((key,), value, limit_mb=3)
    assert len(cache.entries) == 3 and cache.bytes <= 3 * 2**20 and (0,) not in cache.entries
    assert cache.checksum(module.encoder, 1) == checksum and len(cache.entries) == 3  # unchanged weights
    state = module.state_dict()
    state["encoder.encoder.layer.0.output.dense.bias"] = state["encoder.encoder.layer.0.output.dense.bias"] + 1
    module.load_state_dict(state)
    assert cache.checksum(module.encoder, 1) != checksum and not cache.entries
    assert len(list(frozen_parameters(module.encoder, 2))) > len(list(frozen_parameters(module.encoder, 1)))


def test_frozen_settings_are_checked(two_layer_encoder, tmp_path, one_torch_thread):
    with pytest.raises(ValueError, match=r"E901\] joint_coref_linker: encoder_cache_mb"):
        build(two_layer_encoder, tmp_path, encoder_cache_mb=16)
    nlp, pipe, examples = build(two_layer_encoder, tmp_path / "more", frozen_encoder_layers=3)
    with pytest.raises(ValueError, match=r"E918\] .* \[0, 2\]"):
        pipe.update(examples, sgd=nlp.create_optimizer())


def test_early_updates_score_a_smaller_antecedent_window(two_layer_encoder, tmp_path, one_torch_thread):
    nlp, pipe, examples = build(two_layer_encoder, tmp_path, early_steps=2, early_max_antecedents=1)
    module = torch_module(pipe)
    windows = []
    forward = module.forward

    def spy(docs, *args, **kwargs):
        loss, outputs = forward(docs, *args, **kwargs)
        coref = outputs[0].scores.coref_scores.numpy()
        i, j = np.nonzero(np.isfinite(coref))
        windows.append(int(np.abs(i - j).max()))
        return loss, outputs

    module.forward = spy
    optimizer = nlp.create_optimizer()
    for _ in range(3):
        pipe.update(examples[:1], sgd=optimizer)
    assert windows[:2] == [1, 1] and windows[2] > 1  # then the model's window (50: every pair here)
    assert pipe.cfg["early_updates"] == 2 and module.scorer.max_antecedents == 50
    pipe.configure(early_steps=0)
    with pytest.raises(ValueError, match=r"E901\] joint_coref_linker: early_max_antecedents"):
        pipe.configure(early_steps=3, early_max_antecedents=0)


def test_pruning_in_training_scores_spans_without_dropout(two_layer_encoder, tmp_path, one_torch_thread):
    """The pruning pass takes no gradient: in training it keeps the spans prediction keeps, whatever the
    dropout draws, and the modules stay in training mode after it."""
    nlp, pipe, examples = build(two_layer_encoder, tmp_path)
    module = torch_module(pipe)
    doc = pipe._batch([examples[0].predicted]).docs[0]
    module.eval()
    vectors = module.token_vectors([doc])[0].detach()
    spans = torch.as_tensor(doc.spans)
    expected = module._kept(vectors, spans, doc)
    module.train()
    for seed in range(3):
        torch.manual_seed(seed)
        assert torch.equal(module._kept(vectors, spans, doc), expected)
    assert all(m.training for m in module.modules())
    # the span embedder itself still drops out in training (the kept spans are embedded again with gradient)
    torch.manual_seed(0)
    first = module.span_embedder(vectors, spans[:4])
    torch.manual_seed(1)
    assert not torch.equal(first, module.span_embedder(vectors, spans[:4]))


def test_encoder_checkpointing_gives_the_same_training_as_without(two_layer_encoder, tmp_path, one_torch_thread):
    """Recomputed activations (with the same dropout masks) give the same updates, bit for bit on CPU."""
    trained, calls, initial, before = {}, {}, None, None
    for checkpointing in (False, True):
        nlp, pipe, examples = build(two_layer_encoder, tmp_path / str(checkpointing), encoder_checkpointing=checkpointing)
        calls[checkpointing] = 0

        def count(*_: Any, on: bool = checkpointing) -> None:
            calls[on] += 1

        torch_module(pipe).encoder.register_forward_pre_hook(count)  # a post-forward hook misses the recomputation, which stops early
        if initial is None:
            initial = pipe.model.to_bytes()
            before = {n: p.detach().clone() for n, p in torch_module(pipe).encoder.named_parameters()}
        else:
            pipe.model.from_bytes(initial)
        optimizer = nlp.create_optimizer()
        torch.manual_seed(1)
        for _ in range(2):
            for eg in examples:
                pipe.update([eg], sgd=optimizer, drop=0.1)
        trained[checkpointing] = {n: p.detach().clone() for n, p in torch_module(pipe).named_parameters()}
    assert trained[False].keys() == trained[True].keys()
    assert all(torch.equal(trained[False][n], trained[True][n]) for n in trained[False])
    assert any(not torch.equal(before[n], trained[True]["encoder." + n]) for n in before)  # the encoder did train
    assert calls[True] == 2 * calls[False] > 0  # each chunk encoded again in the backward pass


def test_encoder_checkpointing_refuses_frozen_layers(two_layer_encoder, tmp_path):
    with pytest.raises(ValueError, match=r"E901\] joint_coref_linker: encoder_checkpointing"):
        build(two_layer_encoder, tmp_path, encoder_checkpointing=True, frozen_encoder_layers=1)

"""The training-speed benchmark's variants (benchmarks/jcl_train_speed.py): each puts the component in its state
from whatever state the previous step left, and the dropout variants swap the masks of every dropout layer."""
from pathlib import Path

import pytest
from torch import nn

from benchmarks.jcl_train_speed import corpus_overrides, is_batch, measure_batched, variant_setter
from spacy_el.ml.dropout import UniformDropout
from spacy_el.ml.joint_coref.inputs import make_doc_inputs

from ..ml.test_joint_coref_train_speed import build
from ..torch_modules import torch_module


def dropout_classes(module: nn.Module) -> set:
    return {type(m) for m in module.modules() if isinstance(m, nn.Dropout)}


def test_dropout_variants_swap_the_masks_and_the_default_restores_the_config(two_layer_encoder, tmp_path,
                                                                          one_torch_thread):
    nlp, pipe, _ = build(two_layer_encoder, tmp_path, model={"dropout_masks": "uniform"})
    module = torch_module(pipe)
    setters = {name: variant_setter(nlp, name) for name in ("default", "dropout_bernoulli", "frozen_1")}
    setters["dropout_bernoulli"]()
    assert dropout_classes(module) == {nn.Dropout}
    setters["frozen_1"]()  # another variant runs with the config's masks
    assert dropout_classes(module) == {UniformDropout}
    assert pipe.settings.frozen_encoder_layers == 1
    setters["dropout_bernoulli"]()
    setters["default"]()
    assert dropout_classes(module) == {UniformDropout} and pipe.settings.frozen_encoder_layers == 0


def test_an_unknown_variant_is_refused(two_layer_encoder, tmp_path, one_torch_thread):
    nlp, _, _ = build(two_layer_encoder, tmp_path)
    with pytest.raises(ValueError, match="unknown variant 'dropout_gaussian'"):
        variant_setter(nlp, "dropout_gaussian")
    with pytest.raises(ValueError, match="unknown variant 'batch_1'"):  # one document per update is the default
        variant_setter(nlp, "batch_1")


def test_window_variants_set_the_window_and_its_stride_and_the_default_restores_them(two_layer_encoder, tmp_path,
                                                                                 one_torch_thread):
    nlp, pipe, examples = build(two_layer_encoder, tmp_path)  # windows of 16 wordpieces, 8 apart
    own = (pipe.model.attrs["window"], pipe.model.attrs["stride"])
    setters = {name: variant_setter(nlp, name) for name in ("default", "window_8")}
    setters["window_8"]()
    assert (pipe.model.attrs["window"], pipe.model.attrs["stride"]) == (8, 4)
    inputs = make_doc_inputs(pipe.model, examples[0].predicted, lambda spans: [[] for _ in spans])
    assert inputs.input_ids.shape[1] <= 8 and len(inputs.input_ids) > 1  # what a training step encodes
    setters["default"]()
    assert (pipe.model.attrs["window"], pipe.model.attrs["stride"]) == own
    positions = torch_module(pipe).encoder.config.max_position_embeddings
    with pytest.raises(ValueError, match=f"a window is 4 to {positions} wordpieces"):
        variant_setter(nlp, f"window_{positions + 1}")


def test_batch_names():
    assert is_batch("batch_4") and is_batch("batch_2")
    assert not is_batch("batch_1") and not is_batch("batch_x") and not is_batch("frozen_3")


class CountingPipe:
    def __init__(self):
        self.updates = []

    def update(self, examples, sgd=None, losses=None):
        self.updates.append(list(examples))


def test_batched_updates_and_the_defaults_single_updates_cover_the_same_whole_groups():
    pipe, defaults = CountingPipe(), []
    batched, singles = measure_batched(pipe, lambda: defaults.append(1), list(range(7)), 3, rounds=2, optimizer=None)
    assert defaults == [1]
    assert len(batched) == len(singles) == 2 * 2  # two whole groups of 3 (the 7th document left out), 2 timed rounds
    per_round = pipe.updates[: len(pipe.updates) // 3]  # 3 rounds: the warm-up and the 2 timed ones
    assert sorted(map(tuple, per_round)) == sorted([(0, 1, 2), (0,), (1,), (2,), (3, 4, 5), (3,), (4,), (5,)])


def test_the_corpus_follows_the_config():
    root = Path(__file__).resolve().parents[2] / "configs"
    assert corpus_overrides(str(root / "joint_coref_linker.cfg"), "G", "A") == ({"paths.gum": "G"}, "gum")
    overrides, corpus = corpus_overrides(str(root / "joint_coref_linker_aida.cfg"), "G", "A")
    assert corpus == "aida" and overrides == {"paths.train": str(Path("A") / "train.spacy"),
                                              "paths.dev": str(Path("A") / "dev.spacy")}

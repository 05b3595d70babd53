"""The training-speed benchmark's variants (benchmarks/jcl_train_speed.py): each puts the component in its state
from whatever state the previous step left, and the dropout variants swap the masks of every dropout layer."""
import pytest
from torch import nn

from benchmarks.jcl_train_speed import variant_setter
from spacy_el.ml.dropout import UniformDropout

from ..ml.test_joint_coref_train_speed import build, torch_module


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

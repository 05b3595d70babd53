"""Encoders of any size (issue 70, section 4): every component's ``encoder`` is a local folder or a model-hub name,
a missing one is a coded error that says what to do, each length setting is checked against the encoder's
positions, the BERT-only training paths (the eager-attention swap, the frozen-layer cache) work for RoBERTa and
DeBERTa-v2 too, and every component trains, saves, loads and predicts with a tiny random BERT, RoBERTa and
DeBERTa-v2 (:mod:`tests.ml.tiny_encoders`). Nothing here reaches the hub: it is off (HF_HUB_OFFLINE) throughout."""
import pickle
import time
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from .tiny_encoders import KINDS, WIDTH, save_tiny_encoder


@pytest.fixture(scope="module", autouse=True)
def hub_off():
    """The hub is off for every test here (a hub name must never reach the network)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> Dict[str, str]:
    """Family -> the folder of a tiny random 2-layer encoder of that family."""
    return {kind: save_tiny_encoder(kind, tmp_path_factory.mktemp(kind.replace("-", "_"))) for kind in KINDS}


# -- hub names -------------------------------------------------------------------------------------------------


def _fake_cache(cache: Path, repo: str, folder: str) -> None:
    """``folder``'s files as the Hugging Face cache holds a downloaded ``repo`` (refs/main -> a snapshot)."""
    commit = "0" * 40
    root = cache / ("models--" + repo.replace("/", "--"))
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for f in Path(folder).iterdir():
        (snapshot / f.name).write_bytes(f.read_bytes())
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)


@pytest.fixture
def hub_cache(tmp_path, monkeypatch, encoders):
    """A Hugging Face cache holding the tiny RoBERTa as the hub name ``tiny-org/tiny-roberta``."""
    import huggingface_hub.constants
    import transformers.utils.hub

    cache = tmp_path / "hf_cache"
    _fake_cache(cache, "tiny-org/tiny-roberta", encoders["roberta"])
    monkeypatch.setattr(transformers.utils.hub, "TRANSFORMERS_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return "tiny-org/tiny-roberta"


def test_a_hub_name_in_the_cache_loads_offline_as_its_folder_does(hub_cache, encoders):
    from spacy_el.ml.torch_io import encoder_folder, load_encoder, load_fast_tokenizer

    by_name, by_path = load_encoder(hub_cache), load_encoder(encoders["roberta"])
    assert type(by_name).__name__ == "RobertaModel"
    assert all(torch.equal(a, b) for a, b in zip(by_name.state_dict().values(), by_path.state_dict().values()))
    assert load_fast_tokenizer(hub_cache, "test")("Lord Byron")["input_ids"] == \
        load_fast_tokenizer(encoders["roberta"], "test")("Lord Byron")["input_ids"]
    assert (encoder_folder(hub_cache) / "config.json").is_file()


def test_the_kb_encoder_and_an_encoder_reference_take_the_hub_name_too(hub_cache, encoders):
    from spacy_el.kb.encoder import TextEncoder
    from spacy_el.ml.encoder_reference import source_checksum

    texts = ["Lord Byron", "Ada Lovelace, his daughter"]
    np.testing.assert_allclose(TextEncoder(hub_cache).encode(texts, progress=False),
                               TextEncoder(encoders["roberta"]).encode(texts, progress=False), atol=1e-6)
    assert source_checksum(hub_cache) == source_checksum(encoders["roberta"])


def test_a_hub_name_and_weights_in_shards_are_fingerprinted(hub_cache, encoders, tmp_path):
    from transformers import AutoModel

    from spacy_el.kb.encoder import encoder_fingerprint

    by_name, by_path = encoder_fingerprint(hub_cache), encoder_fingerprint(encoders["roberta"])
    assert by_name == {"name": hub_cache, "sha256": by_path["sha256"]}
    sharded = tmp_path / "sharded"
    AutoModel.from_pretrained(encoders["roberta"]).save_pretrained(sharded, max_shard_size="100KB")
    assert (sharded / "model.safetensors.index.json").is_file() and not (sharded / "model.safetensors").exists()
    fingerprint = encoder_fingerprint(str(sharded))
    assert fingerprint["name"] == "sharded" and fingerprint == encoder_fingerprint(str(sharded))
    (sharded / "model.safetensors.index.json").write_text("{}")
    with pytest.raises(ValueError, match="E273"):
        encoder_fingerprint(str(sharded))


@pytest.mark.parametrize("kind", KINDS)
def test_the_kb_encoder_encodes_with_every_family(kind, encoders):
    from spacy_el.kb.encoder import TextEncoder

    vectors = TextEncoder(encoders[kind], batch_size=1).encode(["Lord Byron", "Ada Lovelace", ""], progress=False)
    assert vectors.shape == (3, WIDTH) and np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.hostile("first contact")
def test_a_hub_name_not_in_the_cache_is_a_coded_error_at_once_while_the_hub_is_off():
    from spacy_el.candidates.mention_encoder import MentionEncoder
    from spacy_el.kb.encoder import TextEncoder, encoder_fingerprint
    from spacy_el.ml.torch_io import load_encoder, load_fast_tokenizer

    name = "no-such-org/no-such-encoder"
    started = time.perf_counter()
    for load in (load_encoder, lambda n: load_fast_tokenizer(n, "test"), TextEncoder, MentionEncoder.from_base,
                 encoder_fingerprint):
        with pytest.raises(OSError, match="E270") as info:
            load(name)
        assert name in str(info.value)
    assert time.perf_counter() - started < 30  # no retries against an unreachable hub


def test_with_the_hub_on_a_name_is_read_from_the_cache_first_then_fetched(monkeypatch):
    from spacy_el.kb import encoder as kb_encoder

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE")
    monkeypatch.setattr(kb_encoder, "hub_offline", lambda: False)
    monkeypatch.setattr(kb_encoder, "_hub_unreachable", lambda: "")  # as with an internet connection
    calls: List[Dict[str, Any]] = []

    def load(name: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        if kwargs.get("local_files_only"):
            raise OSError("not cached")
        if name == "org/unreachable":
            raise OSError("We couldn't connect to 'https://huggingface.co'")
        return f"fetched {name}"

    assert kb_encoder.from_pretrained(load, "org/model", revision="main") == "fetched org/model"
    assert calls == [{"local_files_only": True, "revision": "main"}, {"revision": "main"}]
    with pytest.raises(OSError, match="E271") as info:
        kb_encoder.from_pretrained(load, "org/unreachable")
    assert "org/unreachable" in str(info.value)


@pytest.mark.hostile("first contact")
def test_with_the_hub_on_but_no_connection_the_error_comes_at_once(monkeypatch):
    import socket

    from spacy_el.kb import encoder as kb_encoder

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE")
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(kb_encoder, "hub_offline", lambda: False)

    def no_dns(*args: Any) -> None:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    fetched: List[str] = []

    def load(name: str, **kwargs: Any) -> str:
        if kwargs.get("local_files_only"):
            raise OSError("not cached")
        fetched.append(name)  # the hub client would retry for half a minute here
        return name

    with pytest.raises(OSError, match="E271"):
        kb_encoder.from_pretrained(load, "org/model")
    assert fetched == []


@pytest.mark.parametrize("name", ["./no_such_encoder", "/no/such/encoder", "a/b/c"])
def test_a_missing_folder_is_named(name):
    from spacy_el.ml.torch_io import load_encoder

    with pytest.raises(ValueError, match="E255") as info:
        load_encoder(name)
    assert name in str(info.value)


# -- position limits -------------------------------------------------------------------------------------------


def test_the_position_limit_counts_robertas_padding_offset(tmp_path):
    from spacy_el.ml.torch_io import check_position_limit, load_encoder

    encoder = load_encoder(save_tiny_encoder("roberta", tmp_path / "r", layers=1, max_positions=16)).eval()
    assert encoder.config.max_position_embeddings == 18
    check_position_limit(encoder, "test", "window", 16)
    with torch.no_grad():
        encoder(input_ids=torch.full((1, 16), 10))  # the limit is reachable
        with pytest.raises(IndexError):
            encoder(input_ids=torch.full((1, 17), 10))  # and exact: one more position is past the embeddings
    with pytest.raises(ValueError, match="E985") as info:
        check_position_limit(encoder, "test", "window", 17)
    assert "window" in str(info.value) and "16" in str(info.value)
    with pytest.raises(ValueError, match="E985"):
        check_position_limit(encoder, "test", "passage_length", 14, extra=3)  # specials on top of the setting


@pytest.mark.parametrize("kind", KINDS)
def test_each_family_has_its_positions(kind, encoders):
    from transformers import AutoConfig

    from spacy_el.kb.encoder import position_limit

    assert position_limit(AutoConfig.from_pretrained(encoders[kind]))[0] == 512


@pytest.mark.hostile("unclear errors")
def test_length_settings_over_the_positions_are_refused_where_the_encoder_is_built(tmp_path):
    from spacy_el.candidates.mention_encoder import MentionEncoder
    from spacy_el.kb.encoder import TextEncoder

    path = save_tiny_encoder("bert", tmp_path / "b", layers=1, max_positions=32)
    with pytest.raises(ValueError, match="E985"):
        MentionEncoder.from_base(path, max_length=33, entity_encoder={})
    MentionEncoder.from_base(path, max_length=32, entity_encoder={})
    with pytest.raises(ValueError, match="E272"):
        TextEncoder(path, max_length=33)
    TextEncoder(path, max_length=32)
    from thinc.api import Model

    from spacy_el.ml.ner_constrained_linker.model import build_ner_constrained_linker, build_torch_layer

    def model(max_length: int) -> Model:
        m = build_ner_constrained_linker(encoder=path, hidden_width=8, max_length=max_length, typed_entities=False,
                                         encoder_dtype="float32", dense_feature=False, dropout_masks="uniform")
        m.set_dim("nE", 8)
        m.set_dim("nT", 2)
        return m

    with pytest.raises(ValueError, match="E985"):
        build_torch_layer(model(33))
    build_torch_layer(model(32))


# -- the eager-attention swap ----------------------------------------------------------------------------------


def _inputs(tokenizer: Any) -> Dict[str, torch.Tensor]:
    batch = tokenizer(["Lord Byron wrote Don Juan in Italy.", "Ada Lovelace"], padding=True, return_tensors="pt")
    return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}


@pytest.mark.parametrize("kind", KINDS)
def test_uniform_masks_reach_every_attention_dropout_and_prediction_is_unchanged(kind, encoders, monkeypatch):
    from spacy_el.ml.dropout import UniformDropout, set_dropout_masks
    from spacy_el.ml.torch_io import load_encoder, load_fast_tokenizer

    encoder = load_encoder(encoders[kind]).eval()
    inputs = _inputs(load_fast_tokenizer(encoders[kind], "test"))
    state = {k: v.clone() for k, v in encoder.state_dict().items()}
    with torch.no_grad():
        before = encoder(**inputs).last_hidden_state
    set_dropout_masks(encoder, "uniform")
    assert all(type(m) is UniformDropout for m in encoder.modules() if isinstance(m, torch.nn.Dropout))
    assert all(torch.equal(encoder.state_dict()[k], v) for k, v in state.items())
    sdpa = torch.nn.functional.scaled_dot_product_attention
    calls: List[float] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("dropout_p", 0.0))
        return sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", counted)
    with torch.no_grad():
        assert torch.equal(encoder(**inputs).last_hidden_state, before)  # prediction: the attention as loaded
        encoder.train()
        encoder(**inputs)
    assert all(p == 0.0 for p in calls)  # no attention dropout left to torch's masks inside SDPA in training
    for module in encoder.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    with torch.no_grad():
        trained = encoder(**inputs).last_hidden_state
    keep = inputs["attention_mask"].bool()
    assert torch.allclose(trained[keep], before[keep], atol=1e-5)  # the eager forward computes the same
    set_dropout_masks(encoder, "bernoulli")
    assert not any(type(m).__name__.startswith("TrainingEager") for m in encoder.modules())


def test_the_roberta_class_pickles_by_name_and_an_attention_without_twin_is_left_alone(encoders, monkeypatch):
    import spacy_el.ml.eager_attention as eager_attention
    from spacy_el.ml.dropout import set_dropout_masks
    from spacy_el.ml.torch_io import load_encoder

    encoder = load_encoder(encoders["roberta"])
    set_dropout_masks(encoder, "uniform")
    name = type(encoder.encoder.layer[0].attention.self).__name__
    assert name == "TrainingEagerRobertaAttention"
    data = pickle.dumps(encoder)
    monkeypatch.delitem(vars(eager_attention), name)  # as in a new process
    assert type(pickle.loads(data).encoder.layer[0].attention.self).__name__ == name

    class OtherSdpaSelfAttention(torch.nn.Module):  # an SDPA attention without an eager parent
        pass

    assert eager_attention.set_training_eager_attention(OtherSdpaSelfAttention(), eager=True) == 0


# -- the frozen-layer cache ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_frozen_lower_layers_and_their_cache_give_the_whole_encoders_states(kind, encoders):
    from spacy_el.ml.joint_coref_linker.frozen_encoder import LowerLayerCache, frozen_parameters, split_encode
    from spacy_el.ml.torch_io import load_encoder, load_fast_tokenizer

    encoder = load_encoder(encoders[kind]).eval()
    inputs = _inputs(load_fast_tokenizer(encoders[kind], "test"))
    ids, mask = inputs["input_ids"].numpy(), inputs["attention_mask"].numpy()
    short = int(mask[1].sum())
    docs = [SimpleNamespace(input_ids=ids[:1], attention_mask=mask[:1]),
            SimpleNamespace(input_ids=ids[1:, :short], attention_mask=mask[1:, :short])]
    with torch.no_grad():
        whole = encoder(**inputs).last_hidden_state
    cache = LowerLayerCache()
    for n in (1, 2):
        for _ in range(2):  # computed, then from the cache
            with torch.no_grad():
                split = split_encode(encoder, docs, n, 4, "cpu", nullcontext, cache, 16.0, "float32")
            assert torch.allclose(split[0], whole[0], atol=1e-5)
            assert torch.allclose(split[1, :short], whole[1, :short], atol=1e-5)
    assert cache.hits == cache.misses == 4  # two documents, each computed once per n, then read
    names = [name for name, _ in frozen_parameters(encoder, 1)]
    assert ("encoder.rel_embeddings.weight" in names) == (kind == "deberta-v2")  # shared by every layer: frozen


def test_an_encoder_without_layers_is_refused_by_name():
    from spacy_el.ml.joint_coref_linker.frozen_encoder import split_encode

    with pytest.raises(ValueError, match="E917"):
        split_encode(torch.nn.Linear(2, 2), [], 1, 4, "cpu", nullcontext, None, 0.0, "float32")


@pytest.mark.hostile("unclear errors")
def test_entqa_lengths_over_the_positions_are_refused_where_the_encoder_is_built(tmp_path):
    """A passage with its topic words and special tokens (and, for the reader, the entity's text) must fit."""
    from spacy_el.ml.entqa.model import EntityRetrieverArguments, EntQAReaderArguments, build_entity_retriever
    from spacy_el.ml.entqa.model import build_entqa_reader, build_torch_layer

    path = save_tiny_encoder("bert", tmp_path / "b", layers=1, max_positions=32)
    settings = {"encoder": path, "topic": "first_token", "max_topic": 4, "encoder_dtype": "float32"}

    def retriever(passage_length: int) -> Any:
        args = {**EntityRetrieverArguments().__dict__, **settings, "passage_length": passage_length,
                "stride": min(16, passage_length)}
        model = build_entity_retriever(**{k: v for k, v in args.items() if k != "owner"})
        model.set_dim("nE", 32)
        return model

    def reader(max_passage_length: int) -> Any:
        args = {**EntQAReaderArguments().__dict__, **settings, "max_passage_length": max_passage_length,
                "max_entity_length": 8}
        model = build_entqa_reader(**{k: v for k, v in args.items() if k != "owner"})
        model.set_dim("nE", 32)
        return model

    with pytest.raises(ValueError, match="E985"):
        build_torch_layer(retriever(27))  # 27 + 4 topic words + 2 special tokens = 33 > 32
    build_torch_layer(retriever(26))
    with pytest.raises(ValueError, match="E985"):
        build_torch_layer(reader(18))  # 18 + 4 + 8 entity words + 3 special tokens = 33
    build_torch_layer(reader(17))

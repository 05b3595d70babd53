"""Every component with an encoder trains, saves, loads and predicts over a tiny random BERT, RoBERTa and DeBERTa-v2
(:mod:`tests.ml.tiny_encoders`): ner_constrained_linker (with the mention encoder over the same encoder as its dense
candidate generator), joint_coref_linker (its lower layer frozen and cached, its upper layer trained with the
eager attention), entity_retriever + entqa_reader, and the mention encoder alone. A loaded pipeline predicts
exactly what the trained one did. (ner_stack_lstm has no encoder of its own: its token vectors come from a spaCy
tok2vec, a transformer one through spacy-transformers.)"""
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
import spacy
import torch
from spacy.language import Language

from spacy_el.candidates.dense import mention_encoder_of
from spacy_el.kb.loaders import kb_from_disk

from ..conftest import linked_cluster_examples
from ..pipeline.conftest import _invented_kb_dir, _train, build_entqa, build_ner_constrained_linker, texts
from .tiny_encoders import KINDS, marker_token, save_tiny_encoder

TEXTS = texts(4)


@pytest.fixture(scope="module", autouse=True)
def hub_off_one_thread():
    """The hub is off (no test reaches it) and torch runs one thread (bit-stable outputs across save/load)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> Dict[str, str]:
    return {kind: save_tiny_encoder(kind, tmp_path_factory.mktemp(kind.replace("-", "_"))) for kind in KINDS}


def outputs(doc: Any) -> Tuple[Any, ...]:
    """What a pipeline wrote on a Doc: entities with their links, span groups with theirs."""
    ents = [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents]
    groups = {key: [(s.start, s.end, s.kb_id_) for s in group] for key, group in sorted(doc.spans.items())}
    return ents, groups


def predicts_the_same_after_loading(nlp: Language, tmp: Path) -> List[Any]:
    """Predict, save, load, predict again: the same outputs. Returns the outputs."""
    before = [outputs(doc) for doc in nlp.pipe(TEXTS)]
    nlp.to_disk(tmp / "saved")
    loaded = spacy.load(tmp / "saved")
    assert [outputs(doc) for doc in loaded.pipe(TEXTS)] == before
    return before


def encoder_class(nlp: Language, name: str) -> str:
    module = nlp.get_pipe(name).model.layers[0].shims[0]._model
    return type(getattr(module, "encoder", None) or module.transformer).__name__


FAMILY = {"bert": "BertModel", "roberta": "RobertaModel", "deberta-v2": "DebertaV2Model"}
DENSE = {"@misc": "spacy-el.DenseCandidates.v1", "top_k": 3}


@pytest.mark.parametrize("kind", KINDS)
def test_ner_constrained_linker_with_the_mention_encoder_as_its_candidate_generator(kind, encoders, tmp_path):
    nlp = build_ner_constrained_linker(encoders[kind], tmp_path, candidates=DENSE)
    assert encoder_class(nlp, "ner_constrained_linker") == FAMILY[kind]
    mention_encoder = mention_encoder_of(nlp.get_pipe("ner_constrained_linker").kb)
    assert type(mention_encoder.module.transformer).__name__ == FAMILY[kind]
    predicted = predicts_the_same_after_loading(nlp, tmp_path)
    assert any(ents for ents, _ in predicted)


@pytest.mark.parametrize("kind", KINDS)
def test_joint_coref_linker(kind, encoders, tmp_path):
    kb_dir = _invented_kb_dir(tmp_path, encoders[kind])
    nlp = spacy.blank("en")
    model = {"encoder": encoders[kind], "max_span_width": 3, "window": 16, "stride": 8, "ffnn": 16, "ffnn_depth": 1,
             "width_emb": 8, "distance_width": 8, "entity_proj": 8, "dropout": 0.1, "encoder_batch": 8,
             "encoder_dtype": "float32"}
    nlp.add_pipe("joint_coref_linker", config={"model": model, "frozen_encoder_layers": 1, "encoder_cache_mb": 8})
    examples = linked_cluster_examples(nlp)
    torch.manual_seed(0)
    nlp.get_pipe("joint_coref_linker").initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    module = nlp.get_pipe("joint_coref_linker").model.layers[0].shims[0]._model
    lower = [p.detach().clone() for p in module.encoder.embeddings.parameters()]
    upper = [p.detach().clone() for p in module.encoder.encoder.layer[1].parameters()]
    _train(nlp, examples, steps=2, learn_rate=0.005)
    assert type(module.encoder).__name__ == FAMILY[kind]
    # the frozen part did not move, the cache served the second step, the upper layer was trained
    assert all(torch.equal(a, b) for a, b in zip(lower, module.encoder.embeddings.parameters()))
    assert module.lower_cache.hits > 0
    assert not all(torch.equal(a, b) for a, b in zip(upper, module.encoder.encoder.layer[1].parameters()))
    predicts_the_same_after_loading(nlp, tmp_path)


@pytest.mark.parametrize("kind", ["bert", "roberta", "deberta-v2"])  # RoBERTa: one token type for both segments
def test_entity_retriever_and_entqa_reader(kind, encoders, tmp_path):
    nlp = build_entqa(encoders[kind], tmp_path, steps=2, marker_token=marker_token(kind))
    assert encoder_class(nlp, "entqa_reader") == FAMILY[kind]
    predicts_the_same_after_loading(nlp, tmp_path)


@pytest.mark.parametrize("kind", KINDS)
def test_the_mention_encoder_trains_saves_and_loads(kind, encoders, tmp_path):
    from spacy_el.candidates.mention_encoder import MentionEncoder

    nlp = spacy.blank("en")
    docs = [nlp(text) for text in TEXTS]
    mentions = [(doc, 0, 1) for doc in docs] + [(docs[1], 2, 4)]
    encoder = MentionEncoder.from_base(encoders[kind], dim=8, entity_encoder={}, window_tokens=6, max_length=24)
    assert type(encoder.module.transformer).__name__ == FAMILY[kind]
    before = encoder.encode(mentions)
    encoder.module.train()  # a few steps towards fixed random targets
    targets = torch.nn.functional.normalize(torch.randn(len(mentions), 8, generator=torch.Generator().manual_seed(0)), dim=-1)
    optimizer = torch.optim.Adam(encoder.module.parameters(), lr=1e-2)
    for _ in range(3):
        for indices, batch in encoder.batches(mentions):
            loss = -(encoder.module(**vars(batch)) * targets[indices]).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    trained = encoder.encode(mentions)
    assert not np.allclose(trained, before)
    encoder.save(tmp_path / "mention_encoder")
    np.testing.assert_allclose(MentionEncoder.load(tmp_path / "mention_encoder").encode(mentions), trained, atol=1e-6)
    np.testing.assert_allclose(MentionEncoder.from_bytes(encoder.to_bytes()).encode(mentions), trained, atol=1e-6)

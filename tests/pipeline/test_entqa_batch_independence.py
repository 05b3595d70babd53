"""EntQA's output does not depend on the batch a document comes in (issue 71, #18).

With bfloat16 autocast, an encoder row padded to another row's length gets states that differ by up to 1e-3
from the same row unpadded; the retriever's scores then moved and a span was lost between ``nlp.pipe`` with
``batch_size=1`` and with 64. A 1-layer BERT of width 128 (random, seed 0) with the packaged tokenizer shows it
in a second; its heads untrained and γ = 0, the reader writes many spans, whose scores are compared exactly.
"""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("faiss")

import spacy  # noqa: E402

from spacy_el.kb.loaders import kb_from_disk  # noqa: E402

from .test_entqa import build_kb, examples  # noqa: E402

WIDTH = 128  # wide enough for bfloat16's rounding to show in the outputs (the shared tiny encoder's 32 hides it)
TEXTS = [
    "Ada Mercer painted the harbour of Orvik last spring .",
    "Orvik .",
    "Tamsin Hale won the sprint in Velda on Sunday . Later that week Ada Mercer painted the harbour of Orvik , "
    "and Lumen played a concert there .",
    "Lumen played a concert in Mercer yesterday .",
    "Velda and Lumen and Mercer and Orvik , " * 3,
    "Ada Mercer",
]


@pytest.fixture(scope="module")
def wide_encoder(tmp_path_factory) -> str:
    from transformers import AutoTokenizer, BertConfig, BertModel

    from spacy_el.kb.encoder import default_model_path

    path = tmp_path_factory.mktemp("bert128")
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=WIDTH, num_hidden_layers=1, num_attention_heads=4,
                        intermediate_size=2 * WIDTH, max_position_embeddings=512)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def bfloat16_pipeline(encoder: str, tmp_path, reader_mode: str):
    kb_dir = tmp_path / "kb"
    build_kb(dim=WIDTH).to_disk(kb_dir)
    model = {"encoder": encoder, "encoder_dtype": "bfloat16", "encoder_batch": 16}
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_retriever", config={"model": {**model, "passage_length": 16, "stride": 8}, "entities_per_passage": 4})
    nlp.add_pipe("entqa_reader", config={"model": model, "entities_per_passage": 4, "min_span_score": 0.0, "reader_mode": reader_mode,
                                         "window_length": 24, "window_stride": 12, "passages_per_batch": 3})
    egs = examples(nlp)
    torch.manual_seed(0)
    for name in ("entity_retriever", "entqa_reader"):
        nlp.get_pipe(name).initialize(lambda: egs, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    return nlp


def outputs(doc):
    spans = [(s.start, s.end, s.kb_id_, s._.link_score, s._.candidate_scores) for s in doc.spans["entqa"]]
    return doc._.entqa_passages, spans, [(e.start, e.end, e.kb_id_) for e in doc.ents]


@pytest.mark.hostile("silent wrong results")
@pytest.mark.parametrize("reader_mode", ["per_candidate", "joint"])
def test_bfloat16_outputs_do_not_depend_on_the_batch(wide_encoder, tmp_path, reader_mode, one_torch_thread):
    nlp = bfloat16_pipeline(wide_encoder, tmp_path, reader_mode)
    alone = [outputs(doc) for doc in nlp.pipe(TEXTS, batch_size=1)]
    together = [outputs(doc) for doc in nlp.pipe(TEXTS, batch_size=64)]
    assert sum(len(spans) for _, spans, _ in alone) > 20, "the reader must write spans for the comparison to mean something"
    for text, one, many in zip(TEXTS, alone, together):
        assert one == many, text
    # in another order and with other neighbours, still the same
    reordered = [outputs(doc) for doc in nlp.pipe(TEXTS[::-1], batch_size=4)][::-1]
    assert reordered == alone


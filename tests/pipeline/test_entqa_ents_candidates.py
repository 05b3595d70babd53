"""entity_retriever's ents_candidates switch (issue 29): the candidates of upstream entities join the lists of the
passages that hold them, after the dense ones of equal rank, cut at entities_per_passage; off by default and without entities."""
import pytest

pytest.importorskip("torch")
pytest.importorskip("faiss")

import numpy as np  # noqa: E402
import spacy  # noqa: E402
from spacy.tokens import Span  # noqa: E402

from spacy_el.algorithms.rank_fusion import round_robin  # noqa: E402
from spacy_el.kb.loaders import kb_from_disk  # noqa: E402
from spacy_el.ml.entqa.inputs import question_sides  # noqa: E402

from .test_entqa import ENTITIES, TRAIN, build_kb  # noqa: E402

TEXT = "Tamsin Hale won the sprint in Velda on Sunday ."


def test_round_robin_interleaves_ranks_and_skips_repeats():
    assert round_robin([["a", "b", "c"], ["x", "a"], ["y"]]) == ["a", "x", "y", "b", "c"]
    assert round_robin([["a", "b", "c"], ["x", "a"]], limit=3) == ["a", "x", "b"]
    assert round_robin([[], ["x"]]) == ["x"]
    assert round_robin([]) == []


def retriever_nlp(tiny_encoder, tmp_path, entities_per_passage, ents_candidates):
    build_kb().to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    config = {"model": {"encoder": tiny_encoder, "passage_length": 16, "stride": 8, "encoder_batch": 16,
                        "encoder_dtype": "float32"}, "entities_per_passage": entities_per_passage, "ents_candidates": ents_candidates}
    retriever = nlp.add_pipe("entity_retriever", config=config)
    retriever.initialize(lambda: [], nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))
    return nlp, retriever


def with_ents(nlp, names):
    doc = nlp.make_doc(TEXT)
    doc.ents = [doc.char_span(TEXT.index(name), TEXT.index(name) + len(name), label="ENT") for name in names]
    return doc


def test_entity_candidates_join_their_passages_lists(tiny_encoder, tmp_path):
    alias = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 5, "fuzzy": False}
    nlp, retriever = retriever_nlp(tiny_encoder, tmp_path, entities_per_passage=2, ents_candidates=alias)
    doc = with_ents(nlp, ["Tamsin Hale", "Velda"])
    merged = retriever(doc)._.entqa_passages
    dense = retriever.predict([with_ents(nlp, [])])[0]  # no entities: the retriever's own lists
    assert [p[:2] for p in merged] == [p[:2] for p in dense]
    (start, end, kb_ids, scores), (_, _, dense_ids, dense_scores) = merged[0], dense[0]
    assert start == 0 and end >= TEXT.index("Velda") + len("Velda")  # one passage holds both entities
    # round robin of [dense top 1, Tamsin_Hale, Velda] cut at entities_per_passage = 2, the dense first
    assert kb_ids == round_robin([dense_ids, ["Tamsin_Hale"], ["Velda"]], limit=2)
    assert kb_ids[0] == dense_ids[0] and scores[0] == dense_scores[0]
    # a merged entity's score is the passage's inner product with its vector, as the index would give it
    vector = retriever._encode(question_sides(*retriever.passages(doc)))[0]
    for kb_id, score in zip(kb_ids, scores):
        row = retriever.kb.entities.row_of(kb_id)
        assert score == pytest.approx(float(np.dot(vector, retriever.kb.entities.vectors[row])), abs=1e-4)


def test_off_by_default_and_without_entities(tiny_encoder, tmp_path):
    nlp, retriever = retriever_nlp(tiny_encoder, tmp_path, entities_per_passage=len(ENTITIES), ents_candidates=None)
    assert nlp.config["components"]["entity_retriever"]["ents_candidates"] is None
    doc = with_ents(nlp, ["Velda"])
    assert retriever(doc)._.entqa_passages == retriever.predict([with_ents(nlp, [])])[0]


def test_only_the_passages_holding_an_entity_get_its_candidates(tiny_encoder, tmp_path):
    alias = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 5, "fuzzy": False}
    nlp, retriever = retriever_nlp(tiny_encoder, tmp_path, entities_per_passage=2, ents_candidates=alias)
    text = TRAIN[3][0]  # several passages of 16 wordpieces
    doc = nlp.make_doc(text)
    start = text.rindex("Lumen")
    doc.ents = [doc.char_span(start, start + len("Lumen"), label="ENT")]
    merged = retriever(doc)._.entqa_passages
    dense = retriever.predict([nlp.make_doc(text)])[0]
    holding = [p[0] <= start and start + len("Lumen") <= p[1] for p in merged]
    assert 0 < sum(holding) < len(merged)
    for inside, (_, _, kb_ids, _), (_, _, dense_ids, _) in zip(holding, merged, dense):
        assert kb_ids == (round_robin([dense_ids, ["Lumen_(band)"]], limit=2) if inside else dense_ids)


def test_an_entity_without_candidates_adds_nothing(tiny_encoder, tmp_path):
    alias = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 5, "fuzzy": False}
    nlp, retriever = retriever_nlp(tiny_encoder, tmp_path, entities_per_passage=1, ents_candidates=alias)
    doc = nlp.make_doc(TEXT)
    doc.ents = [Span(doc, 2, 3, label="ENT")]  # "won": no alias
    assert retriever(doc)._.entqa_passages == retriever.predict([with_ents(nlp, [])])[0]


def test_the_switch_is_saved_with_the_pipeline(tiny_encoder, tmp_path):
    alias = {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 5, "fuzzy": False}
    nlp, retriever = retriever_nlp(tiny_encoder, tmp_path, entities_per_passage=2, ents_candidates=alias)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    doc = with_ents(nlp, ["Tamsin Hale", "Velda"])
    assert loaded(with_ents(loaded, ["Tamsin Hale", "Velda"]))._.entqa_passages == retriever(doc)._.entqa_passages

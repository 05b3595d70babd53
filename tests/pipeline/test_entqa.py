"""entity_retriever + entqa_reader (EntQA, issue 5): construction, training to gold, serialisation, bad inputs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("faiss")

import spacy  # noqa: E402
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc, Span  # noqa: E402
from spacy.training import Example  # noqa: E402

from spacy_el.kb import KBBuilder  # noqa: E402
from spacy_el.kb.dense_index import DenseIndex  # noqa: E402
from spacy_el.kb.loaders import kb_from_disk  # noqa: E402

DIM = 32  # the tiny encoder's width
ENTITIES = [
    ("Ada_Mercer", "Ada Mercer", "Invented painter"),
    ("Mercer_(town)", "Mercer", "Invented river town"),
    ("Velda", "Velda", "Invented country"),
    ("Lumen_(band)", "Lumen", "Invented rock band"),
    ("Orvik", "Orvik", "Invented harbour city"),
    ("Tamsin_Hale", "Tamsin Hale", "Invented sprinter"),
]
# (text, [(mention, kb_id)]): every mention occurs once in its text.
TRAIN = [
    ("Ada Mercer painted the harbour of Orvik last spring .", [("Ada Mercer", "Ada_Mercer"), ("Orvik", "Orvik")]),
    ("Tamsin Hale won the sprint in Velda on Sunday .", [("Tamsin Hale", "Tamsin_Hale"), ("Velda", "Velda")]),
    ("Lumen played a concert in Mercer yesterday .", [("Lumen", "Lumen_(band)"), ("Mercer", "Mercer_(town)")]),
    # longer than one passage (16 wordpieces, stride 8, in these tests): several overlapping passages
    ("Tamsin Hale won the sprint in Velda on Sunday . Later that week Ada Mercer painted the harbour of Orvik , "
     "and Lumen played a concert there .",
     [("Tamsin Hale", "Tamsin_Hale"), ("Velda", "Velda"), ("Ada Mercer", "Ada_Mercer"), ("Orvik", "Orvik"), ("Lumen", "Lumen_(band)")]),
]
TINY_MODEL = {"encoder_batch": 16, "encoder_dtype": "float32"}
RETRIEVER_CFG = {"entities_per_passage": 4, "negatives": 4, "hard_negative_ratio": 0.5, "max_train_passages": 0}
READER_CFG = {"entities_per_passage": 4, "min_span_score": 0.2, "train_candidates": 4, "max_train_passages": 0}


def build_kb(dim: int = DIM, with_index: bool = True, extra=()):
    rng = np.random.default_rng(0)
    builder = KBBuilder()
    entities = list(ENTITIES) + list(extra)
    vectors = rng.normal(size=(len(entities), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for (entity_id, name, description), vector in zip(entities, vectors):
        builder.add_entity(entity_id, name, description, ["ENT"], 1.0, vector=vector.tolist())
        builder.add_alias(name, [entity_id], [1.0])
    kb = builder.build()
    if with_index:
        index = DenseIndex(dim, "Flat")
        index.add(vectors)
        kb.set_dense_index(index)
    return kb


def reference(nlp: Language, text: str, links) -> Doc:
    doc = nlp.make_doc(text)
    spans = []
    for mention, kb_id in links:
        start = text.index(mention)
        spans.append(doc.char_span(start, start + len(mention), label="ENT", kb_id=kb_id))
    doc.ents = spans
    return doc


def examples(nlp: Language):
    return [Example(nlp.make_doc(text), reference(nlp, text, links)) for text, links in TRAIN]


def make_nlp(tiny_encoder: str, tmp_path, retriever=None, reader=None, kb=None) -> Language:
    kb_dir = tmp_path / "kb"
    (kb or build_kb()).to_disk(kb_dir)
    nlp = spacy.blank("en")
    retriever_model = {"encoder": tiny_encoder, "passage_length": 16, "stride": 8, **TINY_MODEL}
    nlp.add_pipe("entity_retriever", config={"model": retriever_model, **RETRIEVER_CFG, **(retriever or {})})
    nlp.add_pipe("entqa_reader", config={"model": {"encoder": tiny_encoder, **TINY_MODEL}, **READER_CFG, **(reader or {})})
    egs = examples(nlp)
    for name in ("entity_retriever", "entqa_reader"):
        nlp.get_pipe(name).initialize(lambda: egs, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    return nlp


def links(doc: Doc):
    return sorted((e.text, e.kb_id_) for e in doc.ents)


def gold_links():
    return [sorted(links_) for _, links_ in TRAIN]


@pytest.fixture(scope="module")
def trained(tiny_encoder, tmp_path_factory):
    """Retriever and reader trained together until both predict the training gold (annotating retriever)."""
    torch.manual_seed(0)
    nlp = make_nlp(tiny_encoder, tmp_path_factory.mktemp("entqa"))
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.003
    egs = examples(nlp)
    history = []
    for step in range(300):
        losses = {}
        nlp.update(egs, sgd=optimizer, losses=losses, annotates=["entity_retriever"])
        history.append(losses)
        if step >= 30 and step % 10 == 0 and [links(nlp(t)) for t, _ in TRAIN] == gold_links():
            break
    return nlp, history


# -- construction ------------------------------------------------------------------------------


def test_add_pipe_defaults():
    nlp = spacy.blank("en")
    retriever = nlp.add_pipe("entity_retriever")
    reader = nlp.add_pipe("entqa_reader")
    assert retriever.cfg["entities_per_passage"] == 100 and retriever.model.attrs["passage_length"] == 32
    assert retriever.model.attrs["stride"] == 16 and retriever.model.attrs["topic"] == "first_token"
    assert reader.cfg["entities_per_passage"] == 20 and reader.cfg["spans_key"] == "entqa" and reader.cfg["write_ents"]


@pytest.mark.parametrize(
    "factory, config, option",
    [
        ("entity_retriever", {"entities_per_passage": 0}, "entities_per_passage"),
        ("entity_retriever", {"hard_negative_ratio": 1.5}, "hard_negative_ratio"),
        ("entity_retriever", {"model": {"stride": 40}}, "stride"),
        ("entity_retriever", {"model": {"topic": "title"}}, "topic"),
        ("entqa_reader", {"min_span_score": -0.1}, "min_span_score"),
        ("entqa_reader", {"min_span_score": 1.5}, "min_span_score"),
        ("entqa_reader", {"spans_per_entity": 0}, "spans_per_entity"),
        ("entqa_reader", {"model": {"span_reduction": "max"}}, "span_reduction"),
    ],
)
def test_bad_config_values_name_the_option(factory, config, option):
    with pytest.raises(ValueError, match=option):
        spacy.blank("en").add_pipe(factory, config=config)


def test_retriever_needs_a_dense_index(tiny_encoder, tmp_path):
    build_kb(with_index=False).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    retriever = nlp.add_pipe("entity_retriever", config={"model": {"encoder": tiny_encoder}})
    with pytest.raises(ValueError, match="E829"):
        retriever.initialize(lambda: examples(nlp), kb_loader=kb_from_disk(tmp_path / "kb"))


def test_retriever_refuses_vectors_of_another_width(tiny_encoder, tmp_path):
    build_kb(dim=8).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    retriever = nlp.add_pipe("entity_retriever", config={"model": {"encoder": tiny_encoder}})
    with pytest.raises(ValueError, match="E916"):
        retriever.initialize(lambda: examples(nlp), kb_loader=kb_from_disk(tmp_path / "kb"))


def test_empty_kb_is_refused(tiny_encoder):
    nlp = spacy.blank("en")
    for name in ("entity_retriever", "entqa_reader"):
        pipe = nlp.add_pipe(name, config={"model": {"encoder": tiny_encoder}})
        with pytest.raises(ValueError, match="E803"):
            pipe.initialize(lambda: examples(nlp))


# -- training and prediction -------------------------------------------------------------------


def test_training_learns_to_predict_gold(trained):
    nlp, history = trained
    assert history[-1]["entity_retriever"] < history[0]["entity_retriever"]
    assert history[-1]["entqa_reader"] < history[0]["entqa_reader"]
    assert [links(nlp(text)) for text, _ in TRAIN] == gold_links()


def test_outputs_passages_spans_and_scores(trained):
    nlp, _ = trained
    doc = nlp(TRAIN[0][0])
    passages = doc._.entqa_passages
    assert passages and all(len(p[2]) == len(p[3]) <= 4 for p in passages)
    assert all(p[3] == sorted(p[3], reverse=True) for p in passages)
    assert {(s.text, s.kb_id_) for s in doc.spans["entqa"]} >= set(links(doc))
    for ent in doc.ents:
        assert 0.2 < ent._.link_score <= 1.0
        assert ent._.candidate_scores[0] == [ent.kb_id_, ent._.link_score]


def test_retriever_score_reports_recall(trained):
    nlp, _ = trained
    egs = [Example(nlp(eg.reference.text), eg.reference) for eg in examples(nlp)]
    scores = nlp.get_pipe("entity_retriever").score(egs)
    assert scores["retriever_recall_at_4"] == 1.0
    assert nlp.get_pipe("entqa_reader").score(egs)["el_micro_f"] == 1.0


def test_threshold_edges(trained):
    nlp, _ = trained
    reader = nlp.get_pipe("entqa_reader")
    text = TRAIN[0][0]
    try:
        reader.configure(min_span_score=1.0)
        assert nlp(text).ents == ()
        reader.configure(min_span_score=0.0)
        everything = nlp(text)
        assert len(everything.spans["entqa"]) >= len(TRAIN[0][1])
    finally:
        reader.configure(min_span_score=READER_CFG["min_span_score"])


def test_documents_longer_than_one_passage(trained):
    nlp, _ = trained
    text, gold = TRAIN[-1]
    doc = nlp(text)
    passages = doc._.entqa_passages
    assert len(passages) >= 3 and passages[0][0] == 0 and passages[-1][1] == len(text)
    assert all(b[0] < a[1] for a, b in zip(passages, passages[1:])), "consecutive passages overlap"
    assert links(doc) == sorted(gold)
    # A mention seen in two passages is one prediction (merged), not two.
    assert len({(s.start, s.end, s.kb_id_) for s in doc.spans["entqa"]}) == len(doc.spans["entqa"])


def test_a_very_long_document_is_read_in_chunks(trained):
    nlp, _ = trained
    text = " ".join([TRAIN[0][0]] * 400)  # ~4,000 words, ~600 passages of 16 wordpieces
    doc = nlp(text)
    assert len(doc._.entqa_passages) > 500 and doc._.entqa_passages[-1][1] == len(text)
    assert all(0 <= s.start < s.end <= len(doc) for s in doc.spans["entqa"])
    assert len(doc.ents) > 0 and all(a.end <= b.start for a, b in zip(doc.ents, doc.ents[1:]))


def test_empty_and_whitespace_docs(trained):
    nlp, _ = trained
    for text in ("", "   ", "\n"):
        doc = nlp(text)
        assert doc._.entqa_passages == [] and doc.ents == () and list(doc.spans["entqa"]) == []


def test_reader_without_retriever_output_says_what_to_do(trained):
    nlp, _ = trained
    with pytest.raises(ValueError, match="E817"):
        nlp.get_pipe("entqa_reader")(nlp.make_doc("Ada Mercer painted ."))


def test_unknown_retrieved_ids_are_skipped(trained):
    nlp, _ = trained
    doc = nlp.make_doc(TRAIN[0][0])
    doc._.entqa_passages = [[0, len(doc.text), ["Not_in_the_KB", "Ada_Mercer"], [0.9, 0.5]]]
    doc = nlp.get_pipe("entqa_reader")(doc)
    assert all(s.kb_id_ != "Not_in_the_KB" for s in doc.spans["entqa"])


def test_passage_outside_the_text_is_refused(trained):
    nlp, _ = trained
    doc = nlp.make_doc("Ada Mercer painted .")
    doc._.entqa_passages = [[0, 500, ["Ada_Mercer"], [0.9]]]
    with pytest.raises(ValueError, match="E818"):
        nlp.get_pipe("entqa_reader")(doc)


def test_existing_entities_are_kept_unless_overlapped(trained):
    nlp, _ = trained
    text = TRAIN[0][0]
    doc = nlp.make_doc(text)
    doc.ents = [Span(doc, 4, 5, "MISC"), Span(doc, 0, 2, "PER")]  # "harbour" and "Ada Mercer"
    for name, pipe in nlp.pipeline:
        doc = pipe(doc)
    labels = {(e.text, e.label_, e.kb_id_) for e in doc.ents}
    assert ("harbour", "MISC", "") in labels and ("Ada Mercer", "PER", "Ada_Mercer") in labels


# -- serialisation -----------------------------------------------------------------------------



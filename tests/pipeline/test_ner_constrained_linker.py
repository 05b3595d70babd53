"""ner_constrained_linker: the standard component tests with a tiny BERT and an invented toy KB."""
import numpy as np
import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.kb import ElKnowledgeBase, KBBuilder
from spacy_el.kb.loaders import kb_from_disk

from ..conftest import build_invented_kb

DIM = 8


def build_kb(with_vectors: bool = True) -> ElKnowledgeBase:
    return build_invented_kb(with_vectors, dim=DIM)


TRAIN = [
    ("Mercer painted the harbour at dawn .", [(0, 1, "PER", "Ada_Mercer")]),
    ("Shares of Mercer fell after the storm .", [(2, 3, "ORG", "Mercer_Corp")]),
    ("We drove to Mercer along the river .", [(3, 4, "LOC", "Mercer_(town)")]),
    ("Lumen played three encores in Velda .", [(0, 1, "ORG", "Lumen_(band)"), (5, 6, "LOC", "Velda")]),
    ("The lamp gives 800 Lumen of light .", [(4, 5, "MISC", "Lumen_(unit)")]),
]


def make_examples(nlp: Language):
    examples = []
    for text, ents in TRAIN:
        reference = Doc(nlp.vocab, words=text.split())
        reference.ents = [Span(reference, s, e, label, kb_id=kb_id) for s, e, label, kb_id in ents]
        examples.append(Example(Doc(nlp.vocab, words=text.split()), reference))
    return examples


def with_gold_mentions(nlp: Language, text: str, ents) -> Doc:
    doc = Doc(nlp.vocab, words=text.split())
    doc.ents = [Span(doc, s, e, label) for s, e, label, _ in ents]
    return doc


def make_nlp(tiny_encoder: str, tmp_path, **cfg) -> Language:
    kb_dir = tmp_path / "kb"
    if not kb_dir.exists():
        build_kb().to_disk(kb_dir)
    nlp = spacy.blank("en")
    model = {"encoder": tiny_encoder, "hidden_width": 16, "max_length": 24, "encoder_dtype": "float32", **cfg.pop("model", {})}
    nlp.add_pipe("ner_constrained_linker", config={"model": model, **cfg})
    return nlp, kb_dir


def initialize(nlp: Language, kb_dir) -> None:
    examples = make_examples(nlp)
    nlp.get_pipe("ner_constrained_linker").initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))


def links(docs):
    return [[(e.start, e.end, e.kb_id_) for e in doc.ents] for doc in docs]


def gold_docs(nlp):
    return [with_gold_mentions(nlp, text, ents) for text, ents in TRAIN]


def train(nlp: Language, steps: int = 60):
    examples = make_examples(nlp)
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.01
    losses = {}
    for _ in range(steps):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
    return losses


@pytest.fixture(scope="module")
def trained(tiny_encoder, tmp_path_factory):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path_factory.mktemp("ner4el"), n_random_negatives=2)
    initialize(nlp, kb_dir)
    losses = train(nlp)
    return nlp, losses


def test_add_pipe_and_config_defaults(tiny_encoder, tmp_path):
    nlp, _ = make_nlp(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("ner_constrained_linker")
    assert pipe.cfg["candidates_per_mention"] == 30 and pipe.cfg["decoding"] == "none"
    assert pipe.inventory.labels == ["PER", "LOC", "ORG", "MISC"]


@pytest.mark.parametrize(
    "bad", [{"decoding": "strict"}, {"mention_type_source": "gold"}, {"candidates_per_mention": 0}, {"type_inventory": "tiny"}, {"type_smoothing": 0.0}]
)
def test_bad_config_is_refused(tiny_encoder, tmp_path, bad):
    with pytest.raises(ValueError, match=r"\[spacy_el E(021|901)\]"):
        make_nlp(tiny_encoder, tmp_path, **bad)


def test_initialize_types_every_entity_in_the_kb(trained):
    nlp, _ = trained
    kb = nlp.get_pipe("ner_constrained_linker").kb
    probs = kb.get_type_probs(["PER", "LOC", "ORG", "MISC"])
    assert probs.shape == (kb.n_entities, 4)
    # The unit is typed MISC by its training mention (its KB topic also maps to MISC).
    assert int(np.argmax(probs[kb.entities.row_of("Lumen_(unit)")])) == 3


def test_overfits_to_gold(trained):
    nlp, losses = trained
    assert losses["ner_constrained_linker"] < 0.2
    docs = [nlp(doc) for doc in gold_docs(nlp)]
    expected = [[(s, e, kb_id) for s, e, _, kb_id in ents] for _, ents in TRAIN]
    assert links(docs) == expected
    # Contextual choice, not the prior: the prior's top for "Mercer" is the town.
    assert docs[0].ents[0].kb_id_ == "Ada_Mercer"
    assert docs[0].ents[0]._.candidate_scores[0][0] == "Ada_Mercer"
    assert 0.0 < docs[0].ents[0]._.link_score <= 1.0


def test_docs_without_mentions_empty_and_whitespace(trained):
    nlp, _ = trained
    for text in ["", "   ", "Nothing to link here ."]:
        doc = nlp(nlp.make_doc(text))
        assert list(doc.ents) == []


def test_unknown_mention_is_nil_with_a_reason(trained):
    nlp, _ = trained
    doc = with_gold_mentions(nlp, "Zqxv met Mercer .", [(0, 1, "PER", None), (2, 3, "PER", None)])
    doc = nlp(doc)
    assert doc.ents[0].kb_id_ == "NIL" and doc.ents[0]._.nil_reason == "no_candidates"
    assert doc.ents[1].kb_id_ != "NIL" and doc.ents[1]._.nil_reason is None


def test_hard_constraint_filters_everything_gives_nil_with_reason(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(decoding="hard")
    try:
        # "Velda" has one candidate, a LOC: a PER mention of it has no type-compatible candidate.
        doc = nlp(with_gold_mentions(nlp, "Velda waved .", [(0, 1, "PER", None)]))
        assert doc.ents[0].kb_id_ == "NIL" and doc.ents[0]._.nil_reason == "type_constraint"
        doc = nlp(with_gold_mentions(nlp, "Velda waved .", [(0, 1, "LOC", None)]))
        assert doc.ents[0].kb_id_ == "Velda"
    finally:
        pipe.configure(decoding="none")


def test_soft_constraint_and_head_typing_keep_links_valid(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(decoding="soft", mention_type_source="head")
    try:
        docs = [nlp(doc) for doc in gold_docs(nlp)]
        assert all(e.kb_id_ in pipe.kb for d in docs for e in d.ents)
    finally:
        pipe.configure(decoding="none", mention_type_source="label")


def test_threshold_writes_nil_below_it(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(min_link_prob=1.01)
    try:
        doc = nlp(gold_docs(nlp)[0])
        assert doc.ents[0].kb_id_ == "NIL" and doc.ents[0]._.nil_reason == "below_threshold"
    finally:
        pipe.configure(min_link_prob=None)


def test_long_document_longer_than_a_window(trained):
    nlp, _ = trained
    words = ("filler " * 400).split() + ["Mercer", "painted", "."]
    doc = Doc(nlp.vocab, words=words)
    doc.ents = [Span(doc, 400, 401, "PER")]
    doc = nlp(doc)
    assert doc.ents[0].kb_id_ in {"Ada_Mercer", "Mercer_(town)", "Mercer_Corp"}


def test_span_group_source_leaves_ents_alone(tiny_encoder, tmp_path, trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(mentions_key="mentions")
    try:
        doc = Doc(nlp.vocab, words="Lumen played in Velda .".split())
        doc.spans["mentions"] = [Span(doc, 0, 1, "ORG"), Span(doc, 3, 4, "LOC"), Span(doc, 0, 4, "MISC")]
        doc = nlp(doc)
        assert list(doc.ents) == []
        assert [s.kb_id_ for s in doc.spans["mentions"]][:2] == ["Lumen_(band)", "Velda"]
    finally:
        pipe.configure(mentions_key=None)


def test_empty_kb_at_inference_links_nothing(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    kb = pipe.kb
    pipe.kb = ElKnowledgeBase(nlp.vocab)
    pipe._selector = None
    try:
        with pytest.warns(UserWarning, match="W802"):
            doc = nlp(gold_docs(nlp)[0])
        assert doc.ents[0].kb_id_ == "NIL" and doc.ents[0]._.nil_reason == "no_candidates"
    finally:
        pipe.kb = kb
        pipe._selector = None


def test_after_spacy_ner_in_an_existing_pipeline(trained):
    """A pipeline with its own trained spaCy `ner`, plus this component sourced from another pipeline."""
    nlp, _ = trained
    pipeline = spacy.blank("en")
    pipeline.add_pipe("ner")
    examples = make_examples(pipeline)
    optimizer = pipeline.initialize(lambda: examples)
    for _ in range(40):
        pipeline.update(examples, sgd=optimizer, drop=0.0)
    pipeline.add_pipe("ner_constrained_linker", source=nlp)
    doc = pipeline("Lumen played three encores in Velda .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Lumen", "ORG"), ("Velda", "LOC")]
    assert [e.kb_id_ for e in doc.ents] == ["Lumen_(band)", "Velda"]


@pytest.mark.parametrize("dtype", ["bfloat16", "auto"])
def test_bfloat16_inference_gives_the_same_links(trained, dtype):
    nlp, _ = trained
    model = nlp.get_pipe("ner_constrained_linker").model
    expected = links([nlp(doc) for doc in gold_docs(nlp)])
    model.attrs["encoder_dtype"] = dtype
    try:
        assert links([nlp(doc) for doc in gold_docs(nlp)]) == expected
    finally:
        model.attrs["encoder_dtype"] = "float32"


def test_bad_encoder_dtype_is_refused(tiny_encoder, tmp_path):
    with pytest.raises(ValueError, match="encoder_dtype"):
        make_nlp(tiny_encoder, tmp_path, model={"encoder": tiny_encoder, "encoder_dtype": "int4"})


def test_kb_with_other_vector_width_is_refused(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("ner_constrained_linker")
    kb = pipe.kb
    other = build_kb()
    other.set_vectors(np.ones((other.n_entities, DIM + 1), dtype=np.float32))
    pipe.kb, pipe._selector = other, None
    try:
        with pytest.raises(ValueError, match="E806"):
            nlp(gold_docs(nlp)[0])
    finally:
        pipe.kb, pipe._selector = kb, None


def test_training_candidates_add_the_gold_and_same_type_negatives():
    from spacy_el.candidates import AliasCandidates
    from spacy_el.candidates.typed_selection import CandidateSelector

    kb = KBBuilder()
    rng = np.random.default_rng(1)
    for i in range(40):
        kb.add_entity(f"P{i}", f"P{i}", "", ["PER" if i % 2 else "LOC"], 1.0, vector=rng.normal(size=4).tolist())
    kb.add_alias("Pat", ["P1", "P2"], [0.6, 0.4])
    kb = kb.build()
    probs = np.zeros((40, 4), dtype=np.float32)
    probs[np.arange(40), np.where(np.arange(40) % 2, 0, 1)] = 1.0  # odd rows PER, even rows LOC
    selector = CandidateSelector(kb, probs, top_k=1, type_aware=False, min_type_prob=0.2)
    gold = kb.entities.row_of("P3")
    [found] = AliasCandidates(top_k=None).lookup_texts(kb, ["Pat"])
    cands = selector.training_set(found, 0, gold, np.random.default_rng(0), n_random=0, n_same_type=5)
    ids = [kb.entities.ids[int(r)] for r in cands.rows]
    assert ids[0] == "P1" and ids[cands.gold] == "P3"  # top-1 alias candidate, then the gold added
    negatives = cands.rows[2:]
    assert len(negatives) == 5 and all(int(r) % 2 == 1 and int(r) != gold for r in negatives)
    assert cands.from_alias.tolist() == [1.0] + [0.0] * 6

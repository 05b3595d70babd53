"""The KB inside spaCy: Candidate objects, InMemoryLookupKB conversion, spaCy's entity_linker."""
import pytest
import spacy
from spacy.kb import Candidate, InMemoryLookupKB
from spacy.training import Example
from spacy.util import registry

from spacy_el.kb.interop import from_in_memory_lookup_kb, to_in_memory_lookup_kb

from ..conftest import build_toy_kb


def test_get_candidates_returns_spacy_candidates(toy_kb_with_vectors):
    nlp = spacy.blank("en")
    doc = nlp("I love Paris")
    candidates = toy_kb_with_vectors.get_candidates(doc[2:3])
    assert all(isinstance(c, Candidate) for c in candidates)
    assert [c.entity_ for c in candidates] == ["Paris", "Paris_Hilton", "Paris,_Texas"]
    assert candidates[0].prior_prob == pytest.approx(0.8)
    assert candidates[0].alias_ == "Paris"
    assert list(candidates[0].entity_vector) == [1.0, 0.0, 0.0, 0.0]
    batch = toy_kb_with_vectors.get_candidates_batch([doc[2:3], doc[0:1]])
    assert [len(c) for c in batch] == [3, 0]


def test_in_memory_lookup_kb_round_trip(toy_kb_with_vectors):
    nlp = spacy.blank("en")
    spacy_kb = to_in_memory_lookup_kb(toy_kb_with_vectors, nlp.vocab)
    assert isinstance(spacy_kb, InMemoryLookupKB)
    assert set(spacy_kb.get_entity_strings()) == {"Paris", "Paris_Hilton", "Paris,_Texas", "The_Beatles"}
    assert spacy_kb.get_prior_prob("Paris_Hilton", "Paris") == pytest.approx(0.15)
    back = from_in_memory_lookup_kb(spacy_kb)
    for alias in ["Paris", "Hilton", "The Beatles", "Fab Four"]:
        original = [(h.entity_id, round(h.prior, 5)) for h in toy_kb_with_vectors.lookup(alias)]
        assert [(h.entity_id, round(h.prior, 5)) for h in back.lookup(alias)] == original
    assert back.get_vector("Paris_Hilton") == [0.0, 1.0, 0.0, 0.0]
    assert back.get_entity("The_Beatles").frequency == 50.0


def test_export_renormalises_priors_that_sum_above_one():
    from spacy_el.kb import KBBuilder

    builder = KBBuilder()
    builder.add_entity("A")
    builder.add_entity("B")
    builder.add_alias("x", ["A", "B"], [0.8, 0.6])
    spacy_kb = to_in_memory_lookup_kb(builder.build(), spacy.blank("en").vocab)
    assert spacy_kb.get_prior_prob("A", "x") == pytest.approx(0.8 / 1.4)


def _entity_linker_nlp(kb_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe(
        "entity_linker",
        config={
            "generate_empty_kb": {"@misc": "spacy-el.EmptyKB.v1"},  # spaCy's own get_candidates: kb.get_candidates
            "use_gold_ents": True,
        },
    )
    return nlp


TRAIN = [
    ("Paris Hilton was at the party. Paris was mentioned.", [(0, 12, "PER", "Paris_Hilton"), (31, 36, "PER", "Paris_Hilton")]),
    ("She saw Paris on TV.", [(8, 13, "PER", "Paris_Hilton")]),
    ("Paris is lovely in spring.", [(0, 5, "LOC", "Paris")]),
]


def _examples(nlp):
    examples = []
    for text, ents in TRAIN:
        doc = nlp.make_doc(text)
        annotations = {
            "entities": [(s, e, label) for s, e, label, _ in ents],
            "links": {(s, e): {kb_id: 1.0} for s, e, _, kb_id in ents},
        }
        examples.append(Example.from_dict(doc, annotations))
    return examples


def test_spacy_entity_linker_trains_and_round_trips_with_our_kb(tmp_path):
    kb_path = tmp_path / "kb"
    build_toy_kb(vectors=True).to_disk(kb_path)
    nlp = _entity_linker_nlp(kb_path)
    examples = _examples(nlp)
    for eg in examples:  # the sentencizer must run on the predicted docs, as in spacy train
        nlp.get_pipe("sentencizer")(eg.predicted)
    linker = nlp.get_pipe("entity_linker")
    linker.initialize(lambda: examples, nlp=nlp, kb_loader=registry.misc.get("spacy-el.KBFromDisk.v1")(kb_path))
    assert linker.kb.n_entities == 4 and linker.kb.entity_vector_length == 4
    optimizer = nlp.resume_training()
    losses = {}
    for _ in range(5):
        linker.update(examples, sgd=optimizer, losses=losses)
    assert losses["entity_linker"] > 0

    def predict(pipeline):
        doc = pipeline.make_doc("Paris is sunny.")
        doc.ents = [doc.char_span(0, 5, label="LOC")]
        return [(e.text, e.kb_id_) for e in pipeline.get_pipe("entity_linker")(pipeline.get_pipe("sentencizer")(doc)).ents]

    before = predict(nlp)
    assert before[0][1] in {"Paris", "Paris_Hilton", "Paris,_Texas"}
    nlp.to_disk(tmp_path / "pipeline")
    reloaded = spacy.load(tmp_path / "pipeline")
    assert reloaded.get_pipe("entity_linker").kb.n_entities == 4
    assert predict(reloaded) == before
    from_bytes = _entity_linker_nlp(kb_path)
    from_bytes.from_bytes(nlp.to_bytes())
    assert predict(from_bytes) == before

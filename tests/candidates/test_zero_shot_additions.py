"""Zero-shot KB additions: an invented entity, added without an alias, is found by the dense and hybrid
generators with the same trained encoder, without retraining anything."""
import numpy as np
import pytest

from spacy_el.candidates import AliasCandidates, DenseCandidates, HybridCandidates, attach_mention_encoder
from spacy_el.kb import ElKnowledgeBase

from .conftest import span_of

INVENTED = {
    "id": "Quorvath_Glacier", "name": "Quorvath Glacier",
    "description": "Glacier in the invented Norland mountains, known for its blue ice caves", "types": ["LOC"],
}


def copy_of(kb: ElKnowledgeBase, nlp) -> ElKnowledgeBase:
    return ElKnowledgeBase(nlp.vocab).from_bytes(kb.to_bytes())


def test_an_added_entity_without_alias_is_found_by_dense_and_hybrid(nlp, minilm_toy_kb, minilm_encoder):
    kb = copy_of(minilm_toy_kb, nlp)
    attach_mention_encoder(kb, minilm_encoder)
    [row] = kb.add_entities([INVENTED])
    assert kb.n_entities == 5 and kb.dense_index.ntotal == 5 and kb.entities.ids[row] == "Quorvath_Glacier"
    span = span_of(nlp, "Climbers explored the blue ice caves of the glacier in the Norland mountains.", "glacier")
    assert [len(c) for c in AliasCandidates(fuzzy=False)(kb, [span])] == [0]
    assert DenseCandidates(top_k=1)(kb, [span])[0].rows.tolist() == [row]
    assert row in HybridCandidates(AliasCandidates(), DenseCandidates(top_k=2), top_k=3)(kb, [span])[0].rows


def test_additions_keep_existing_rows_and_merge_aliases(nlp, tiny_toy_kb, tiny_encoder):
    kb = tiny_toy_kb
    before = kb.lookup("Paris")
    vectors_before = np.array(kb.entities.vectors)
    rows = kb.add_entities(
        [{"id": "Paris_(band)", "name": "Paris (band)", "aliases": ["Paris"], "frequency": 3.0, "qid": "Q99"}],
        encoder=tiny_encoder,
    )
    assert rows == [4]
    np.testing.assert_array_equal(kb.entities.vectors[:4], vectors_before)
    after = {h.entity_id: h.prior for h in kb.lookup("Paris")}
    assert {h.entity_id: h.prior for h in before}.items() <= after.items()  # existing priors unchanged
    assert after["Paris_(band)"] == pytest.approx(0.25)  # 1 / (3 existing candidates + 1)
    assert [h.entity_id for h in kb.lookup("Paris (band)")] == ["Paris_(band)"]
    assert kb.qid_of("Paris_(band)") == "Q99" and kb.qid_of("Paris") is None


@pytest.mark.parametrize("bad, message", [
    ({"id": "Paris", "name": "Paris"}, "E157"),
    ({"id": "", "name": "X"}, "E156"),
    ({"id": "X", "name": "X", "colour": "red"}, "E155"),
    ({"id": "X", "name": "X", "aliases": [["x", 1.5]]}, "E163"),
    ({"id": "X", "name": "X", "frequency": -1}, "E158"),
])
def test_bad_additions_are_refused_and_change_nothing(toy_kb, bad, message):
    with pytest.raises(ValueError, match=message):
        toy_kb.add_entities([bad])
    assert toy_kb.n_entities == 4


def test_vectors_of_another_encoder_refuse_additions(nlp, tiny_toy_kb):
    with pytest.raises(ValueError, match="E159"):
        tiny_toy_kb.add_entities([INVENTED])  # the KB's vectors are the test BERT's, not MiniLM's


def test_additions_are_recorded_among_the_kb_sources(tiny_toy_kb, tiny_encoder):
    kb = tiny_toy_kb
    kb.set_aliases(kb.aliases, ["titles"])
    kb.entity_sources = None  # unknown stays unknown
    kb.add_entities([{"id": "Lumen_(river)", "name": "Lumen"}], encoder=tiny_encoder, source="my_gazetteer")
    kb.add_entities([{"id": "Lumen_(town)", "name": "Lumen"}], encoder=tiny_encoder, source="my_gazetteer")
    assert kb.alias_sources == ["titles", "my_gazetteer"] and kb.entity_sources is None
    with pytest.raises(ValueError, match="E153"):
        kb.add_entities([{"id": "X", "name": "X"}], encoder=tiny_encoder, source=" ")

"""Entity type distributions (NER4EL): inventories, storage in the KB, known types and the typing classifier."""
import hashlib
import json

import numpy as np
import pytest

from spacy_el.kb import ElKnowledgeBase, KBBuilder, KBFormatError
from spacy_el.kb.type_inventory import TypeInventory, observed_type_counts, type_agreement
from spacy_el.ml.ner_constrained_linker.entity_typing import entity_type_distributions
from spacy_el.kb.serialization import MANIFEST

from ..conftest import build_toy_kb

EVAL_KB_TYPES = [
    "LOC", "ORG", "PER", "topic:Arts", "topic:Biology and health sciences", "topic:Everyday life",
    "topic:Geography", "topic:History", "topic:Mathematics", "topic:People", "topic:Philosophy and religion",
    "topic:Physical sciences", "topic:Society and social sciences", "topic:Technology",
]  # fmt: skip
COARSE = ["PER", "LOC", "ORG", "MISC"]
# toy KB rows: Paris (LOC, topic:Geography), Paris_Hilton (PER), Paris,_Texas (LOC), The_Beatles (ORG)
TOY_PROBS = np.array([[0, 1, 0, 0], [0.9, 0, 0, 0.1], [0, 0.75, 0.25, 0], [0, 0, 1, 0]], dtype=np.float32)


# -- inventories -----------------------------------------------------------------------------------
def test_coarse_inventory():
    inv = TypeInventory.from_name("coarse")
    assert inv.labels == COARSE
    expected = {"LOC": 1, "ORG": 2, "PER": 0, "topic:Geography": 1, "topic:People": 0}
    for type_name in EVAL_KB_TYPES:
        assert inv.kb_label(type_name) == expected.get(type_name, 3), type_name
    assert inv.kb_label("topic:Some new topic") == 3 and inv.kb_label("WIKIDATA_CLASS") is None  # topic rule; others ignored
    ner = {"PER": 0, "PERSON": 0, "LOC": 1, "GPE": 1, "FAC": 1, "ORG": 2, "NORP": 2, "MISC": 3, "WORK_OF_ART": 3}
    assert {label: inv.mention_label(label) for label in ner} == ner


def test_fine_inventory():
    inv = TypeInventory.from_name("fine")
    topics = [t for t in EVAL_KB_TYPES if t.startswith("topic:") and t not in ("topic:People", "topic:Geography")]
    assert inv.labels == ["PER", "LOC", "ORG", *topics, "MISC"]
    for topic in topics:
        assert inv.kb_label(topic) == inv.labels.index(topic)
    assert inv.kb_label("topic:People") == inv.kb_label("PER") == 0 and inv.kb_label("topic:Geography") == 1
    assert inv.kb_label("topic:Unheard of") == inv.labels.index("MISC")
    assert inv.mention_label("GPE") == 1 and inv.mention_label("MISC") == inv.mention_label("EVENT") == 12


def test_inventory_errors_and_a_custom_inventory():
    with pytest.raises(ValueError, match="E164"):
        TypeInventory.from_name("medium")
    with pytest.raises(ValueError, match="E169"):
        TypeInventory("bad", ["A"], {"X": "B"}, {})
    custom = TypeInventory("custom", ["A", "B"], {"x": "A"}, {"NER_B": "B"}, fallback_label=None)
    assert custom.mention_label("NER_B") == 1 and custom.mention_label("OTHER") is None
    assert custom.kb_label("topic:Arts") is None and custom.kb_label("y") is None and custom.kb_label("x") == 0


# -- storage in the KB -----------------------------------------------------------------------------
def test_set_and_get_type_probs(toy_kb):
    assert toy_kb.get_type_probs(COARSE) is None
    toy_kb.set_type_probs(COARSE, TOY_PROBS.astype(np.float64))
    stored = toy_kb.get_type_probs(COARSE)
    assert stored.dtype == np.float32 and stored.shape == (4, 4)
    np.testing.assert_array_equal(stored, TOY_PROBS)
    assert toy_kb.get_type_probs(["LOC", "PER", "ORG", "MISC"]) is None  # other order
    assert toy_kb.get_type_probs(COARSE[:3]) is None
    assert toy_kb.memory_usage()["entity_type_probs"] == TOY_PROBS.nbytes


@pytest.mark.parametrize(
    "labels,probs,error",
    [(COARSE, TOY_PROBS[:3], "E112"),
     (COARSE[:3], TOY_PROBS, "E112"),
     (COARSE, np.where(TOY_PROBS > 0.8, np.nan, TOY_PROBS), "E114"),
     (COARSE, TOY_PROBS - 0.5, "E115"),
     (["PER", "PER", "ORG", "MISC"], TOY_PROBS, "E111"),
     ([], np.zeros((4, 0)), "E110")],
)
def test_set_type_probs_errors(toy_kb, labels, probs, error):
    with pytest.raises(ValueError, match=error):
        toy_kb.set_type_probs(labels, probs)
    assert toy_kb.get_type_probs(COARSE) is None


def test_type_probs_disk_and_bytes_round_trip(tmp_path):
    kb = build_toy_kb(vectors=True)
    kb.set_type_probs(COARSE, TOY_PROBS)
    kb.to_disk(tmp_path / "kb")
    for mmap in (False, True):
        loaded = ElKnowledgeBase.load(tmp_path / "kb", mmap=mmap)
        np.testing.assert_array_equal(loaded.get_type_probs(COARSE), TOY_PROBS)
        assert loaded.entities.type_prob_names == COARSE
    restored = ElKnowledgeBase(kb.vocab).from_bytes(kb.to_bytes())
    np.testing.assert_array_equal(restored.get_type_probs(COARSE), TOY_PROBS)
    assert restored.to_bytes() == kb.to_bytes()


def test_kb_without_type_prob_names_key_loads(tmp_path):
    """A KB directory written before type distributions existed has no manifest key: no distributions."""
    build_toy_kb().to_disk(tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / MANIFEST).read_text())
    del manifest["type_prob_names"]
    (tmp_path / "kb" / MANIFEST).write_text(json.dumps(manifest))
    loaded = ElKnowledgeBase.load(tmp_path / "kb")
    assert loaded.get_type_probs(COARSE) is None and loaded.entities.type_prob_names == []
    assert loaded.lookup("Paris")[0].entity_id == "Paris"


@pytest.mark.parametrize(
    "array,error",
    [(TOY_PROBS[:, :3], r"E120.*entities\.type_probs"),
     (np.full((4, 4), 2.0, np.float32), r"E120.*entities\.type_probs"),
     (np.full((4, 4), np.nan, np.float32), r"E220.*entities\.type_probs")],
)
def test_tampered_type_probs_is_a_format_error(tmp_path, array, error):
    kb = build_toy_kb()
    kb.set_type_probs(COARSE, TOY_PROBS)
    kb.to_disk(tmp_path / "kb")
    rel = "arrays/entities.type_probs.npy"
    np.save(tmp_path / "kb" / rel, array)
    with pytest.raises(KBFormatError, match=r"E21[78].*entities\.type_probs\.npy"):
        ElKnowledgeBase.load(tmp_path / "kb")  # size or checksum differ
    # Checksum and size updated too: the structural check still catches it.
    manifest = json.loads((tmp_path / "kb" / MANIFEST).read_text())
    data = (tmp_path / "kb" / rel).read_bytes()
    manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (tmp_path / "kb" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(KBFormatError, match=error):
        ElKnowledgeBase.load(tmp_path / "kb")


def test_type_prob_names_without_array_is_a_format_error(tmp_path):
    build_toy_kb().to_disk(tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / MANIFEST).read_text())
    (tmp_path / "kb" / MANIFEST).write_text(json.dumps({**manifest, "type_prob_names": COARSE}))
    with pytest.raises(KBFormatError, match=r"E120.*entities\.type_probs"):
        ElKnowledgeBase.load(tmp_path / "kb")


def test_type_prob_names_that_are_no_list_are_a_format_error(tmp_path):
    build_toy_kb().to_disk(tmp_path / "kb")
    manifest = json.loads((tmp_path / "kb" / MANIFEST).read_text())
    (tmp_path / "kb" / MANIFEST).write_text(json.dumps({**manifest, "type_prob_names": {"PER": 0}}))
    with pytest.raises(KBFormatError, match=r"E176.*dict"):
        ElKnowledgeBase.load(tmp_path / "kb")


# -- known types and the typing classifier ---------------------------------------------------------
def test_observed_type_counts(toy_kb):
    inv = TypeInventory.from_name("coarse")
    mentions = [("Paris", "GPE"), ("Paris", "LOC"), ("Paris_Hilton", "PERSON"), ("Paris", "WORK_OF_ART"),
                ("NIL", "PER"), ("", "ORG"), ("Nowhere_Land", "LOC")]  # fmt: skip
    counts = observed_type_counts(toy_kb, inv, mentions)
    expected = np.zeros((4, 4), np.float32)
    expected[0, 1], expected[0, 3], expected[1, 0] = 2, 1, 1
    assert counts.dtype == np.float32
    np.testing.assert_array_equal(counts, expected)
    custom = TypeInventory("custom", ["PER"], {}, {"PERSON": "PER"}, fallback_label=None)
    assert observed_type_counts(toy_kb, custom, mentions).sum() == 1  # unmapped labels skipped


def clustered_kb(with_vectors: bool = True) -> ElKnowledgeBase:
    """Invented people and companies whose vectors form two clusters; the "u*" entities have no types."""
    rng = np.random.default_rng(7)
    builder = KBBuilder()
    centers = {"PER": np.eye(8)[0] * 3, "ORG": np.eye(8)[1] * 3}
    for i in range(30):
        kind = "PER" if i % 2 else "ORG"
        vector = centers[kind] + rng.normal(scale=0.5, size=8) if with_vectors else None
        builder.add_entity(f"{kind.lower()}{i}", types=[kind] if i < 24 else [], vector=vector)
    builder.add_entity("u_person", vector=centers["PER"] + 0.1 if with_vectors else None)
    builder.add_entity("u_company", vector=centers["ORG"] + 0.1 if with_vectors else None)
    return builder.build()


def test_typing_classifier_predicts_untyped_entities():
    kb = clustered_kb()
    inv = TypeInventory.from_name("coarse")
    probs, source = entity_type_distributions(kb, inv, epochs=100, progress=False)
    assert probs.dtype == np.float32 and probs.shape == (32, 4) and source.dtype == np.int8
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    names = ("per1", "org24", "per25", "u_person", "u_company")
    rows = {entity_id: kb.entities.row_of(entity_id) for entity_id in names}
    assert source[rows["per1"]] == 1 and source[rows["per25"]] == 0 and int(source.sum()) == 24
    np.testing.assert_array_equal(probs[rows["per1"]], [1, 0, 0, 0])
    for name, label in (("per25", 0), ("org24", 2), ("u_person", 0), ("u_company", 2)):
        assert probs[rows[name]].argmax() == label and probs[rows[name], label] > 0.5, name
    again, _ = entity_type_distributions(kb, inv, epochs=100, progress=False)
    np.testing.assert_array_equal(probs, again)  # deterministic
    kb.set_type_probs(inv.labels, probs)
    np.testing.assert_array_equal(kb.get_type_probs(inv.labels), probs)


def test_observed_counts_join_kb_types():
    kb = clustered_kb()
    inv = TypeInventory.from_name("coarse")
    observed = observed_type_counts(kb, inv, [("per1", "ORG"), ("u_company", "ORG"), ("u_company", "MISC")])
    probs, source = entity_type_distributions(kb, inv, observed, epochs=10, progress=False)
    np.testing.assert_allclose(probs[kb.entities.row_of("per1")], [0.5, 0, 0.5, 0])  # 1 KB type + 1 mention
    np.testing.assert_allclose(probs[kb.entities.row_of("u_company")], [0, 0, 0.5, 0.5])
    assert source[kb.entities.row_of("u_company")] == 1
    with pytest.raises(ValueError, match="E167"):
        entity_type_distributions(kb, inv, observed[:, :2], progress=False)


def test_without_vectors_unknown_entities_get_the_prior():
    kb = clustered_kb(with_vectors=False)
    inv = TypeInventory.from_name("coarse")
    probs, source = entity_type_distributions(kb, inv, progress=False)
    np.testing.assert_allclose(probs[source == 0], [[0.5, 0, 0.5, 0]] * 8, atol=1e-6)  # 12 PER, 12 ORG known
    untyped = KBBuilder()
    untyped.add_entity("a", vector=[1.0, 0.0])
    untyped.add_entity("b", vector=[0.0, 1.0])
    probs, source = entity_type_distributions(untyped.build(), inv, progress=False)
    np.testing.assert_allclose(probs, 0.25)
    assert not source.any()


def test_one_known_label_gives_the_prior_even_with_vectors():
    builder = KBBuilder()
    builder.add_entity("a", types=["PER"], vector=[1.0, 0.0])
    builder.add_entity("b", types=["topic:People"], vector=[0.9, 0.1])
    builder.add_entity("c", vector=[0.0, 1.0])
    probs, source = entity_type_distributions(builder.build(), TypeInventory.from_name("coarse"), progress=False)
    np.testing.assert_array_equal(probs, [[1, 0, 0, 0]] * 3)
    np.testing.assert_array_equal(source, [1, 1, 0])


def test_type_agreement():
    q = np.array([[1.0, 0.0], [0.5, 0.5]], np.float32)
    p = np.array([[[1.0, 0.0], [0.2, 0.8], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]], np.float32)
    np.testing.assert_allclose(type_agreement(q, p), [[1.0, 0.2, 0.0], [0.5, 0.5, 0.5]])
    with pytest.raises(ValueError, match="E165"):
        type_agreement(q, p[:, :, :1])

"""Type-aware KB features (NER4EL): type index, type-aware top-k selection, same-type negatives."""
import numpy as np
import pytest

from spacy_el.kb import KBBuilder
from spacy_el.kb.type_index import select_typed_first


def test_type_index(toy_kb):
    index = toy_kb.type_index
    rows = index.entities_of_type("LOC")
    assert [toy_kb.entities.ids[int(r)] for r in rows] == ["Paris", "Paris,_Texas"]
    assert len(index.entities_of_type("NOPE")) == 0
    assert index.has_any_type(0, {"topic:Geography"}) and not index.has_any_type(1, {"LOC"})


def test_type_aware_selection_keeps_typed_candidates_when_cutting(toy_kb):
    # By prior, "Paris" ranks Paris (LOC), Paris_Hilton (PER), Paris,_Texas (LOC).
    assert [h.entity_id for h in toy_kb.lookup("Paris", top_k=2)] == ["Paris", "Paris_Hilton"]
    typed = toy_kb.lookup("Paris", top_k=2, prefer_types={"LOC"})
    assert [h.entity_id for h in typed] == ["Paris", "Paris,_Texas"]  # rank order kept
    per = toy_kb.lookup("Paris", top_k=1, prefer_types={"PER"})
    assert [h.entity_id for h in per] == ["Paris_Hilton"]
    # Nothing to cut, or no candidate of the type: the plain ranking.
    assert toy_kb.lookup("Paris", prefer_types={"LOC"}) == toy_kb.lookup("Paris")
    assert toy_kb.lookup("Paris", top_k=2, prefer_types={"ORG"}) == toy_kb.lookup("Paris", top_k=2)


@pytest.mark.parametrize(
    "flags,k,expected",
    [([False, True, False, True], 2, [1, 3]), ([False, True, False], 2, [0, 1]), ([True, True], None, [0, 1]),
     ([], 3, [])],
)
def test_select_typed_first(flags, k, expected):
    assert select_typed_first(list(range(len(flags))), flags, k) == expected


def test_same_type_negatives_share_a_type_and_exclude_the_gold():
    builder = KBBuilder()
    for i in range(20):
        builder.add_entity(f"P{i}", types=["PER"])
    for i in range(5):
        builder.add_entity(f"L{i}", types=["LOC"])
    builder.add_entity("untyped")
    kb = builder.build()
    rng = np.random.default_rng(0)
    gold = kb.entities.row_of("P3")
    negatives = kb.type_index.sample_same_type(gold, 8, rng, exclude=[kb.entities.row_of("P4")])
    ids = {kb.entities.ids[int(r)] for r in negatives}
    assert len(ids) == 8 and all(i.startswith("P") for i in ids) and not {"P3", "P4"} & ids
    loc = kb.type_index.sample_same_type(kb.entities.row_of("L0"), 10, rng)
    assert sorted(kb.entities.ids[int(r)] for r in loc) == ["L1", "L2", "L3", "L4"]  # fewer than asked
    assert len(kb.type_index.sample_same_type(kb.entities.row_of("untyped"), 5, rng)) == 0
    with pytest.raises(ValueError, match="E171"):
        kb.type_index.sample_same_type(gold, -1, rng)


def test_type_index_follows_a_reloaded_store(tmp_path, toy_kb):
    _ = toy_kb.type_index
    builder = KBBuilder()
    builder.add_entity("X", types=["ORG"])
    builder.add_alias("X", ["X"], [1.0])
    builder.build().to_disk(tmp_path / "kb")
    toy_kb.from_disk(tmp_path / "kb")
    assert [toy_kb.entities.ids[int(r)] for r in toy_kb.type_index.entities_of_type("ORG")] == ["X"]

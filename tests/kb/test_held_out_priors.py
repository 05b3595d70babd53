"""Alias counts and held-out priors: the priors an alias would have without some of the mentions it counted."""
import numpy as np
import pytest
from spacy.vocab import Vocab

from spacy_el.kb import ElKnowledgeBase, KBBuilder
from spacy_el.kb.alias_table import held_out_priors


def counted_kb() -> ElKnowledgeBase:
    """"Paris": 8 mentions of the city, 2 of Paris Hilton (count 10); "Hilton": 1 mention (count 1);
    "Texas": no count."""
    builder = KBBuilder()
    for entity_id, name in (("Paris", "Paris"), ("Paris_Hilton", "Paris Hilton"), ("Texas", "Texas")):
        builder.add_entity(entity_id, name)
    builder.add_alias("Paris", ["Paris", "Paris_Hilton"], [0.8, 0.2], count=10)
    builder.add_alias("Hilton", ["Paris_Hilton"], [1.0], count=1)
    builder.add_alias("Texas", ["Texas"], [1.0])
    return builder.build()


def priors(hits):
    return {h.entity_id: round(h.prior, 4) for h in hits}


def test_counts_are_stored_and_survive_round_trips(tmp_path):
    kb = counted_kb()
    rows = {kb.aliases.aliases[i]: i for i in range(kb.n_aliases)}
    assert kb.aliases.count_of(rows["Paris"]) == 10 and kb.aliases.count_of(rows["Texas"]) == 0
    kb.to_disk(tmp_path / "kb")
    for loaded in (ElKnowledgeBase.load(tmp_path / "kb"), ElKnowledgeBase(Vocab()).from_bytes(kb.to_bytes())):
        np.testing.assert_array_equal(loaded.aliases.counts, kb.aliases.counts)


def test_a_kb_without_counts_stores_none():
    builder = KBBuilder()
    builder.add_entity("Paris", "Paris")
    builder.add_alias("Paris", ["Paris"], [1.0])
    assert builder.build().aliases.counts is None


def test_held_out_mentions_leave_the_priors():
    kb = counted_kb()
    assert priors(kb.lookup("Paris")) == {"Paris": 0.8, "Paris_Hilton": 0.2}
    # One mention of the city out of ten: 7 of 9 left.
    assert priors(kb.lookup("Paris", held_out={"Paris": {"Paris": 1}})) == {"Paris": round(7 / 9, 4), "Paris_Hilton": round(2 / 9, 4)}
    # Both Hilton mentions out: the city alone is left.
    assert priors(kb.lookup("Paris", held_out={"Paris": {"Paris_Hilton": 2}})) == {"Paris": 1.0}
    # Counts of other aliases change nothing here.
    assert priors(kb.lookup("Paris", held_out={"Hilton": {"Paris_Hilton": 1}})) == {"Paris": 0.8, "Paris_Hilton": 0.2}


def test_an_alias_with_nothing_left_matches_as_if_absent():
    kb = counted_kb()
    # "Hilton" had its one mention only: with it held out the exact tier is empty, and the fuzzy tier runs.
    assert kb.lookup("Hilton", held_out={"Hilton": {"Paris_Hilton": 1}}, fuzzy=False) == []
    assert [h.match for h in kb.lookup("Hilton")] == ["exact"]


def test_an_alias_without_a_count_keeps_its_priors():
    kb = counted_kb()
    assert priors(kb.lookup("Texas", held_out={"Texas": {"Texas": 5}})) == {"Texas": 1.0}


def test_held_out_counts_the_alias_never_held_are_capped():
    keep, kept = held_out_priors(np.array([0.8, 0.2], np.float32), ["Paris", "Paris_Hilton"], 10.0, {"Paris": 50, "Other": 3})
    assert keep.tolist() == [1] and kept.tolist() == [1.0]


def test_held_out_priors_need_counts():
    builder = KBBuilder()
    builder.add_entity("Paris", "Paris")
    builder.add_alias("Paris", ["Paris"], [1.0])
    kb = builder.build()
    with pytest.raises(ValueError, match="E118"):
        kb.lookup("Paris", held_out={"Paris": {"Paris": 1}})


@pytest.mark.parametrize("count", [0, -1, float("nan"), float("inf"), "ten"])
def test_bad_counts_are_refused(count):
    builder = KBBuilder()
    builder.add_entity("Paris", "Paris")
    with pytest.raises(ValueError, match="E130"):
        builder.add_alias("Paris", ["Paris"], [1.0], count=count)


def test_merged_aliases_lose_their_count():
    builder = KBBuilder()
    builder.add_entity("Paris", "Paris")
    builder.add_entity("Paris_Hilton", "Paris Hilton")
    builder.add_alias("Paris", ["Paris"], [1.0], count=3)
    builder.add_alias("Paris", ["Paris_Hilton"], [0.5], on_duplicate="max")
    assert builder.build().aliases.counts is None  # its only count is gone


def test_added_entities_make_their_aliases_uncounted():
    kb = counted_kb()
    kb.add_entities([{"id": "Hilton_Hotels", "name": "Hilton", "aliases": ["Hiltons"]}])
    rows = {kb.aliases.aliases[i]: i for i in range(kb.n_aliases)}
    assert kb.aliases.count_of(rows["Hilton"]) == 0 and kb.aliases.count_of(rows["Hiltons"]) == 0
    assert kb.aliases.count_of(rows["Paris"]) == 10


def test_counts_are_read_from_jsonl(tmp_path):
    (tmp_path / "entities.jsonl").write_text('{"id": "Paris", "name": "Paris"}\n')
    (tmp_path / "aliases.jsonl").write_text('{"alias": "Paris", "candidates": [["Paris", 1.0]], "count": 4}\n')
    kb = KBBuilder.from_jsonl(tmp_path / "entities.jsonl", tmp_path / "aliases.jsonl", progress=False).build()
    assert kb.aliases.count_of(0) == 4
    (tmp_path / "aliases.jsonl").write_text('{"alias": "Paris", "candidates": [["Paris", 1.0]], "count": -4}\n')
    with pytest.raises(ValueError, match=r"E130.*aliases\.jsonl:1"):
        KBBuilder.from_jsonl(tmp_path / "entities.jsonl", tmp_path / "aliases.jsonl", progress=False)


@pytest.mark.parametrize("data, message", [
    (b"\xff not utf-8", "E173"),
    (b"{not json", "E173"),
    (b'{"format": "other", "format_version": 1, "documents": {}}', "E208"),
    (b'{"format": "spacy_el.held_out_counts", "format_version": 99, "documents": {}}', "E209"),
    (b'{"format": "spacy_el.held_out_counts", "format_version": 1, "documents": {"k": {"Paris": {"Paris": -1}}}}',
     "E172"),
    (b'{"format": "spacy_el.held_out_counts", "format_version": 1, "documents": []}', "E172"),
])
def test_a_bad_held_out_table_is_a_clear_error(data, message):
    from spacy_el.kb.held_out import HELD_OUT_ATTACHMENT

    kb = counted_kb()
    kb.set_attachment(HELD_OUT_ATTACHMENT, data)
    with pytest.raises(ValueError, match=message):
        kb.held_out_counts("any text")


def test_the_held_out_table_round_trips():
    from spacy_el.kb.held_out import decode_held_out, document_key, encode_held_out

    table = {document_key("a text"): {"Paris": {"Paris": 1.0, "Paris_Hilton": 0.5}}}
    assert decode_held_out(encode_held_out(table)) == table

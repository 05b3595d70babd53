import pytest

from spacy_el.kb import KBBuilder, LookupSettings, normalize_alias

from ..conftest import build_toy_kb


def ids(hits):
    return [h.entity_id for h in hits]


def test_exact_lookup_is_sorted_by_prior(toy_kb):
    hits = toy_kb.lookup("Paris")
    assert ids(hits) == ["Paris", "Paris_Hilton", "Paris,_Texas"]
    assert [h.match for h in hits] == ["exact"] * 3
    assert hits[0].prior == pytest.approx(0.8)
    assert hits[0].alias == "Paris" and hits[0].score == 1.0


@pytest.mark.parametrize("text", ["paris", "PARIS", "Paris's", "the Paris", "Pàris", " Paris. "])
def test_normalised_lookup(toy_kb, text):
    hits = toy_kb.lookup(text)
    assert ids(hits) == ["Paris", "Paris_Hilton", "Paris,_Texas"]
    assert {h.match for h in hits} == {"normalized"}


def test_normalised_lookup_drops_leading_article(toy_kb):
    assert ids(toy_kb.lookup("beatles")) == ["The_Beatles"]


def test_fuzzy_lookup_scores_below_one(toy_kb):
    hits = toy_kb.lookup("Hiltom")
    assert ids(hits) == ["Paris_Hilton"]
    assert hits[0].match == "fuzzy"
    assert 0.5 <= hits[0].score < 1.0


@pytest.mark.parametrize("text,top_k", [("Paris", None), ("Paris", 2), ("paris", None), ("Hiltom", None), ("nothing", None)])
def test_matches_are_the_lookup_by_row(toy_kb, text, top_k):
    found = toy_kb.matches(text, top_k=top_k)
    hits = toy_kb.lookup(text, top_k=top_k)
    assert [(m.entity_row, m.match, m.prior, m.score) for m in found] == [(h.entity_row, h.match, h.prior, h.score) for h in hits]
    assert [toy_kb.aliases.aliases[m.alias_row] for m in found] == [h.alias for h in hits]


def test_fuzzy_can_be_disabled_per_call_and_per_kb(toy_kb):
    assert toy_kb.lookup("Hiltom", fuzzy=False) == []
    assert build_toy_kb(fuzzy=False).lookup("Hiltom") == []


@pytest.mark.parametrize("text", ["Ulaanbaatar", "", "   ", "...", "\n"])
def test_unknown_or_empty_alias_gives_empty_list(toy_kb, text):
    assert toy_kb.lookup(text) == []


def test_top_k_per_call_and_in_settings(toy_kb):
    assert ids(toy_kb.lookup("Paris", top_k=1)) == ["Paris"]
    toy_kb.settings = LookupSettings(top_k=2)
    assert len(toy_kb.lookup("Paris")) == 2


def test_normalised_tier_merges_aliases_and_keeps_best_prior():
    builder = KBBuilder()
    builder.add_entity("A")
    builder.add_entity("B")
    builder.add_alias("U.S.", ["A", "B"], [0.3, 0.6])
    builder.add_alias("US", ["A"], [0.9])
    kb = builder.build()
    hits = kb.lookup("us")
    assert [(h.entity_id, round(h.prior, 3)) for h in hits] == [("A", 0.9), ("B", 0.6)]


def test_ties_are_broken_by_frequency():
    builder = KBBuilder()
    builder.add_entity("rare", frequency=1)
    builder.add_entity("common", frequency=50)
    builder.add_alias("X", ["rare", "common"], [0.5, 0.5])
    assert ids(builder.build().lookup("X")) == ["common", "rare"]


def test_entity_info(toy_kb):
    info = toy_kb.get_entity("Paris")
    assert info.name == "Paris" and info.description == "Capital of France"
    assert info.types == ["LOC", "topic:Geography"] and info.frequency == 100.0
    assert toy_kb.get_entity("Nowhere") is None
    assert "Paris" in toy_kb and "Nowhere" not in toy_kb


def test_empty_kb_lookup():
    kb = KBBuilder().build()
    assert kb.is_empty() and kb.lookup("anything") == []


@pytest.mark.parametrize(
    "text,expected",
    [("The Beatles", "beatles"), ("Zürich", "zurich"), ("Obama's", "obama"), ("U.S.", "us"),
     ("Lord_Byron", "lord byron"), ("Smith-Jones", "smith jones"), ("   ", "")],
)
def test_normalize_alias(text, expected):
    assert normalize_alias(text) == expected


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"fuzzy_min_score": 0.0}, {"fuzzy_max_aliases": 0}])
def test_bad_lookup_settings(kwargs):
    with pytest.raises(ValueError, match="E10[145]"):
        LookupSettings(**kwargs)

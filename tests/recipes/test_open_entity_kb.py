"""The KB of the `pretrained` pipelines (``kb build-eval --entity-sources summaries,gum --alias-sources
titles,gum,dwie --skip-pronoun-aliases``): built from invented data, it holds no entity and no alias of AIDA or
PPRforNED origin, and GUM's pronouns give no alias."""
import shutil

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_el.kb import ElKnowledgeBase
from spacy_el.recipes.data_sources import check_entity_sources
from spacy_el.kb import KBBuilder
from spacy_el.recipes.eval_kb import add_aliases, title_aliases
from spacy_el.recipes.names import is_name, is_pronoun
from spacy_el.recipes.sources import EntityRecord

from .invented_data import DWIE, alias_dict, build_open_kb, gold_docs, invented_data_dir

#: DWIE priors naming a KB entity and one outside it (Velda: a DWIE title only).
OPEN_DWIE = {**DWIE, "The Lumen": [["Lumen_(band)", 0.8], ["Velda", 0.2]]}


def gum_with_pronouns():
    """A GUM-like train doc whose linked cluster has a name, pronouns and a sentence-initial common noun."""
    words = ["He", "saw", "Lumen", ".", "The", "band", "played", ".", "I", "met", "Ada", "Mercer", "."]
    doc = Doc(Vocab(), words=words)
    doc.spans["mentions"] = [
        Span(doc, 0, 1, "person", kb_id="Ada_Mercer"), Span(doc, 2, 3, "organization", kb_id="Lumen_(band)"),
        Span(doc, 4, 6, "organization", kb_id="Lumen_(band)"), Span(doc, 8, 9, "person", kb_id="Ada_Mercer"),
        Span(doc, 10, 12, "person", kb_id="Ada_Mercer"),
    ]
    return doc


def open_kb(tmp_path, skip_pronoun_aliases=True):
    """The open KB of invented data with every source file but AIDA's and PPRforNED's, saved and loaded."""
    data = invented_data_dir(tmp_path, dwie=OPEN_DWIE)
    shutil.rmtree(data / "kb" / "pprforned")  # the open build must not need it
    aida, gum = gold_docs()
    kb = build_open_kb(data, gum + [gum_with_pronouns()], aida, skip_pronoun_aliases=skip_pronoun_aliases)
    kb.to_disk(tmp_path / "kb_open")
    return ElKnowledgeBase.load(tmp_path / "kb_open")


def test_the_open_kb_has_no_aida_or_pprforned_entity_or_alias(tmp_path):
    kb = open_kb(tmp_path)
    assert list(kb.entities.ids) == ["Ada_Mercer", "Lumen_(band)"], "summaries, then GUM's identities"
    aliases = alias_dict(kb)
    assert not {"Merc", "Quill Tobin", "Mercer (town)"} & set(aliases), "no AIDA or PPRforNED mention or title"
    assert aliases["Lumen"] == {"Lumen_(band)": 1.0} and aliases["Mercer"] == {"Ada_Mercer": 1.0}
    assert aliases["The Lumen"] == {"Lumen_(band)": pytest.approx(0.8)}, "DWIE candidates outside the KB are dropped"
    assert "Velda" not in aliases, "a DWIE alias with no candidate in the KB is gone"
    assert kb.entity_sources == ["summaries", "gum"] and kb.alias_sources == ["titles", "gum", "dwie"]
    assert kb.qid_of("Lumen_(band)") == "Q1" and kb.qid_of("Ada_Mercer") is None, "GUM's identities carry their QIDs"


def test_gum_pronouns_give_no_alias(tmp_path):
    aliases = alias_dict(open_kb(tmp_path / "strict"))
    assert not {"He", "I", "The band"} & set(aliases) and {"Lumen", "Ada Mercer"} <= set(aliases)
    assert {"He", "I", "The band"} <= set(alias_dict(open_kb(tmp_path / "default", skip_pronoun_aliases=False))), (
        "the default rule (an upper-case letter) lets them in, as the evaluation KB has them")


@pytest.mark.parametrize("text,expected", [
    ("He", False), ("I", False), ("Her", False), ("The city", False), ("his brother", False), ("Everyone", False),
    ("The Who", True), ("US", True), ("IT", True), ("One Direction", True), ("Ada Mercer", True), ("Warhol 's", True),
])
def test_is_name(text, expected):
    assert is_name(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("He", True), ("she", True), ("I", True), ("It", True), ("US", False), ("IT", False), ("WHO", False),
    ("Lumen", False), ("The city", False),
])
def test_is_pronoun(text, expected):
    assert is_pronoun(text) is expected


def test_pronoun_surnames_give_no_alias():
    record = EntityRecord("Zheng_He", "Zheng He", types=["topic:People"])
    priors = {alias: {record.id: weight} for alias, weight in title_aliases(record).items()}
    assert set(priors) == {"Zheng He", "He"}, "the title rule makes 'He' a surname"
    builder = KBBuilder()
    builder.add_entity(record.id, record.name)
    add_aliases(builder, priors, skip_pronouns=True)
    assert set(alias_dict(builder.build())) == {"Zheng He"}


def test_entity_sources_are_checked():
    assert check_entity_sources(["gum", "summaries"]) == ("summaries", "gum")
    with pytest.raises(ValueError, match=r"E603.*\['wikidata'\]"):
        check_entity_sources(["summaries", "wikidata"])

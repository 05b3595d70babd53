"""Evaluation-KB sources and alias combination, on invented toy inputs."""
from collections import Counter

import pytest

from spacy_el.recipes.eval_kb import (
    DWIE_WEIGHT,
    STRIPPED_WEIGHT,
    SURNAME_WEIGHT,
    TITLE_WEIGHT,
    combine_alias_sources,
    mention_counts,
    title_aliases,
)
from spacy_el.recipes.sources import (
    EntityRecord,
    base_name,
    read_pprforned_candidates,
    strip_disambiguator,
    summary_description,
    title_from_url,
)

from .invented_data import alias_dict, gold_docs, invented_data_dir, ppr_candidate, ppr_tar


def test_title_helpers():
    assert title_from_url("http://en.wikipedia.org/wiki/Mesa%2C_Arizona") == "Mesa,_Arizona"
    assert title_from_url("http://en.wikipedia.org/wiki/Lord_Byron") == "Lord_Byron"
    assert strip_disambiguator("Paris (mythology)") == "Paris"
    assert strip_disambiguator("Paris") == "Paris"


def test_base_name_drops_parenthesis_and_comma_qualifiers():
    assert base_name("Tulsa, Oklahoma") == "Tulsa"
    assert base_name("Victoria (Australia)") == "Victoria"
    assert base_name("Ada Mercer") == "Ada Mercer"


def test_title_aliases_weights_and_person_surname():
    person = EntityRecord("Ada_Mercer_(painter)", "Ada Mercer (painter)", types=["person"])
    assert title_aliases(person) == {"Ada Mercer (painter)": TITLE_WEIGHT, "Ada Mercer": STRIPPED_WEIGHT, "Mercer": SURNAME_WEIGHT}
    place = EntityRecord("Tulsa,_Oklahoma", "Tulsa, Oklahoma", types=["place"])
    assert title_aliases(place) == {"Tulsa, Oklahoma": TITLE_WEIGHT}, "a comma qualifier is part of the name"
    single = EntityRecord("Cher", "Cher", types=["person"])
    assert title_aliases(single) == {"Cher": TITLE_WEIGHT}, "a one-word name has no surname"


def _mention_doc():
    from spacy.tokens import Doc, Span
    from spacy.vocab import Vocab

    words = ["He", "met", "the", "Velda", "Gazette", "'s", "editor", "in", "the", "city", "and", "I", "saw",
             "US", "1984", "\"", "Lumen", "\"", "."]
    doc = Doc(Vocab(), words=words)
    spans = {
        "He": Span(doc, 0, 1, "person", kb_id="Ada_Mercer"),
        "the Velda Gazette 's": Span(doc, 2, 6, "organization", kb_id="Velda_Gazette"),
        "the city": Span(doc, 8, 10, "place", kb_id="Velda"),
        "I": Span(doc, 11, 12, "person", kb_id="Bob_Woolmer"),
        "US": Span(doc, 13, 14, "place", kb_id="United_States"),
        "1984": Span(doc, 14, 15, "time", kb_id="1984"),
        '" Lumen "': Span(doc, 15, 18, "object", kb_id="Lumen_(band)"),
        "editor": Span(doc, 6, 7, "person", kb_id=""),
    }
    doc.spans["mentions"] = list(spans.values())
    return doc, spans


def test_mention_counts_names_only_skips_mentions_without_a_capital():
    doc, _ = _mention_doc()
    counts = mention_counts([doc], spans_key="mentions", names_only=True)
    assert ("the city", "Velda") not in counts and ("US", "United_States") in counts
    raw = mention_counts([doc], spans_key="mentions")
    assert raw[("the city", "Velda")] == 1 and ("editor", "") not in raw, "raw text of linked mentions only"


@pytest.mark.parametrize(
    "summary,expected",
    [({"description": "English poet", "extract": "George Byron was a poet. He travelled."}, "English poet. George Byron was a poet."),
     ({"description": "", "extract": "Arthur C. Clarke wrote it. Then more."}, "Arthur C. Clarke wrote it."),
     ({"description": "", "extract": "No sentence end"}, "No sentence end."),
     ({}, "")],
)
def test_summary_description(summary, expected):
    assert summary_description(summary) == expected


def test_alias_priors_combine_pseudo_counts():
    entities = {
        "Bob_Woolmer": EntityRecord("Bob_Woolmer", "Bob Woolmer", types=["PER"]),
        "Paris": EntityRecord("Paris", "Paris"),
        "Paris_(mythology)": EntityRecord("Paris_(mythology)", "Paris (mythology)"),
    }
    train = Counter({("Paris", "Paris"): 3})
    dwie = [("Paris", [("Paris", 0.5), ("Paris_(mythology)", 0.5)])]
    priors = combine_alias_sources(entities, train, dwie)
    paris = 3 + DWIE_WEIGHT * 0.5 + TITLE_WEIGHT
    myth = DWIE_WEIGHT * 0.5 + STRIPPED_WEIGHT
    assert priors["Paris"]["Paris"] == pytest.approx(paris / (paris + myth))
    assert priors["Paris"]["Paris_(mythology)"] == pytest.approx(myth / (paris + myth))
    assert priors["Paris (mythology)"] == {"Paris_(mythology)": 1.0}
    assert priors["Woolmer"] == {"Bob_Woolmer": 1.0}
    assert SURNAME_WEIGHT > 0 and "mythology)" not in priors  # only people get surname aliases


def test_pprforned_candidate_titles_come_from_every_split(tmp_path):
    train = "ENTITY\ttext:Alpha\turl:x\n" + ppr_candidate("Alpha_One", 3) + ppr_candidate("Alpha_Two", 0)
    test = "ENTITY\ttext:Beta\turl:x\n" + ppr_candidate("Beta_One", 9)
    path = ppr_tar(tmp_path / "ppr.tar.gz", {"5": train, "1200": test})
    titles = read_pprforned_candidates(path, progress=False)
    assert set(titles) == {"Alpha_One", "Alpha_Two", "Beta_One"}  # titles of every split are allowed
    assert titles["Beta_One"].in_count == 9


def test_mate_only_mentions_counts_the_papers_table4_cases():
    import spacy
    from spacy.tokens import Span

    from spacy_el.scoring.candidates import mate_only_mentions

    from ..conftest import build_invented_kb

    kb = build_invented_kb(dim=4)
    nlp = spacy.blank("en")
    doc = nlp("Ada Mercer met Mercer in Velda ; Ada left Velda and Lumen played")
    doc.ents = [
        Span(doc, 0, 2, "PER", kb_id="Ada_Mercer"),  # no alias "Ada Mercer": a mate ("Mercer") has it
        Span(doc, 3, 4, "PER", kb_id="Ada_Mercer"),
        Span(doc, 7, 8, "PER", kb_id="Ada_Mercer"),  # "Ada": no candidates either
        Span(doc, 5, 6, "LOC", kb_id="Velda"),
        Span(doc, 9, 10, "LOC", kb_id="Velda"),  # both have it: not a case
        Span(doc, 11, 12, "ORG", kb_id="Lumen_(band)"),  # a singleton: not counted
    ]
    assert mate_only_mentions(kb, [doc]) == {"mate_only": 2, "in_linked_clusters": 5}
    assert mate_only_mentions(kb, [doc], top_k=1)["mate_only"] == 0, "top-1 of 'Mercer' is the town: no mate has it"


# -- alias sources: the open-data KB a package may carry ---------------------------------------------------


def test_open_alias_sources_keep_the_entities_and_drop_aida_and_pprforned_aliases(tmp_path):
    from spacy_el.recipes.eval_kb import OPEN_ALIAS_SOURCES, build_eval_kb_builder, open_data_aliases

    data = invented_data_dir(tmp_path)
    aida, gum = gold_docs()
    full = build_eval_kb_builder(data, aida, gum, progress=False).build(alias_sources=("titles", "gum", "dwie", "aida", "pprforned"))
    open_kb = build_eval_kb_builder(data, aida, gum, progress=False, alias_sources=OPEN_ALIAS_SOURCES).build(
        alias_sources=OPEN_ALIAS_SOURCES)
    assert list(open_kb.entities.ids) == list(full.entities.ids), "the same entities, in the same rows"
    assert "Quill_Tobin" in open_kb, "train gold titles stay entities (their ids, not their mention strings)"
    assert "Merc" in alias_dict(full) and "Merc" not in alias_dict(open_kb), "AIDA/PPRforNED mention strings are gone"
    assert {"Lumen", "Velda", "Ada Mercer", "Mercer", "Quill Tobin"} <= set(alias_dict(open_kb))
    # An existing KB given the open aliases in place: the same table as the open build, over its own rows.
    swapped = open_data_aliases(full, data, gum)
    assert swapped is full and full.alias_sources == list(OPEN_ALIAS_SOURCES)
    assert alias_dict(full) == alias_dict(open_kb)


def test_alias_sources_are_checked():
    from spacy_el.recipes.eval_kb import check_alias_sources, open_data_aliases

    assert check_alias_sources(["dwie", "titles"]) == ("titles", "dwie")
    with pytest.raises(ValueError, match="E603"):
        check_alias_sources(["titles", "reuters"])
    with pytest.raises(ValueError, match="E602"):
        open_data_aliases(None, ".", [], ["titles", "aida"])


# -- held-out priors: what each counted training document added --------------------------------------------


def test_the_eval_kb_records_alias_counts_and_each_documents_share(tmp_path):
    from spacy_el.kb.held_out import HELD_OUT_ATTACHMENT
    from spacy_el.recipes.eval_kb import build_eval_kb_builder

    data = invented_data_dir(tmp_path)
    aida, gum = gold_docs()
    kb = build_eval_kb_builder(data, aida, gum, progress=False).build()
    assert kb.aliases.counts is not None and bool((kb.aliases.counts > 0).all())
    assert kb.attachment(HELD_OUT_ATTACHMENT) is not None
    own = kb.held_out_counts(aida[0].text)
    for span in aida[0].ents:  # each gold linked mention counts 1 for its text and entity
        assert own[span.text][span.kb_id_] >= 1
    assert kb.held_out_counts("a document the KB never counted") is None
    # With its own document held out, an AIDA mention sees the priors an uncounted document would.
    span = aida[0].ents[0]
    held = {h.entity_id: h.prior for h in kb.lookup(span.text, held_out=own)}
    plain = {h.entity_id: h.prior for h in kb.lookup(span.text)}
    assert held != plain
    assert kb.held_out_counts(gum[0].text) is not None


def test_the_open_kb_carries_no_aida_mention_strings_in_its_held_out_table(tmp_path):
    from spacy_el.kb.held_out import HELD_OUT_ATTACHMENT
    from spacy_el.recipes.eval_kb import build_eval_kb_builder, open_data_aliases

    data = invented_data_dir(tmp_path)
    aida, gum = gold_docs()
    full = build_eval_kb_builder(data, aida, gum, progress=False).build()
    assert b"Merc" in full.attachment(HELD_OUT_ATTACHMENT)
    open_data_aliases(full, data, gum)
    assert b"Merc" not in full.attachment(HELD_OUT_ATTACHMENT)
    assert full.held_out_counts(aida[0].text) is None and full.held_out_counts(gum[0].text) is not None


def test_pprforned_lists_are_read_per_train_document(tmp_path):
    from spacy_el.recipes.sources import read_pprforned_train_lists

    first = "ENTITY\ttext:Alpha\turl:x\n" + ppr_candidate("Alpha_One", 3) + ppr_candidate("Alpha_Two", 0)
    second = "ENTITY\ttext:Gamma\turl:x\n" + ppr_candidate("Gamma_One", 0)
    path = ppr_tar(tmp_path / "ppr.tar.gz", {"1": first, "2": second, "1200": second})
    lists = read_pprforned_train_lists(path, progress=False)
    assert set(lists) == {1, 2}
    assert lists[1] == pytest.approx(Counter({("Alpha", "Alpha_One"): 4 / 5, ("Alpha", "Alpha_Two"): 1 / 5}))
    assert lists[2] == Counter({("Gamma", "Gamma_One"): 1.0})

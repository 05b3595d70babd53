"""Drop-in after a standard spaCy ``ner`` (docs/drop_in.md): OntoNotes labels, sourced linkers, never-linked labels.

The "standard" pipeline is an ``entity_ruler`` named ``ner`` that writes OntoNotes labels on invented text
over the invented KB (``tests/conftest.py:build_invented_kb``); the linkers are copies (saved and loaded) of
the small trained pipelines of ``tests/pipeline/conftest.py``, so that configuring them here leaves the
session's pipelines alone. The label table of docs/drop_in.md is recomputed from the components.
"""
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import load_config_from_str, load_model_from_config

from spacy_el.extensions import NIL, NIL_REASONS, NO_LINK, NOT_LINKABLE_LABEL, UNLINKABLE_LABELS, get_clusters, is_linked
from spacy_el.pipeline import entqa_reader, ner_stack_lstm
from spacy_el.pipeline.conventions import ENT_LABEL

DOC = Path(__file__).resolve().parents[2] / "docs" / "drop_in.md"
ONTONOTES = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE",
             "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL")
PATTERNS = [("PERSON", "Ada Mercer"), ("PERSON", "Tamsin Hale"), ("GPE", "Mercer"), ("GPE", "Velda"),
            ("ORG", "Mercer Corp"), ("ORG", "Lumen"), ("NORP", "Veldan"), ("DATE", "1990"), ("DATE", "last spring"),
            ("CARDINAL", "three")]
TEXTS = [
    "Ada Mercer painted the harbour of Mercer in 1990 .",
    "Lumen played three concerts in Velda last spring , and the Veldan crowd cheered Lumen .",
    "Mercer Corp shipped paint to Velda in 1990 ; Tamsin Hale paid three times .",
]
LINKER_REASONS = set(NIL_REASONS) - {NOT_LINKABLE_LABEL}
NEVER = {"DATE", "CARDINAL"}  # the labels of PATTERNS in UNLINKABLE_LABELS


def standard_pipeline() -> Language:
    """A spaCy pipeline whose ``ner`` (an entity ruler) writes OntoNotes labels."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler", name="ner")
    ruler.add_patterns([{"label": label, "pattern": [{"ORTH": w} for w in text.split()]} for label, text in PATTERNS])
    return nlp


@pytest.fixture(scope="module")
def saved(trained_pipelines, tmp_path_factory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("drop_in")
    paths = {"standard": root / "standard"}
    standard_pipeline().to_disk(paths["standard"])
    for name in ("ner_constrained_linker", "joint_coref_linker"):
        paths[name] = root / name
        trained_pipelines.get(name).to_disk(paths[name])
    return paths


def composed(saved: Dict[str, Path], name: str) -> Language:
    nlp = standard_pipeline()
    nlp.add_pipe(name, source=spacy.load(saved[name]))
    return nlp


@pytest.fixture(scope="module")
def ner4el(saved) -> Language:
    return composed(saved, "ner_constrained_linker")


@pytest.fixture(scope="module")
def joint(saved) -> Language:
    return composed(saved, "joint_coref_linker")


def check_linker_decision(span, kb_ids) -> None:
    """A linkable mention: a KB id, or NIL with a linker's own reason."""
    if is_linked(span.kb_id_):
        assert span.kb_id_ in kb_ids, span
    else:
        assert span.kb_id_ == NIL and span._.nil_reason in LINKER_REASONS, (span, span.kb_id_, span._.nil_reason)


def check_not_linked(ent) -> None:
    assert (ent.kb_id_, ent._.nil_reason, ent._.candidate_scores) == (NIL, NOT_LINKABLE_LABEL, []), ent


# -- the label table ----------------------------------------------------------------------------------


def ner4el_cell(label: str) -> str:
    """How ner_constrained_linker (default settings, both inventories) treats an entity labelled ``label``."""
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["x"])
    doc.ents = [doc.char_span(0, 1, label=label)]
    span = doc.ents[0]
    types = {}
    for inventory in ("coarse", "fine"):
        pipe = nlp.add_pipe("ner_constrained_linker", name=inventory, config={"type_inventory": inventory})
        index = pipe._mention_type(span)
        name = "none (mention-typing head)" if index is None else f"`{pipe.inventory.labels[index]}`"
        fallback = " (fallback)" if index is not None and label not in pipe.inventory.ner_label_map else ""
        types[inventory] = name + fallback
        unlinkable = pipe._unlinkable(span)
    type_text = types["coarse"] if types["coarse"] == types["fine"] else f"{types['coarse']} (coarse) / {types['fine']} (fine)"
    if unlinkable:
        return f"`{NIL}`, `{NOT_LINKABLE_LABEL}`; type {type_text} if made linkable"
    return f"type {type_text}"


def joint_cell(label: str) -> str:
    """How joint_coref_linker treats an upstream entity labelled ``label`` (mentions_from "ents" and "model+ents")."""
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["x"])
    doc.ents = [doc.char_span(0, 1, label=label)]
    cells = set()
    for mentions_from in ("ents", "model+ents"):
        pipe = nlp.add_pipe("joint_coref_linker", name=mentions_from, config={"mentions_from": mentions_from})
        given, excluded = pipe._given_mentions(doc), pipe._unlinkable_ents(doc)
        assert bool(given) != bool(excluded)
        cells.add("mention (label not used)" if given else f"not a mention: `{NIL}`, `{NOT_LINKABLE_LABEL}`")
    assert len(cells) == 1, cells
    return cells.pop()


def own_mentions_cell(settings_class, what: str) -> str:
    """entqa_reader / ner_stack_lstm find their own mentions: the setting is not theirs."""
    assert "unlinkable_labels" not in settings_class.names()
    return f"not used ({what})"


def expected_table() -> Dict[str, List[str]]:
    entqa = own_mentions_cell(entqa_reader.EntQAReaderSettings, f"own mentions, label `{ENT_LABEL}`")
    stack = own_mentions_cell(ner_stack_lstm.NerStackLstmSettings, "own mentions and labels")
    return {label: [ner4el_cell(label), joint_cell(label), entqa, stack] for label in ONTONOTES}


def doc_table() -> Tuple[List[str], Dict[str, List[str]]]:
    text = DOC.read_text(encoding="utf8")
    block = re.search(r"<!-- table:ontonotes -->\n(.*?)<!-- /table:ontonotes -->", text, re.S).group(1)
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.strip().splitlines()]
    header, body = rows[0], rows[2:]
    return header, {row[0].strip("`"): row[1:] for row in body}


def test_the_doc_table_is_what_the_components_do():
    header, table = doc_table()
    assert header == ["OntoNotes label", "`ner_constrained_linker`", "`joint_coref_linker` (`mentions_from` \"ents\", \"model+ents\")",
                      "`entqa_reader`", "`ner_stack_lstm`"]
    assert list(table) == list(ONTONOTES), "one row per OntoNotes label, in order"
    expected = expected_table()
    wrong = {label: (table[label], cells) for label, cells in expected.items() if table[label] != cells}
    assert not wrong, f"docs/drop_in.md disagrees with the code (doc, code): {wrong}"


def test_the_default_unlinkable_labels_are_the_ontonotes_values():
    assert set(UNLINKABLE_LABELS) == {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"} < set(ONTONOTES)
    for factory in ("ner_constrained_linker", "joint_coref_linker"):
        assert spacy.blank("en").add_pipe(factory).settings.unlinkable_labels == UNLINKABLE_LABELS


# -- sourced linkers after the standard ner ---------------------------------------------------------


def test_ner_constrained_linker_after_an_ontonotes_ner(ner4el):
    pipe = ner4el.get_pipe("ner_constrained_linker")
    kb_ids = set(pipe.kb.entities.ids)
    docs = list(ner4el.pipe(TEXTS))
    labels = [[e.label_ for e in doc.ents] for doc in docs]
    assert labels == [[e.label_ for e in doc.ents] for doc in standard_pipeline().pipe(TEXTS)], "labels are kept"
    assert {label for doc_labels in labels for label in doc_labels} == {label for label, _ in PATTERNS}
    for doc in docs:
        for ent in doc.ents:
            check_not_linked(ent) if ent.label_ in NEVER else check_linker_decision(ent, kb_ids)
    assert {e.text: e.kb_id_ for doc in docs for e in doc.ents}["Velda"] == "Velda"  # its only candidate


def test_unlinkable_entities_are_invisible_to_ner_constrained_linker(ner4el):
    """The other entities are linked as in a doc without them (they are not encoded: no marker)."""
    for text in TEXTS:
        full = ner4el(text)
        bare = ner4el.get_pipe("ner")(ner4el.make_doc(text))
        bare.ents = [e for e in bare.ents if e.label_ not in NEVER]
        bare = ner4el.get_pipe("ner_constrained_linker")(bare)
        linked = [(e.start, e.end, e.kb_id_, e._.nil_reason) for e in full.ents if e.label_ not in NEVER]
        assert linked == [(e.start, e.end, e.kb_id_, e._.nil_reason) for e in bare.ents]
        assert [e._.link_score for e in full.ents if e.label_ not in NEVER] == pytest.approx([e._.link_score for e in bare.ents])


def test_configuring_unlinkable_labels_changes_what_ner_constrained_linker_links(ner4el):
    pipe = ner4el.get_pipe("ner_constrained_linker")
    try:
        pipe.configure(unlinkable_labels=["NORP"])
        for doc in ner4el.pipe(TEXTS):
            for ent in doc.ents:
                check_not_linked(ent) if ent.label_ == "NORP" else check_linker_decision(ent, set(pipe.kb.entities.ids))
        pipe.configure(unlinkable_labels=[])
        reasons = {e.label_: e._.nil_reason for doc in ner4el.pipe(TEXTS) for e in doc.ents}
        assert reasons["DATE"] == reasons["CARDINAL"] == "no_candidates"  # scored now: no alias matches
    finally:
        pipe.configure(unlinkable_labels=list(UNLINKABLE_LABELS))


@pytest.mark.parametrize("mentions_from", ["ents", "model+ents"])
def test_joint_coref_linker_after_an_ontonotes_ner(joint, mentions_from):
    pipe = joint.get_pipe("joint_coref_linker")
    kb_ids = set(pipe.kb.entities.ids)
    try:
        pipe.configure(mentions_from=mentions_from)
        for doc in joint.pipe(TEXTS):
            clustered = {m: span for key in doc.spans if key.startswith("coref_clusters_") for span in doc.spans[key]
                         for m in [(span.start, span.end)]}
            assert sorted(clustered) == sorted(m for cluster in get_clusters(doc) for m in cluster)
            for ent in doc.ents:
                if ent.label_ in NEVER:
                    assert (ent.start, ent.end) not in clustered, "never a coreference mention"
                    check_not_linked(ent)
                else:  # every other entity is a mention, written (also as a singleton) with a link or a NIL reason
                    check_linker_decision(clustered[(ent.start, ent.end)], kb_ids)
            assert [e.label_ for e in doc.ents] == [e.label_ for e in standard_pipeline()(doc.text).ents]
        pipe.configure(unlinkable_labels=[])
        for doc in joint.pipe(TEXTS):
            clustered = {m for cluster in get_clusters(doc) for m in cluster}
            dates = [e for e in doc.ents if e.label_ in NEVER]
            assert dates and all((e.start, e.end) in clustered for e in dates), "mentions now"
            for date in dates:  # linked as the others: a KB id, or NIL with the linker's reason
                check_linker_decision(date, kb_ids)
    finally:
        pipe.configure(mentions_from="model", unlinkable_labels=list(UNLINKABLE_LABELS))


@pytest.mark.hostile("first contact")
@pytest.mark.parametrize("mentions_from", ["ents", "model+ents"])
def test_joint_coref_linker_links_the_entities_it_is_given(joint, mentions_from):
    """Given an upstream ner's entities, joint_coref_linker links them in doc.ents, as spaCy's entity_linker
    would, with write_ents = false (the default): each keeps its label and takes its cluster's link (the link
    extensions are the cluster span's: spaCy keeps them per character offsets). They stayed unlinked, the links
    only on the cluster spans, unless write_ents = true."""
    pipe = joint.get_pipe("joint_coref_linker")
    assert pipe.settings.write_ents is False
    kb_ids = set(pipe.kb.entities.ids)
    extensions = lambda span: (span.kb_id_, span._.cluster_id, span._.nil_reason, span._.candidate_scores,  # noqa: E731
                               span._.link_score, span._.nil_prob)
    try:
        pipe.configure(mentions_from=mentions_from)
        linked = 0
        for doc in joint.pipe(TEXTS):
            clustered = {(s.start, s.end): s for key in doc.spans if key.startswith("coref_clusters_") for s in doc.spans[key]}
            for ent in doc.ents:
                if ent.label_ in NEVER:
                    check_not_linked(ent)
                    continue
                check_linker_decision(ent, kb_ids)
                assert extensions(ent) == extensions(clustered[(ent.start, ent.end)]), ent
                linked += is_linked(ent.kb_id_)
            assert [(e.start, e.end, e.label_) for e in doc.ents] == [
                (e.start, e.end, e.label_) for e in standard_pipeline()(doc.text).ents
            ], "the entities and their labels stay"
        assert linked, "no entity linked"
    finally:
        pipe.configure(mentions_from="model")


def test_joint_coref_linker_on_its_own_mentions_leaves_the_entities_alone(joint):
    """With mentions_from = "model" (the default) the entities are not the linker's input: they stay as they are
    unless write_ents = true."""
    for doc in joint.pipe(TEXTS):
        assert [e.kb_id_ for e in doc.ents] == [NO_LINK] * len(doc.ents), doc.ents


def test_unlinkable_entities_are_invisible_to_joint_coref_linker_on_ents(joint):
    """With mentions_from "ents", the clusters are those of the doc without the unlinkable entities."""
    pipe = joint.get_pipe("joint_coref_linker")
    try:
        pipe.configure(mentions_from="ents")
        for text in TEXTS:
            full = joint(text)
            bare = joint.get_pipe("ner")(joint.make_doc(text))
            bare.ents = [e for e in bare.ents if e.label_ not in NEVER]
            bare = pipe(bare)
            spans = lambda d: [(s.start, s.end, s.kb_id_, s._.cluster_id) for k in sorted(d.spans) for s in d.spans[k]]  # noqa: E731
            assert get_clusters(full) == get_clusters(bare) and spans(full) == spans(bare)
    finally:
        pipe.configure(mentions_from="model")


def test_the_doc_config_builds_the_composed_pipeline(saved):
    """The ``ini`` recipe of docs/drop_in.md, with its paths pointing at the small pipelines."""
    block = re.search(r"```ini\n(.*?)```", DOC.read_text(encoding="utf8"), re.S).group(1)
    overrides = {"paths.ner_model": str(saved["standard"]), "paths.linker_model": str(saved["ner_constrained_linker"]),
                 "paths.coref_model": str(saved["joint_coref_linker"])}
    nlp = load_model_from_config(load_config_from_str(block, overrides=overrides), auto_fill=True, validate=True)
    assert nlp.pipe_names == ["ner", "ner_constrained_linker", "joint_coref_linker"]
    joint_settings = nlp.get_pipe("joint_coref_linker").settings
    assert (joint_settings.mentions_from, joint_settings.cluster_link) == ("ents", "upstream")
    for name in ("ner_constrained_linker", "joint_coref_linker"):
        assert set(nlp.get_pipe(name).settings.unlinkable_labels) == set(UNLINKABLE_LABELS) | {"NORP"}
    kb_ids = set(nlp.get_pipe("joint_coref_linker").kb.entities.ids)
    for doc in nlp.pipe(TEXTS):
        clustered = {(s.start, s.end): s for key in doc.spans for s in doc.spans[key] if key.startswith("coref_clusters_")}
        for ent in doc.ents:
            if ent.label_ in NEVER | {"NORP"}:
                check_not_linked(ent)
                assert (ent.start, ent.end) not in clustered
            else:
                check_linker_decision(ent, kb_ids)
                check_linker_decision(clustered[(ent.start, ent.end)], kb_ids)

"""spaCy's own entity_linker on spacy_el's hybrid generator: it trains, and a saved pipeline carries the
mention encoder inside its KB, giving identical candidates and links after ``spacy.load`` (encoder folder gone)."""
import shutil

import spacy
from spacy.training import Example
from spacy.util import registry

from spacy_el.candidates import attach_mention_encoder

HYBRID = {"@misc": "spacy-el.HybridCandidates.v1", "top_k": 4, "alias_top_k": 2, "dense_top_k": 4}
#: configs/baselines/entity_linker.cfg's candidates: the alias table's top 30.
ALIAS = {"@misc": "spacy-el.SpacyCandidates.v1", "generator": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 30}}
TRAIN = [
    ("Paris Hilton was at the party. Paris was mentioned.", [(0, 12, "PER", "Paris_Hilton"), (31, 36, "PER", "Paris_Hilton")]),
    ("Paris is lovely in spring.", [(0, 5, "LOC", "Paris")]),
]


def entity_linker_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entity_linker", config={
        "generate_empty_kb": {"@misc": "spacy-el.EmptyKB.v1"},
        "get_candidates": {"@misc": "spacy-el.SpacyCandidates.v1", "generator": HYBRID},
        "get_candidates_batch": {"@misc": "spacy-el.SpacyCandidatesBatch.v1", "generator": HYBRID},
        "use_gold_ents": True,
    })
    return nlp


def examples_of(nlp):
    out = []
    for text, ents in TRAIN:
        doc = nlp.get_pipe("sentencizer")(nlp.make_doc(text))
        out.append(Example.from_dict(doc, {
            "entities": [(s, e, label) for s, e, label, _ in ents],
            "links": {(s, e): {kb_id: 1.0} for s, e, _, kb_id in ents},
        }))
    return out


def test_entity_linker_with_hybrid_candidates_survives_spacy_load(tmp_path, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    tiny_toy_kb.to_disk(tmp_path / "kb")
    nlp = entity_linker_nlp()
    examples = examples_of(nlp)
    linker = nlp.get_pipe("entity_linker")
    linker.initialize(lambda: examples, nlp=nlp, kb_loader=registry.misc.get("spacy-el.KBFromDisk.v1")(tmp_path / "kb"))
    optimizer = nlp.resume_training()
    losses = {}
    for _ in range(3):
        linker.update(examples, sgd=optimizer, losses=losses)
    assert losses["entity_linker"] > 0

    def candidates_and_links(pipeline):
        doc = pipeline.make_doc("The city of Paris in Texas is sunny.")
        doc.ents = [doc.char_span(12, 17, label="LOC")]
        doc = pipeline.get_pipe("entity_linker")(pipeline.get_pipe("sentencizer")(doc))
        el = pipeline.get_pipe("entity_linker")
        found = [(c.entity_, round(c.prior_prob, 6)) for c in el.get_candidates(el.kb, doc.ents[0])]
        return found, [e.kb_id_ for e in doc.ents]

    before = candidates_and_links(nlp)
    assert len(before[0]) >= 3 and before[1][0] in {"Paris", "Paris_Hilton", "Paris,_Texas", "The_Beatles"}
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(tmp_path / "kb")
    assert candidates_and_links(spacy.load(tmp_path / "pipeline")) == before


def test_a_spacy_kb_gets_an_error_that_says_what_to_configure():
    import pytest
    from spacy.kb import InMemoryLookupKB

    from spacy_el.candidates import AliasCandidates, spacy_candidates, spacy_candidates_batch

    nlp = spacy.blank("en")
    kb, span = InMemoryLookupKB(nlp.vocab, entity_vector_length=4), nlp("Paris")[0:1]
    with pytest.raises(ValueError, match=r"E174.*SpacyCandidates\.v1 needs"):
        spacy_candidates(AliasCandidates())(kb, span)
    with pytest.raises(ValueError, match=r"E174.*SpacyCandidatesBatch\.v1 needs"):
        spacy_candidates_batch(AliasCandidates())(kb, [span])


def test_the_baselines_benchmark_swaps_a_trained_entity_linker_onto_hybrid_candidates(tmp_path, tiny_toy_kb,
                                                                                      tiny_mention_encoder):
    from benchmarks.baselines import HYBRID_BATCH, with_hybrid_candidates

    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    tiny_toy_kb.to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entity_linker", config={
        "generate_empty_kb": {"@misc": "spacy-el.EmptyKB.v1"}, "get_candidates": ALIAS, "use_gold_ents": True,
    })
    linker = nlp.get_pipe("entity_linker")
    linker.initialize(lambda: examples_of(nlp), nlp=nlp, kb_loader=registry.misc.get("spacy-el.KBFromDisk.v1")(tmp_path / "kb"))
    doc = nlp.make_doc("The city of Paris in Texas is sunny.")
    doc.ents = [doc.char_span(12, 17, label="LOC")]
    generator = with_hybrid_candidates(nlp)
    assert linker.candidates_batch_size == HYBRID_BATCH
    expected = generator(linker.kb, list(doc.ents))[0].ids(linker.kb)
    batch = linker.get_candidates_batch(linker.kb, list(doc.ents))
    assert [c.entity_ for c in batch[0]] == expected == [c.entity_ for c in linker.get_candidates(linker.kb, doc.ents[0])]
    assert len(expected) > len(linker.kb.lookup("Paris", top_k=30))  # the encoder's entities too
    assert nlp.get_pipe("entity_linker")(nlp.get_pipe("sentencizer")(doc)).ents[0].kb_id_ in expected


def test_the_baselines_benchmark_chooses_the_entity_linker_threshold_on_dev(tmp_path, tiny_toy_kb):
    from benchmarks.baselines import THRESHOLDS, threshold_rows

    tiny_toy_kb.to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "LOC", "pattern": "Paris"}])
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entity_linker", config={
        "generate_empty_kb": {"@misc": "spacy-el.EmptyKB.v1"}, "get_candidates": ALIAS, "use_gold_ents": True,
    })
    linker = nlp.get_pipe("entity_linker")
    linker.initialize(lambda: examples_of(nlp), nlp=nlp, kb_loader=registry.misc.get("spacy-el.KBFromDisk.v1")(tmp_path / "kb"))

    def gold(text):
        doc = nlp.make_doc(text)
        doc.ents = [doc.char_span(0, 5, label="LOC", kb_id="Paris")]
        return doc

    golds = {"dev": [gold("Paris is lovely in spring.")], "test": [gold("Paris is sunny today.")]}
    rows = threshold_rows("spacy_entity_linker", nlp, golds, 0.5)
    sweep = [r for r in rows if r["dataset"] == "aida-dev"]
    assert [r["metric"] for r in sweep] == [f"el_micro_f_threshold_{t}" for t in THRESHOLDS]
    assert all(r["system"] == "spacy_entity_linker_threshold" for r in rows)
    test = {r["metric"]: r for r in rows if r["dataset"] == "aida-test"}
    assert set(test) == {"el_micro_f", "el_macro_f", "el_micro_p", "el_micro_r"}
    assert "(best on AIDA dev); cand_recall_at_30=0.500" in test["el_micro_f"]["notes"]
    assert linker.threshold is None

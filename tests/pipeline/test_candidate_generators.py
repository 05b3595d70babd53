"""Every linker runs on each of the three candidate generators by config, and a saved pipeline carries
its mention encoder (inside its KB): identical candidates and predictions after ``spacy.load``."""
import numpy as np
import pytest
import spacy

from spacy_el.candidates import AliasCandidates, DenseCandidates, HybridCandidates

from ..torch_modules import torch_module
from .conftest import build_joint_coref_linker, build_ner_constrained_linker, build_ner_stack_lstm

GENERATORS = {
    "alias": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 4},
    "dense": {"@misc": "spacy-el.DenseCandidates.v1", "top_k": 3},
    "hybrid": {"@misc": "spacy-el.HybridCandidates.v1", "top_k": 4, "alias_top_k": 3, "dense_top_k": 3},
}
CLASSES = {"alias": AliasCandidates, "dense": DenseCandidates, "hybrid": HybridCandidates}
BUILDERS = {
    "ner_stack_lstm": build_ner_stack_lstm, "ner_constrained_linker": build_ner_constrained_linker,
    "joint_coref_linker": build_joint_coref_linker,
}
TEXT = "Lumen played in Mercer last night , and Mercer painted Velda ."


def mentions(doc):
    """The linked or clustered spans a linker wrote: doc.ents and every span group."""
    return list(doc.ents) + [span for key in sorted(doc.spans) for span in doc.spans[key]]


def predictions(nlp):
    doc = nlp(TEXT)
    return [(e.start, e.end, e.label_, e.kb_id_, e._.candidate_scores) for e in mentions(doc)]


@pytest.mark.parametrize("generator", sorted(GENERATORS))
@pytest.mark.parametrize("component", sorted(BUILDERS))
def test_linker_runs_on_the_generator_and_reloads_identically(component, generator, tiny_encoder, tmp_path):
    nlp = BUILDERS[component](tiny_encoder, tmp_path, candidates=GENERATORS[generator])
    pipe = nlp.get_pipe(component)
    assert isinstance(pipe.candidates, CLASSES[generator])
    before = predictions(nlp)
    linked = [kb_id for _, _, _, kb_id, _ in before if kb_id not in ("", "NIL")]
    assert all(kb_id in pipe.kb for kb_id in linked)
    assert linked or component == "joint_coref_linker"  # its 4-step tiny model may leave every cluster NIL
    spans = mentions(nlp(TEXT)) or [nlp.make_doc(TEXT)[3:4]]
    expected = [c.rows.tolist() for c in pipe.candidates(pipe.kb, spans)]
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "kb").rename(tmp_path / "kb_gone")  # the reloaded pipeline needs its own files only
    reloaded = spacy.load(tmp_path / "pipeline")
    again = reloaded.get_pipe(component)
    again_spans = mentions(reloaded(TEXT)) or [reloaded.make_doc(TEXT)[3:4]]
    assert [c.rows.tolist() for c in again.candidates(again.kb, again_spans)] == expected
    assert predictions(reloaded) == before


def test_dense_candidates_reach_entities_the_alias_table_misses(tiny_encoder, tmp_path):
    """"Ada" is no alias of anything: alias candidates are empty, dense ones are not."""
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"])
    pipe = nlp.get_pipe("ner_constrained_linker")
    doc = nlp.make_doc("Ada painted .")
    span = doc[0:1]
    assert len(AliasCandidates()(pipe.kb, [span])[0]) == 0
    found = pipe.candidates(pipe.kb, [span])[0]
    assert len(found) == 3 and np.all(found.prior == 0)


def test_ner4el_scores_with_the_generators_similarity_when_asked(tiny_encoder, tmp_path):
    """``model.dense_feature``: the hybrid generator's similarity reaches the scorer, for generated and
    added (training) candidates alike; the scores differ from the scorer without it once the feature's
    weight moved, and the pipeline reloads with identical predictions."""
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"], dense_feature=True)
    pipe = nlp.get_pipe("ner_constrained_linker")
    module = torch_module(pipe)
    assert module.dense_feature and module.combine[0].in_features == 5
    assert float(module.dense_weight.abs().item()) > 0  # trained: the feature's gradient reached it
    doc = nlp.make_doc("Ada painted Mercer .")
    found = pipe.candidates(pipe.kb, [doc[2:3]])[0]
    rng = np.random.default_rng(0)
    gold = next(r for r in range(pipe.kb.n_entities) if r not in found.rows.tolist())
    cands = pipe.selector.training_set(found, None, gold, rng, n_random=2, n_same_type=0)
    assert not np.isnan(cands.dense).any()  # the injected gold and the negatives get the similarity too
    np.testing.assert_allclose(cands.dense[: len(found)], found.dense[: len(found)], atol=1e-6)
    before = predictions(nlp)
    nlp.to_disk(tmp_path / "pipeline")
    assert predictions(spacy.load(tmp_path / "pipeline")) == before


def test_ner_stack_lstm_reads_the_candidate_evidence_when_asked(tiny_encoder, tmp_path):
    """``model.candidate_evidence``: the candidate scorer and the NIL classifier get wider inputs, the
    hybrid generator's similarities reach them, and the pipeline reloads with identical predictions."""
    nlp = build_ner_stack_lstm(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"], candidate_evidence=True)
    pipe = nlp.get_pipe("ner_stack_lstm")
    net = torch_module(pipe, 1).net
    plain = torch_module(build_ner_stack_lstm(tiny_encoder, tmp_path / "plain").get_pipe("ner_stack_lstm"), 1).net
    assert net.el_hidden.in_features == plain.el_hidden.in_features + 2
    assert net.nil_hidden.in_features == plain.nil_hidden.in_features + 4
    arrays = pipe._candidates([nlp.make_doc("Ada painted .")[0:1]])
    assert arrays.has_dense is not None and arrays.has_dense[0].sum() == (arrays.rows[0] >= 0).sum() > 0
    before = predictions(nlp)
    nlp.to_disk(tmp_path / "pipeline")
    assert predictions(spacy.load(tmp_path / "pipeline")) == before


def test_ner4el_weighs_the_generators_similarity_at_prediction_when_asked(tiny_encoder, tmp_path):
    """``similarity_weight``: the hybrid generator's similarity joins each candidate's score at prediction (0:
    the scores as trained); a negative weight is refused, naming the setting."""
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"])
    pipe = nlp.get_pipe("ner_constrained_linker")
    before = predictions(nlp)
    doc = nlp.make_doc("Ada painted Mercer .")
    found = pipe.candidates(pipe.kb, [doc[2:3]])[0]
    best_similar = pipe.kb.entities.ids[int(found.rows[int(np.nanargmax(found.dense))])]
    pipe.configure(similarity_weight=1000.0)  # the similarity alone decides
    doc.ents = [spacy.tokens.Span(doc, 2, 3, "PER")]
    assert pipe(doc).ents[0].kb_id_ == best_similar
    pipe.configure(similarity_weight=0.0)
    assert predictions(nlp) == before
    with pytest.raises(ValueError, match=r"E901\].*similarity_weight"):
        pipe.configure(similarity_weight=-1.0)


def test_ner_stack_lstm_weighs_the_generators_similarity_at_prediction_when_asked(tiny_encoder, tmp_path):
    """``similarity_weight``: the hybrid generator's similarity joins each candidate's log-probability at
    prediction; the mentions and the NIL decisions stay, 0 gives the predictions as trained, and a negative
    weight is refused, naming the setting."""
    nlp = build_ner_stack_lstm(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"])
    pipe = nlp.get_pipe("ner_stack_lstm")
    before = predictions(nlp)
    pipe.configure(similarity_weight=1000.0)  # the similarity alone decides
    doc = nlp(TEXT)
    linked = [ent for ent in doc.ents if ent.kb_id_ not in ("", "NIL")]
    assert linked
    for ent in linked:
        found = pipe.candidates(pipe.kb, [ent])[0]
        assert ent.kb_id_ == pipe.kb.entities.ids[int(found.rows[int(np.nanargmax(found.dense))])]
    assert [(e.start, e.end, e.label_, e.kb_id_ == "NIL") for e in doc.ents] == [(s, e, label, kb == "NIL") for s, e, label, kb, _ in before]
    pipe.configure(similarity_weight=0.0)
    assert predictions(nlp) == before
    with pytest.raises(ValueError, match=r"E901\].*similarity_weight"):
        pipe.configure(similarity_weight=-1.0)


def test_joint_coref_linker_weighs_the_generators_similarity_at_prediction_when_asked(tiny_encoder, tmp_path):
    """``similarity_weight``: the hybrid generator's similarity joins each mention-entity edge before decoding,
    so each mention's best candidate becomes its most similar one; 0 gives the predictions as trained, and a
    negative weight is refused, naming the setting."""
    nlp = build_joint_coref_linker(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"])
    pipe = nlp.get_pipe("joint_coref_linker")
    before = predictions(nlp)
    pipe.configure(mentions_from="model+ents", similarity_weight=1000.0)  # the similarity alone decides
    doc = nlp.make_doc(TEXT)
    doc.ents = [spacy.tokens.Span(doc, s, s + 1, "PER") for s in (0, 3, 8, 10)]  # given: written even if NIL
    checked = 0
    for cluster in pipe.predict([doc])[0]:
        for mention in cluster["mentions"]:
            found = pipe.candidates(pipe.kb, [doc[slice(*mention["span"])]])[0]
            if mention["candidates"] and not np.isnan(found.dense).all():
                most_similar = pipe.kb.entities.ids[int(found.rows[int(np.nanargmax(found.dense))])]
                assert mention["candidates"][0][0] == most_similar
                checked += 1
    assert checked >= 4
    pipe.configure(mentions_from="model", similarity_weight=0.0)
    assert predictions(nlp) == before
    with pytest.raises(ValueError, match=r"E901\].*similarity_weight"):
        pipe.configure(similarity_weight=-1.0)

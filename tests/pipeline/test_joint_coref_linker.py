"""joint_coref_linker: the standard component tests with a tiny BERT and an invented toy KB.

All sentences, names and entities here are invented. torch runs on one thread to keep the CPU quiet.
"""
import math
import warnings

import numpy as np
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Config

from spacy_el.extensions import get_clusters, set_clusters
from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.loaders import kb_from_disk
from spacy_el.pipeline.component_settings import component_settings

from ..conftest import build_invented_kb, linked_cluster_doc
from ..torch_modules import torch_module
from spacy_el.ml.joint_coref_linker.inputs import (
    candidate_spans, encoder_windows, make_doc_inputs, most_central_window, token_wordpiece_pairs,
)

torch.set_num_threads(1)

DIM = 8
NAME = "joint_coref_linker"
TINY_MODEL = {
    "max_span_width": 3, "window": 16, "stride": 8, "ffnn": 32, "ffnn_depth": 1, "width_emb": 8,
    "distance_width": 8, "entity_proj": 16, "dropout": 0.0, "encoder_batch": 8, "encoder_dtype": "float32",
}


def build_kb(with_vectors: bool = True) -> ElKnowledgeBase:
    return build_invented_kb(with_vectors, dim=DIM)


# (text, clusters as [(token spans), kb_id or "NIL"]): one linked and one NIL cluster per document.
TRAIN = [
    ("Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .",
     [([(0, 1), (9, 10)], "Ada_Mercer"), ([(11, 12), (13, 14)], "NIL")]),
    ("Lumen played for Orrin in a small hall ; Orrin said Lumen was loud .",
     [([(0, 1), (11, 12)], "Lumen_(band)"), ([(3, 4), (9, 10)], "NIL")]),
    ("Brisk winds reached Velda where Quill waited , and Quill left Velda at noon .",
     [([(3, 4), (12, 13)], "Velda"), ([(5, 6), (9, 10)], "NIL")]),
]


def make_examples(nlp: Language):
    return [Example(Doc(nlp.vocab, words=text.split()), linked_cluster_doc(nlp.vocab, text, clusters)) for text, clusters in TRAIN]


def make_nlp(tiny_encoder: str, tmp_path, model=None, **cfg):
    kb_dir = tmp_path / "kb"
    if not kb_dir.exists():
        build_kb().to_disk(kb_dir)
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"model": {"encoder": tiny_encoder, **TINY_MODEL, **(model or {})}, **cfg})
    return nlp, kb_dir


def initialize(nlp: Language, kb_dir) -> None:
    examples = make_examples(nlp)
    nlp.get_pipe(NAME).initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))


def saved_initialized(tiny_encoder: str, root, **settings) -> Language:
    """A tiny initialised pipeline (configured with ``settings``) saved to ``root / "model"``; RETURNS it."""
    nlp, kb_dir = make_nlp(tiny_encoder, root)
    initialize(nlp, kb_dir)
    if settings:
        nlp.get_pipe(NAME).configure(**settings)
    nlp.to_disk(root / "model")
    return nlp


def predicted(docs):
    """Per doc: sorted (mention spans, kb_id) per cluster."""
    out = []
    for doc in docs:
        clusters = []
        for key in [k for k in doc.spans if k.startswith("coref_clusters_")]:
            spans = list(doc.spans[key])
            assert len({s.kb_id_ for s in spans}) == 1, "a cluster's mentions must share their link"
            clusters.append((sorted((s.start, s.end) for s in spans), spans[0].kb_id_))
        out.append(sorted(clusters))
    return out


def expected():
    return [sorted((sorted(m), kb) for m, kb in clusters) for _, clusters in TRAIN]


def plain_docs(nlp):
    return [Doc(nlp.vocab, words=text.split()) for text, _ in TRAIN]


@pytest.fixture(scope="module")
def trained(tiny_encoder, tmp_path_factory):
    torch.manual_seed(0)
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path_factory.mktemp("joint"))
    initialize(nlp, kb_dir)
    examples = make_examples(nlp)
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.005
    history = []
    for step in range(150):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses[NAME])
        if step >= 20 and step % 10 == 0 and predicted([nlp(d) for d in plain_docs(nlp)]) == expected():
            break
    return nlp, history


def copy_of(nlp: Language) -> Language:
    other = spacy.blank("en")
    config = {k: v for k, v in nlp.config["components"][NAME].items() if k != "factory"}
    other.add_pipe(NAME, config=config)
    other.from_bytes(nlp.to_bytes())
    return other


# -- construction ------------------------------------------------------------------------------


def test_add_pipe_and_config_defaults(tiny_encoder, tmp_path):
    nlp, _ = make_nlp(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe(NAME)
    assert pipe.cfg["write_ents"] is False and pipe.cfg["spans_prefix"] == "coref_clusters"
    assert pipe.mode == "global" and pipe.model.attrs["refinement"] == "none"
    assert pipe.candidates.top_k == 16 and pipe.model.attrs["span_ratio"] == 0.4


def test_mode_and_refinement_are_the_models(tiny_encoder, tmp_path):
    nlp, _ = make_nlp(tiny_encoder, tmp_path, model={"mode": "local", "refinement": "entity_equalization"})
    pipe = nlp.get_pipe(NAME)
    assert pipe.mode == "local" and pipe.model.attrs["refinement"] == "entity_equalization"
    for setting in ("mode", "refinement"):  # one place for a knob: the model's
        with pytest.raises(ValueError, match=rf"E902\].*has no setting \['{setting}'\]"):
            pipe.configure(**{setting: "local"})


@pytest.mark.parametrize(
    "model, cfg, option",
    [
        ({"mode": "tree"}, {}, "mode"),
        ({"refinement": "average"}, {}, "refinement"),
        ({"window": 2}, {}, "window"),
        ({"stride": 0}, {}, "stride"),
        ({"stride": 15}, {}, "stride"),
        ({"span_ratio": 0.0}, {}, "span_ratio"),
        ({"max_span_width": 0}, {}, "max_span_width"),
        ({}, {"candidates": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 0}}, "top_k"),
        ({"dropout": 1.5}, {}, "dropout"),
        ({"encoder_dtype": "float16"}, {}, "encoder_dtype"),
        ({"dropout_masks": "gaussian"}, {}, "dropout_masks"),
        ({"encoder_lr_scale": -0.1}, {}, "encoder_lr_scale"),
        ({"antecedent_pruning": "farthest"}, {}, "antecedent_pruning"),
        ({}, {"spans_prefix": ""}, "spans_prefix"),
        ({}, {"mentions_from": "ner"}, "mentions_from"),
        ({}, {"cluster_link": "tagger"}, "cluster_link"),
        ({}, {"gold_candidate_dropout": 1.0}, "gold_candidate_dropout"),
        ({}, {"gold_candidate_dropout": -0.1}, "gold_candidate_dropout"),
    ],
)
def test_bad_config_values_raise_naming_the_option(tiny_encoder, tmp_path, model, cfg, option):
    with pytest.raises(ValueError, match=option):
        make_nlp(tiny_encoder, tmp_path, model=model, **cfg)


def test_initialize_warns_when_gold_mentions_are_wider_than_max_span_width(tiny_encoder, tmp_path):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe(NAME)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every toy mention is one token wide: nothing to say
        initialize(nlp, kb_dir)
    text = "The old harbour of Velda at dawn was calm , and Velda slept ."
    wide = Example(Doc(nlp.vocab, words=text.split()), linked_cluster_doc(nlp.vocab, text, [([(0, 7), (11, 12)], "Velda")]))
    with pytest.warns(UserWarning, match=r"W803\] joint_coref_linker: 50\.0% .*\(1 of 2\).*max_span_width = 3 .*\(the widest: 7\).*"
                      r"max_span_width = 7 covers all but 0\.0%"):
        pipe.initialize(lambda: [wide], nlp=nlp, kb_loader=kb_from_disk(kb_dir))


def test_window_longer_than_the_encoder_is_refused(tiny_encoder, tmp_path):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path, model={"window": 1024, "stride": 64})  # tiny_encoder: 512 positions
    with pytest.raises(ValueError, match="E985"):
        initialize(nlp, kb_dir)


def test_nlp_initialize_loads_the_kb_from_the_config(tiny_encoder, tmp_path):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path)
    nlp.config["initialize"]["components"][NAME] = {"kb_loader": {"@misc": "spacy-el.KBFromDisk.v1", "path": str(kb_dir)}}
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    pipe = nlp.get_pipe(NAME)
    assert pipe.kb.n_entities == 6 and pipe.model.get_dim("nE") == DIM
    assert isinstance(get_clusters(nlp(TRAIN[0][0])), list)


# -- windows -------------------------------------------------------------------------------------


def test_windows_cover_everything_and_pick_the_most_central():
    ranges = encoder_windows(30, window=12, stride=5)  # 10 content wordpieces per window
    assert ranges == [(0, 10), (5, 15), (10, 20), (15, 25), (20, 30)]
    which, offset = most_central_window(ranges, 30)
    assert np.all(np.array([s for s, _ in ranges])[which] + offset == np.arange(30))
    # Wordpiece 7 is 2 from the end of window 0 but 2 from the start of window 1 (tie: earlier);
    # wordpiece 8 is central in window 1 (3 and 6 from its edges), not window 0 (1 from its end).
    assert which[7] == 0 and which[8] == 1
    assert which[0] == 0 and which[29] == 4  # document edges are not window edges
    assert encoder_windows(0, 12, 5) == [] and encoder_windows(4, 12, 5) == [(0, 4)]


def test_tokens_map_to_the_wordpieces_they_overlap(tiny_encoder):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder)
    doc = spacy.blank("en")("Quillbrook's  harbour, glowing.")
    encoded = tokenizer(doc.text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = np.asarray(encoded["offset_mapping"])
    tokens, pieces = token_wordpiece_pairs(doc, offsets)
    for t in doc:
        mine = offsets[pieces[tokens == t.i]]
        if t.is_space:
            assert len(mine) == 0
        else:
            assert len(mine) >= 1 and mine[0][0] == t.idx and mine[-1][1] == t.idx + len(t)
    assert len(set(pieces.tolist())) == len(offsets), "every wordpiece belongs to one token here"


def test_spans_stay_in_sentences_and_skip_whitespace():
    nlp = spacy.blank("en")
    words = ["Ada", "slept", ".", "Then", "Tobin", "\n", "woke", "."]
    doc = Doc(nlp.vocab, words=words, spaces=[True, False, True, True, False, False, False, False])
    whole = candidate_spans(doc, 3)
    assert [1, 4] in whole.tolist()  # no sentences: spans cross "." freely
    assert [3, 6] not in whole.tolist() and [5, 6] not in whole.tolist()  # none ends on the newline token
    assert not any(doc[s].is_space or doc[e - 1].is_space for s, e in whole.tolist())
    doc = Doc(nlp.vocab, words=words, sent_starts=[True, False, False, True, False, False, False, False])
    within = candidate_spans(doc, 3).tolist()
    assert [1, 4] not in within and [2, 3] in within and [3, 5] in within
    assert all((s < 3) == (e <= 3) for s, e in within)
    assert candidate_spans(nlp.make_doc(""), 3).shape == (0, 2)


def test_doc_longer_than_one_window_is_fully_encoded(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe(NAME)
    text = " ".join(TRAIN[0][0] for _ in range(4))  # about 80 wordpieces, windows of 14
    doc = nlp.make_doc(text)
    inputs = make_doc_inputs(pipe.model, doc, pipe._candidate_fns(doc)[0])
    assert inputs.input_ids.shape[0] > 4 and inputs.input_ids.shape[1] <= 16
    module = torch_module(pipe)
    with torch.no_grad():
        vectors = module.token_vectors([inputs])[0]
    assert vectors.shape[0] == len(doc)
    assert bool((vectors.abs().sum(dim=1) > 0).all()), "every token gets a vector: nothing truncated"
    doc = nlp(text)
    clusters = get_clusters(doc)
    assert all(0 <= s < e <= len(doc) for c in clusters for s, e in c)
    # The same text repeated: the painter is mentioned in every copy, and every copy is linked.
    linked = [(s.start, s.kb_id_) for k in doc.spans if k.startswith("coref_clusters_") for s in doc.spans[k]]
    assert {kb for _, kb in linked if kb != "NIL"} <= {"Ada_Mercer", "Mercer_(town)", "Mercer_Corp"}


# -- training and prediction ---------------------------------------------------------------------


def test_overfits_to_gold_clusters_and_links(trained):
    nlp, history = trained
    assert history[-1] < history[0]
    docs = [nlp(d) for d in plain_docs(nlp)]
    assert predicted(docs) == expected()
    doc = docs[0]
    assert get_clusters(doc) == [[(0, 1), (9, 10)], [(11, 12), (13, 14)]]
    assert doc._.coref_clusters == [[[0, 1], [9, 10]], [[11, 12], [13, 14]]]
    mercer = doc.spans["coref_clusters_1"][0]
    assert mercer.kb_id_ == "Ada_Mercer" and mercer._.cluster_id == 1 and mercer._.nil_reason is None
    assert mercer._.candidate_scores[0][0] in {"Ada_Mercer", "Mercer_(town)", "Mercer_Corp"}
    assert 0.0 < mercer._.link_score <= 1.0 and 0.0 <= mercer._.nil_prob <= 1.0
    tobin = doc.spans["coref_clusters_2"][1]
    assert tobin.kb_id_ == "NIL" and tobin._.nil_reason == "no_candidates" and tobin._.candidate_scores == []
    assert tobin._.cluster_id == 2
    assert list(doc.ents) == [], "doc.ents is untouched unless write_ents"


def test_write_ents(trained):
    other = copy_of(trained[0])
    other.get_pipe(NAME).configure(write_ents=True)
    doc = other(Doc(other.vocab, words=TRAIN[1][0].split()))
    assert [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents] == [(0, 1, "ENT", "Lumen_(band)"), (11, 12, "ENT", "Lumen_(band)")]


# -- after an upstream tagger: mentions_from / cluster_link ------------------------------------------


def with_ents(nlp: Language, index: int, ents) -> Doc:
    """TRAIN[index]'s text with ``doc.ents`` set as an upstream tagger would: (start, end, label, kb_id)."""
    doc = Doc(nlp.vocab, words=TRAIN[index][0].split())
    doc.ents = [Span(doc, s, e, label, kb_id=kb) for s, e, label, kb in ents]
    return doc


def composed(trained, **cfg) -> Language:
    other = copy_of(trained[0])
    other.get_pipe(NAME).configure(**cfg)
    return other


@pytest.mark.parametrize("mentions_from", ["ents", "model+ents"])
def test_given_entities_are_clustered_and_all_written(trained, mentions_from):
    nlp = composed(trained, mentions_from=mentions_from)
    gold = [(s, e) for mentions, _ in TRAIN[0][1] for s, e in mentions]
    doc = nlp(with_ents(nlp, 0, [(s, e, "PER", "") for s, e in gold] + [(4, 5, "LOC", "")]))  # + "harbour"
    clusters = predicted([doc])[0]
    written = sorted(m for mentions, _ in clusters for m in mentions)
    assert (4, 5) in written, "a given entity is written, even as a singleton"
    if mentions_from == "ents":
        assert written == sorted(gold + [(4, 5)]), "only the given entities are clustered"
    assert ([(0, 1), (9, 10)], "Ada_Mercer") in clusters and ([(11, 12), (13, 14)], "NIL") in clusters


def test_cluster_link_upstream_spreads_the_taggers_link_over_the_cluster(trained):
    # The tagger linked the first "Lumen" to Lumen_(unit) and left the second unlinked.
    ents = [(0, 1, "ORG", "Lumen_(unit)"), (3, 4, "PER", "NIL"), (9, 10, "PER", ""), (11, 12, "ORG", "")]
    own = composed(trained, mentions_from="ents", write_ents=True)(with_ents(trained[0], 1, ents))
    assert [(e.start, e.kb_id_) for e in own.ents if e.start in (0, 11)] == [(0, "Lumen_(band)"), (11, "Lumen_(band)")]
    upstream = composed(trained, mentions_from="ents", write_ents=True, cluster_link="upstream")
    doc = upstream(with_ents(upstream, 1, ents))
    assert [(e.start, e.label_, e.kb_id_) for e in doc.ents] == [
        (0, "ORG", "Lumen_(unit)"), (3, "PER", "NIL"), (9, "PER", "NIL"), (11, "ORG", "Lumen_(unit)"),
    ], "doc.ents and the clusters agree; the tagger's link wins and spreads"
    assert ([(0, 1), (11, 12)], "Lumen_(unit)") in predicted([doc])[0]


def test_an_upstream_link_missing_from_the_kb_leaves_the_models(trained):
    upstream = composed(trained, mentions_from="ents", cluster_link="upstream")
    doc = upstream(with_ents(upstream, 1, [(0, 1, "ORG", "Q999_unknown"), (11, 12, "ORG", "")]))
    assert predicted([doc])[0] == [([(0, 1), (11, 12)], "Lumen_(band)")]


def test_given_entity_wider_than_max_span_width_keeps_its_link_and_label(trained):
    nlp = composed(trained, mentions_from="ents", write_ents=True)
    wide = (5, 9, "LOC", "Velda")  # "a small hall ;": 4 tokens > max_span_width 3
    doc = nlp(with_ents(nlp, 1, [(0, 1, "ORG", ""), wide, (11, 12, "ORG", "")]))
    assert (5, 9, "LOC", "Velda") in [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents]
    assert all((5, 9) not in mentions for mentions, _ in predicted([doc])[0])


def test_component_settings_callback_configures_a_sourced_linker(trained, tmp_path):
    """The spacy assemble path: a sourced component keeps its trained config; the callback changes
    it, and the change survives saving and spacy.load."""
    trained[0].to_disk(tmp_path / "source")
    config = Config().from_str(f"""
[nlp]
lang = "en"
pipeline = ["{NAME}"]

[nlp.after_pipeline_creation]
@callbacks = "spacy-el.ComponentSettings.v1"

[nlp.after_pipeline_creation.settings]

[nlp.after_pipeline_creation.settings.{NAME}]
mentions_from = "ents"
cluster_link = "upstream"

[components]

[components.{NAME}]
source = "{tmp_path / 'source'}"
""")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    with nlp.select_pipes(disable=[NAME]):
        nlp.initialize()
    nlp.to_disk(tmp_path / "assembled")
    loaded = spacy.load(tmp_path / "assembled")
    pipe = loaded.get_pipe(NAME)
    assert (pipe.cfg["mentions_from"], pipe.cfg["cluster_link"]) == ("ents", "upstream")
    doc = loaded(with_ents(loaded, 1, [(0, 1, "ORG", "Lumen_(unit)"), (11, 12, "ORG", "")]))
    assert predicted([doc])[0] == [([(0, 1), (11, 12)], "Lumen_(unit)")]


@pytest.mark.parametrize(
    "settings, message",
    [
        ({NAME: {"mentions_from": "tagger"}}, r"E901\].*mentions_from"),
        ({NAME: {"threshold": 0.5}}, r"E902\].*'threshold'"),
        ({"parser": {"mentions_from": "ents"}}, r"E832\].*'parser'"),
        ({"sentencizer": {"overwrite": True}}, r"E833\].*'sentencizer'"),
    ],
)
def test_component_settings_callback_names_what_is_wrong(trained, settings, message):
    nlp = copy_of(trained[0])
    nlp.add_pipe("sentencizer", first=True)
    with pytest.raises(ValueError, match=message):
        component_settings(settings)(nlp)
    assert nlp.get_pipe(NAME).cfg["mentions_from"] == "model", "nothing changed"


def test_score_reports_coref_and_cluster_el(trained):
    nlp, _ = trained
    scores = nlp.evaluate(make_examples(nlp))
    assert scores["coref_avg_f"] == pytest.approx(1.0) and scores["elh_f"] == pytest.approx(1.0)


def test_empty_whitespace_and_mentionless_docs(trained):
    nlp, _ = trained
    for text in ["", "   ", "\n\n"]:
        doc = nlp(text)
        assert get_clusters(doc) == [] and list(doc.ents) == []
    doc = nlp("it is , of the .")
    for cluster in get_clusters(doc):
        assert all(0 <= s < e <= len(doc) for s, e in cluster)
    assert list(nlp.pipe(["", "Mercer painted .", "   "]))  # mixed batch


def test_spans_without_candidates_are_nil(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe(NAME)
    doc = nlp.make_doc("Zqxv met Wrenna .")
    rows, vectors, priors = pipe._candidate_fns(doc)[0](np.array([[0, 1], [2, 3]]))
    assert rows.shape == (2, 1) and (rows == -1).all() and vectors.shape == (2, 1, DIM)
    assert priors.shape == (2, 1) and (priors == 0).all()
    # The model scores kept spans whose candidate lists are all padding; decoding makes them NIL.
    _, outputs = pipe.model.predict(pipe._batch([doc]))
    assert len(outputs[0].spans) and (outputs[0].candidate_rows == -1).all()
    assert outputs[0].link_scores.shape == (len(outputs[0].spans), 1) and isinstance(outputs[0].link_scores, np.ndarray)
    for cluster in pipe._clusters(outputs[0], doc):
        assert cluster["kb_id"] == "NIL" and cluster["reason"] == "no_candidates"
    doc = nlp(doc)
    for key in [k for k in doc.spans if k.startswith("coref_clusters_")]:
        for span in doc.spans[key]:
            assert span.kb_id_ == "NIL" and span._.nil_reason == "no_candidates" and span._.candidate_scores == []


def test_empty_kb_at_inference_gives_all_nil(trained):
    other = copy_of(trained[0])
    pipe = other.get_pipe(NAME)
    pipe.kb = ElKnowledgeBase(other.vocab)
    docs = [other(d) for d in plain_docs(other)]
    spans = [s for d in docs for k in d.spans if k.startswith("coref_clusters_") for s in d.spans[k]]
    assert spans, "the trained coreference still finds the mentions"
    assert all(s.kb_id_ == "NIL" and s._.nil_reason == "no_candidates" for s in spans)


def test_update_skips_unannotated_examples_and_aligns_by_characters(trained):
    nlp = copy_of(trained[0])
    pipe = nlp.get_pipe(NAME)
    text = "Mercer painted the harbour."
    unannotated = Example(nlp.make_doc(text), Doc(nlp.vocab, words=["Mercer", "painted", "the", "harbour."]))
    assert pipe.update([unannotated]) == {NAME: 0.0}
    # Reference tokens differ from the predicted ones ("harb" "our." vs "harbour" "."): aligned by characters.
    reference = Doc(nlp.vocab, words=["Mercer", "painted", "the", "harb", "our."], spaces=[True, True, True, False, False])
    set_clusters(reference, [[(0, 1)], [(3, 4)]])
    reference.ents = [Span(reference, 0, 1, "PER", kb_id="Ada_Mercer")]
    gold = pipe._gold(Example(nlp.make_doc(text), reference))
    row = pipe.kb.entities.row_of("Ada_Mercer")
    assert gold == [([(0, 1)], row)]  # "harb" does not align with predicted tokens: left out
    losses = pipe.update([Example(nlp.make_doc(text), reference)], sgd=nlp.create_optimizer())
    assert np.isfinite(losses[NAME]) and losses[NAME] > 0


def test_gold_candidate_dropout_hides_the_gold_entity_from_some_mentions_of_a_cluster_in_training(trained):
    nlp = copy_of(trained[0])
    pipe = nlp.get_pipe(NAME)
    doc = nlp.make_doc(TRAIN[0][0])
    row = pipe.kb.entities.row_of("Ada_Mercer")
    gold = [([(0, 1), (9, 10)], row)]  # "Mercer" twice: both have Ada_Mercer among their candidates
    spans = np.array([(0, 1), (9, 10), (11, 12)], dtype=np.int64)
    assert all((pipe._candidate_fns(doc, gold)[0](spans)[0][:2] == row).any(axis=1)), "off by default"
    pipe.configure(gold_candidate_dropout=0.5)
    np.random.seed(0)
    hidden = []
    for _ in range(40):
        rows = pipe._candidate_fns(doc, gold)[0](spans)[0]
        has = (rows == row).any(axis=1)
        assert has[:2].any(), "one mention of the cluster always keeps the entity"
        for i in np.flatnonzero(~has[:2]):
            assert (rows[i] >= 0).sum() == 2, "only the gold entity is hidden: the two other candidates of 'Mercer' stay"
        hidden.append(tuple(~has[:2]))
    assert {(True, False), (False, True), (False, False)} <= set(hidden)
    assert (pipe._candidate_fns(doc)[0](spans)[0][:2] == row).any(axis=1).all(), "prediction (no gold) is unaffected"


@pytest.mark.parametrize("mode", ["local", "coref", "link"])
def test_other_modes_train_and_predict(tiny_encoder, tmp_path, mode):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path, model={"mode": mode, "refinement": "entity_equalization" if mode == "local" else "none"})
    initialize(nlp, kb_dir)
    optimizer = nlp.create_optimizer()
    losses = {}
    nlp.update(make_examples(nlp), sgd=optimizer, losses=losses)
    assert np.isfinite(losses[NAME])
    doc = nlp(TRAIN[0][0])
    kb_ids = {s.kb_id_ for k in doc.spans if k.startswith("coref_clusters_") for s in doc.spans[k]}
    if mode == "coref":
        assert kb_ids <= {""}
        spans = [s for k in doc.spans if k.startswith("coref_clusters_") for s in doc.spans[k]]
        assert all(s._.link_score is None and s._.candidate_scores == [] for s in spans)
    if mode == "link":
        assert all(len(c) == 1 for c in get_clusters(doc))


def test_prior_feature_trains_with_the_thinc_optimizer_and_round_trips(tiny_encoder, tmp_path):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path, model={"prior_feature": True})
    initialize(nlp, kb_dir)
    optimizer = nlp.create_optimizer()
    scorer = torch_module(nlp.get_pipe(NAME)).scorer
    before = float(scorer.prior_weight.detach()[0])
    for _ in range(3):
        losses = {}
        nlp.update(make_examples(nlp), sgd=optimizer, losses=losses)
        assert np.isfinite(losses[NAME])
    assert float(scorer.prior_weight.detach()[0]) != before, "the prior weight is trained"
    other = copy_of(nlp)
    docs = plain_docs(nlp)
    assert predicted([nlp(d) for d in docs]) == predicted([other(Doc(nlp.vocab, words=[t.text for t in d])) for d in docs])


def test_coarse_antecedent_pruning_trains_with_the_thinc_optimizer_and_round_trips(tiny_encoder, tmp_path):
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path, model={"antecedent_pruning": "coarse", "max_antecedents": 2})
    initialize(nlp, kb_dir)
    optimizer = nlp.create_optimizer()
    scorer = torch_module(nlp.get_pipe(NAME)).scorer
    before = scorer.coarse_antecedent.weight.detach().clone()
    for _ in range(3):
        losses = {}
        nlp.update(make_examples(nlp), sgd=optimizer, losses=losses)
        assert np.isfinite(losses[NAME])
    assert not torch.equal(scorer.coarse_antecedent.weight.detach(), before), "the coarse score is trained"
    other = copy_of(nlp)
    assert torch_module(other.get_pipe(NAME)).scorer.antecedent_pruning == "coarse"
    assert other.get_pipe(NAME).to_bytes() == nlp.get_pipe(NAME).to_bytes()
    docs = plain_docs(nlp)
    assert predicted([nlp(d) for d in docs]) == predicted([other(Doc(nlp.vocab, words=[t.text for t in d])) for d in docs])
    # A document whose kept spans are ranked in several blocks (RANK_BLOCK mentions each): predicted alike
    # by nlp, nlp.pipe and the round-tripped copy.
    long_text = " ".join(text for text, _ in TRAIN * 60)  # about 2,500 tokens: over 1,000 kept spans
    long_docs = [nlp(long_text), next(iter(nlp.pipe([long_text]))), other(long_text)]
    assert len(long_docs[0]) > 2000
    assert predicted(long_docs[:1]) == predicted(long_docs[1:2]) == predicted(long_docs[2:])


def test_predict_max_antecedents_is_the_scorers_budget_at_prediction_only(trained, monkeypatch):
    nlp, _ = trained
    other = copy_of(nlp)  # updated below: the shared fixture stays as it is
    pipe = other.get_pipe(NAME)
    scorer = torch_module(pipe).scorer
    budgets = []
    forward = scorer.forward
    monkeypatch.setattr(scorer, "forward", lambda *a, **kw: budgets.append(kw.get("max_antecedents")) or forward(*a, **kw))
    docs = plain_docs(other)
    predicted([other(d) for d in docs])
    assert set(budgets) == {None}, "0 (the default) leaves the model's own"
    model_budget, scorer.max_antecedents = scorer.max_antecedents, 1
    built_with_one = predicted([other(d) for d in docs])
    scorer.max_antecedents = model_budget
    pipe.configure(predict_max_antecedents=1)
    budgets.clear()
    assert predicted([other(d) for d in docs]) == built_with_one
    assert set(budgets) == {1} and scorer.max_antecedents == model_budget
    budgets.clear()
    other.update(make_examples(other), sgd=other.create_optimizer(), losses={})
    assert set(budgets) == {None}, "training scores the model's budget"
    with pytest.raises(ValueError, match=r"E901\].*predict_max_antecedents"):
        pipe.configure(predict_max_antecedents=-1)


def test_predict_span_ratio_is_the_pruning_budget_at_prediction_only(trained):
    nlp, _ = trained
    other = copy_of(nlp)  # configured below: the shared fixture stays as it is
    pipe = other.get_pipe(NAME)
    doc = other.make_doc(TRAIN[0][0])
    model_ratio = pipe.model.attrs["span_ratio"]

    def kept(batch_of) -> int:
        return batch_of([doc]).docs[0].n_keep

    def kept_spans(docs) -> list:  # the spans pruning keeps at prediction: the only ones the decoder can write
        return [[] if out is None else [tuple(span) for span in out.spans.tolist()] for out in pipe._predicted(docs)]

    assert kept(pipe._batch) == math.ceil(model_ratio * len(doc)), "0 (the default) leaves the model's own"
    docs = plain_docs(other)
    with_model_ratio = predicted([other(d) for d in docs])
    pipe.configure(predict_span_ratio=model_ratio)
    assert predicted([other(d) for d in docs]) == with_model_ratio, "the model's own ratio given predicts the same"
    kept_before = kept_spans([doc])[0]
    pipe.configure(predict_span_ratio=2 * model_ratio)
    assert kept(pipe._batch) == math.ceil(2 * model_ratio * len(doc))
    kept_after = kept_spans([doc])[0]
    assert len(kept_before) < len(kept_after) <= math.ceil(2 * model_ratio * len(doc))
    written = {mention for cluster in get_clusters(other(doc.text)) for mention in cluster}
    assert written and written <= set(kept_after), "every mention written is a kept span"
    example = make_examples(other)[0]
    training_batch = pipe._batch([example.predicted], [pipe._gold(example)])
    assert training_batch.docs[0].n_keep == math.ceil(model_ratio * len(example.predicted)), "training keeps the model's"
    with pytest.raises(ValueError, match=r"E901\].*predict_span_ratio"):
        pipe.configure(predict_span_ratio=-0.1)


def test_min_singleton_prob_decides_which_nil_singletons_are_written(trained):
    other = copy_of(trained[0])
    pipe = other.get_pipe(NAME)
    doc = other.make_doc("Zqxv met Wrenna and the old painter at the harbour .")  # no candidates: all NIL
    _, outputs = pipe.model.predict(pipe._batch([doc]))
    mention_score = {tuple(int(x) for x in span): float(s) for span, s in zip(outputs[0].spans, outputs[0].mention_scores)}

    def nil_singletons(threshold: float) -> set:
        pipe.configure(min_singleton_prob=threshold)
        clusters = pipe._clusters(outputs[0], doc)
        return {c["mentions"][0]["span"] for c in clusters if len(c["mentions"]) == 1 and c["kb_id"] == "NIL"}

    every_kept = nil_singletons(0.0)
    assert every_kept and nil_singletons(1.0) == set()
    assert nil_singletons(0.5) == {span for span in every_kept if mention_score[span] > 0}, "0.5 is Phi_p > 0"
    between = nil_singletons(0.3)
    assert nil_singletons(0.5) <= between <= every_kept
    assert between == {span for span in every_kept if mention_score[span] > math.log(0.3 / 0.7)}
    with pytest.raises(ValueError, match=r"E901\].*min_singleton_prob"):
        pipe.configure(min_singleton_prob=1.5)


def test_float_settings_survive_bytes_and_disk_round_trips_exactly(trained, tmp_path):
    nlp = copy_of(trained[0])
    settings = {"similarity_weight": 1 / 3, "min_singleton_prob": 0.3, "gold_candidate_dropout": 1e-20}
    nlp.get_pipe(NAME).configure(**settings)
    from_bytes = copy_of(nlp)
    nlp.to_disk(tmp_path / "saved")
    from_disk = spacy.load(tmp_path / "saved")
    for loaded in (from_bytes, from_disk):
        assert {k: getattr(loaded.get_pipe(NAME).settings, k) for k in settings} == settings


@pytest.mark.parametrize("scale", [0.0, 0.5])
def test_encoder_learns_at_its_own_rate(tiny_encoder, tmp_path, scale):
    """encoder_lr_scale 0 freezes the encoder; otherwise both the encoder and the new layers move."""
    nlp, kb_dir = make_nlp(tiny_encoder, tmp_path, model={"encoder_lr_scale": scale})
    initialize(nlp, kb_dir)
    module = torch_module(nlp.get_pipe(NAME))
    encoder_before = [p.detach().clone() for p in module.encoder.parameters()]
    scorer_before = [p.detach().clone() for p in module.scorer.parameters()]
    nlp.update(make_examples(nlp), sgd=nlp.create_optimizer())
    encoder_moved = any(not torch.equal(a, b) for a, b in zip(encoder_before, module.encoder.parameters()))
    assert encoder_moved == (scale > 0)
    assert any(not torch.equal(a, b) for a, b in zip(scorer_before, module.scorer.parameters()))
    assert all(p.grad is None or not p.grad.abs().sum() for p in module.parameters()), "gradients are reset"

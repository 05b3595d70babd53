"""ner_stack_lstm: the standard component tests with a tiny CNN tok2vec and an invented toy KB.

All sentences, names and entities here are invented. torch runs on one thread to keep the CPU quiet.
"""
import numpy as np
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.algorithms.transition_system import TransitionSystem
from spacy_el.candidates import AliasCandidates
from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.loaders import kb_from_disk
from spacy_el.ml.ner_stack_lstm.inputs import gold_actions, segment_doc
from spacy_el.ml.ner_stack_lstm.modules import GoldActions, StackLstmNerEl, StackLstmSizes

from ..conftest import build_invented_kb
from ..torch_modules import torch_module

NAME = "ner_stack_lstm"
DIM = 8
TINY_MODEL = {
    "hidden_width": 16, "attention_width": 8, "el_hidden_width": 16, "nil_hidden_width": 8, "action_width": 8, "dropout": 0.0,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 500, "window_size": 1,
        "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
    },
}
# (text, [(start, end, label, kb_id)]): linked, NIL and two-token mentions.
TRAIN = [
    ("Mercer painted the harbour at dawn .", [(0, 1, "PER", "Ada_Mercer")]),
    ("Lumen played in Mercer last night .", [(0, 1, "ORG", "Lumen_(band)"), (3, 4, "LOC", "Mercer_(town)")]),
    ("Brisk winds reached Velda where Quill Tobin waited .", [(3, 4, "LOC", "Velda"), (5, 7, "PER", "NIL")]),
]


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    yield


def reference(vocab, text, ents) -> Doc:
    doc = Doc(vocab, words=text.split())
    doc.ents = [Span(doc, s, e, label, kb_id=kb) for s, e, label, kb in ents]
    return doc


def make_examples(nlp: Language):
    return [Example(nlp.make_doc(text), reference(nlp.vocab, text, ents)) for text, ents in TRAIN]


def make_nlp(tmp_path, model=None, sentencizer=True, **cfg):
    kb_dir = tmp_path / "kb"
    if not kb_dir.exists():
        build_invented_kb(True, dim=DIM).to_disk(kb_dir)
    nlp = spacy.blank("en")
    if sentencizer:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe(NAME, config={"model": {**TINY_MODEL, **(model or {})}, **cfg})
    nlp.config["initialize"]["components"][NAME] = {"kb_loader": {"@misc": "spacy-el.KBFromDisk.v1", "path": str(kb_dir)}}
    return nlp, kb_dir


def train(nlp: Language, steps: int = 80) -> list:
    torch.manual_seed(0)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.01
    history = []
    for _ in range(steps):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses[NAME])
    return history


def ents_of(docs):
    return [[(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents] for doc in docs]


def expected():
    return [[(s, e, label, kb) for s, e, label, kb in ents] for _, ents in TRAIN]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.set_num_threads(1)
    nlp, _ = make_nlp(tmp_path_factory.mktemp("nsl"))
    history = train(nlp)
    return nlp, history


def copy_of(nlp: Language) -> Language:
    other = spacy.blank("en")
    other.add_pipe("sentencizer")
    config = {k: v for k, v in nlp.config["components"][NAME].items() if k != "factory"}
    other.add_pipe(NAME, config=config)
    other.from_bytes(nlp.to_bytes())
    return other


# -- transition system, batches and the model ----------------------------------------------------------


def test_teacher_forcing_equals_stepwise_decoding_of_the_gold_actions():
    """The parallel training computation and the step-by-step parser see the same states."""
    torch.manual_seed(0)
    system = TransitionSystem(["PER", "LOC"])
    lengths = np.array([5, 3, 7, 1])
    chunks = [[(0, 2, "PER"), (3, 4, "LOC")], [], [(1, 4, "LOC"), (4, 5, "PER"), (6, 7, "PER")], [(0, 1, "LOC")]]
    arrays = gold_actions(system, chunks, lengths)
    sizes = StackLstmSizes(word_width=8, n_actions=system.n_actions, entity_width=4, hidden_width=6, attention_width=5,
                           el_hidden_width=7, nil_hidden_width=3, action_width=4)
    net = StackLstmNerEl(sizes).eval()
    enc = net.encode(torch.randn(len(lengths), int(lengths.max()), 8), torch.tensor(lengths))
    gold = GoldActions(**{k: torch.tensor(v) for k, v in arrays.items()})
    with torch.no_grad():
        logits, forced = net.teacher_forced(enc, gold)
        actions, stepwise_logits, stepwise = net.decode(enc, forced=gold.actions)
    steps = gold.actions >= 0
    assert torch.equal(actions[:, : gold.actions.size(1)], gold.actions)
    assert torch.allclose(logits[steps], stepwise_logits[steps], atol=1e-5)
    for name in ("sentence", "start", "end", "action"):
        assert getattr(forced, name).tolist() == getattr(stepwise, name).tolist()
    assert forced.start.tolist() == [0, 3, 1, 4, 6, 0] and forced.end.tolist() == [2, 4, 4, 5, 7, 1]
    assert torch.allclose(forced.features, stepwise.features, atol=1e-5)
    assert torch.allclose(forced.stack_state, stepwise.stack_state, atol=1e-5)


def test_gold_actions_arrays_follow_the_oracle():
    system = TransitionSystem(["PER"])
    arrays = gold_actions(system, [[(1, 3, "PER")]], np.array([4]))
    assert arrays["actions"].tolist() == [[1, 0, 0, 2, 1]]  # OUT SHIFT SHIFT REDUCE-PER OUT
    assert arrays["buf"].tolist() == [[0, 1, 2, 3, 3]]
    assert arrays["out_count"].tolist() == [[0, 1, 1, 1, 2]]
    # Configurations: 0 = empty stack, 1 = [w1], 2 = [w1, w2].
    assert arrays["step_config"].tolist() == [[0, 0, 1, 2, 0]]
    assert arrays["config_length"].tolist() == [0, 1, 2] and arrays["config_start"].tolist() == [0, 1, 1]
    assert arrays["items"].tolist() == [[0, 4 + 0, 3]]  # word 0, chunk 0 (after the 4 word slots), word 3
    assert arrays["chunk_step"].tolist() == [3] and arrays["chunk_config"].tolist() == [2]


def test_segments_follow_sentences_join_across_gold_entities_and_cut_long_ones():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=list("abcdefgh"), sent_starts=[True, False, False, True, False, False, False, False])
    assert segment_doc(doc, 10) == [(0, 3), (3, 8)]
    assert segment_doc(doc, 10, protected=[(2, 4)]) == [(0, 8)]  # a gold entity crosses the boundary
    assert segment_doc(doc, 2) == [(0, 2), (2, 3), (3, 5), (5, 7), (7, 8)]
    assert segment_doc(doc, 2, protected=[(4, 6)]) == [(0, 2), (2, 3), (3, 4), (4, 6), (6, 8)]
    no_sents = Doc(nlp.vocab, words=list("abcde"))
    assert segment_doc(no_sents, 2) == [(0, 2), (2, 4), (4, 5)]
    assert segment_doc(nlp.make_doc(""), 5) == []
    with pytest.raises(ValueError, match=r"E922\] max_sentence_length"):
        segment_doc(doc, 0)


# -- construction ----------------------------------------------------------------------------------


def test_add_pipe_and_defaults(tmp_path):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(NAME)
    assert pipe.tasks == "joint" and pipe.labels == ()
    assert isinstance(pipe.candidates, AliasCandidates) and (pipe.candidates.top_k, pipe.candidates.fuzzy) == (30, False)
    assert pipe.model.attrs["hidden_width"] == 100 and pipe.model.attrs["entity_vectors"] == "kb"


@pytest.mark.parametrize(
    "model, cfg, option",
    [
        ({"hidden_width": 0}, {}, "hidden_width"),
        ({"entity_vectors": "wiki"}, {}, "entity_vectors"),
        ({"dropout": 1.0}, {}, "dropout"),
        ({}, {"tasks": "both"}, "tasks"),
        ({}, {"candidates": {"@misc": "spacy-el.AliasCandidates.v1", "top_k": 0}}, "top_k"),
        ({}, {"max_sentence_length": 0}, "max_sentence_length"),
        ({}, {"min_nil_prob": 0.0}, "min_nil_prob"),
    ],
)
def test_bad_config_values_raise_naming_the_option(tmp_path, model, cfg, option):
    with pytest.raises(ValueError, match=option):
        make_nlp(tmp_path, model=model, **cfg)


def test_initialize_needs_a_kb_unless_ner_only(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe(NAME, config={"model": TINY_MODEL})
    examples = make_examples(nlp)
    with pytest.raises(ValueError, match="E822"):
        nlp.initialize(lambda: examples)
    ner_only = spacy.blank("en")
    ner_only.add_pipe(NAME, config={"model": TINY_MODEL, "tasks": "ner"})
    ner_only.initialize(lambda: make_examples(ner_only))
    assert ner_only.get_pipe(NAME).labels == ("PER", "ORG", "LOC")
    assert ner_only.get_pipe(NAME).model.get_dim("nE") == 0


def test_initialize_needs_labels(tmp_path):
    nlp, _ = make_nlp(tmp_path)
    unlabelled = [Example(nlp.make_doc("Quiet rain ."), Doc(nlp.vocab, words=["Quiet", "rain", "."]))]
    with pytest.raises(ValueError, match="E821"):
        nlp.initialize(lambda: unlabelled)


# -- training and prediction -------------------------------------------------------------------------


def test_overfits_to_gold_entities_and_links(trained):
    nlp, history = trained
    assert history[-1] < 0.1 * history[0]
    docs = [nlp(text) for text, _ in TRAIN]
    assert ents_of(docs) == expected()
    mercer = docs[0].ents[0]
    assert mercer._.candidate_scores[0][0] == "Ada_Mercer" and len(mercer._.candidate_scores) == 3
    assert 0.5 < mercer._.link_score <= 1.0 and mercer._.nil_prob < 0.5 and mercer._.nil_reason is None
    quill = docs[2].ents[1]
    assert quill.kb_id_ == "NIL" and quill._.nil_reason == "no_candidates" and quill._.candidate_scores == []
    assert docs[0][0].ent_kb_id_ == "Ada_Mercer", "the link reaches the tokens"


def test_score_reports_ner_and_el(trained):
    nlp, _ = trained
    scores = nlp.evaluate(make_examples(nlp))
    assert scores["ner_f"] == pytest.approx(1.0) and scores["el_micro_f"] == pytest.approx(1.0)


def test_bad_inputs_empty_one_token_no_sentences_and_long_docs(trained):
    nlp, _ = trained
    for text in ["", "   ", "\n\n"]:
        assert list(nlp(text).ents) == []
    one = nlp("Velda")
    assert all(0 <= e.start < e.end <= 1 for e in one.ents)
    assert list(nlp.pipe(["", "Mercer painted .", "   "]))  # mixed batch
    # No sentence boundaries: read in pieces of max_sentence_length tokens.
    pipe = nlp.get_pipe(NAME)
    doc = pipe(nlp.make_doc(" ".join([TRAIN[1][0]] * 20)))
    assert not doc.has_annotation("SENT_START")
    assert {(e.label_, e.kb_id_) for e in doc.ents} >= {("ORG", "Lumen_(band)")}
    # A 50k-token document (sentencizer on: every "." ends a sentence) is fully read.
    long_text = " ".join([TRAIN[0][0]] * 7200)
    long_doc = nlp(long_text)
    assert len(long_doc) >= 50000
    assert sum(1 for e in long_doc.ents if e.kb_id_ == "Ada_Mercer") == 7200


def test_unknown_aliases_and_empty_kb_give_nil(trained):
    nlp, _ = trained
    doc = nlp("Zqxv painted the harbour at dawn .")  # Mercer's context, an alias the KB does not know
    for ent in doc.ents:
        assert ent.kb_id_ == "NIL" and ent._.nil_reason == "no_candidates"
    other = copy_of(nlp)
    other.get_pipe(NAME).kb = ElKnowledgeBase(other.vocab)
    docs = [other(text) for text, _ in TRAIN]
    assert ents_of(docs) and all(e.kb_id_ == "NIL" for d in docs for e in d.ents)
    assert [[e[:3] for e in d] for d in ents_of(docs)] == [[e[:3] for e in d] for d in expected()], "NER does not need the KB"


def test_kb_of_another_width_is_refused(trained, tmp_path):
    other = copy_of(trained[0])
    wide = tmp_path / "wide"
    build_invented_kb(True, dim=DIM + 4).to_disk(wide)
    other.get_pipe(NAME).kb = kb_from_disk(wide)(other.vocab)
    with pytest.raises(ValueError, match="E806"):
        other(TRAIN[0][0])


def test_update_aligns_by_characters_and_warns_about_misaligned_entities(trained):
    nlp = copy_of(trained[0])
    pipe = nlp.get_pipe(NAME)
    text = "Mercer painted the harbour."
    ref = Doc(nlp.vocab, words=["Mercer", "painted", "the", "harb", "our."], spaces=[True, True, True, False, False])
    ref.ents = [Span(ref, 0, 1, "PER", kb_id="Ada_Mercer"), Span(ref, 3, 4, "LOC", kb_id="NIL")]
    example = Example(nlp.make_doc(text), ref)
    with pytest.warns(UserWarning, match=r"W801\] ner_stack_lstm: 1 gold"):
        spans, kb_ids = pipe._gold_mentions(example)
    assert [(s.start, s.end, s.label_) for s in spans] == [(0, 1, "PER")] and kb_ids == ["Ada_Mercer"]
    with pytest.warns(UserWarning, match="W801"):
        losses = pipe.update([example], sgd=nlp.create_optimizer())
    assert np.isfinite(losses[NAME]) and losses[NAME] > 0


def test_unknown_label_in_training_data_raises(trained):
    nlp = copy_of(trained[0])
    ref = reference(nlp.vocab, "Mercer sang .", [(0, 1, "SONG", "NIL")])
    with pytest.raises(ValueError, match=r"E825\].*'SONG'"):
        nlp.get_pipe(NAME).update([Example(nlp.make_doc("Mercer sang ."), ref)])


@pytest.mark.parametrize("tasks", ["ner", "el"])
def test_single_task_models(tmp_path, tasks):
    nlp, _ = make_nlp(tmp_path, tasks=tasks)
    history = train(nlp, steps=60)
    assert history[-1] < history[0]
    if tasks == "ner":
        docs = [nlp(text) for text, _ in TRAIN]
        assert [[e[:3] for e in d] for d in ents_of(docs)] == [[e[:3] for e in d] for d in expected()]
        assert all(e.kb_id_ == "" for d in docs for e in d.ents), "NER only writes no links"
    else:
        # EL only links the mentions an upstream NER put in doc.ents.
        docs = []
        for text, ents in TRAIN:
            doc = nlp.get_pipe("sentencizer")(nlp.make_doc(text))
            doc.ents = [Span(doc, s, e, label) for s, e, label, _ in ents]
            docs.append(nlp.get_pipe(NAME)(doc))
        assert ents_of(docs) == expected()


@pytest.mark.parametrize("model, cfg", [({"use_sentence_rep": False, "use_mention_rep": False}, {"use_nil_classifier": False}),
                                        ({"entity_vectors": "kb+learned"}, {})])
def test_ablations_and_learned_entity_embeddings_train(tmp_path, model, cfg):
    nlp, _ = make_nlp(tmp_path, model=model, **cfg)
    history = train(nlp, steps=40)
    assert history[-1] < history[0]
    doc = nlp(TRAIN[0][0])
    if not cfg.get("use_nil_classifier", True):
        assert all(e._.nil_prob is None for e in doc.ents)
    if model.get("entity_vectors") == "kb+learned":
        pipe = nlp.get_pipe(NAME)
        assert pipe.model.get_dim("nL") == 4  # Ada_Mercer, Lumen_(band), Mercer_(town), Velda
        other = copy_of(nlp)
        assert ents_of([other(TRAIN[0][0])]) == ents_of([doc])


def test_a_mention_longer_than_a_segment_keeps_its_first_piece(trained):
    nlp = copy_of(trained[0])
    pipe = nlp.get_pipe(NAME)
    pipe.configure(max_sentence_length=2)
    doc = nlp.make_doc("Quill Tobin Mercer waited .")
    batch = pipe._forced_batch([doc], [[Span(doc, 0, 3, "PER")]], [["NIL"]])
    assert [(s.start, s.end) for s in batch.segments] == [(0, 2), (2, 4), (4, 5)]
    assert batch.gold["chunk_start"].tolist() == [0] and batch.gold["chunk_end"].tolist() == [2]
    assert batch.linkable.tolist() == [0.0]


def test_transformer_listener_word_features(tmp_path, tiny_encoder):
    """Word features from an upstream spacy-transformers component through a listener: the
    gradient reaches the transformer (its weights change) and prediction runs."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("transformer", config={"model": {
        "@architectures": "spacy-transformers.TransformerModel.v3", "name": tiny_encoder,
        "tokenizer_config": {"use_fast": True}, "get_spans": {"@span_getters": "spacy-transformers.doc_spans.v1"},
    }})
    listener = {"@architectures": "spacy-transformers.TransformerListener.v1", "grad_factor": 1.0,
                "pooling": {"@layers": "reduce_mean.v1"}, "upstream": "*"}
    kb_dir = tmp_path / "kb"
    build_invented_kb(True, dim=DIM).to_disk(kb_dir)
    nlp.add_pipe(NAME, config={"model": {**TINY_MODEL, "tok2vec": listener}})
    nlp.config["initialize"]["components"][NAME] = {"kb_loader": {"@misc": "spacy-el.KBFromDisk.v1", "path": str(kb_dir)}}
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    transformer = nlp.get_pipe("transformer").model
    before = [p.detach().clone() for p in torch_module(transformer).parameters()]
    optimizer = nlp.create_optimizer()
    history = []
    for _ in range(15):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        history.append(losses[NAME])
    after = list(torch_module(transformer).parameters())
    assert history[-1] < history[0]
    assert any(not torch.equal(a, b) for a, b in zip(after, before)), "the listener passes gradients upstream"
    doc = nlp(TRAIN[1][0])
    assert all(e.label_ in {"PER", "ORG", "LOC"} for e in doc.ents)


def test_candidates_follow_a_replaced_kb(trained):
    nlp = copy_of(trained[0])
    pipe = nlp.get_pipe(NAME)
    assert nlp(TRAIN[0][0]).ents[0].kb_id_ == "Ada_Mercer"  # fills the candidate cache
    pipe.kb = ElKnowledgeBase(nlp.vocab)
    ent = nlp(TRAIN[0][0]).ents[0]
    assert ent.kb_id_ == "NIL" and ent._.nil_reason == "no_candidates", "no stale candidates from the old KB"

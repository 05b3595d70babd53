"""``held_out_priors``: in training, a linker's candidates come from alias priors without its own document's
counts (the KB's held-out table), and prediction is unchanged."""
import numpy as np
import pytest

from spacy_el.kb.held_out import HELD_OUT_ATTACHMENT, document_key, encode_held_out

from .conftest import _ents_examples, build_joint_coref_linker, build_ner_constrained_linker, build_ner_stack_lstm

TEXT = "We drove to Mercer along the river ."


class Recorder:
    """A generator wrapper that remembers the ``held_out`` it was called with."""

    def __init__(self, generator):
        self.generator, self.calls = generator, []

    def __call__(self, kb, mentions, held_out=None):
        self.calls.append(held_out)
        return self.generator(kb, mentions, held_out=held_out)


def count_everything(kb, counted_text: str) -> None:
    """Give ``kb`` alias counts ("Mercer": 10 mentions behind its 0.6 / 0.3 / 0.1) and a held-out table in
    which ``counted_text`` contributed one "Mercer" -> Mercer_(town)."""
    kb.aliases.counts = np.full(kb.n_aliases, 10.0, dtype=np.float32)
    kb.set_attachment(HELD_OUT_ATTACHMENT, encode_held_out({document_key(counted_text): {"Mercer": {"Mercer_(town)": 1.0}}}))


def test_ner4el_trains_on_held_out_priors_and_predicts_as_before(tiny_encoder, tmp_path):
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("ner_constrained_linker")
    before = [(e.text, e.kb_id_, e._.candidate_scores) for e in nlp(TEXT).ents]
    count_everything(pipe.kb, TEXT)
    pipe.configure(held_out_priors=True)
    assert [(e.text, e.kb_id_, e._.candidate_scores) for e in nlp(TEXT).ents] == before  # training only
    recorder = pipe.candidates = Recorder(pipe.candidates)
    examples = _ents_examples(nlp, [(TEXT, [("Mercer", "Mercer_(town)")])])
    pipe._training_memo.clear()
    sets = pipe._training_mentions(examples)[1]
    assert recorder.calls == [[{"Mercer": {"Mercer_(town)": 1.0}}]]
    town = pipe.kb.entities.row_of("Mercer_(town)")
    prior = float(np.exp(sets[0].log_prior[sets[0].rows.tolist().index(town)]))
    assert prior == pytest.approx(5 / 9, abs=1e-5)  # 6 of 10 counted for the town, one of them this document's
    losses = pipe.update(examples)  # trains with them
    assert np.isfinite(losses["ner_constrained_linker"])


def test_held_out_priors_without_the_kbs_table_is_a_clear_error(tiny_encoder, tmp_path):
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(held_out_priors=True)
    pipe._training_memo.clear()
    with pytest.raises(ValueError, match="E109"):
        pipe.update(_ents_examples(nlp, [(TEXT, [("Mercer", "Mercer_(town)")])]))


def test_an_uncounted_document_keeps_its_priors(tiny_encoder, tmp_path):
    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("ner_constrained_linker")
    count_everything(pipe.kb, "some other document")
    pipe.configure(held_out_priors=True)
    pipe._training_memo.clear()
    sets = pipe._training_mentions(_ents_examples(nlp, [(TEXT, [("Mercer", "Mercer_(town)")])]))[1]
    town = pipe.kb.entities.row_of("Mercer_(town)")
    assert float(np.exp(sets[0].log_prior[sets[0].rows.tolist().index(town)])) == pytest.approx(0.6, abs=1e-5)


def test_ner_stack_lstm_reads_held_out_priors_in_training_only(tiny_encoder, tmp_path):
    nlp = build_ner_stack_lstm(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("ner_stack_lstm")
    count_everything(pipe.kb, TEXT)
    pipe.configure(held_out_priors=True)
    recorder = pipe.candidates = Recorder(pipe.candidates)
    doc = nlp.make_doc(TEXT)
    mercer = [doc[3:4]]
    town = pipe.kb.entities.row_of("Mercer_(town)")
    trained = pipe._candidates(mercer, training=True)
    predicted = pipe._candidates(mercer)
    assert recorder.calls == [[{"Mercer": {"Mercer_(town)": 1.0}}], None]
    column = trained.rows[0].tolist().index(town)
    assert float(trained.priors[0, column]) == pytest.approx(5 / 9, abs=1e-5)
    assert float(predicted.priors[0, predicted.rows[0].tolist().index(town)]) == pytest.approx(0.6, abs=1e-5)


def test_joint_coref_linker_reads_held_out_priors_in_training_only(tiny_encoder, tmp_path):
    from spacy.tokens import Doc, Span
    from spacy.training import Example

    from spacy_el.extensions import set_clusters

    nlp = build_joint_coref_linker(tiny_encoder, tmp_path)
    pipe = nlp.get_pipe("joint_coref_linker")
    words = "Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .".split()
    reference = Doc(nlp.vocab, words=words)
    text = reference.text  # the key is the document's text exactly
    count_everything(pipe.kb, text)
    pipe.configure(held_out_priors=True)
    recorder = pipe.candidates = Recorder(pipe.candidates)
    set_clusters(reference, [[(0, 1), (9, 10)]])
    (key,) = [k for k in reference.spans if k.startswith("coref_clusters_")]
    reference.spans[key] = [Span(reference, s.start, s.end, kb_id="Ada_Mercer") for s in reference.spans[key]]
    pipe.update([Example(Doc(nlp.vocab, words=words), reference)])
    assert recorder.calls and all(call == [{"Mercer": {"Mercer_(town)": 1.0}}] * len(call) for call in recorder.calls)
    recorder.calls.clear()
    nlp(text)
    assert recorder.calls and all(call is None for call in recorder.calls)

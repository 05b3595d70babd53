"""ner_constrained_linker hardening: bounded encoder calls on long documents, and span-group mentions that
share their character offsets (and so, in spaCy, their span extension values)."""
from typing import Iterator, List, Tuple

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span

from spacy_el.kb.loaders import kb_from_disk

from ..conftest import build_invented_kb
from ..torch_modules import torch_module
from .test_ner_constrained_linker import make_examples

SENTENCE = "Mercer painted the harbour near Velda while Lumen played ."
SENTENCE_ENTS = [(0, 1, "PER"), (5, 6, "LOC"), (7, 8, "ORG")]


@pytest.fixture(scope="module")
def nlp(tiny_encoder: str, tmp_path_factory) -> Language:
    """An initialised (randomly weighted, a few updates) linker: the tests compare its outputs with
    themselves, so they need a deterministic model, not a good one."""
    kb_dir = tmp_path_factory.mktemp("ner4el_hardening") / "kb"
    build_invented_kb(dim=8).to_disk(kb_dir)
    nlp = spacy.blank("en")
    nlp.add_pipe("ner_constrained_linker", config={"model": {"encoder": tiny_encoder, "hidden_width": 16, "max_length": 24,
                                                             "encoder_dtype": "float32"}})
    examples = make_examples(nlp)
    nlp.get_pipe("ner_constrained_linker").initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    optimizer = nlp.create_optimizer()
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    return nlp


def long_doc(nlp: Language, repeats: int = 25) -> Doc:
    """``repeats`` copies of a three-mention sentence: many mentions in many marked windows."""
    words = SENTENCE.split() * repeats
    doc = Doc(nlp.vocab, words=words)
    n = len(SENTENCE.split())
    doc.ents = [Span(doc, r * n + s, r * n + e, label) for r in range(repeats) for s, e, label in SENTENCE_ENTS]
    return doc


def outputs(doc: Doc) -> List[Tuple]:
    return [(e.start, e.end, e.kb_id_, e._.nil_reason, e._.link_score, e._.candidate_scores) for e in doc.ents]


class EncoderCalls:
    """Records the number of windows (rows of input_ids) of every call of the linker's encoder."""

    def __init__(self, nlp: Language) -> None:
        self.encoder = torch_module(nlp.get_pipe("ner_constrained_linker")).encoder
        self.sizes: List[int] = []

    def _hook(self, module, args, kwargs) -> None:
        ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
        self.sizes.append(int(ids.shape[0]))

    def __enter__(self) -> "EncoderCalls":
        self._handle = self.encoder.register_forward_pre_hook(self._hook, with_kwargs=True)
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()


@pytest.fixture
def encoder_batch(nlp: Language) -> Iterator:
    """Set the linker's encoder_batch for one test, then restore it."""
    pipe = nlp.get_pipe("ner_constrained_linker")
    before = pipe.settings.encoder_batch

    def set_to(value: int) -> None:
        pipe.configure(encoder_batch=value)

    yield set_to
    pipe.configure(encoder_batch=before)


# -- defect 7: bounded encoder sub-batches ------------------------------------------------------------

def test_encoder_batch_default_and_validation(tiny_encoder, tmp_path):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("ner_constrained_linker", config={"model": {"encoder": tiny_encoder}})
    assert pipe.cfg["encoder_batch"] == 32
    for bad in (0, -1, 2.5, True, "8"):
        # (spaCy's config validation refuses a float or bool itself, naming the setting)
        with pytest.raises(ValueError, match=r"encoder_batch"):
            spacy.blank("en").add_pipe("ner_constrained_linker", config={"model": {"encoder": tiny_encoder}, "encoder_batch": bad})
        with pytest.raises(ValueError, match=r"\[spacy_el E901\].*encoder_batch"):
            pipe.configure(encoder_batch=bad)
    assert pipe.cfg["encoder_batch"] == 32


def test_no_encoder_call_exceeds_encoder_batch(nlp, encoder_batch):
    encoder_batch(2)
    with EncoderCalls(nlp) as calls:
        doc = nlp(long_doc(nlp))
    assert len(doc.ents) == 75
    # Many windows, none of the calls over the bound: memory does not grow with the document.
    assert sum(calls.sizes) >= 10 and max(calls.sizes) <= 2
    docs = list(nlp.pipe([long_doc(nlp, 3), long_doc(nlp, 20)], batch_size=2))
    assert [len(d.ents) for d in docs] == [9, 60]


@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_sub_batches_give_the_unbatched_outputs(nlp, encoder_batch, one_torch_thread, size):
    docs = lambda: [long_doc(nlp, 25), long_doc(nlp, 2), Doc(nlp.vocab, words=["Nothing", "here"]), long_doc(nlp, 7)]
    encoder_batch(10_000)  # more windows than the documents have: one call, the un-batched path
    with EncoderCalls(nlp) as calls:
        expected = [outputs(d) for d in nlp.pipe(docs(), batch_size=4)]
    assert len(calls.sizes) == 1
    encoder_batch(size)
    with EncoderCalls(nlp) as calls:
        got = [outputs(d) for d in nlp.pipe(docs(), batch_size=4)]
    assert max(calls.sizes) <= size
    for doc_got, doc_expected in zip(got, expected):
        assert [o[:4] for o in doc_got] == [o[:4] for o in doc_expected]
        for (*_, score, cands), (*_, score_e, cands_e) in zip(doc_got, doc_expected):
            assert score == pytest.approx(score_e, abs=1e-6)
            assert [c[0] for c in cands] == [c[0] for c in cands_e]
            assert [c[1] for c in cands] == pytest.approx([c[1] for c in cands_e], abs=1e-6)


def test_encoder_batch_survives_serialisation(nlp, encoder_batch, tmp_path):
    encoder_batch(3)
    nlp.to_disk(tmp_path / "pipeline")
    assert spacy.load(tmp_path / "pipeline").get_pipe("ner_constrained_linker").cfg["encoder_batch"] == 3


# -- defect 9: spans sharing character offsets -------------------------------------------------------

def _consistent(span: Span) -> bool:
    """The span's extension values agree with its own link."""
    if span.kb_id_ == "NIL":
        return span._.link_score is None or span._.nil_reason == "below_threshold"
    return span._.nil_reason is None and span._.candidate_scores[0][0] == span.kb_id_ and span._.candidate_scores[0][1] == span._.link_score


@pytest.fixture
def span_group(nlp: Language) -> Iterator:
    pipe = nlp.get_pipe("ner_constrained_linker")
    pipe.configure(mentions_key="mentions")
    yield pipe
    pipe.configure(mentions_key=None, decoding="none", mention_type_source="label")


def test_same_offsets_different_types_are_refused(nlp, span_group):
    # Hard decoding links a PER "Mercer" to the painter and a LOC "Mercer" to the town: in one span group
    # they would share candidate_scores/link_score/nil_reason, contradicting one of the two links.
    span_group.configure(decoding="hard")
    doc = Doc(nlp.vocab, words="Mercer painted Velda .".split())
    doc.spans["mentions"] = [Span(doc, 2, 3, "LOC"), Span(doc, 0, 1, "PER"), Span(doc, 0, 1, "LOC")]
    with pytest.raises(ValueError, match=r"\[spacy_el E826\].*'Mercer'.*\(0, 6\)"):
        nlp(doc)


def test_same_offsets_same_type_are_linked_once_and_consistently(nlp, span_group):
    words = "Mercer painted Velda in Mercer .".split()
    doc = Doc(nlp.vocab, words=words)
    doc.spans["mentions"] = [Span(doc, 0, 1, "PER"), Span(doc, 2, 3, "LOC"), Span(doc, 0, 1, "PER"), Span(doc, 4, 5, "LOC")]
    doc = nlp(doc)
    spans = list(doc.spans["mentions"])
    assert [(s.start, s.end, s.label_) for s in spans] == [(0, 1, "PER"), (2, 3, "LOC"), (0, 1, "PER"), (4, 5, "LOC")]
    assert spans[0].kb_id_ == spans[2].kb_id_ != ""
    assert all(_consistent(s) for s in spans)
    # The twin is the same mention: linked as the document without it would be.
    single = Doc(nlp.vocab, words=words)
    single.spans["mentions"] = [Span(single, 0, 1, "PER"), Span(single, 2, 3, "LOC"), Span(single, 4, 5, "LOC")]
    single = nlp(single)
    assert [s.kb_id_ for s in single.spans["mentions"]] == [spans[0].kb_id_, spans[1].kb_id_, spans[3].kb_id_]
    assert [s._.link_score for s in single.spans["mentions"]] == pytest.approx([spans[i]._.link_score for i in (0, 1, 3)], abs=1e-6)


@pytest.mark.parametrize(
    "labels, source", [(("GPE", "LOC"), "label"), (("PER", "LOC"), "head")], ids=["labels_of_one_type", "head_typing"]
)
def test_same_offsets_of_one_mention_type_are_linked_consistently(nlp, span_group, labels, source):
    # GPE and LOC are one type of the coarse inventory; with the mention-typing head the label plays no
    # part in prediction: either way the twins are one mention, with one decision.
    span_group.configure(decoding="hard", mention_type_source=source)
    doc = Doc(nlp.vocab, words="Mercer painted Velda .".split())
    doc.spans["mentions"] = [Span(doc, 0, 1, labels[0]), Span(doc, 0, 1, labels[1]), Span(doc, 2, 3, "LOC")]
    doc = nlp(doc)
    spans = list(doc.spans["mentions"])
    assert [s.label_ for s in spans] == [*labels, "LOC"]
    assert spans[0].kb_id_ == spans[1].kb_id_ != "" and all(_consistent(s) for s in spans)

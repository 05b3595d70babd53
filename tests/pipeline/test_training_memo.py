"""Training-time candidates: ner_constrained_linker and ner_stack_lstm generate a gold mention's list once
(the training memo), joint_coref_linker a kept span's where the generator reads the mention encoder, and all
train exactly as without the memo; joint_coref_linker's gold-candidate dropout asks its generator once per
document, not once per mention."""
import numpy as np
import pytest
import spacy
import torch
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.candidates import CandidateMemo
from spacy_el.extensions import set_clusters

from .conftest import _ents_examples, build_joint_coref_linker, build_ner_constrained_linker, build_ner_stack_lstm
from .test_candidate_generators import GENERATORS

TRAIN = [
    ("Mercer painted the harbour at dawn .", [("Mercer", "Ada_Mercer")]),
    ("Lumen played in Mercer last night .", [("Lumen", "Lumen_(band)"), ("Mercer", "Mercer_(town)")]),
    ("Brisk winds reached Velda at noon .", [("Velda", "Velda")]),
]
BUILDERS = {"ner_constrained_linker": build_ner_constrained_linker, "ner_stack_lstm": build_ner_stack_lstm}


class Counting:
    """Wraps a generator and records the mentions of each call."""

    def __init__(self, generator):
        self.generator, self.dense, self.asked = generator, getattr(generator, "dense", None), []

    def __call__(self, kb, mentions):
        self.asked.append([(m.start_char, m.end_char) for m in mentions])
        return self.generator(kb, mentions)


def examples(nlp):
    return _ents_examples(nlp, TRAIN)


def losses(nlp, component, steps=3, make_examples=examples):
    torch.manual_seed(0)
    np.random.seed(0)
    optimizer = nlp.create_optimizer()
    found = []
    for _ in range(steps):
        step = {}
        with nlp.select_pipes(enable=[component]):
            nlp.update(make_examples(nlp), sgd=optimizer, losses=step)
        found.append(step[component])
    return found


@pytest.mark.parametrize("generator", ["alias", "hybrid"])
@pytest.mark.parametrize("component", sorted(BUILDERS))
def test_gold_mentions_are_generated_once_and_train_as_without_the_memo(component, generator, tiny_encoder, tmp_path):
    BUILDERS[component](tiny_encoder, tmp_path, candidates=GENERATORS[generator]).to_disk(tmp_path / "pipeline")
    with_memo, without = spacy.load(tmp_path / "pipeline"), spacy.load(tmp_path / "pipeline")
    counted = with_memo.get_pipe(component)
    counted.candidates = Counting(counted.candidates)
    without.get_pipe(component)._training_memo = CandidateMemo(limit=0)
    assert losses(with_memo, component) == losses(without, component)
    n_gold = sum(len(links) for _, links in TRAIN)
    assert [len(asked) for asked in counted.candidates.asked] == [n_gold]  # the first step's, in one call
    assert counted._training_memo.hits == 2 * n_gold


def jcl_examples(nlp):
    text = "Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint ."
    reference = Doc(nlp.vocab, words=text.split())
    set_clusters(reference, [[(0, 1), (9, 10)], [(11, 12), (13, 14)]])
    reference.spans["coref_clusters_1"] = [Span(reference, s, e, kb_id="Ada_Mercer") for s, e in [(0, 1), (9, 10)]]
    reference.spans["coref_clusters_2"] = [Span(reference, s, e, kb_id="NIL") for s, e in [(11, 12), (13, 14)]]
    return [Example(Doc(nlp.vocab, words=text.split()), reference)]


def test_joint_coref_linker_dropout_asks_for_the_gold_mentions_in_one_call(tiny_encoder, tmp_path):
    nlp = build_joint_coref_linker(tiny_encoder, tmp_path, candidates=GENERATORS["hybrid"])
    pipe = nlp.get_pipe("joint_coref_linker")
    pipe.configure(gold_candidate_dropout=0.5)
    pipe.candidates = Counting(pipe.candidates)
    nlp.update(jcl_examples(nlp), sgd=nlp.create_optimizer())
    first, *rest = pipe.candidates.asked
    assert sorted(first) == [(0, 6), (47, 53)]  # the linked cluster's two "Mercer", together
    assert len(rest) <= 1  # then, once, the kept spans it lacks


@pytest.mark.parametrize("generator", ["alias", "hybrid"])
def test_joint_coref_linker_memoises_what_reads_the_encoder_and_trains_as_without_the_memo(generator, tiny_encoder, tmp_path):
    build_joint_coref_linker(tiny_encoder, tmp_path, candidates=GENERATORS[generator]).to_disk(tmp_path / "pipeline")
    with_memo, without = spacy.load(tmp_path / "pipeline"), spacy.load(tmp_path / "pipeline")
    counted = with_memo.get_pipe("joint_coref_linker")
    counted.candidates = Counting(counted.candidates)
    without.get_pipe("joint_coref_linker")._training_memo = CandidateMemo(limit=0)
    assert losses(with_memo, "joint_coref_linker", make_examples=jcl_examples) == losses(
        without, "joint_coref_linker", make_examples=jcl_examples)
    asked = [span for call in counted.candidates.asked for span in call]
    if generator == "hybrid":  # a kept span's list is made once per run, later steps reuse the first one's
        assert len(asked) == len(set(asked))
        assert counted._training_memo.hits >= len(counted.candidates.asked[0])
    else:  # the alias table is asked at every step: its look-up is cheaper than the memo's memory
        assert len(asked) > len(set(asked))
        assert len(counted._training_memo) == 0
    counted.candidates.asked.clear()
    with_memo("Mercer painted the harbour at dawn .")
    assert counted.candidates.asked  # prediction asks the generator itself

"""CandidateMemo: a training mention's list is generated once and reused; the memo empties itself when the
KB or the generator it was filled against changes; and hybrid candidates with top_k null keep the union."""
import dataclasses

import numpy as np
import pytest

from spacy_el.candidates import (
    AliasCandidates, CandidateMemo, DenseCandidates, HybridCandidates, attach_mention_encoder,
)
from spacy_el.candidates.registry import hybrid_candidates

from ..conftest import build_toy_kb
from .conftest import span_of


class Counting:
    """A generator that counts the mentions it is asked for, one list per call."""

    def __init__(self, generator):
        self.generator = generator
        self.asked = []
        self.dense = getattr(generator, "dense", None)

    def __call__(self, kb, mentions):
        self.asked.append([m.text for m in mentions])
        return self.generator(kb, mentions)


def test_each_mention_is_generated_once_and_served_the_same(nlp, toy_kb):
    generator = Counting(AliasCandidates(top_k=None))
    memo = CandidateMemo()
    doc = nlp("Paris met Hilton in Paris.")
    spans = [doc[0:1], doc[2:3], doc[4:5], doc[0:1]]
    first = memo(generator, toy_kb, spans)
    assert generator.asked == [["Paris", "Hilton", "Paris"]]  # the twin of doc[0:1] is asked once
    again = memo(generator, toy_kb, [doc[4:5], doc[2:3]])
    assert len(generator.asked) == 1 and (memo.hits, memo.misses) == (3, 3)
    assert again[0] is first[2] and again[1] is first[1]
    for got, want in zip(first, AliasCandidates(top_k=None)(toy_kb, spans)):
        assert got.rows.tolist() == want.rows.tolist() and got.prior.tolist() == want.prior.tolist()
    # The same text at the same offsets of another doc object is the same mention; other text is not.
    memo(generator, toy_kb, [nlp("Paris met Hilton in Paris.")[0:1], nlp("Paris met nobody.")[0:1]])
    assert generator.asked[1:] == [["Paris"]]


def test_served_lists_are_read_only(nlp, toy_kb):
    [found] = CandidateMemo()(AliasCandidates(), toy_kb, [span_of(nlp, "Paris is big.", "Paris")])
    with pytest.raises(ValueError, match="read-only"):
        found.rows[0] = 3
    assert not found.top(1).prior.flags.writeable


def test_limit_bounds_what_is_kept(nlp, toy_kb):
    generator = Counting(AliasCandidates())
    memo = CandidateMemo(limit=1)
    doc = nlp("Paris met Hilton.")
    memo(generator, toy_kb, [doc[0:1], doc[2:3]])
    memo(generator, toy_kb, [doc[0:1], doc[2:3]])
    assert len(memo) == 1 and generator.asked == [["Paris", "Hilton"], ["Hilton"]]
    with pytest.raises(ValueError, match="E401"):
        CandidateMemo(limit=-1)


def test_a_change_of_generator_or_kb_empties_it(nlp, toy_kb):
    span = span_of(nlp, "Paris is big.", "Paris")
    generator = Counting(AliasCandidates())
    memo = CandidateMemo()
    memo(generator, toy_kb, [span])
    memo(Counting(AliasCandidates(top_k=1)), toy_kb, [span])  # another generator
    assert len(memo) == 1 and memo.misses == 1 and memo.hits == 0
    other_kb = build_toy_kb()
    [found] = memo(generator, other_kb, [span])  # another KB object
    assert found.ids(other_kb)[0] == "Paris" and generator.asked == [["Paris"], ["Paris"]]
    other_kb.settings = dataclasses.replace(other_kb.settings, top_k=1)  # replaced look-up settings
    memo(generator, other_kb, [span])
    assert len(generator.asked) == 3
    other_kb.set_aliases(other_kb.aliases)  # the same table again: nothing changed
    memo(generator, other_kb, [span])
    assert len(generator.asked) == 3


def test_another_mention_encoder_empties_it(nlp, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    generator = Counting(HybridCandidates(AliasCandidates(), DenseCandidates(top_k=2), top_k=3))
    memo = CandidateMemo()
    span = span_of(nlp, "Paris played.", "Paris")
    memo(generator, tiny_toy_kb, [span])
    memo(generator, tiny_toy_kb, [span])
    assert len(generator.asked) == 1
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)  # attached again: new bytes, maybe a new encoder
    memo(generator, tiny_toy_kb, [span])
    assert len(generator.asked) == 2


def test_hybrid_top_k_null_keeps_the_whole_union(nlp, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    span = span_of(nlp, "Paris played.", "Paris")
    [whole] = HybridCandidates(AliasCandidates(top_k=None), DenseCandidates(top_k=4), top_k=None)(tiny_toy_kb, [span])
    [alias] = AliasCandidates(top_k=None)(tiny_toy_kb, [span])
    [dense] = DenseCandidates(top_k=4)(tiny_toy_kb, [span])
    assert sorted(whole.rows.tolist()) == sorted(set(alias.rows.tolist()) | set(dense.rows.tolist()))
    assert list(whole.score) == sorted(whole.score, reverse=True)
    registered = hybrid_candidates(top_k=None, alias_top_k=None)
    assert registered.top_k is None and registered.alias.top_k is None
    with pytest.raises(ValueError, match="E410"):
        HybridCandidates(AliasCandidates(), DenseCandidates(), top_k=True)
    assert np.array_equal(
        registered(tiny_toy_kb, [span])[0].rows, HybridCandidates(AliasCandidates(None), DenseCandidates(), top_k=None)(tiny_toy_kb, [span])[0].rows,
    )

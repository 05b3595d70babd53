"""The three candidate generators on the toy KB: ranking, features, empty and unknown mentions, empty KB."""
import math

import numpy as np
import pytest

from spacy_el.candidates import (
    TIER_EXACT, TIER_FUZZY, TIER_NONE, AliasCandidates, DenseCandidates, HybridCandidates, MentionCandidates,
    attach_mention_encoder,
)
from spacy_el.algorithms.rank_fusion import reciprocal_rank_fusion
from spacy_el.kb import ElKnowledgeBase

from .conftest import span_of


def test_alias_ranks_by_prior_with_features(nlp, toy_kb):
    span = span_of(nlp, "I met Paris yesterday.", "Paris")
    [found] = AliasCandidates(top_k=None)(toy_kb, [span])
    assert found.ids(toy_kb) == ["Paris", "Paris_Hilton", "Paris,_Texas"]
    np.testing.assert_allclose(found.prior, [0.8, 0.15, 0.05], rtol=1e-6)
    assert found.tier.tolist() == [TIER_EXACT] * 3
    assert np.isnan(found.dense).all()
    assert found.from_alias().tolist() == [1.0, 1.0, 1.0]


def test_alias_top_k_and_fuzzy_tier(nlp, toy_kb):
    [top] = AliasCandidates(top_k=1)(toy_kb, [span_of(nlp, "Paris is big.", "Paris")])
    assert top.ids(toy_kb) == ["Paris"]
    [fuzzy] = AliasCandidates(top_k=5)(toy_kb, [span_of(nlp, "The Beatle played.", "The Beatle")])
    assert fuzzy.ids(toy_kb)[0] == "The_Beatles" and fuzzy.tier[0] == TIER_FUZZY and 0 < fuzzy.prior[0] < 1.0
    [none] = AliasCandidates(top_k=5, fuzzy=False)(toy_kb, [span_of(nlp, "The Beatle played.", "The Beatle")])
    assert len(none) == 0


@pytest.mark.parametrize("text, mention", [("Zyxwv came.", "Zyxwv"), ("Hello   there", "  ")])
def test_alias_unknown_and_whitespace_mentions_give_nothing(nlp, toy_kb, text, mention):
    doc = nlp(text)
    span = doc[1:2] if not mention.strip() else span_of(nlp, text, mention)
    assert [len(c) for c in AliasCandidates()(toy_kb, [span])] == [0]


def test_every_generator_handles_an_empty_kb_and_no_mentions(nlp, tiny_mention_encoder, tmp_path):
    tiny_mention_encoder.save(tmp_path / "enc")
    empty = ElKnowledgeBase(nlp.vocab)
    span = span_of(nlp, "Paris is big.", "Paris")
    dense = DenseCandidates(top_k=3, encoder=tmp_path / "enc")
    for generator in (AliasCandidates(), dense, HybridCandidates(AliasCandidates(), dense)):
        assert generator(empty, []) == []
        assert [len(c) for c in generator(empty, [span])] == [0]


def test_dense_finds_an_entity_without_any_alias(nlp, minilm_toy_kb, minilm_encoder):
    """"the Liverpool band" is no alias of anything: only the encoder can find The Beatles."""
    kb = minilm_toy_kb
    attach_mention_encoder(kb, minilm_encoder)
    span = span_of(nlp, "Yesterday the famous English rock band from Liverpool played.", "English rock band")
    assert [len(c) for c in AliasCandidates(fuzzy=False)(kb, [span])] == [0]
    [found] = DenseCandidates(top_k=2)(kb, [span])
    assert found.ids(kb)[0] == "The_Beatles"
    assert found.tier.tolist() == [TIER_NONE, TIER_NONE] and found.prior.tolist() == [0.0, 0.0]
    assert found.score[0] >= found.score[1] and found.dense.tolist() == found.score.tolist()


def test_dense_reads_the_context(nlp, minilm_toy_kb, minilm_encoder):
    kb = minilm_toy_kb
    attach_mention_encoder(kb, minilm_encoder)
    dense = DenseCandidates(top_k=3)
    city = span_of(nlp, "Paris, a small city in Texas, held its rodeo.", "Paris")
    [found] = dense(kb, [city])
    assert set(found.ids(kb)[:2]) >= {"Paris,_Texas"}


def test_hybrid_is_the_union_with_every_feature(nlp, minilm_toy_kb, minilm_encoder):
    kb = minilm_toy_kb
    attach_mention_encoder(kb, minilm_encoder)
    hybrid = HybridCandidates(AliasCandidates(top_k=1), DenseCandidates(top_k=2), top_k=4)
    span = span_of(nlp, "Paris toured with the English rock band from Liverpool.", "Paris")
    [found] = hybrid(kb, [span])
    [alias] = AliasCandidates(top_k=1)(kb, [span])
    [dense] = DenseCandidates(top_k=2)(kb, [span])
    assert set(found.rows.tolist()) == set(alias.rows.tolist()) | set(dense.rows.tolist())
    assert list(found.score) == sorted(found.score, reverse=True)
    for row, prior, tier, sim in zip(found.rows, found.prior, found.tier, found.dense):
        in_alias = row in alias.rows
        assert (tier == TIER_EXACT) == in_alias and (prior > 0) == in_alias
        assert math.isclose(float(sim), float(kb.entities.vectors[row] @ DenseCandidates().encode(kb, [span])[0]), abs_tol=1e-4)


def test_hybrid_skips_the_encoder_for_confident_aliases(nlp, minilm_toy_kb, minilm_encoder):
    kb = minilm_toy_kb
    attach_mention_encoder(kb, minilm_encoder)
    hybrid = HybridCandidates(AliasCandidates(top_k=5), DenseCandidates(top_k=4), top_k=5, skip_dense_above=0.9)
    beatles = span_of(nlp, "The Beatles played.", "The Beatles")  # exact alias, prior 1.0: skipped
    paris = span_of(nlp, "Paris played.", "Paris")  # exact alias, prior 0.8: encoded
    [b, p] = hybrid(kb, [beatles, paris])
    assert b.ids(kb) == ["The_Beatles"] and np.isnan(b.dense).all()
    assert len(p) == 4 and not np.isnan(p.dense).any()
    # The skipped mention's list is the fusion of its alias list alone, built without the item-by-item fusion.
    [alias] = AliasCandidates(top_k=5)(kb, [beatles])
    rows, scores = reciprocal_rank_fusion([alias.rows.tolist(), []], [1.0, 1.0], hybrid.rrf_k)
    assert b.rows.tolist() == rows.tolist() and b.query is None
    np.testing.assert_allclose(b.score, scores, rtol=1e-6)
    np.testing.assert_array_equal(b.prior, alias.prior)
    np.testing.assert_array_equal(b.tier, alias.tier)


def test_dense_and_hybrid_lists_carry_the_mention_vector_for_entities_off_the_list(nlp, minilm_toy_kb, minilm_encoder):
    """``similarity`` scores any entity as ``dense`` scores the listed ones (a linker's training negatives);
    alias lists, and hybrid lists that skipped the encoder, have no query and give NaN."""
    kb = minilm_toy_kb
    attach_mention_encoder(kb, minilm_encoder)
    span = span_of(nlp, "Paris toured with the English rock band from Liverpool.", "Paris")
    [alias] = AliasCandidates(top_k=1)(kb, [span])
    assert alias.query is None and np.isnan(alias.similarity(kb, [0, 1])).all()
    for generator in (DenseCandidates(top_k=2), HybridCandidates(AliasCandidates(top_k=1), DenseCandidates(top_k=2), top_k=4)):
        [found] = generator(kb, [span])
        assert found.query is not None and found.top(1).query is found.query and found.select([0]).query is found.query
        np.testing.assert_allclose(found.similarity(kb, found.rows), found.dense, atol=1e-6)
        off_list = [r for r in range(kb.n_entities) if r not in found.rows][:2]
        assert not np.isnan(found.similarity(kb, off_list)).any()
    skip = HybridCandidates(AliasCandidates(top_k=5), DenseCandidates(top_k=4), top_k=5, skip_dense_above=0.9)
    [beatles] = skip(kb, [span_of(nlp, "The Beatles played.", "The Beatles")])
    assert beatles.query is None


def test_mention_candidates_helpers():
    found = MentionCandidates.from_lists([3, 1, 2], [0.5, 0.0, 0.1], [0, -1, 1], [0.1, 0.2, 0.3], [3.0, 2.0, 1.0])
    assert found.top(2).rows.tolist() == [3, 1] and found.top(None) is found
    assert found.select([2, 0]).rows.tolist() == [2, 3]
    assert found.from_alias().tolist() == [1.0, 0.0, 1.0]
    assert len(MentionCandidates.empty()) == 0


def test_dense_cache_gives_the_same_vectors_and_stays_bounded(nlp, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    spans = [span_of(nlp, f"Paris number {i} played.", "Paris") for i in range(3)]
    cached, uncached = DenseCandidates(cache_size=2), DenseCandidates(cache_size=0)
    first = cached.encode(tiny_toy_kb, spans)
    np.testing.assert_array_equal(cached.encode(tiny_toy_kb, spans), first)
    np.testing.assert_array_equal(uncached.encode(tiny_toy_kb, spans), first)
    assert len(cached._cache) == 2 and len(uncached._cache) == 0


@pytest.mark.parametrize("make, message", [
    (lambda: AliasCandidates(top_k=0), "E408"),
    (lambda: DenseCandidates(top_k=0), "E405"),
    (lambda: DenseCandidates(cache_size=-1), "E406"),
    (lambda: HybridCandidates(AliasCandidates(), DenseCandidates(), top_k=0), "E410"),
    (lambda: HybridCandidates(AliasCandidates(), DenseCandidates(), alias_weight=0, dense_weight=0), "E411"),
    (lambda: HybridCandidates(AliasCandidates(), DenseCandidates(), skip_dense_above=1.5), "E412"),
])
def test_bad_generator_settings_are_refused_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_dense_candidates_without_an_index_say_how_to_build_one(nlp, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    tiny_toy_kb.dense_index = None
    with pytest.raises(ValueError, match="E407"):
        DenseCandidates()(tiny_toy_kb, [span_of(nlp, "Paris played.", "Paris")])


def test_alias_features_of_fused_rows():
    from spacy_el.candidates.hybrid import alias_features

    found = MentionCandidates.from_lists([5, 2, 9], [0.5, 0.3, 0.2], [0, 1, 2], [np.nan] * 3, [0.5, 0.3, 0.2])
    prior, tier = alias_features(found, np.array([9, 7, 5, 1, 12], dtype=np.int64))
    np.testing.assert_array_equal(prior, np.array([0.2, 0.0, 0.5, 0.0, 0.0], dtype=np.float32))
    assert tier.tolist() == [2, TIER_NONE, 0, TIER_NONE, TIER_NONE] and tier.dtype == np.int8
    prior, tier = alias_features(MentionCandidates.empty(), np.array([3], dtype=np.int64))
    assert prior.tolist() == [0.0] and tier.tolist() == [TIER_NONE]

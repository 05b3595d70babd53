"""Every generator gives the same lists through the KB's batch look-up as through one look-up per mention
(issue 70, section 3): the alias generator against the general path's lists built as before, the hybrid
generator and the memo in one call against one call per mention, and spaCy's adapters alike."""
from pathlib import Path
from typing import List, Optional

import numpy as np
import pytest

from spacy_el.candidates import (
    AliasCandidates, CandidateMemo, DenseCandidates, HybridCandidates, MentionCandidates, attach_mention_encoder,
    spacy_candidates, spacy_candidates_batch,
)
from spacy_el.candidates.types import TIER_CODES
from spacy_el.kb import ElKnowledgeBase

from ..conftest import REPO_ROOT, build_invented_kb, build_toy_kb

TEXT = ("Paris met Hilton in PARIS . The Beatles , the Fab Four , played in paris 's hall ; Pariss and "
        "Mercer and MERCER and Lumen left Velda for Nowhere .")
WORDS = ["Paris", "Hilton", "PARIS", "The Beatles", "Fab Four", "paris 's", "paris", "Pariss", "Mercer", "MERCER",
         "Lumen", "Velda", "Nowhere"]


def mentions_of(nlp, text: str = TEXT, words=WORDS):
    """The spans of ``words`` (in order of appearance; they may overlap), then the first one again."""
    doc = nlp(text)
    spans, start = [], 0
    for word in words:
        begin = text.index(word, start)
        span = doc.char_span(begin, begin + len(word))
        assert span is not None, word
        spans.append(span)
        start = begin
    return spans + [spans[0]]


def reference_alias(kb: ElKnowledgeBase, text: str, top_k: Optional[int], fuzzy: bool, held_out=None) -> MentionCandidates:
    """The alias generator's list as it was made before the batch look-up: the general path, per mention."""
    if kb.is_empty() or not text.strip():
        return MentionCandidates.empty()
    found = kb._general_matches(text, top_k=top_k, fuzzy=fuzzy, held_out=held_out or None)
    priors = [m.prior * m.score for m in found]
    return MentionCandidates.from_lists(
        [m.entity_row for m in found], priors, [TIER_CODES[m.match] for m in found], [float("nan")] * len(found), priors
    )


def assert_same(got: List[MentionCandidates], expected: List[MentionCandidates]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        for field in ("rows", "prior", "tier", "dense", "score"):
            x, y = getattr(a, field), getattr(b, field)
            assert x.dtype == y.dtype and x.shape == y.shape, field
            np.testing.assert_array_equal(x, y, err_msg=field)
        assert (a.query is None) == (b.query is None)
        if a.query is not None:
            np.testing.assert_array_equal(a.query, b.query)


@pytest.mark.parametrize("build", [build_toy_kb, build_invented_kb])
@pytest.mark.parametrize("top_k, fuzzy", [(None, True), (1, True), (2, False), (30, True)])
def test_alias_generator_batch_is_the_general_path_per_mention(nlp, build, top_k, fuzzy):
    kb = build()
    spans = mentions_of(nlp)
    expected = [reference_alias(kb, span.text, top_k, fuzzy) for span in spans]
    assert_same(AliasCandidates(top_k=top_k, fuzzy=fuzzy)(kb, spans), expected)
    assert_same([AliasCandidates(top_k=top_k, fuzzy=fuzzy)(kb, [span])[0] for span in spans], expected)


def test_alias_generator_with_held_out_counts(nlp):
    from spacy_el.kb import KBBuilder

    builder = KBBuilder()
    for entity in ("A", "B"):
        builder.add_entity(entity)
    builder.add_alias("Xavi", ["A", "B"], [0.75, 0.25], count=4)
    kb = builder.build()
    spans = mentions_of(nlp, "Xavi met Xavi and Xavi .", ["Xavi", "Xavi", "Xavi"])  # the first one twice
    own = {"Xavi": {"A": 3.0}}
    held = [own, None, {}, own]
    got = AliasCandidates(top_k=None)(kb, spans, held_out=held)
    assert_same(got, [reference_alias(kb, "Xavi", None, True, h) for h in held])
    assert got[0].rows.tolist() == [1] and got[1].rows.tolist() == [0, 1]


def test_hybrid_and_memo_batch_is_one_call_per_mention(nlp, tiny_toy_kb, tiny_mention_encoder):
    attach_mention_encoder(tiny_toy_kb, tiny_mention_encoder)
    spans = mentions_of(nlp)
    for skip in (None, 0.5):
        hybrid = HybridCandidates(AliasCandidates(top_k=30), DenseCandidates(top_k=3, cache_size=0), top_k=4,
                                  skip_dense_above=skip)
        batch = hybrid(tiny_toy_kb, spans)
        assert_same(batch, [hybrid(tiny_toy_kb, [span])[0] for span in spans])
        # The same fusion of the alias lists made the old way.
        reference = [reference_alias(tiny_toy_kb, span.text, 30, True) for span in spans]
        need = hybrid.needs_dense(spans, reference)
        vectors = np.zeros((len(spans), tiny_toy_kb.entities.vector_dim), dtype=np.float32)
        vectors[need] = hybrid.dense.encode(tiny_toy_kb, [spans[i] for i in need])
        assert_same(batch, hybrid.fuse(tiny_toy_kb, reference, vectors, need))
        assert_same(CandidateMemo()(hybrid, tiny_toy_kb, spans), batch)
    alias = AliasCandidates(top_k=2)
    assert_same(CandidateMemo()(alias, tiny_toy_kb, spans), [reference_alias(tiny_toy_kb, s.text, 2, True) for s in spans])


def test_spacy_adapters_batch_is_one_call_per_mention(nlp):
    kb = build_toy_kb()
    spans = mentions_of(nlp)
    generator = AliasCandidates(top_k=2)
    one, batch = spacy_candidates(generator), spacy_candidates_batch(generator)

    def plain(cands):
        return [(c.entity_, c.alias_, c.prior_prob) for c in cands]

    assert [plain(c) for c in batch(kb, spans)] == [plain(one(kb, span)) for span in spans]
    assert [plain(c) for c in kb.get_candidates_batch(spans)] == [plain(kb.get_candidates(span)) for span in spans]


EVAL_KB = REPO_ROOT / "kb" / "eval"


@pytest.mark.data
@pytest.mark.skipif(not (EVAL_KB / "manifest.json").is_file(), reason="kb/eval is not built (python -m spacy project run kb-eval)")
def test_alias_generator_on_the_evaluation_kb(nlp):
    kb = ElKnowledgeBase.load(EVAL_KB)
    rng = np.random.default_rng(1)
    aliases = [kb.aliases.aliases[int(r)] for r in rng.choice(kb.n_aliases, size=min(kb.n_aliases, 600), replace=False)]
    aliases = [a for a in aliases if a.strip() and "\n" not in a][:400]
    words = aliases + [a.upper() for a in aliases[:100]] + [a.lower() + "s" for a in aliases[:100]]
    text = " | ".join(words)
    doc = nlp(text)
    spans, start = [], 0
    for word in words:
        begin = text.index(word, start)
        span = doc.char_span(begin, begin + len(word), alignment_mode="expand")
        start = begin + len(word)
        if span is not None:
            spans.append(span)
    for top_k, fuzzy in ((30, True), (16, False), (None, True)):
        expected = [reference_alias(kb, span.text, top_k, fuzzy) for span in spans]
        assert_same(AliasCandidates(top_k=top_k, fuzzy=fuzzy)(kb, spans), expected)

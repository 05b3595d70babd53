"""BM25 peer of the EntQA retriever (spacy_el.algorithms.bm25)."""
import math

import pytest

from spacy_el.algorithms.bm25 import BM25, terms

DOCS = ["Paris. Capital of France", "Paris Hilton. American media personality", "The Beatles. English rock band", ""]


def test_terms_are_lowercased_words():
    assert terms("Paris, Texas (U.S.)") == ["paris", "texas", "u", "s"]


def test_score_matches_the_formula():
    index = BM25(DOCS, k1=1.2, b=0.75)
    lengths = [len(terms(d)) for d in DOCS]
    avgdl = sum(lengths) / len(lengths)
    df = 2  # "paris" is in two documents
    idf = math.log(1 + (len(DOCS) - df + 0.5) / (df + 0.5))
    expected = idf * 1 * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * lengths[0] / avgdl))
    assert index.scores("paris")[0] == pytest.approx(expected, rel=1e-5)


def test_search_ranks_and_skips_zero_scores():
    index = BM25(DOCS)
    hits = index.search("rock band from England", 3)
    assert [row for row, _ in hits] == [2]
    assert [row for row, _ in index.search("paris france", 2)] == [0, 1]
    assert index.search("nothing matches", 5) == []
    assert BM25([]).search("paris", 3) == []

"""Okapi BM25 over short texts (entity title ⊕ description), numpy only: the sparse-retrieval peer of
``entity_retriever`` (EntQA).

Terms are lower-cased alphanumeric words. ``score(q, d) = sum_{w in q} idf(w) * tf(w, d) * (k1 + 1) /
(tf(w, d) + k1 * (1 - b + b * |d| / avgdl))`` with ``idf(w) = ln(1 + (N - df + 0.5) / (df + 0.5))``
(Robertson-Sparck Jones with the +1 that keeps it positive, as Lucene does). Repeated query words count
once per occurrence.
"""
import re
from collections import Counter, defaultdict
from typing import Dict, List, Sequence, Tuple

import numpy as np

__all__ = ["BM25", "terms"]

_WORD = re.compile(r"[0-9a-z]+")


def terms(text: str) -> List[str]:
    return _WORD.findall(text.lower())


class BM25:
    """An inverted index over ``documents``; ``search(query, k)`` -> the ``k`` best ``(row, score)``."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = float(k1), float(b)
        postings: Dict[str, List[Tuple[int, int]]] = defaultdict(list)
        lengths = np.zeros(len(documents), dtype=np.float32)
        for row, text in enumerate(documents):
            counts = Counter(terms(text))
            lengths[row] = sum(counts.values())
            for word, tf in counts.items():
                postings[word].append((row, tf))
        self.n = len(documents)
        average = float(lengths.mean()) if self.n and lengths.mean() > 0 else 1.0
        norm = self.k1 * (1 - self.b + self.b * lengths / average)
        self._rows: Dict[str, np.ndarray] = {}
        self._weights: Dict[str, np.ndarray] = {}
        for word, pairs in postings.items():
            rows = np.fromiter((r for r, _ in pairs), dtype=np.int64, count=len(pairs))
            tf = np.fromiter((t for _, t in pairs), dtype=np.float32, count=len(pairs))
            idf = np.log1p((self.n - len(pairs) + 0.5) / (len(pairs) + 0.5))
            self._rows[word] = rows
            self._weights[word] = (idf * tf * (self.k1 + 1) / (tf + norm[rows])).astype(np.float32)

    def scores(self, query: str) -> np.ndarray:
        """``[N]`` BM25 score of every document for ``query``."""
        out = np.zeros(self.n, dtype=np.float32)
        for word in terms(query):
            rows = self._rows.get(word)
            if rows is not None:
                out[rows] += self._weights[word]  # rows are unique per word: plain fancy-index add is exact
        return out

    def search(self, query: str, k: int) -> List[Tuple[int, float]]:
        """The ``k`` highest-scoring documents (score > 0 only), best first; ties by row."""
        scores = self.scores(query)
        k = min(k, self.n)
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(int(r), float(scores[r])) for r in top if scores[r] > 0]

"""Character-trigram inverted index for fuzzy alias lookup (the third tier, after exact and normalised).

Trigrams are built over normalised aliases padded with one space on each side, so "paris" gives
" pa", "par", "ari", "ris", "is ". A query is scored against every alias sharing a trigram with it by
the Dice coefficient 2|A∩B| / (|A| + |B|) over distinct trigrams.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

# Code points are < 2**21, so three of them pack into one uint64 without collisions.
_SHIFT = np.uint64(21)


def _pack_trigrams(codepoints: np.ndarray) -> np.ndarray:
    """Pack consecutive code point triples into uint64 codes.

    codepoints (np.ndarray): uint64 array of shape (L,).
    RETURNS (np.ndarray): uint64 array of shape (max(L - 2, 0),).
    """
    if len(codepoints) < 3:
        return np.zeros(0, dtype=np.uint64)
    return (codepoints[:-2] << (_SHIFT * np.uint64(2))) | (codepoints[1:-1] << _SHIFT) | codepoints[2:]


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def query_trigrams(normalized: str) -> np.ndarray:
    """Distinct trigram codes of one normalised string, uint64 array of shape (g,)."""
    return np.unique(_pack_trigrams(_codepoints(f" {normalized} ")))


class NgramIndex:
    """Inverted index from trigram code to the rows (aliases) that contain it.

    gram_codes (np.ndarray): uint64 (G,), sorted distinct trigram codes.
    gram_offsets (np.ndarray): int64 (G + 1,); postings of gram g are ``postings[gram_offsets[g]:gram_offsets[g+1]]``.
    postings (np.ndarray): int32 (P,), row numbers, ascending within each gram.
    row_gram_counts (np.ndarray): uint16 (n_rows,), number of distinct trigrams per row.
    """

    def __init__(
        self,
        gram_codes: np.ndarray,
        gram_offsets: np.ndarray,
        postings: np.ndarray,
        row_gram_counts: np.ndarray,
    ) -> None:
        self.gram_codes = gram_codes
        self.gram_offsets = gram_offsets
        self.postings = postings
        self.row_gram_counts = row_gram_counts

    @classmethod
    def build(cls, normalized: Sequence[str]) -> "NgramIndex":
        """Index each normalised string; row i of the index is ``normalized[i]``. Vectorised over all rows."""
        padded = [f" {s} " for s in normalized]
        lengths = np.fromiter((len(s) for s in padded), dtype=np.int64, count=len(padded))
        codepoints = _codepoints("".join(padded))
        codes = _pack_trigrams(codepoints)
        owners = np.repeat(np.arange(len(padded), dtype=np.int64), lengths)
        # A trigram starting at position p is valid only if p and p + 2 belong to the same string.
        valid = owners[:-2] == owners[2:] if len(owners) >= 3 else np.zeros(0, dtype=bool)
        codes, owners = codes[valid], owners[:-2][valid] if len(owners) >= 3 else owners[:0]
        # Distinct (code, owner) pairs, sorted by code then owner.
        order = np.lexsort((owners, codes))
        codes, owners = codes[order], owners[order]
        keep = np.ones(len(codes), dtype=bool)
        keep[1:] = (codes[1:] != codes[:-1]) | (owners[1:] != owners[:-1])
        codes, owners = codes[keep], owners[keep]
        gram_codes, starts = np.unique(codes, return_index=True)
        gram_offsets = np.append(starts, len(codes)).astype(np.int64)
        counts = np.bincount(owners, minlength=len(padded))
        row_gram_counts = np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)
        return cls(gram_codes, gram_offsets, owners.astype(np.int32), row_gram_counts)

    def search(
        self, normalized: str, *, min_score: float, max_results: int, max_postings: int = 100_000
    ) -> List[Tuple[int, float]]:
        """Rows most similar to ``normalized`` by trigram Dice, best first, with score >= min_score.

        Trigrams whose posting list is longer than ``max_postings`` (e.g. " th" at scale) are skipped
        to bound latency, unless every trigram of the query is that common; a skipped trigram still
        counts in the query's size, so scores can only be underestimated.
        """
        grams = query_trigrams(normalized)
        if len(grams) == 0 or len(self.gram_codes) == 0:
            return []
        pos = np.minimum(np.searchsorted(self.gram_codes, grams), len(self.gram_codes) - 1)
        pos = pos[self.gram_codes[pos] == grams]
        if len(pos) == 0:
            return []
        sizes = self.gram_offsets[pos + 1] - self.gram_offsets[pos]
        if bool(np.any(sizes <= max_postings)):
            pos = pos[sizes <= max_postings]
        postings = np.concatenate([self.postings[self.gram_offsets[g] : self.gram_offsets[g + 1]] for g in pos])
        rows, overlap = np.unique(postings, return_counts=True)
        dice = 2.0 * overlap / (len(grams) + self.row_gram_counts[rows].astype(np.float64))
        ok = dice >= min_score
        rows, dice = rows[ok], dice[ok]
        # Best score first; ties go to the lower row, so results are deterministic.
        order = np.lexsort((rows, -dice))[:max_results]
        return [(int(rows[i]), float(dice[i])) for i in order]

    def to_arrays(self, prefix: str) -> Dict[str, np.ndarray]:
        return {
            f"{prefix}.gram_codes": self.gram_codes,
            f"{prefix}.gram_offsets": self.gram_offsets,
            f"{prefix}.postings": self.postings,
            f"{prefix}.row_gram_counts": self.row_gram_counts,
        }

    @classmethod
    def from_arrays(cls, arrays: Dict[str, np.ndarray], prefix: str) -> "NgramIndex":
        return cls(
            arrays[f"{prefix}.gram_codes"],
            arrays[f"{prefix}.gram_offsets"],
            arrays[f"{prefix}.postings"],
            arrays[f"{prefix}.row_gram_counts"],
        )

    def validate(self, n_rows: int) -> Optional[str]:
        if len(self.gram_offsets) != len(self.gram_codes) + 1:
            return "gram_offsets must have one more entry than gram_codes"
        if self.gram_offsets[0] != 0 or self.gram_offsets[-1] != len(self.postings):
            return "gram_offsets do not cover the postings"
        if len(self.row_gram_counts) != n_rows:
            return f"row_gram_counts has {len(self.row_gram_counts)} rows, expected {n_rows}"
        if len(self.postings) and (int(self.postings.min()) < 0 or int(self.postings.max()) >= n_rows):
            return f"postings out of range [0, {n_rows})"
        return None

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.to_arrays("x").values()))

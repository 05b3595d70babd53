"""Alias table: alias -> candidate entities with prior p(e|m), looked up in three tiers.

1. exact: the alias string as given;
2. normalised: case, diacritics, punctuation, a leading "The" and possessives folded (``normalize_alias``);
3. fuzzy: character-trigram Dice similarity over normalised aliases (optional).

Exact matches rank first; normalised matches follow (after the exact ones, or alone when there is no exact
match); the fuzzy tier runs only when neither finds an alias. Candidates of all matched aliases are merged.

An alias may also record its **count**: the (pseudo-)count of mentions its priors were estimated from. With
it, the priors without some of those mentions can be recomputed (:func:`held_out_priors`): a linker trained
on the very documents that the alias table counted then sees priors as they are for a document that was
not counted, that is, as at test time.
"""
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .ngram_index import NgramIndex
from .normalize import normalize_alias
from .string_array import HashIndex, StringArray

MATCH_EXACT = "exact"
MATCH_NORMALIZED = "normalized"
MATCH_FUZZY = "fuzzy"


class CandidateHit(NamedTuple):
    """One candidate entity for a queried mention.

    entity_id: the KB id. entity_row: its row in the entity store. prior: p(e|alias) of the matched alias.
    alias: the KB alias that matched. match: "exact", "normalized" or "fuzzy". score: the match quality
    (1.0 for exact and normalised matches, the trigram Dice coefficient for fuzzy ones).
    """

    entity_id: str
    entity_row: int
    prior: float
    alias: str
    match: str
    score: float


class AliasTable:
    """Aliases and their candidates in CSR form.

    aliases (StringArray): n aliases.
    cand_offsets (np.ndarray): int64 (n + 1,); alias i's candidates are positions cand_offsets[i]:cand_offsets[i+1].
    cand_entities (np.ndarray): int32 (C,), entity rows, sorted by descending prior within each alias.
    cand_priors (np.ndarray): float32 (C,), p(e|alias) in [0, 1].
    exact_index, normalized_index (HashIndex): alias string / normalised alias -> alias rows.
    fuzzy_index (Optional[NgramIndex]): trigram index over normalised aliases, None when disabled.
    counts (Optional[np.ndarray]): float32 (n,), each alias's count of mentions behind its priors (0 where
        unknown); None when no alias has one.
    """

    def __init__(
        self,
        aliases: StringArray,
        cand_offsets: np.ndarray,
        cand_entities: np.ndarray,
        cand_priors: np.ndarray,
        exact_index: HashIndex,
        normalized_index: HashIndex,
        fuzzy_index: Optional[NgramIndex],
        counts: Optional[np.ndarray] = None,
    ) -> None:
        self.aliases = aliases
        self.cand_offsets = cand_offsets
        self.cand_entities = cand_entities
        self.cand_priors = cand_priors
        self.exact_index = exact_index
        self.normalized_index = normalized_index
        self.fuzzy_index = fuzzy_index
        self.counts = counts

    @classmethod
    def build(
        cls,
        aliases: Sequence[str],
        cand_offsets: np.ndarray,
        cand_entities: np.ndarray,
        cand_priors: np.ndarray,
        fuzzy: bool = True,
        counts: Optional[Sequence[float]] = None,
    ) -> "AliasTable":
        """Build from CSR candidate arrays; candidates are re-sorted by descending prior per alias. ``counts``:
        one per alias (0: unknown), or None."""
        n = len(aliases)
        owners = np.repeat(np.arange(n, dtype=np.int64), np.diff(cand_offsets))
        order = np.lexsort((-cand_priors.astype(np.float64), owners))
        normalized = [normalize_alias(a) for a in aliases]
        return cls(
            aliases=StringArray.from_strings(aliases),
            cand_offsets=cand_offsets.astype(np.int64),
            cand_entities=cand_entities[order].astype(np.int32),
            cand_priors=cand_priors[order].astype(np.float32),
            exact_index=HashIndex.build(aliases),
            normalized_index=HashIndex.build(normalized),
            fuzzy_index=NgramIndex.build(normalized) if fuzzy else None,
            counts=None if counts is None else np.asarray(counts, dtype=np.float32).reshape(-1),
        )

    def __len__(self) -> int:
        return len(self.aliases)

    def exact_rows(self, alias: str) -> List[int]:
        return [int(r) for r in self.exact_index.candidate_rows(alias) if self.aliases[int(r)] == alias]

    def normalized_rows(self, normalized: str) -> List[int]:
        rows = self.normalized_index.candidate_rows(normalized)
        return [int(r) for r in rows if normalize_alias(self.aliases[int(r)]) == normalized]

    def candidates_of(self, row: int) -> "tuple[np.ndarray, np.ndarray]":
        """(entity rows int32 (c,), priors float32 (c,)) of alias ``row``, best prior first."""
        start, end = self.cand_offsets[row], self.cand_offsets[row + 1]
        return self.cand_entities[start:end], self.cand_priors[start:end]

    def match(
        self,
        text: str,
        *,
        fuzzy: bool,
        fuzzy_min_score: float,
        fuzzy_max_aliases: int,
        expand_normalized: bool = True,
        keep: Optional[Callable[[int], bool]] = None,
    ) -> "List[tuple[str, List[tuple[int, float]]]]":
        """Find the alias rows matching ``text``, tier by tier.

        The exact tier comes first. The normalised tier follows when the exact one found nothing, or
        always with ``expand_normalized`` (it then adds only aliases the exact tier did not match: e.g.
        "BOSTON" also gets the candidates of "Boston"). The fuzzy tier runs only when both found nothing.
        ``keep``: when given, alias rows for which it is False count as absent (the tiers then run as if the
        table lacked them).
        RETURNS: [(tier name, [(alias row, match score), ...]), ...], non-empty tiers in order.
        """
        tiers = []
        exact = [r for r in self.exact_rows(text) if keep is None or keep(r)]
        if exact:
            tiers.append((MATCH_EXACT, [(r, 1.0) for r in exact]))
        normalized = normalize_alias(text)
        if not normalized or (exact and not expand_normalized):
            return tiers
        rows = [r for r in self.normalized_rows(normalized) if r not in exact and (keep is None or keep(r))]
        if rows:
            tiers.append((MATCH_NORMALIZED, [(r, 1.0) for r in rows]))
        if not tiers and fuzzy and self.fuzzy_index is not None:
            found = self.fuzzy_index.search(normalized, min_score=fuzzy_min_score, max_results=fuzzy_max_aliases)
            found = [(r, score) for r, score in found if keep is None or keep(int(r))]
            if found:
                tiers.append((MATCH_FUZZY, found))
        return tiers

    def to_arrays(self) -> Dict[str, np.ndarray]:
        arrays: Dict[str, np.ndarray] = {}
        arrays.update(self.aliases.to_arrays("aliases.strings"))
        arrays["aliases.cand_offsets"] = self.cand_offsets
        arrays["aliases.cand_entities"] = self.cand_entities
        arrays["aliases.cand_priors"] = self.cand_priors
        arrays.update(self.exact_index.to_arrays("aliases.exact_index"))
        arrays.update(self.normalized_index.to_arrays("aliases.normalized_index"))
        if self.fuzzy_index is not None:
            arrays.update(self.fuzzy_index.to_arrays("aliases.fuzzy_index"))
        if self.counts is not None:
            arrays["aliases.counts"] = self.counts
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Dict[str, np.ndarray]) -> "AliasTable":
        has_fuzzy = "aliases.fuzzy_index.postings" in arrays
        return cls(
            aliases=StringArray.from_arrays(arrays, "aliases.strings"),
            cand_offsets=arrays["aliases.cand_offsets"],
            cand_entities=arrays["aliases.cand_entities"],
            cand_priors=arrays["aliases.cand_priors"],
            exact_index=HashIndex.from_arrays(arrays, "aliases.exact_index"),
            normalized_index=HashIndex.from_arrays(arrays, "aliases.normalized_index"),
            fuzzy_index=NgramIndex.from_arrays(arrays, "aliases.fuzzy_index") if has_fuzzy else None,
            counts=arrays.get("aliases.counts"),
        )

    def validate(self, n_entities: int) -> Dict[str, str]:
        """Structural problems by array name (empty when consistent)."""
        n = len(self.aliases)
        problems: Dict[str, str] = {}
        problem = self.aliases.validate()
        if problem:
            problems["aliases.strings"] = problem
        offsets = self.cand_offsets
        if len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(self.cand_entities):
            problems["aliases.cand_offsets"] = "does not match the number of aliases and candidates"
        elif n and bool(np.any(np.diff(offsets) < 0)):
            problems["aliases.cand_offsets"] = "offsets are not non-decreasing"
        if self.cand_priors.shape != self.cand_entities.shape:
            problems["aliases.cand_priors"] = "shape differs from aliases.cand_entities"
        elif len(self.cand_priors) and not bool(np.all((self.cand_priors >= 0) & (self.cand_priors <= 1))):
            problems["aliases.cand_priors"] = "priors outside [0, 1]"
        if len(self.cand_entities) and (
            int(self.cand_entities.min()) < 0 or int(self.cand_entities.max()) >= n_entities
        ):
            problems["aliases.cand_entities"] = f"entity rows out of range [0, {n_entities})"
        for name, index in (("exact_index", self.exact_index), ("normalized_index", self.normalized_index)):
            problem = index.validate(n)
            if problem:
                problems[f"aliases.{name}"] = problem
        if self.fuzzy_index is not None:
            problem = self.fuzzy_index.validate(n)
            if problem:
                problems["aliases.fuzzy_index"] = problem
        if self.counts is not None:
            if self.counts.shape != (n,):
                problems["aliases.counts"] = f"shape {self.counts.shape}, expected ({n},): one count per alias"
            elif bool(np.any(self.counts < 0)):
                problems["aliases.counts"] = "negative counts"
        return problems

    def memory_usage(self) -> Dict[str, int]:
        return {
            "alias_strings": self.aliases.nbytes,
            "alias_candidates": int(self.cand_offsets.nbytes + self.cand_entities.nbytes + self.cand_priors.nbytes),
            "alias_exact_index": self.exact_index.nbytes,
            "alias_normalized_index": self.normalized_index.nbytes,
            "alias_fuzzy_index": 0 if self.fuzzy_index is None else self.fuzzy_index.nbytes,
            "alias_counts": 0 if self.counts is None else int(self.counts.nbytes),
        }

    def count_of(self, row: int) -> float:
        """Alias ``row``'s count (0 where unknown, and for a table without counts)."""
        return 0.0 if self.counts is None else float(self.counts[row])


#: What one document (or any held-out set of mentions) contributed to an alias table: alias string ->
#: {entity id: count}, in the units of the table's counts.
AliasCounts = Mapping[str, Mapping[str, float]]

#: Counts at or below this are none left (float32 arithmetic on pseudo-counts).
_EMPTY = 1e-4


def held_out_priors(
    priors: np.ndarray, entity_ids: Sequence[str], count: float, held_out: Mapping[str, float],
) -> Tuple[np.ndarray, np.ndarray]:
    """One alias's priors (float32 (c,), for ``entity_ids``) recomputed without the ``held_out`` mentions
    (entity id -> count) out of its ``count``: p'(e) = (p(e) count - held_out(e)) / (count - sum held_out).
    An entity with nothing left is dropped; held-out counts beyond what the alias holds (mentions this table
    did not count) are capped at what it holds. RETURNS: (positions kept int64 (c',), their priors float32
    (c',)); empty when nothing is left of the alias."""
    counted = priors.astype(np.float64) * count
    removed = np.array([min(held_out.get(e, 0.0), c) for e, c in zip(entity_ids, counted)], dtype=np.float64)
    left = counted - removed
    total = count - removed.sum()
    keep = np.flatnonzero(left > _EMPTY)
    if total <= _EMPTY or not len(keep):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return keep, np.clip(left[keep] / total, 0.0, 1.0).astype(np.float32)

"""The exact and normalised tiers of many mentions at once.

:func:`~spacy_el.kb.fast_lookup.batch_matches` answers a mention that is exactly one alias, with no other alias of
its normalised form, from the alias's own candidates. The mentions it leaves are mostly two kinds: an alias that
shares its normalised form with others ("Mercer" beside "MERCER"), and a case or article variant of an alias
("MERCER FC", "The Mercer"). Here both tiers run for all of them together, with the general path's candidates
and order (:meth:`ElKnowledgeBase._general_matches` without held-out counts or type preferences):

* the exact tier is the alias the batch's hash probes found; the normalised tier is every other alias whose
  normalised form is the mention's, found by a binary search per mention over the sorted hashes and checked
  against the normalised strings;
* each entity keeps its best match (earlier tier, then higher prior; on a tie the first one met, exact tier first,
  then the normalised aliases in index order, then each alias's stored order), ranked by tier, prior, entity
  frequency, then entity row, and cut to ``k``.

A mention that neither tier matches is left to the general path, which runs the fuzzy tier.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.strings import hash_string

from .alias_table import MATCH_EXACT, MATCH_FUZZY, MATCH_NORMALIZED, AliasTable
from .normalize import normalize_alias

#: Match tiers as the small integers a batch stores (``TIER_NAMES[code]``), best first.
TIER_NAMES = (MATCH_EXACT, MATCH_NORMALIZED, MATCH_FUZZY)
TIER_CODE = {name: code for code, name in enumerate(TIER_NAMES)}
EXACT, NORMALIZED = TIER_CODE[MATCH_EXACT], TIER_CODE[MATCH_NORMALIZED]


class TierMatches(NamedTuple):
    """The ranked candidates of the mentions both tiers matched, segment by segment.

    found: bool (U,), whether mention u has any (False: the general path answers it). entity_rows: int64 (C,).
    tiers: int8 (C,), codes into ``TIER_NAMES``. priors: float32 (C,). alias_rows: int64 (C,), the alias that
    matched. segment: int64 (C,), the mention. rank: int64 (C,), the position in the mention's list.
    """

    found: np.ndarray
    entity_rows: np.ndarray
    tiers: np.ndarray
    priors: np.ndarray
    alias_rows: np.ndarray
    segment: np.ndarray
    rank: np.ndarray


def tier_matches(
    table: AliasTable, frequencies: np.ndarray, texts: Sequence[str], exact_rows: np.ndarray, k: Optional[int],
    expand_normalized: bool,
) -> TierMatches:
    """Both tiers for ``texts``; ``exact_rows`` int64 (U,): each text's exact alias row, or -1 when it is none."""
    n = len(texts)
    segment_of_alias, tier_of_alias, alias_rows = _matched_aliases(table, texts, exact_rows, expand_normalized)
    found = np.zeros(n, dtype=bool)
    found[segment_of_alias] = True
    positions, owner = candidate_positions(table, alias_rows)
    segment = segment_of_alias[owner]
    tiers = tier_of_alias[owner]
    entities = table.cand_entities[positions].astype(np.int64)
    priors = table.cand_priors[positions]
    matched_alias = alias_rows[owner]
    # Each (mention, entity) keeps its best match: earlier tier, higher prior, then the first met.
    met = np.arange(len(positions), dtype=np.int64)
    order = np.lexsort((met, -priors.astype(np.float64), tiers, entities, segment))
    sorted_segment, sorted_entities = segment[order], entities[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (sorted_segment[1:] != sorted_segment[:-1]) | (sorted_entities[1:] != sorted_entities[:-1])
    best = order[first]
    segment, tiers, entities, priors, matched_alias = (
        segment[best], tiers[best], entities[best], priors[best], matched_alias[best])
    order = np.lexsort((entities, -frequencies[entities].astype(np.float64), -priors.astype(np.float64), tiers, segment))
    segment, tiers, entities, priors, matched_alias = (
        segment[order], tiers[order], entities[order], priors[order], matched_alias[order])
    rank = positions_in_segments(np.bincount(segment, minlength=n))
    keep = slice(None) if k is None else rank < k
    return TierMatches(found, entities[keep], tiers[keep].astype(np.int8), priors[keep], matched_alias[keep],
                       segment[keep], rank[keep])


def _matched_aliases(
    table: AliasTable, texts: Sequence[str], exact_rows: np.ndarray, expand_normalized: bool,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(segment int64 (A,), tier int8 (A,), alias row int64 (A,)): every alias a text matches, text by text, its
    exact alias first, then its normalised ones in the normalised index's order."""
    normalized = [normalize_alias(text) for text in texts]
    wanted = np.array([bool(form) for form in normalized], dtype=bool)
    if not expand_normalized:
        wanted &= exact_rows < 0
    asked = np.flatnonzero(wanted)
    index = table.normalized_index
    hashes = np.fromiter((hash_string(normalized[u]) for u in asked.tolist()), dtype=np.uint64, count=len(asked))
    lo = index.hashes.searchsorted(hashes, side="left")
    hi = index.hashes.searchsorted(hashes, side="right")
    counts = hi - lo
    owner = np.repeat(asked, counts)
    at = positions_in_segments(counts) + np.repeat(lo, counts)
    rows = index.rows[at].astype(np.int64)
    # Not the exact alias again, and truly of the same normalised form (hashes can collide).
    other = rows != exact_rows[owner]
    owner, rows = owner[other], rows[other]
    strings = table.aliases
    same = np.array([normalize_alias(strings[row]) == normalized[u] for u, row in zip(owner.tolist(), rows.tolist())],
                    dtype=bool)
    owner, rows = owner[same], rows[same]
    exact = np.flatnonzero(exact_rows >= 0)
    segment = np.concatenate([exact, owner])
    tier = np.concatenate([np.full(len(exact), EXACT, dtype=np.int8), np.full(len(owner), NORMALIZED, dtype=np.int8)])
    alias_rows = np.concatenate([exact_rows[exact], rows])
    order = np.argsort(segment, kind="stable")  # exact first within a text: it was laid out first
    return segment[order], tier[order], alias_rows[order]


def candidate_positions(table: AliasTable, alias_rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(positions int64 (C,), owner int64 (C,)): every candidate position of ``alias_rows``, alias by alias, and
    the index into ``alias_rows`` each comes from."""
    starts = table.cand_offsets[alias_rows]
    counts = table.cand_offsets[alias_rows + 1] - starts
    owner = np.repeat(np.arange(len(alias_rows), dtype=np.int64), counts)
    return positions_in_segments(counts) + np.repeat(starts, counts), owner


def positions_in_segments(counts: np.ndarray) -> np.ndarray:
    """int64 (counts.sum(),): each element's position within its segment, for consecutive segments of ``counts``
    elements: [0, 1, ..., counts[0] - 1, 0, 1, ..., counts[1] - 1, ...]."""
    counts = np.asarray(counts, dtype=np.int64)
    return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


__all__: List[str] = [
    "TIER_CODE", "TIER_NAMES", "TierMatches", "candidate_positions", "positions_in_segments", "tier_matches",
]

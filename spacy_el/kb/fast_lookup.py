"""The look-up's fast path: a mention that is exactly one alias, with no other alias of its normalised form.

Most mentions a linker looks up are an alias of the KB as written. For such a mention the three tiers of
:meth:`AliasTable.match` reduce to that alias's own candidates: the normalised tier adds nothing when no other
alias has the same normalised form, and the fuzzy tier runs only when both others found nothing. The general
path still pays for the normalisation (Unicode decomposition and four regular expressions), a binary search
per tier, a Python record per candidate and a sort; here one hash probe, one flag and the alias's candidate
slice (already sorted by prior) answer it, with exactly the general path's candidates and order.

Anything else (no exact alias, a normalised form that several aliases share, a hash shared by two aliases, an
alias naming an entity twice, held-out counts, type preferences) takes the general path, so the results are
identical by construction; ``tests/kb/test_lookup_batch.py`` compares both paths.

:func:`batch_matches` answers many mentions at once: the hash probes, the candidate gathering, the ranking and
the ``top_k`` cut are array operations over the whole batch, and each distinct mention text is looked up once.
In a batch, the mentions the fast path leaves run the exact and normalised tiers as array operations too
(:mod:`spacy_el.kb.tier_batch`); only the fuzzy tier, held-out counts and type preferences take the general path.
"""
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.strings import hash_string

from .alias_table import MATCH_EXACT, AliasTable, CandidateHit
from .tier_batch import TIER_CODE, TIER_NAMES, candidate_positions, positions_in_segments, tier_matches

_new = tuple.__new__

if TYPE_CHECKING:
    from .entity_store import EntityStore
    from .knowledge_base import Match


def normalized_unique(table: AliasTable) -> np.ndarray:
    """bool (n,): whether alias row i's normalised form hashes to no other alias's (derived from the normalised
    index's sorted hashes, once per table: 1 byte per alias). For such a row the normalised tier of a mention
    that is exactly its alias finds no other alias."""
    cached = table.__dict__.get("_normalized_unique")
    if cached is not None:
        return cached
    hashes, rows = table.normalized_index.hashes, table.normalized_index.rows
    unique = np.zeros(len(table), dtype=bool)
    if len(hashes):
        same_as_next = np.zeros(len(hashes), dtype=bool)
        same_as_next[:-1] = hashes[1:] == hashes[:-1]
        shared = same_as_next.copy()
        shared[1:] |= same_as_next[:-1]
        unique[rows[~shared]] = True
    table.__dict__["_normalized_unique"] = unique
    return unique


def simple_candidates(table: AliasTable) -> np.ndarray:
    """bool (n,): whether alias row i names each entity once, with strictly decreasing priors: its stored order is
    then the look-up's, with no tie for the entity frequency to break (derived once per table)."""
    return _candidate_flags(table)[0]


def repeated_entities(table: AliasTable) -> np.ndarray:
    """bool (n,): whether alias row i names an entity twice (the general path then keeps the entity's best prior)."""
    return _candidate_flags(table)[1]


def _candidate_flags(table: AliasTable) -> Tuple[np.ndarray, np.ndarray]:
    cached = table.__dict__.get("_candidate_flags")
    if cached is not None:
        return cached
    counts = np.diff(table.cand_offsets)
    owners = np.repeat(np.arange(len(table), dtype=np.int64), counts)
    simple = np.ones(len(table), dtype=bool)
    repeated = np.zeros(len(table), dtype=bool)
    if len(owners) > 1:
        same = owners[1:] == owners[:-1]
        priors = table.cand_priors
        simple[owners[1:][same & (priors[1:] >= priors[:-1])]] = False
        width = int(table.cand_entities.max()) + 1
        key = np.sort(owners * width + table.cand_entities)  # (alias, entity) pairs, sorted: repeats are neighbours
        repeated[key[1:][key[1:] == key[:-1]] // width] = True
        simple &= ~repeated
    table.__dict__["_candidate_flags"] = (simple, repeated)
    return simple, repeated


#: A slot of :func:`hash_slots`: the alias row in the low 32 bits, a bit saying whether the row's normalised form
#: is its own (:func:`normalized_unique`), one whether its candidates are simple (:func:`simple_candidates`), then
#: the top 30 bits of the alias's hash.
_ROW_BITS = 32
_ROW_MASK = (1 << _ROW_BITS) - 1
_EMPTY = np.uint64(_ROW_MASK)
_UNIQUE = 1 << _ROW_BITS
_SIMPLE = 1 << (_ROW_BITS + 1)
_FINGERPRINT_SHIFT = _ROW_BITS + 2


def hash_slots(table: AliasTable) -> Tuple[int, np.ndarray]:
    """(mask, slots): an open-addressing hash table from alias string to alias row (linear probing, at most 70%
    full: 11 to 23 bytes per alias), built once per alias table in a few vectorised rounds from the exact
    index's hashes. Slot ``h & mask`` (then the next ones) holds a uint64: the row, the flags of
    :func:`normalized_unique` and :func:`simple_candidates` and a fingerprint of h (see ``_ROW_BITS``), so that
    a probe reads one cache line: a binary search with ``searchsorted`` costs microseconds of numpy overhead
    for one key, and every other array a look-up reads is another random memory access."""
    cached = table.__dict__.get("_hash_slots")
    if cached is not None:
        return cached
    hashes, rows = table.exact_index.hashes, table.exact_index.rows
    if len(hashes) >= _ROW_MASK:
        raise ValueError(f"the look-up's hash table holds fewer than {_ROW_MASK} aliases")
    size = 1 << max(3, int(np.ceil(np.log2(max(1, len(hashes)) / 0.7))))
    mask = size - 1
    values = (
        rows.astype(np.uint64)
        | (normalized_unique(table)[rows].astype(np.uint64) * np.uint64(_UNIQUE))
        | (simple_candidates(table)[rows].astype(np.uint64) * np.uint64(_SIMPLE))
        | ((hashes >> np.uint64(_FINGERPRINT_SHIFT)) << np.uint64(_FINGERPRINT_SHIFT))
    )
    slots = np.full(size, _EMPTY, dtype=np.uint64)
    home = (hashes & np.uint64(mask)).astype(np.int64)
    pending = np.arange(len(hashes), dtype=np.int64)
    step = 0
    while len(pending):
        slot = (home[pending] + step) & mask
        free = np.flatnonzero(slots[slot] == _EMPTY)
        # Of the keys that want one free slot, the first takes it; the others probe on.
        taken, first = np.unique(slot[free], return_index=True)
        slots[taken] = values[pending[free[first]]]
        done = np.zeros(len(pending), dtype=bool)
        done[free[first]] = True
        pending = pending[~done]
        step += 1
    table.__dict__["_hash_slots"] = (mask, slots)
    return mask, slots


class FastPath:
    """The fast path over one alias table and entity store (``ElKnowledgeBase._fast``, remade when either is
    replaced): their arrays and the ``.item`` readers bound once, since at a few microseconds a look-up an
    attribute lookup or a numpy call more is a measurable share."""

    def __init__(self, table: AliasTable, entities: "EntityStore") -> None:
        self.table, self.entities = table, entities
        self.mask, slots = hash_slots(table)
        self._slot = slots.item
        self._alias_offset = table.aliases.offsets.item
        self._alias_bytes = _bytes_view(table.aliases.data)
        self._cand_offset = table.cand_offsets.item
        self._cand_entity = table.cand_entities.item
        self._cand_prior = table.cand_priors.item
        self.cand_entities, self.cand_priors = table.cand_entities, table.cand_priors
        self._frequency = entities.frequencies.item
        self._id_offset = entities.ids.offsets.item
        self._id_bytes = _bytes_view(entities.ids.data)

    def slot_of(self, text: str) -> int:
        """The slot value of the alias that is exactly ``text`` (its row and flags), or -1 when no alias is."""
        h = hash_string(text)
        fingerprint = h >> _FINGERPRINT_SHIFT
        mask, slot_value, alias_offset = self.mask, self._slot, self._alias_offset
        slot = h & mask
        encoded = None
        while True:
            value = slot_value(slot)
            row = value & _ROW_MASK
            if row == _ROW_MASK:
                return -1
            if value >> _FINGERPRINT_SHIFT == fingerprint:
                if encoded is None:
                    encoded = text.encode("utf8")
                if self._alias_bytes[alias_offset(row) : alias_offset(row + 1)] == encoded:
                    return value
            slot = (slot + 1) & mask

    def row_of(self, text: str) -> int:
        """The alias row that alone answers ``text`` (see the module docstring), or -1 when the general path must
        (no alias is ``text``, or another alias shares its normalised form, and the general path merges them)."""
        value = self.slot_of(text)
        return value & _ROW_MASK if value >= 0 and value & _UNIQUE else -1

    def ranked(self, row: int, k: Optional[int]) -> Optional[Tuple[List[int], List[float]]]:
        """Alias ``row``'s (entity rows, priors) in the look-up's order (prior, then entity frequency, then row),
        cut to ``k``; None when the alias names an entity twice (the general path keeps each entity's best)."""
        start, end = self._cand_offset(row), self._cand_offset(row + 1)
        if k is not None and end - start > k and simple_candidates(self.table)[row]:
            end = start + k
        entities = self.cand_entities[start:end].tolist()
        priors = self.cand_priors[start:end].tolist()
        n = len(entities)
        if n > 1 and not simple_candidates(self.table)[row]:
            if len(set(entities)) != n:
                return None
            frequency = self._frequency
            order = sorted(range(n), key=lambda i: (-priors[i], -frequency(entities[i]), entities[i]))[:k]
            entities, priors = [entities[i] for i in order], [priors[i] for i in order]
        return entities, priors

    def entity_id(self, row: int) -> str:
        return str(self._id_bytes[self._id_offset(row) : self._id_offset(row + 1)], "utf8")

    def hits(self, text: str, k: Optional[int]) -> Optional[List[CandidateHit]]:
        """:meth:`ElKnowledgeBase.lookup`'s result for ``text`` when it is exactly an alias and nothing else needs
        looking up, else None (the general path answers). One function with its readers in local variables, and
        ``tuple.__new__`` makes the named tuples without running their Python ``__new__``: the look-up costs a
        few microseconds, and each call or attribute lookup is a visible share of it."""
        # slot_of, inlined.
        h = hash_string(text)
        fingerprint = h >> _FINGERPRINT_SHIFT
        mask, slot_value, alias_offset, alias_bytes = self.mask, self._slot, self._alias_offset, self._alias_bytes
        slot = h & mask
        encoded = None
        while True:
            value = slot_value(slot)
            row = value & _ROW_MASK
            if row == _ROW_MASK:
                return None
            if value >> _FINGERPRINT_SHIFT == fingerprint:
                if encoded is None:
                    encoded = text.encode("utf8")
                if alias_bytes[alias_offset(row) : alias_offset(row + 1)] == encoded:
                    break
            slot = (slot + 1) & mask
        if not value & _UNIQUE:
            return None
        start, end = self._cand_offset(row), self._cand_offset(row + 1)
        id_offset, id_bytes = self._id_offset, self._id_bytes
        if end - start == 1:  # most aliases: no slice objects
            entity = self._cand_entity(start)
            entity_id = str(id_bytes[id_offset(entity) : id_offset(entity + 1)], "utf8")
            return [_new(CandidateHit, (entity_id, entity, self._cand_prior(start), text, MATCH_EXACT, 1.0))]
        if value & _SIMPLE:
            if k is not None and end - start > k:
                end = start + k
            ranked = (self.cand_entities[start:end].tolist(), self.cand_priors[start:end].tolist())
        else:
            ranked = self.ranked(row, k)
            if ranked is None:
                return None
        return [
            _new(CandidateHit, (str(id_bytes[id_offset(e) : id_offset(e + 1)], "utf8"), e, p, text, MATCH_EXACT, 1.0))
            for e, p in zip(*ranked)
        ]


def _bytes_view(data: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(data, dtype=np.uint8)).cast("B")


@dataclass
class BatchMatches:
    """The ranked candidates of a batch of mentions, in CSR form over the distinct mentions.

    offsets: int64 (U + 1,); distinct mention u's candidates are positions offsets[u]:offsets[u + 1].
    entity_rows: int64 (C,). tiers: int8 (C,), codes into ``TIER_NAMES``. priors: float32 (C,), p(e | alias).
    scores: float64 (C,), the match scores (1 for exact and normalised matches, the trigram Dice for fuzzy ones).
    alias_rows: int64 (C,), the alias that matched.
    which: int64 (M,), mention i's distinct mention.
    """

    offsets: np.ndarray
    entity_rows: np.ndarray
    tiers: np.ndarray
    priors: np.ndarray
    scores: np.ndarray
    alias_rows: np.ndarray
    which: np.ndarray

    def __len__(self) -> int:
        return len(self.which)

    def span(self, i: int) -> Tuple[int, int]:
        """Mention ``i``'s candidates: positions start:end of the arrays."""
        u = self.which.item(i)
        return self.offsets.item(u), self.offsets.item(u + 1)

    def matches(self, i: int) -> List["Match"]:
        """Mention ``i``'s candidates as :meth:`ElKnowledgeBase.matches` gives them."""
        from .knowledge_base import Match

        start, end = self.span(i)
        return [
            Match(row, TIER_NAMES[tier], prior, score, alias)
            for row, tier, prior, score, alias in zip(
                self.entity_rows[start:end].tolist(), self.tiers[start:end].tolist(),
                self.priors[start:end].tolist(), self.scores[start:end].tolist(), self.alias_rows[start:end].tolist(),
            )
        ]


GeneralPath = Callable[[str, Optional[object]], List["Match"]]


def batch_matches(
    table: AliasTable, frequencies: np.ndarray, texts: Sequence[str], k: Optional[int], general: GeneralPath,
    held_out: Optional[Sequence[Optional[object]]] = None, expand_normalized: bool = True,
) -> BatchMatches:
    """The candidates of ``texts`` (see :class:`BatchMatches`), cut to ``k`` (None: all). Each distinct text takes
    one of three paths, all giving the general path's candidates and order:

    * the fast path, for a text that is exactly one alias with no other alias of its normalised form;
    * the exact and normalised tiers over the whole batch (:mod:`spacy_el.kb.tier_batch`), for the others they match;
    * ``general(text, held_out)`` (``ElKnowledgeBase.matches`` with the call's settings) for the rest: texts
      neither tier matches (the fuzzy tier), texts with held-out counts, and texts whose hash probe met another
      alias with their fingerprint.

    ``held_out``: per mention, its held-out counts or None (equal texts with the same counts object are looked
    up once). ``expand_normalized``: the KB's setting (see :meth:`AliasTable.match`)."""
    distinct, which = _distinct(texts, held_out)
    n = len(distinct)
    distinct_texts = [text for text, _ in distinct]
    exact, unique, resolved = _exact_rows(table, distinct_texts, [counts is None for _, counts in distinct])
    fast = np.flatnonzero(resolved & unique)
    fast = fast[~repeated_entities(table)[exact[fast]]]
    tiered = resolved.copy()
    tiered[fast] = False
    tiered = np.flatnonzero(tiered)
    parts: List[Tuple[np.ndarray, ...]] = []  # (mentions, entity rows, tiers, priors, alias rows, segment, rank)
    if len(fast):
        entities, priors, segment, rank = _ranked_fast(table, frequencies, exact[fast], k)
        parts.append((fast, entities, np.full(len(entities), TIER_CODE[MATCH_EXACT], np.int8), priors,
                      exact[fast][segment], segment, rank))
    answered = np.zeros(n, dtype=bool)
    answered[fast] = True
    if len(tiered):
        found = tier_matches(table, frequencies, [distinct_texts[u] for u in tiered.tolist()], exact[tiered], k,
                             expand_normalized)
        parts.append((tiered, *found[1:]))
        answered[tiered[found.found]] = True
    general_parts = [(u, _from_matches(general(*distinct[u]))) for u in np.flatnonzero(~answered).tolist()]
    lengths = np.zeros(n, dtype=np.int64)
    for mentions, *_, segment, _rank in parts:
        lengths[mentions] = np.bincount(segment, minlength=len(mentions))
    for u, part in general_parts:
        lengths[u] = len(part[0])
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    columns = [np.zeros(total, dtype) for dtype in (np.int64, np.int8, np.float32, np.float64, np.int64)]
    out_rows, out_tiers, out_priors, out_scores, out_aliases = columns
    for mentions, entities, tiers, priors, alias_rows, segment, rank in parts:
        at = offsets[mentions[segment]] + rank
        out_rows[at], out_tiers[at], out_priors[at], out_aliases[at] = entities, tiers, priors, alias_rows
        out_scores[at] = 1.0
    for u, part in general_parts:
        for column, values in zip(columns, part):
            column[offsets[u] : offsets[u + 1]] = values
    return BatchMatches(offsets, *columns, which=which)


def _distinct(
    texts: Sequence[str], held_out: Optional[Sequence[Optional[object]]],
) -> Tuple[List[Tuple[str, Optional[object]]], np.ndarray]:
    """(distinct (text, held-out counts) pairs, int64 (M,) each text's pair): equal texts with the same counts
    object (or none) are one."""
    index: Dict[Any, int] = {}
    if held_out is None:
        which = [index.setdefault(text, len(index)) for text in texts]
        distinct = [(text, None) for text in index]
    else:
        keys = [(text, id(counts)) for text, counts in zip(texts, held_out)]
        which = [index.setdefault(key, len(index)) for key in keys]
        first = {}
        for i, u in enumerate(which):
            first.setdefault(u, i)
        distinct = [(texts[i], held_out[i]) for i in first.values()]
    return distinct, np.asarray(which, dtype=np.int64)


def _exact_rows(
    table: AliasTable, texts: Sequence[str], allowed: Sequence[bool],
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(exact int64 (U,), unique bool (U,), resolved bool (U,)): per text, the alias row that is exactly it or -1;
    whether no other alias shares that alias's normalised form (see :meth:`FastPath.row_of`); and whether the
    answer is known. A text is unresolved when ``allowed`` is False for it, when it is empty, or when its probe
    met another alias with its fingerprint (two aliases sharing a slot run and the top 30 bits of their hash):
    the general path answers those.

    The texts probe :func:`hash_slots` together, a round per probe step (one random read per text, where a
    binary search over the sorted hashes takes one per halving), and the bytes of each matched alias are checked
    against the text's in one comparison over all of them."""
    n_texts = len(texts)
    exact = np.full(n_texts, -1, dtype=np.int64)
    unique = np.zeros(n_texts, dtype=bool)
    resolved = np.zeros(n_texts, dtype=bool)
    if not n_texts:
        return exact, unique, resolved
    encoded = [text.encode("utf8") for text in texts]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n_texts)
    pending = np.flatnonzero(np.asarray(allowed, dtype=bool) & (lengths > 0))
    resolved[pending] = True
    if not len(table):
        return exact, unique, resolved
    mask, slots = hash_slots(table)
    query = np.fromiter((hash_string(text) for text in texts), dtype=np.uint64, count=n_texts)
    fingerprint = query >> np.uint64(_FINGERPRINT_SHIFT)
    home = (query & np.uint64(mask)).astype(np.int64)
    values = np.full(n_texts, _EMPTY, dtype=np.uint64)
    step = 0
    while len(pending):
        value = slots[(home[pending] + step) & mask]
        empty = value == _EMPTY
        hit = ~empty & ((value >> np.uint64(_FINGERPRINT_SHIFT)) == fingerprint[pending])
        values[pending[hit]] = value[hit]
        pending = pending[~(empty | hit)]
        step += 1
    candidates = np.flatnonzero(values != _EMPTY)
    if not len(candidates):
        return exact, unique, resolved
    rows = (values[candidates] & np.uint64(_ROW_MASK)).astype(np.int64)
    offsets = table.aliases.offsets
    alias_starts = offsets[rows]
    differ = (offsets[rows + 1] - alias_starts) != lengths[candidates]
    # The bytes of each same-length candidate alias against the text's: one comparison over all of them.
    checked = np.flatnonzero(~differ)
    cand_lengths = lengths[candidates[checked]]
    query_starts = (np.cumsum(lengths) - lengths)[candidates[checked]]
    segment = np.repeat(np.arange(len(checked)), cand_lengths)
    within = positions_in_segments(cand_lengths)
    query_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    same = query_bytes[query_starts[segment] + within] == table.aliases.data[alias_starts[checked][segment] + within]
    differ[checked[np.unique(segment[~same])]] = True
    resolved[candidates[differ]] = False
    verified = candidates[~differ]
    exact[verified] = rows[~differ]
    unique[verified] = (values[verified] & np.uint64(_UNIQUE)) != 0
    return exact, unique, resolved


def _ranked_fast(
    table: AliasTable, frequencies: np.ndarray, rows: np.ndarray, k: Optional[int],
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidates of the aliases ``rows``, ranked as the general path ranks one alias's (prior, then
    frequency, then entity row) and cut to ``k``: (entity rows, priors, segment: the alias's position in
    ``rows``, rank within it), segment by segment."""
    idx, segment = candidate_positions(table, rows)
    entities = table.cand_entities[idx].astype(np.int64)
    priors = table.cand_priors[idx]
    if not bool(simple_candidates(table)[rows].all()):  # stored order is the look-up's only for simple aliases
        freq = frequencies[entities].astype(np.float64)
        order = np.lexsort((entities, -freq, -priors.astype(np.float64), segment))
        entities, priors = entities[order], priors[order]
    rank = positions_in_segments(np.bincount(segment, minlength=len(rows)))
    if k is not None:
        keep = rank < k
        entities, priors, segment, rank = entities[keep], priors[keep], segment[keep], rank[keep]
    return entities, priors, segment, rank


def _from_matches(found: Sequence["Match"]) -> Tuple[np.ndarray, ...]:
    return (
        np.fromiter((m.entity_row for m in found), dtype=np.int64, count=len(found)),
        np.fromiter((TIER_CODE[m.match] for m in found), dtype=np.int8, count=len(found)),
        np.asarray([m.prior for m in found], dtype=np.float32),
        np.asarray([m.score for m in found], dtype=np.float64),
        np.fromiter((m.alias_row for m in found), dtype=np.int64, count=len(found)),
    )


__all__ = ["BatchMatches", "FastPath", "TIER_NAMES", "batch_matches", "hash_slots", "normalized_unique"]

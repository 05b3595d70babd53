"""``ElKnowledgeBase``: the KB every spacy_el component shares, and a drop-in spaCy ``KnowledgeBase``."""
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.kb import Candidate, KnowledgeBase
from spacy.tokens import Span
from spacy.util import SimpleFrozenList, ensure_path
from spacy.vocab import Vocab

from .additions import ADDED_SOURCE, add_entities as append_entities
from .alias_table import MATCH_EXACT, AliasCounts, AliasTable, CandidateHit, held_out_priors
from .entity_store import EntityStore
from .errors import KBErrors
from .fast_lookup import BatchMatches, FastPath, batch_matches
from .held_out import HELD_OUT_ATTACHMENT, counts_of, decode_held_out
from .serialization import KBFormatError, kb_from_bytes, kb_to_bytes, read_kb_dir, write_kb_dir
from .type_index import TypeIndex, select_typed_first

DENSE_INDEX_FILE = "dense.faiss"


@dataclass
class LookupSettings:
    """How candidates are looked up. Stored with the KB and overridable per call.

    top_k: keep at most this many candidates per mention, best prior first (None: all).
    fuzzy: whether the trigram tier runs when exact and normalised lookups find nothing.
    fuzzy_min_score: minimum trigram Dice coefficient for a fuzzy alias match.
    fuzzy_max_aliases: at most this many fuzzy-matched aliases contribute candidates.
    expand_normalized: after an exact match, also append the candidates of aliases that only match
        after normalisation ("BOSTON" -> also "Boston"), ranked after the exact ones.
    """

    top_k: Optional[int] = None
    fuzzy: bool = True
    fuzzy_min_score: float = 0.5
    fuzzy_max_aliases: int = 5
    expand_normalized: bool = True

    def __post_init__(self) -> None:
        if self.top_k is not None:
            _check_top_k(self.top_k)
        if not 0.0 < self.fuzzy_min_score <= 1.0:
            raise ValueError(KBErrors.E104.format(fuzzy_min_score=self.fuzzy_min_score))
        if self.fuzzy_max_aliases < 1:
            raise ValueError(KBErrors.E105.format(fuzzy_max_aliases=self.fuzzy_max_aliases))


def _check_top_k(top_k: Any) -> None:
    # A slice bound: 0 would silently return nothing and -1 silently drop the last candidate.
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(KBErrors.E101.format(top_k=top_k))


class EntityInfo(NamedTuple):
    id: str
    name: str
    description: str
    types: List[str]
    frequency: float
    qid: Optional[str] = None  # Wikidata QID, when the KB stores one for the entity


def _empty_entities() -> EntityStore:
    return EntityStore.build([], [], [], [], [])


def _empty_aliases() -> AliasTable:
    return AliasTable.build([], np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), fuzzy=False)


class Match(NamedTuple):
    """One ranked candidate of :meth:`ElKnowledgeBase.matches`: a ``CandidateHit`` by row numbers.

    entity_row: the entity. match: "exact", "normalized" or "fuzzy". prior: p(e|alias). score: the match
    quality (see ``CandidateHit``). alias_row: the alias that matched, a row of the alias table."""

    entity_row: int
    match: str
    prior: float
    score: float
    alias_row: int


class ElKnowledgeBase(KnowledgeBase):
    """Entities, aliases with priors, optional entity vectors and an optional FAISS index.

    Memory-efficient at scale: every field is a numpy array (see ``EntityStore`` and ``AliasTable``),
    so there is no Python object per entity or alias. It implements spaCy's ``KnowledgeBase`` API, so
    spaCy's built-in ``entity_linker`` can use it through the ``spacy-el.KBFromDisk.v1`` loader.

    vocab (Vocab): the pipeline's vocab; entity ids and aliases are added to its StringStore when
        candidates are returned, as spaCy's ``Candidate`` requires.
    entity_vector_length (int): vector width reported when the KB has no vectors of its own
        (spaCy's ``entity_linker`` sizes its model from it). When the KB holds vectors, their width wins.
    """

    def __init__(
        self,
        vocab: Vocab,
        entity_vector_length: int = 0,
        *,
        entities: Optional[EntityStore] = None,
        aliases: Optional[AliasTable] = None,
        dense_index: Optional[Any] = None,
        settings: Optional[LookupSettings] = None,
    ) -> None:
        super().__init__(vocab, entity_vector_length)
        self._default_vector_length = int(entity_vector_length)
        self.entities = entities if entities is not None else _empty_entities()
        self.aliases = aliases if aliases is not None else _empty_aliases()
        self.dense_index = dense_index
        self.settings = settings or LookupSettings()
        self._type_index: Optional[TypeIndex] = None
        self._fast_path: Optional[FastPath] = None  # the look-up's fast path, made on first use
        # Which encoder made the entity vectors (``encoder.encoder_fingerprint``), None when unknown.
        self.vectors_encoder: Optional[Dict[str, str]] = None
        # The names of the sources the aliases come from (e.g. ["titles", "gum", "dwie"], see
        # ``spacy_el.recipes.eval_kb.ALIAS_SOURCES``), None when unknown: what `python -m spacy_el package`
        # checks before a pipeline holding the KB is distributed.
        self.alias_sources: Optional[List[str]] = None
        # The names of the sources the entities come from (e.g. ["summaries", "gum"], see
        # ``spacy_el.recipes.data_sources.ENTITY_SOURCES``), None when unknown: what a package's meta lists.
        self.entity_sources: Optional[List[str]] = None
        # Named data files the KB carries for other parts of spacy_el (e.g. the dense candidate
        # generator's mention encoder): bytes, or the path of a loaded KB's file, read on first use.
        self._attachments: Dict[str, Union[bytes, Path]] = {}
        self._held_out: Optional[Tuple[bytes, Dict[str, Dict[str, Dict[str, float]]]]] = None  # (bytes, decoded)
        self._check_consistency()

    # -- sizes -------------------------------------------------------------------------------------
    @property
    def entity_vector_length(self) -> int:  # type: ignore[override]
        return self.entities.vector_dim or self._default_vector_length

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def n_aliases(self) -> int:
        return len(self.aliases)

    def is_empty(self) -> bool:
        """spaCy's entity_linker calls this to refuse training with an empty KB."""
        return self.n_entities == 0

    def __len__(self) -> int:
        return self.n_entities

    def __contains__(self, entity_id: str) -> bool:
        return self.entities.row_of(entity_id) is not None

    # -- entities ----------------------------------------------------------------------------------
    def get_entity(self, entity_id: str) -> Optional[EntityInfo]:
        row = self.entities.row_of(entity_id)
        return None if row is None else self.entity_at(row)

    def entity_at(self, row: int) -> EntityInfo:
        e = self.entities
        return EntityInfo(
            e.ids[row], e.names[row], e.descriptions[row], e.types_of(row), float(e.frequencies[row]), e.qid_at(row)
        )

    def qid_of(self, entity_id: str) -> Optional[str]:
        """The Wikidata QID stored for ``entity_id`` (``span._.qid`` of the spans linked to it), or None
        when the entity is unknown, has none, or the KB stores no QIDs."""
        if self.entities.qids is None:
            return None
        row = self.entities.row_of(entity_id)
        return None if row is None else self.entities.qid_at(row)

    def set_vectors(self, vectors: np.ndarray, encoder: Optional[Dict[str, str]] = None) -> None:
        """Attach entity vectors, float32 array of shape (n_entities, dim), row i for entity row i.
        encoder: the fingerprint of the encoder that made them (``encoder.encoder_fingerprint``), if known."""
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != self.n_entities or vectors.shape[1] < 1:
            raise ValueError(KBErrors.E106.format(n_entities=self.n_entities, shape=vectors.shape))
        step = max(1, (1 << 22) // vectors.shape[1])  # row blocks: memory-mapped vectors are not read in whole
        if not all(np.isfinite(vectors[i : i + step]).all() for i in range(0, len(vectors), step)):
            raise ValueError(KBErrors.E107)
        self.entities.vectors = vectors.astype(np.float32, copy=False)
        self.vectors_encoder = dict(encoder) if encoder is not None else None

    def add_entities(
        self, entities: Sequence[Dict[str, Any]], encoder: Optional[str] = None, batch_size: int = 64,
        progress: bool = False, source: str = ADDED_SOURCE,
    ) -> List[int]:
        """Zero-shot additions: append entities (dicts with ``id``, ``name`` and optionally ``description``,
        ``types``, ``aliases``, ``frequency``, ``qid``), with vectors from the KB's own encoder and rows in
        its dense index, so that trained linkers can link them at once. ``source`` names where they come
        from in the KB's recorded entity and alias sources (the packaging guard asks about an unknown one).
        RETURNS their rows. See :mod:`spacy_el.kb.additions`."""
        return append_entities(self, entities, encoder=encoder, batch_size=batch_size, progress=progress, source=source)

    # -- attachments -------------------------------------------------------------------------------
    def set_attachment(self, name: str, data: Optional[bytes]) -> None:
        """Carry ``data`` in the KB's files under ``name`` (letters, digits, ``_`` and ``-``); None removes it."""
        if not name or not all(c.isalnum() or c in "_-" for c in name):
            raise ValueError(KBErrors.E108.format(name=name))
        if data is None:
            self._attachments.pop(name, None)
        else:
            self._attachments[name] = bytes(data)

    def attachment(self, name: str) -> Optional[bytes]:
        """The data carried under ``name``, or None."""
        data = self._attachments.get(name)
        if isinstance(data, Path):
            data = self._attachments[name] = data.read_bytes()
        return data

    @property
    def attachment_names(self) -> List[str]:
        return sorted(self._attachments)

    def held_out_counts(self, text: str) -> Optional[Dict[str, Dict[str, float]]]:
        """What the training document with ``text`` contributed to the alias counts (alias -> {entity id:
        count}; the ``held_out`` of :meth:`lookup`), from the table the KB carries (:mod:`spacy_el.kb.held_out`);
        None for a document the KB did not count. A KB without the table raises a ValueError that says how
        to build one."""
        data = self.attachment(HELD_OUT_ATTACHMENT)
        if data is None:
            raise ValueError(KBErrors.E109)
        if self._held_out is None or self._held_out[0] is not data:
            self._held_out = (data, decode_held_out(data))
        return counts_of(self._held_out[1], text)

    def set_type_probs(self, labels: Sequence[str], probs: np.ndarray) -> None:
        """Attach a type distribution per entity (NER4EL entity typing, see ``entity_typing``).

        labels (Sequence[str]): the T type labels, in column order; distinct, non-empty strings.
        probs (np.ndarray): float (n_entities, T), row i for entity row i, values in [0, 1] (rows are
            normally distributions, but their sums are not checked). Stored as float32, replacing any
            earlier distributions.
        """
        labels = list(labels)
        if not labels or not all(isinstance(label, str) and label for label in labels):
            raise ValueError(KBErrors.E110.format(labels=labels))
        if len(set(labels)) != len(labels):
            raise ValueError(KBErrors.E111.format(labels=labels))
        probs = np.asarray(probs)
        if probs.ndim != 2 or probs.shape != (self.n_entities, len(labels)):
            raise ValueError(KBErrors.E112.format(n_entities=self.n_entities, n_labels=len(labels), shape=probs.shape))
        if probs.dtype.kind not in "fiu":
            raise ValueError(KBErrors.E113.format(dtype=probs.dtype))
        probs = probs.astype(np.float32)
        if probs.size and not np.all(np.isfinite(probs)):
            raise ValueError(KBErrors.E114)
        if probs.size and (float(probs.min()) < 0.0 or float(probs.max()) > 1.0 + 1e-4):
            raise ValueError(KBErrors.E115.format(low=float(probs.min()), high=float(probs.max())))
        self.entities.type_probs = np.clip(probs, 0.0, 1.0)
        self.entities.type_prob_names = labels

    def get_type_probs(self, labels: Sequence[str]) -> Optional[np.ndarray]:
        """The stored type distributions, float32 (n_entities, T), when they were stored for exactly
        ``labels`` (same labels, same order); None when the KB has none or has them for other labels."""
        if self.entities.type_probs is None or list(labels) != self.entities.type_prob_names:
            return None
        return self.entities.type_probs

    def set_aliases(self, aliases: AliasTable, sources: Optional[Sequence[str]] = None) -> None:
        """Replace the alias table with ``aliases``, whose candidate rows are this KB's entity rows (entities,
        vectors, dense index and type distributions stay), and record where its aliases come from
        (``sources``; None: unknown)."""
        problems = aliases.validate(self.n_entities)
        if problems:
            name, problem = next(iter(problems.items()))
            raise ValueError(KBErrors.E116.format(name=name, problem=problem))
        self.aliases = aliases
        self.alias_sources = _checked_alias_sources(sources, "the alias sources")

    def set_dense_index(self, index: Any) -> None:
        """Attach a ``DenseIndex`` whose rows are this KB's entity rows."""
        if index is not None and index.ntotal != self.n_entities:
            raise ValueError(KBErrors.E117.format(ntotal=index.ntotal, n_entities=self.n_entities))
        self.dense_index = index

    # -- candidate lookup --------------------------------------------------------------------------
    def lookup(
        self,
        text: str,
        top_k: Optional[int] = None,
        fuzzy: Optional[bool] = None,
        prefer_types: Optional[Collection[str]] = None,
        held_out: Optional[AliasCounts] = None,
    ) -> List[CandidateHit]:
        """Candidates for a mention string: exact, then normalised, then fuzzy alias matches.

        Candidates of exact matches come first, then those that only normalised matches add; each
        entity keeps its best prior x match score within its tier and is ranked by it (ties: higher
        frequency first). The result is cut to ``top_k``; with ``prefer_types`` (the mention's
        predicted types), candidates having one of them are kept first when cutting (NER4EL's
        type-aware selection), in rank order. Unknown or empty text gives an empty list, never an
        exception.

        held_out: mentions to take out of the alias table's counts first (alias -> {entity id: count}, e.g.
        what the mention's own training document contributed): the priors of those aliases are recomputed
        without them, an entity with nothing left is no candidate of the alias, and an alias with nothing
        left matches as if it were absent. Needs the table's alias counts (``KBBuilder.add_alias(count=)``);
        an alias whose count is unknown (0) keeps its priors.
        """
        if not prefer_types and not held_out:  # the fast path (fast_lookup), inlined: it takes a few microseconds
            fast = self._fast_path
            if fast is None or fast.table is not self.aliases or fast.entities is not self.entities:
                fast = self._fast()
            if top_k is not None:
                _check_top_k(top_k)
            hits = fast.hits(text, top_k if top_k is not None else self.settings.top_k)
            if hits is not None:
                return hits
        ids, aliases = self.entities.ids, self.aliases.aliases
        return [
            CandidateHit(ids[m.entity_row], m.entity_row, m.prior, aliases[m.alias_row], m.match, m.score)
            for m in self.matches(text, top_k, fuzzy, prefer_types, held_out)
        ]

    def lookup_batch(
        self,
        texts: Sequence[str],
        top_k: Optional[int] = None,
        fuzzy: Optional[bool] = None,
        held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[List[CandidateHit]]:
        """:meth:`lookup` of many mention strings in one call (e.g. every mention of a batch of documents): per
        text, the same candidates in the same order. ``held_out``: per text, its held-out counts or None."""
        found = self.matches_batch(texts, top_k, fuzzy, held_out)
        ids, aliases = self.entities.ids, self.aliases.aliases
        return [
            [CandidateHit(ids[m.entity_row], m.entity_row, m.prior, aliases[m.alias_row], m.match, m.score)
             for m in found.matches(i)]
            for i in range(len(found))
        ]

    def matches_batch(
        self,
        texts: Sequence[str],
        top_k: Optional[int] = None,
        fuzzy: Optional[bool] = None,
        held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> BatchMatches:
        """:meth:`matches` of many mention strings in one call, as arrays (:class:`~spacy_el.kb.fast_lookup.BatchMatches`:
        text i's candidates are ``found.span(i)`` of its arrays, or ``found.matches(i)``): what the candidate
        generators call. Each distinct text is looked up once; a text that is exactly one alias is answered by
        array operations over the whole batch (:mod:`spacy_el.kb.fast_lookup`), any other by :meth:`matches`.
        ``held_out``: per text, the held-out counts of :meth:`lookup`, or None."""
        if top_k is not None:
            _check_top_k(top_k)
        if held_out is not None and len(held_out) != len(texts):
            raise ValueError(KBErrors.E281.format(n_held=len(held_out), n_texts=len(texts)))
        k = top_k if top_k is not None else self.settings.top_k

        def general(text: str, counts: Optional[AliasCounts]) -> List[Match]:  # the fast path has said no
            return self._general_matches(text, top_k, fuzzy, held_out=counts or None)

        return batch_matches(self.aliases, self.entities.frequencies, texts, k, general, held_out,
                             expand_normalized=self.settings.expand_normalized)

    def _fast(self) -> FastPath:
        """The look-up's fast path over the current alias table and entity store."""
        fast = self._fast_path
        if fast is None or fast.table is not self.aliases or fast.entities is not self.entities:
            fast = self._fast_path = FastPath(self.aliases, self.entities)
        return fast

    def _fast_matches(self, text: str, top_k: Optional[int]) -> Optional[Tuple[int, List[int], List[float]]]:
        """(alias row, entity rows, priors) of a mention that is exactly one alias and nothing else needs
        looking up (:mod:`spacy_el.kb.fast_lookup`), ranked and cut as :meth:`matches` does; None otherwise."""
        if top_k is not None:
            _check_top_k(top_k)
        fast = self._fast()
        row = fast.row_of(text)
        if row < 0:
            return None
        ranked = fast.ranked(row, top_k if top_k is not None else self.settings.top_k)
        return None if ranked is None else (row, *ranked)

    def matches(
        self,
        text: str,
        top_k: Optional[int] = None,
        fuzzy: Optional[bool] = None,
        prefer_types: Optional[Collection[str]] = None,
        held_out: Optional[AliasCounts] = None,
    ) -> List["Match"]:
        """:meth:`lookup`'s candidates, ranked and cut alike, without their id and alias strings: what a
        candidate generator needs, for thousands of mentions a second."""
        if not prefer_types and not held_out:
            fast = self._fast_matches(text, top_k)
            if fast is not None:
                row, entities, priors = fast
                return [Match(e, MATCH_EXACT, p, 1.0, row) for e, p in zip(entities, priors)]
        return self._general_matches(text, top_k, fuzzy, prefer_types, held_out)

    def _general_matches(
        self,
        text: str,
        top_k: Optional[int] = None,
        fuzzy: Optional[bool] = None,
        prefer_types: Optional[Collection[str]] = None,
        held_out: Optional[AliasCounts] = None,
    ) -> List["Match"]:
        """:meth:`matches` through the three tiers, for every mention (the fast path answers a subset of them
        identically; the tests compare both)."""
        if top_k is not None:
            _check_top_k(top_k)
        s = self.settings
        left = self._held_out_view(held_out) if held_out else None
        tiers = self.aliases.match(
            text,
            fuzzy=s.fuzzy if fuzzy is None else fuzzy,
            fuzzy_min_score=s.fuzzy_min_score,
            fuzzy_max_aliases=s.fuzzy_max_aliases,
            expand_normalized=s.expand_normalized,
            keep=None if left is None else (lambda row: len(left(row)[0]) > 0),
        )
        # entity row -> (sort key, tier, prior, match score, alias row) of its best match; records are made only
        # for the entities kept (an alias may have thousands of candidates).
        best: Dict[int, Tuple[Tuple[int, float], str, float, float, int]] = {}
        for tier_rank, (tier, matched) in enumerate(tiers):
            for alias_row, match_score in matched:
                entity_rows, priors = self.aliases.candidates_of(alias_row) if left is None else left(alias_row)
                for entity_row, prior in zip(entity_rows.tolist(), priors.tolist()):
                    # Lower sorts first: an earlier tier beats any later one, then a higher value wins.
                    key = (tier_rank, -prior * match_score)
                    if entity_row not in best or key < best[entity_row][0]:
                        best[entity_row] = (key, tier, prior, match_score, alias_row)
        freqs = self.entities.frequencies
        ranked = sorted(best, key=lambda row: (best[row][0], -float(freqs[row]), row))
        k = top_k if top_k is not None else s.top_k
        if prefer_types:
            types = self.type_index
            keep = select_typed_first(ranked, [types.has_any_type(row, prefer_types) for row in ranked], k)
            ranked = [ranked[i] for i in keep]
        else:
            ranked = ranked[:k]
        return [Match(row, *best[row][1:]) for row in ranked]

    def _held_out_view(self, held_out: AliasCounts) -> "Callable[[int], Tuple[np.ndarray, np.ndarray]]":
        """alias row -> its (entity rows, priors) without the ``held_out`` mentions (see :meth:`lookup`),
        computed once per row."""
        if self.aliases.counts is None:
            raise ValueError(KBErrors.E118)
        table, ids, memo = self.aliases, self.entities.ids, {}

        def left(row: int) -> Tuple[np.ndarray, np.ndarray]:
            if row not in memo:
                entity_rows, priors = table.candidates_of(row)
                own = held_out.get(table.aliases[row])
                count = table.count_of(row)
                if not own or count <= 0:
                    memo[row] = (entity_rows, priors)
                else:
                    kept, kept_priors = held_out_priors(priors, [ids[int(r)] for r in entity_rows], count, own)
                    memo[row] = (entity_rows[kept], kept_priors)
            return memo[row]

        return left

    @property
    def type_index(self) -> TypeIndex:
        """Type -> entities index, derived from the entity store on first use."""
        if self._type_index is None or self._type_index._store is not self.entities:
            self._type_index = TypeIndex(self.entities)
        return self._type_index

    # -- spaCy KnowledgeBase API -------------------------------------------------------------------
    def get_candidates(self, mention: Span) -> List[Candidate]:
        """spaCy ``Candidate`` objects for a mention (what spaCy's own ``spacy.CandidateGenerator.v1`` asks for):
        the alias table's ``lookup``, prior_prob the prior x match score."""
        hits = self.lookup(mention.text)
        return [self.spacy_candidate(hit.entity_row, hit.prior * hit.score, hit.alias) for hit in hits]

    def spacy_candidate(self, entity_row: int, prior: float, alias: str) -> Candidate:
        """The spaCy ``Candidate`` of the entity in row ``entity_row``, found by ``alias`` with prior ``prior``."""
        return Candidate(
            kb=self, entity_hash=self.vocab.strings.add(self.entities.ids[entity_row]),
            entity_freq=float(self.entities.frequencies[entity_row]), entity_vector=self._vector_at(entity_row),
            alias_hash=self.vocab.strings.add(alias), prior_prob=float(prior),
        )

    def get_candidates_batch(self, mentions: Iterable[Span]) -> List[List[Candidate]]:
        """:meth:`get_candidates` of each mention, looked up in one call (:meth:`lookup_batch`)."""
        mentions = list(mentions)
        found = self.lookup_batch([span.text for span in mentions])
        return [[self.spacy_candidate(hit.entity_row, hit.prior * hit.score, hit.alias) for hit in hits] for hits in found]

    def get_vector(self, entity: str) -> List[float]:
        """The entity's vector; zeros of ``entity_vector_length`` for an unknown id or a KB without vectors
        (the same documented behaviour as spaCy's ``InMemoryLookupKB``)."""
        row = self.entities.row_of(entity)
        return self._vector_at(row) if row is not None else [0.0] * self.entity_vector_length

    def get_vectors(self, entities: Iterable[str]) -> List[List[float]]:
        return [self.get_vector(entity) for entity in entities]

    def _vector_at(self, row: int) -> List[float]:
        if self.entities.vectors is None:
            return [0.0] * self.entity_vector_length
        return self.entities.vectors[row].tolist()

    # -- dense retrieval ---------------------------------------------------------------------------
    def search_dense(self, queries: np.ndarray, k: int) -> List[List[Tuple[str, float]]]:
        """Top-k entities by inner product for each query vector.

        queries (np.ndarray): float32 (q, dim). RETURNS: q lists of (entity id, score), best first.
        """
        if self.dense_index is None:
            raise ValueError(KBErrors.E119)
        scores, rows = self.dense_index.search(queries, k)
        return [
            [(self.entities.ids[int(r)], float(s)) for r, s in zip(row_ids, row_scores) if r >= 0]
            for row_ids, row_scores in zip(rows, scores)
        ]

    # -- serialisation -----------------------------------------------------------------------------
    def _manifest(self) -> Dict[str, Any]:
        return {
            "n_entities": self.n_entities,
            "n_aliases": self.n_aliases,
            "vector_dim": self.entities.vector_dim,
            "default_vector_length": self._default_vector_length,
            "type_names": self.entities.type_names,
            "type_prob_names": self.entities.type_prob_names,
            "settings": asdict(self.settings),
            "dense_index": DENSE_INDEX_FILE if self.dense_index is not None else None,
            "vectors_encoder": self.vectors_encoder,
            "alias_sources": self.alias_sources,
            "entity_sources": self.entity_sources,
            "attachments": {name: _attachment_file(name) for name in self.attachment_names},
        }

    def _arrays(self) -> Dict[str, np.ndarray]:
        return {**self.entities.to_arrays(), **self.aliases.to_arrays()}

    def to_disk(
        self, path: Union[str, Path], exclude: Iterable[str] = SimpleFrozenList(), *, force: bool = False
    ) -> None:
        """Write the KB directory at ``path`` (see ``serialization``): a missing or empty directory, or one
        holding a spacy_el KB, which is replaced (safely, also when it is this KB's own memory-mapped
        folder). A non-empty directory that is not a KB is refused unless ``force``."""
        writers = {DENSE_INDEX_FILE: self.dense_index.save} if self.dense_index is not None else {}
        for name in self.attachment_names:
            writers[_attachment_file(name)] = lambda target, name=name: Path(target).write_bytes(self.attachment(name))
        write_kb_dir(ensure_path(path), self._manifest(), self._arrays(), writers, force=force)

    def from_disk(
        self, path: Union[str, Path], exclude: Iterable[str] = SimpleFrozenList(), *, mmap: bool = False,
        verify: bool = True,
    ) -> "ElKnowledgeBase":
        """Replace this KB's content with the KB directory at ``path`` (verified; see ``serialization``)."""
        path = ensure_path(path)
        manifest, arrays, extra = read_kb_dir(path, mmap=mmap, verify=verify)
        dense = None
        if manifest.get("dense_index"):
            dense = _load_dense_file(extra, manifest["dense_index"], path, mmap=mmap)
        self._restore(manifest, arrays, dense, where=str(path))
        self._attachments = _attachment_sources(manifest, extra, where=str(path))
        return self

    def to_bytes(self, **kwargs: Any) -> bytes:
        extra = {DENSE_INDEX_FILE: self.dense_index.to_bytes()} if self.dense_index is not None else {}
        extra.update({_attachment_file(name): self.attachment(name) for name in self.attachment_names})
        return kb_to_bytes(self._manifest(), self._arrays(), extra)

    def from_bytes(self, bytes_data: bytes, *, exclude: Tuple[str, ...] = tuple()) -> "ElKnowledgeBase":
        manifest, arrays, extra = kb_from_bytes(bytes_data)
        dense = None
        if manifest.get("dense_index"):
            from .dense_index import DenseIndex

            dense = DenseIndex.from_bytes(extra[manifest["dense_index"]])
        self._restore(manifest, arrays, dense, where="the KB bytes")
        self._attachments = _attachment_sources(manifest, extra, where="the KB bytes")
        return self

    @classmethod
    def load(
        cls, path: Union[str, Path], vocab: Optional[Vocab] = None, *, mmap: bool = True, verify: bool = True
    ) -> "ElKnowledgeBase":
        """Load a KB directory. ``mmap`` maps the arrays instead of reading them (fast start, shared pages);
        ``verify=False`` skips the SHA-256 check for large trusted KBs (sizes and structure are still checked)."""
        kb = cls(vocab if vocab is not None else Vocab())
        return kb.from_disk(path, mmap=mmap, verify=verify)

    def _restore(self, manifest: Dict[str, Any], arrays: Dict[str, np.ndarray], dense: Any, where: str) -> None:
        # KBs written before type distributions existed have no "type_prob_names": none stored.
        type_prob_names = manifest.get("type_prob_names") or []
        if not isinstance(type_prob_names, list):
            raise KBFormatError(KBErrors.E176.format(where=where, type_name=type(type_prob_names).__name__))
        try:
            entities = EntityStore.from_arrays(arrays, list(manifest["type_names"]), type_prob_names)
            aliases = AliasTable.from_arrays(arrays)
            settings = LookupSettings(**manifest["settings"])
            default_length = int(manifest.get("default_vector_length", 0))
            # KBs written before alias sources were recorded have none: unknown.
            alias_sources = _checked_alias_sources(manifest.get("alias_sources"), "alias_sources")
            entity_sources = _checked_alias_sources(manifest.get("entity_sources"), "entity_sources")
        except (KeyError, TypeError, ValueError) as err:
            raise KBFormatError(KBErrors.E122.format(where=where, err=err)) from err
        self.entities, self.aliases, self.settings = entities, aliases, settings
        self._default_vector_length = default_length
        self.dense_index = dense
        self.vectors_encoder = manifest.get("vectors_encoder")
        self.alias_sources = alias_sources
        self.entity_sources = entity_sources
        self._check_consistency(where)

    def _check_consistency(self, where: str = "the KB") -> None:
        problems = {**self.entities.validate(), **self.aliases.validate(len(self.entities))}
        if self.dense_index is not None and self.dense_index.ntotal != len(self.entities):
            problems[DENSE_INDEX_FILE] = f"holds {self.dense_index.ntotal} vectors for {len(self.entities)} entities"
        if problems:
            name, problem = next(iter(problems.items()))
            raise KBFormatError(KBErrors.E120.format(where=where, name=name, problem=problem))

    # -- introspection -----------------------------------------------------------------------------
    def memory_usage(self) -> Dict[str, int]:
        """Bytes held per component (arrays only; a memory-mapped KB keeps them in the page cache)."""
        usage = {**self.entities.memory_usage(), **self.aliases.memory_usage()}
        return usage

    def __repr__(self) -> str:
        return (
            f"<ElKnowledgeBase entities={self.n_entities} aliases={self.n_aliases} "
            f"vectors={self.entities.vector_dim or None} dense_index={self.dense_index is not None}>"
        )


def _load_dense_file(extra: Dict[str, Path], name: str, kb_path: Path, *, mmap: bool) -> Any:
    from .dense_index import DenseIndex

    if name not in extra:
        raise KBFormatError(KBErrors.E102.format(kb_path=kb_path, name=name))
    return DenseIndex.load(extra[name], mmap=mmap)


def _checked_alias_sources(sources: Any, what: str) -> Optional[List[str]]:
    """``sources`` (alias or entity sources) as a list of non-empty strings, or None (unknown); anything else is refused."""
    if sources is None:
        return None
    if isinstance(sources, str) or not all(isinstance(s, str) and s for s in sources):
        raise ValueError(KBErrors.E103.format(what=what, sources=sources))
    return list(sources)


def _attachment_file(name: str) -> str:
    return f"attachment.{name}.bin"


def _attachment_sources(manifest: Dict[str, Any], extra: Dict[str, Any], where: str) -> Dict[str, Union[bytes, Path]]:
    """The attachments a manifest lists: their files (a loaded folder) or bytes (``from_bytes``)."""
    sources: Dict[str, Union[bytes, Path]] = {}
    for name, file in (manifest.get("attachments") or {}).items():
        if file not in extra:
            raise KBFormatError(KBErrors.E121.format(where=where, file=file))
        sources[name] = extra[file]
    return sources

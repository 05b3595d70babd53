"""``KBBuilder``: collect entities and aliases (from Python or JSONL), validate them, build the KB."""
import math
import numbers
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import srsly
from spacy.vocab import Vocab
from tqdm import tqdm
from wasabi import msg

from .alias_table import AliasTable
from .entity_store import EntityStore
from .errors import KBErrors, message_code, with_place
from .knowledge_base import ElKnowledgeBase, LookupSettings

OnDuplicate = Literal["error", "max", "replace"]


class KBBuilder:
    """Accumulate entities and aliases, then ``build()`` an ``ElKnowledgeBase``.

    Bad input raises a ``ValueError`` that names the offending entity or alias; nothing is dropped
    silently (``build(drop_unknown=True)`` drops candidates that name unknown entities and reports how many).
    """

    def __init__(self) -> None:
        self._ids: List[str] = []
        self._row_of: Dict[str, int] = {}
        self._names: List[str] = []
        self._descriptions: List[str] = []
        self._types: List[Tuple[str, ...]] = []
        self._frequencies: List[float] = []
        self._vectors: List[Optional[np.ndarray]] = []
        self._qids: List[str] = []  # "" for an entity without a QID; stored only when some entity has one
        self._aliases: Dict[str, Dict[str, float]] = {}
        self._alias_counts: Dict[str, float] = {}  # only aliases given a count
        self._attachments: Dict[str, bytes] = {}

    @property
    def n_entities(self) -> int:
        return len(self._ids)

    @property
    def n_aliases(self) -> int:
        return len(self._aliases)

    def add_entity(
        self,
        entity_id: str,
        name: Optional[str] = None,
        description: str = "",
        types: Sequence[str] = (),
        frequency: float = 0.0,
        vector: Optional[Sequence[float]] = None,
        qid: Optional[str] = None,
    ) -> None:
        """Add an entity (``qid``: its Wikidata QID, e.g. "Q42", when the KB id is not one). Every field is checked here, so an error names the entity (and, from JSONL,
        the file and line) instead of surfacing later at ``build`` time."""
        if not isinstance(entity_id, str) or not entity_id.strip():
            raise ValueError(KBErrors.E126.format(entity_id=entity_id))
        if entity_id in self._row_of:
            raise ValueError(KBErrors.E127.format(entity_id=entity_id))
        for field, value in (("name", name), ("description", description), ("qid", qid)):
            if value is not None and not isinstance(value, str):
                raise ValueError(
                    KBErrors.E137.format(entity_id=entity_id, field=field, value_type=type(value).__name__, value=value)
                )
        if not _is_number(frequency) or not math.isfinite(float(frequency)) or float(frequency) < 0:
            raise ValueError(KBErrors.E128.format(entity_id=entity_id, frequency=frequency))
        # A string or a mapping is iterable too, and would silently become its characters or keys.
        type_list = list(types) if isinstance(types, Iterable) and not isinstance(types, (str, bytes, Mapping)) else None
        if type_list is None or not all(isinstance(t, str) for t in type_list):
            raise ValueError(KBErrors.E129.format(entity_id=entity_id, types=types))
        vector_array = _check_vector(entity_id, vector) if vector is not None else None
        self._row_of[entity_id] = len(self._ids)
        self._ids.append(entity_id)
        self._names.append(name if name else entity_id)
        self._descriptions.append(description or "")
        self._types.append(tuple(type_list))
        self._frequencies.append(float(frequency))
        self._vectors.append(vector_array)
        self._qids.append(qid or "")

    def add_alias(
        self, alias: str, entity_ids: Sequence[str], priors: Sequence[float], on_duplicate: OnDuplicate = "error",
        count: Optional[float] = None,
    ) -> None:
        """Add an alias with its candidates and their priors p(entity | alias) in [0, 1].

        on_duplicate: what to do when the alias exists: "error", "max" (keep each entity's larger prior,
        useful when merging alias sources; the merged priors then have no count) or "replace".
        count: the (pseudo-)count of mentions the priors were estimated from (> 0), which lets a linker
        train on held-out priors (``ElKnowledgeBase.lookup(held_out=)``); None: unknown.
        """
        if count is not None and (not _is_number(count) or not float(count) > 0 or not np.isfinite(float(count))):
            raise ValueError(KBErrors.E130.format(alias=alias, count=count))
        if not isinstance(alias, str) or not alias:
            raise ValueError(KBErrors.E131.format(alias=alias))
        if len(entity_ids) != len(priors):
            raise ValueError(KBErrors.E132.format(alias=alias, n_entity_ids=len(entity_ids), n_priors=len(priors)))
        candidates: Dict[str, float] = {}
        for entity_id, prior in zip(entity_ids, priors):
            if not isinstance(entity_id, str):
                raise ValueError(KBErrors.E138.format(alias=alias, entity_id=entity_id))
            if not _is_number(prior):
                raise ValueError(KBErrors.E139.format(alias=alias, prior=prior, entity_id=entity_id))
            prior = float(prior)
            if not (0.0 <= prior <= 1.0):  # also refuses NaN, for which every comparison is False
                raise ValueError(KBErrors.E140.format(alias=alias, prior=prior, entity_id=entity_id))
            candidates[entity_id] = max(prior, candidates.get(entity_id, 0.0))
        existing = self._aliases.get(alias)
        if existing is not None and on_duplicate == "error":
            raise ValueError(KBErrors.E133.format(alias=alias))
        if existing is not None and on_duplicate == "max":
            for entity_id, prior in candidates.items():
                existing[entity_id] = max(prior, existing.get(entity_id, 0.0))
            self._alias_counts.pop(alias, None)
        else:
            self._aliases[alias] = candidates
            if count is not None:
                self._alias_counts[alias] = float(count)
            else:
                self._alias_counts.pop(alias, None)

    def set_attachment(self, name: str, data: bytes) -> None:
        """Data the built KB carries under ``name`` (``ElKnowledgeBase.set_attachment``), e.g. the held-out
        counts table (:mod:`spacy_el.kb.held_out`)."""
        self._attachments[name] = bytes(data)

    def add_title_aliases(self) -> int:
        """Add every entity's name as an alias (prior 1/k when k entities share the name).

        Names that already are aliases are left alone: their priors come from real mention statistics,
        which are better evidence than the name. RETURNS: the number of aliases added.
        """
        by_name: Dict[str, List[str]] = {}
        for entity_id, name in zip(self._ids, self._names):
            if name not in self._aliases:
                by_name.setdefault(name, []).append(entity_id)
        for name, ids in by_name.items():
            self.add_alias(name, ids, [1.0 / len(ids)] * len(ids))
        return len(by_name)

    def build(
        self,
        vocab: Optional[Vocab] = None,
        *,
        fuzzy: bool = True,
        settings: Optional[LookupSettings] = None,
        drop_unknown: bool = False,
        progress: bool = False,
        alias_sources: Optional[Sequence[str]] = None,
        entity_sources: Optional[Sequence[str]] = None,
    ) -> ElKnowledgeBase:
        """The KB. ``alias_sources`` / ``entity_sources``: the names of the sources the aliases / entities come
        from, recorded in its manifest (``ElKnowledgeBase.alias_sources`` / ``entity_sources``; None: unknown)."""
        vectors = self._vector_matrix()
        entities = EntityStore.build(
            self._ids, self._names, self._descriptions, self._types, self._frequencies, vectors,
            qids=self._qids if any(self._qids) else None,
        )
        alias_strings: List[str] = []
        offsets = [0]
        cand_rows: List[int] = []
        cand_priors: List[float] = []
        alias_counts: List[float] = []
        unknown = 0
        items = tqdm(self._aliases.items(), total=len(self._aliases), desc="aliases", disable=not progress)
        for alias, candidates in items:
            rows = []
            for entity_id, prior in candidates.items():
                row = self._row_of.get(entity_id)
                if row is None:
                    if not drop_unknown:
                        raise ValueError(KBErrors.E147.format(alias=alias, entity_id=entity_id))
                    unknown += 1
                    continue
                rows.append((row, prior))
            if not rows:
                continue
            alias_strings.append(alias)
            alias_counts.append(self._alias_counts.get(alias, 0.0))  # 0: unknown
            cand_rows.extend(r for r, _ in rows)
            cand_priors.extend(p for _, p in rows)
            offsets.append(len(cand_rows))
        if unknown:
            msg.warn(f"Dropped {unknown} alias candidates that name entities not in the KB.")
        aliases = AliasTable.build(
            alias_strings,
            np.asarray(offsets, dtype=np.int64),
            np.asarray(cand_rows, dtype=np.int32),
            np.asarray(cand_priors, dtype=np.float32),
            fuzzy=fuzzy,
            counts=alias_counts if self._alias_counts else None,
        )
        vector_length = entities.vector_dim
        kb = ElKnowledgeBase(
            vocab if vocab is not None else Vocab(),
            vector_length,
            entities=entities,
            settings=settings or LookupSettings(fuzzy=fuzzy),
        )
        kb.set_aliases(aliases, alias_sources)
        kb.entity_sources = list(entity_sources) if entity_sources is not None else None
        for name, data in self._attachments.items():
            kb.set_attachment(name, data)
        return kb

    def _vector_matrix(self) -> Optional[np.ndarray]:
        given = [v for v in self._vectors if v is not None]
        if not given:
            return None
        if len(given) != len(self._vectors):
            missing = next(i for i, v in enumerate(self._vectors) if v is None)
            raise ValueError(
                KBErrors.E134.format(n_given=len(given), n_vectors=len(self._vectors), example=self._ids[missing])
            )
        dims = {len(v) for v in given}
        if len(dims) != 1:
            raise ValueError(KBErrors.E135.format(lengths=sorted(dims)))
        matrix = np.asarray(given, dtype=np.float32)
        if not np.all(np.isfinite(matrix)):
            raise ValueError(KBErrors.E107)
        return matrix

    # -- JSONL ------------------------------------------------------------------------------------
    def read_entities_jsonl(self, path: Union[str, Path], progress: bool = True) -> None:
        """Read entities; one JSON object per line: {"id", "name"?, "description"?, "types"?, "frequency"?, "vector"?, "qid"?}."""
        n_read = 0
        for line_no, record in _iter_jsonl(path, "entities", progress):
            if "id" not in record:
                raise ValueError(KBErrors.E141.format(path=path, line_no=line_no))
            try:
                self.add_entity(
                    record["id"],
                    name=record.get("name"),
                    description=record.get("description") or "",
                    types=record.get("types") or (),
                    frequency=record.get("frequency", 0.0),
                    vector=record.get("vector"),
                    qid=record.get("qid"),
                )
            except (ValueError, TypeError) as err:
                raise _at_line(path, line_no, err) from err
            n_read += 1
        if not n_read:
            # An empty KB would build and save fine, and then link nothing.
            raise ValueError(KBErrors.E136.format(path=path))

    def read_aliases_jsonl(
        self, path: Union[str, Path], progress: bool = True, on_duplicate: OnDuplicate = "error"
    ) -> None:
        """Read aliases; one JSON object per line: {"alias": str, "candidates": [[entity_id, prior], ...]},
        optionally with "count": the mentions its priors were estimated from (see :meth:`add_alias`).

        An empty file adds no aliases (``add_title_aliases`` may add them afterwards)."""
        for line_no, record in _iter_jsonl(path, "aliases", progress):
            if "alias" not in record or "candidates" not in record:
                raise ValueError(KBErrors.E142.format(path=path, line_no=line_no, keys=sorted(record)))
            alias, candidates = record["alias"], record["candidates"]
            # Checked here: a dict or a bare string would otherwise be indexed character by character.
            bad = [c for c in candidates if not _is_candidate_pair(c)] if isinstance(candidates, list) else [candidates]
            if bad:
                raise ValueError(KBErrors.E143.format(path=path, line_no=line_no, alias=alias, got=bad[0]))
            try:
                self.add_alias(alias, [c[0] for c in candidates], [c[1] for c in candidates], on_duplicate=on_duplicate,
                               count=record.get("count"))
            except ValueError as err:
                raise _at_line(path, line_no, err) from err

    @classmethod
    def from_jsonl(
        cls, entities_path: Union[str, Path], aliases_path: Optional[Union[str, Path]] = None, progress: bool = True
    ) -> "KBBuilder":
        builder = cls()
        builder.read_entities_jsonl(entities_path, progress=progress)
        if aliases_path is not None:
            builder.read_aliases_jsonl(aliases_path, progress=progress)
        return builder


def _is_number(value: object) -> bool:
    """A real number: int, float or a numpy scalar; not a bool, nor a string that float() would parse."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_candidate_pair(candidate: object) -> bool:
    return (
        isinstance(candidate, (list, tuple)) and len(candidate) == 2
        and isinstance(candidate[0], str) and _is_number(candidate[1])
    )


def _check_vector(entity_id: str, vector: object) -> np.ndarray:
    """The entity's vector as float32 (dim,), or a ValueError naming the entity."""
    array = None
    if not isinstance(vector, (str, bytes, Mapping)):
        try:
            array = np.asarray(vector)
        except (ValueError, TypeError):  # ragged nested lists
            array = None
    # dtype kind f/i/u: numbers only ("a" makes a string array, None an object array).
    if array is None or array.ndim != 1 or array.size == 0 or array.dtype.kind not in "fiu":
        shown = repr(vector) if len(repr(vector)) <= 80 else repr(vector)[:77] + "..."
        raise ValueError(KBErrors.E123.format(entity_id=entity_id, shown=shown))
    with np.errstate(over="ignore"):
        array = array.astype(np.float32)
    if not np.all(np.isfinite(array)):
        raise ValueError(KBErrors.E124.format(entity_id=entity_id))
    return array


def _at_line(path: Union[str, Path], line_no: int, err: Exception) -> ValueError:
    """``err`` located at ``path:line_no``, its code kept (another library's message gets one)."""
    text = str(err) if message_code(str(err)) else KBErrors.E175.format(problem=err)
    return ValueError(with_place(text, f"{path}:{line_no}"))


def _iter_jsonl(path: Union[str, Path], what: str, progress: bool) -> Iterator[Tuple[int, dict]]:
    path = Path(path)
    if not path.is_file():
        raise ValueError(KBErrors.E125.format(what=what, path=path))
    # Bytes are decoded line by line, so that an encoding error names its line (a text-mode file
    # raises a bare UnicodeDecodeError from somewhere in a block of lines).
    with path.open("rb") as f:
        for line_no, raw in enumerate(tqdm(f, desc=f"reading {what}", unit=" lines", disable=not progress), 1):
            try:
                # utf-8-sig on the first line: editors on Windows start UTF-8 files with a byte order mark.
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf8")
            except UnicodeDecodeError as err:
                raise ValueError(
                    KBErrors.E145.format(path=path, line_no=line_no, byte=raw[err.start], start=err.start, what=what)
                ) from err
            if not line.strip():
                continue
            try:
                record = srsly.json_loads(line)
            except ValueError as err:
                raise ValueError(KBErrors.E146.format(path=path, line_no=line_no, err=err)) from err
            if not isinstance(record, dict):
                raise ValueError(KBErrors.E144.format(path=path, line_no=line_no))
            yield line_no, record

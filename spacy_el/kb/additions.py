"""Zero-shot KB additions: new entities, linkable at once, without retraining any linker.

``kb.add_entities([...])`` appends entity rows, merges their aliases into the alias table, encodes
their vectors with the encoder that made the KB's other vectors (checked by fingerprint) and adds them
to the dense index. A dense or hybrid candidate generator then finds an added entity from its name and
description alone, even with no alias; the linkers score its vector and features as any other's.

The entity and alias arrays are rebuilt with the additions appended: existing rows keep their numbers,
so the vectors and index rows stay aligned. That costs time and memory in proportion to the KB (about a
second per 100k entities); for bulk additions rebuild the KB with ``kb build``.

The KB's manifest records where its entities and aliases come from (``entity_sources``,
``alias_sources``), and ``python -m spacy_el package`` distributes a KB only when it knows every source's
licence. Added data is the caller's, under a licence spacy_el cannot know: each call records ``source``
(default ``ADDED_SOURCE``, "added") among both, so the packaging guard asks before distributing it.
"""
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .alias_table import AliasTable
from .entity_store import EntityStore
from .errors import KBErrors

if TYPE_CHECKING:
    from .knowledge_base import ElKnowledgeBase

ENTITY_KEYS = {"id", "name", "description", "types", "aliases", "frequency", "qid"}
#: The source recorded in a KB's manifest for entities and aliases added with :func:`add_entities`.
ADDED_SOURCE = "added"


def _checked(entities: Sequence[Mapping[str, Any]], kb: "ElKnowledgeBase") -> List[Dict[str, Any]]:
    """The additions with defaults filled in, or a ValueError naming the first bad one."""
    out, seen = [], set()
    for i, entity in enumerate(entities):
        if not isinstance(entity, Mapping):
            raise ValueError(KBErrors.E154.format(i=i, entity_type=type(entity).__name__))
        unknown = set(entity) - ENTITY_KEYS
        if unknown:
            raise ValueError(KBErrors.E155.format(i=i, keys=sorted(unknown), allowed=sorted(ENTITY_KEYS)))
        entity_id, name = entity.get("id"), entity.get("name")
        if not isinstance(entity_id, str) or not entity_id.strip() or not isinstance(name, str) or not name.strip():
            raise ValueError(KBErrors.E156.format(i=i, entity_id=entity_id, name=name))
        _check_encodable(i, entity_id, [("id", entity_id)])  # before the id is hashed to look it up
        if entity_id in kb or entity_id in seen:
            raise ValueError(KBErrors.E157.format(i=i, entity_id=entity_id))
        seen.add(entity_id)
        aliases = []
        for alias in entity.get("aliases") or []:
            text, prior = (alias, None) if isinstance(alias, str) else tuple(alias)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(KBErrors.E162.format(i=i, alias=alias))
            if prior is not None and not 0.0 < float(prior) <= 1.0:
                raise ValueError(KBErrors.E163.format(i=i, text=text, prior=prior))
            aliases.append((text, prior))
        frequency = float(entity.get("frequency", 0.0))
        if not np.isfinite(frequency) or frequency < 0:
            raise ValueError(KBErrors.E158.format(i=i, frequency=frequency))
        types = entity.get("types") or []
        # A string or a mapping is iterable too, and would silently become its characters or keys (as in KBBuilder).
        if isinstance(types, (str, bytes, Mapping)) or not isinstance(types, Iterable):
            raise ValueError(KBErrors.E129.format(entity_id=entity_id, types=types))
        types = list(types)
        if not all(isinstance(t, str) for t in types):
            raise ValueError(KBErrors.E129.format(entity_id=entity_id, types=types))
        checked = {
            "id": entity_id, "name": name, "description": str(entity.get("description") or ""),
            "types": types, "aliases": aliases, "frequency": frequency, "qid": str(entity.get("qid") or ""),
        }
        _check_encodable(i, entity_id, [(field, checked[field]) for field in ("name", "description", "qid")]
                         + [("type", t) for t in types] + [("alias", text) for text, _ in aliases])
        out.append(checked)
    return out


def _check_encodable(i: int, entity_id: str, fields: Sequence[Tuple[str, str]]) -> None:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate, e.g. from a badly decoded file), which would
    otherwise fail deep inside the tokenizer (TypeError) or the string store (UnicodeEncodeError)."""
    for field, value in fields:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(KBErrors.E280.format(
                i=i, entity_id=entity_id, field=field, value=value, position=err.start,
            )) from None


def _encoder_path(kb: "ElKnowledgeBase", encoder: Optional[str]) -> Optional[str]:
    """The encoder to embed the additions with: ``encoder``, or the packaged MiniLM when it made the KB's
    vectors; checked against the fingerprint the KB records."""
    from .encoder import default_model_path, encoder_fingerprint

    recorded = kb.vectors_encoder
    path = encoder
    if path is None:
        default = encoder_fingerprint(None)
        if recorded is not None and recorded.get("sha256") != default["sha256"]:
            raise ValueError(KBErrors.E159.format(name=recorded.get("name")))
        path = str(default_model_path())
    elif recorded is not None and encoder_fingerprint(path)["sha256"] != recorded.get("sha256"):
        raise ValueError(KBErrors.E160.format(path=path, name=recorded.get("name")))
    return path


def _merged_aliases(
    table: AliasTable, additions: List[Tuple[str, int, Optional[float]]]
) -> Tuple[List[str], np.ndarray, np.ndarray, np.ndarray]:
    """The alias table's CSR arrays with ``(alias, entity row, prior)`` additions merged in. A prior left
    out is 1.0 for a new alias and 1 / (candidates + 1) for an existing one (existing priors unchanged)."""
    aliases = [table.aliases[i] for i in range(len(table))]
    candidates: Dict[str, List[Tuple[int, float]]] = {}
    for alias, row, prior in additions:
        candidates.setdefault(alias, []).append((row, prior))
    exact_row = {}
    for alias in candidates:
        rows = table.exact_rows(alias)
        if rows:
            exact_row[alias] = rows[0]
    counts = np.diff(table.cand_offsets)
    extra_per_alias = np.zeros(len(aliases), dtype=np.int64)
    extra_entities: Dict[int, List[Tuple[int, float]]] = {}
    new_aliases: List[str] = []
    for alias, found in candidates.items():
        if alias in exact_row:
            i = exact_row[alias]
            n = int(counts[i])
            extra_entities[i] = [(row, prior if prior is not None else 1.0 / (n + 1)) for row, prior in found]
            extra_per_alias[i] = len(found)
        else:
            new_aliases.append(alias)
    entities, priors = [], []
    for i in range(len(aliases)):
        rows, alias_priors = table.candidates_of(i)
        entities.append(np.asarray(rows, dtype=np.int64))
        priors.append(np.asarray(alias_priors, dtype=np.float32))
        if i in extra_entities:
            entities.append(np.asarray([r for r, _ in extra_entities[i]], dtype=np.int64))
            priors.append(np.asarray([p for _, p in extra_entities[i]], dtype=np.float32))
    for alias in new_aliases:
        found = candidates[alias]
        entities.append(np.asarray([r for r, _ in found], dtype=np.int64))
        priors.append(np.asarray([p if p is not None else 1.0 for _, p in found], dtype=np.float32))
    lengths = np.concatenate([counts + extra_per_alias, [len(candidates[a]) for a in new_aliases]]).astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cat = np.concatenate(entities) if entities else np.zeros(0, np.int64)
    cat_priors = np.concatenate(priors) if priors else np.zeros(0, np.float32)
    return aliases + new_aliases, offsets, cat, cat_priors


def _merged_counts(
    table: AliasTable, aliases: Sequence[str], additions: List[Tuple[str, int, Optional[float]]]
) -> Optional[np.ndarray]:
    """The alias counts after :func:`_merged_aliases` (None when the table has none): unknown (0) for a
    new alias and for an existing one that gained an entity, whose added prior was not counted."""
    if table.counts is None:
        return None
    counts = np.zeros(len(aliases), dtype=np.float32)
    counts[: len(table)] = table.counts
    for alias, _, _ in additions:
        for row in table.exact_rows(alias):
            counts[row] = 0.0
    return counts


def add_entities(
    kb: "ElKnowledgeBase", entities: Sequence[Mapping[str, Any]], encoder: Optional[str] = None,
    batch_size: int = 64, progress: bool = False, source: str = ADDED_SOURCE,
) -> List[int]:
    """Append ``entities`` to ``kb`` (see the module docstring). Each is a dict: ``id`` and ``name``
    (required), ``description``, ``types``, ``aliases`` (strings, or ``[alias, prior]`` pairs),
    ``frequency`` (default 0) and ``qid``. The name is always an alias of its entity too.
    RETURNS the new rows. With vectors in the KB, ``encoder`` is the folder of the encoder that made
    them (None: the packaged MiniLM, when it made them); with type distributions, an added entity gets
    the uniform one. ``source`` is recorded among the KB's entity and alias sources (where the KB records
    them: an unknown stays unknown)."""
    if not isinstance(source, str) or not source.strip():
        raise ValueError(KBErrors.E153.format(source=source))
    additions = _checked(entities, kb)
    if not additions:
        return []
    store = kb.entities
    n = len(store)
    new_rows = list(range(n, n + len(additions)))
    new_vectors = None
    if store.vectors is not None:
        from .encoder import TextEncoder, entity_text

        text_encoder = TextEncoder(_encoder_path(kb, encoder), batch_size=batch_size)
        new_vectors = text_encoder.encode([entity_text(a["name"], a["description"]) for a in additions], progress=progress)
        if new_vectors.shape[1] != store.vector_dim:
            raise ValueError(KBErrors.E161.format(dim=new_vectors.shape[1], vector_dim=store.vector_dim))
    ids = [store.ids[i] for i in range(n)] + [a["id"] for a in additions]
    names = [store.names[i] for i in range(n)] + [a["name"] for a in additions]
    descriptions = [store.descriptions[i] for i in range(n)] + [a["description"] for a in additions]
    types = [store.types_of(i) for i in range(n)] + [a["types"] for a in additions]
    frequencies = np.concatenate([np.asarray(store.frequencies, np.float32), [a["frequency"] for a in additions]])
    qids = None
    if store.qids is not None or any(a["qid"] for a in additions):
        qids = [store.qid_at(i) or "" for i in range(n)] + [a["qid"] for a in additions]
    vectors = np.concatenate([np.asarray(store.vectors), new_vectors]) if new_vectors is not None else None
    merged = EntityStore.build(ids, names, descriptions, types, frequencies, vectors, qids=qids)
    if store.type_probs is not None:
        width = store.type_probs.shape[1]
        uniform = np.full((len(additions), width), 1.0 / width, dtype=np.float32)
        merged.type_probs = np.concatenate([np.asarray(store.type_probs), uniform])
        merged.type_prob_names = list(store.type_prob_names)
    alias_additions = []
    for row, a in zip(new_rows, additions):
        texts = [(a["name"], None)] + [al for al in a["aliases"] if al[0] != a["name"]]
        alias_additions += [(text, row, prior) for text, prior in texts]
    aliases, offsets, cand_entities, cand_priors = _merged_aliases(kb.aliases, alias_additions)
    table = AliasTable.build(aliases, offsets, cand_entities, cand_priors, fuzzy=kb.aliases.fuzzy_index is not None,
                             counts=_merged_counts(kb.aliases, aliases, alias_additions))
    recorded = kb.vectors_encoder
    alias_sources, entity_sources = kb.alias_sources, kb.entity_sources
    kb.entities, kb.aliases = merged, table
    kb.vectors_encoder = recorded
    kb.alias_sources = _with_source(alias_sources, source)
    kb.entity_sources = _with_source(entity_sources, source)
    kb._type_index = None
    if kb.dense_index is not None and new_vectors is not None:
        kb.dense_index.add(np.ascontiguousarray(new_vectors, dtype=np.float32))
    kb._check_consistency("the KB after add_entities")
    return new_rows


def _with_source(sources: Optional[List[str]], source: str) -> Optional[List[str]]:
    """``sources`` with ``source`` appended once; None (unknown) stays None."""
    if sources is None:
        return None
    return list(sources) if source in sources else [*sources, source]


__all__ = ["ADDED_SOURCE", "add_entities"]

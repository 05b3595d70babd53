"""The evaluation KB, reproducible from ``../shared/data`` under the data README's rules.

Entities: the union of PPRforNED candidate titles, the Wikipedia-summary titles (with descriptions),
GUM titles (``wiki_map.tab``) and DWIE candidate titles. Frequency: PPRforNED in-link count.

Aliases (rule 3: training-split data, KB titles and DWIE priors only), combined as pseudo-counts and
normalised into p(e|m) per alias:

- AIDA **train** mention -> entity counts (each gold mention counts 1);
- GUM **train** name mentions -> entity counts (mentions without an upper-case letter, i.e. pronouns and
  common-noun phrases, are skipped: they are coreference's job, not the alias table's);
- PPRforNED candidate lists of the **train** documents (rule 2), each list weighing ``PPR_TRAIN_WEIGHT``
  mentions shared by in-link count;
- DWIE priors, weighted as ``DWIE_WEIGHT`` mentions;
- each KB title (weight ``TITLE_WEIGHT``), the title without its "(disambiguator)" (``STRIPPED_WEIGHT``)
  and, for people, the surname (``SURNAME_WEIGHT``; "Bob Woolmer" -> "Woolmer").

Dev/test data never contributes an alias, a prior or a frequency.
"""
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple, Union

from spacy.tokens import Doc
from wasabi import msg

from ..scoring.candidates import candidate_recall_at_k
from .builder import KBBuilder
from .knowledge_base import ElKnowledgeBase
from .sources import (
    EntityRecord,
    name_of,
    read_dwie_aliases,
    read_pprforned_candidates,
    read_pprforned_train_aliases,
    read_wikipedia_summaries,
    strip_disambiguator,
)

PathLike = Union[str, Path]
DWIE_WEIGHT = 5.0
TITLE_WEIGHT = 1.0
STRIPPED_WEIGHT = 0.5
SURNAME_WEIGHT = 0.25
PPR_TRAIN_WEIGHT = 1.0
PERSON_TYPES = {"PER", "topic:People", "person"}
PPR_TYPES = {"PER": "PER", "ORG": "ORG", "GPE": "LOC"}
NIL_IDS = {"", "NIL"}


@dataclass
class EvalKBSources:
    """Paths under the shared data directory."""

    data_dir: Path

    @property
    def summaries(self) -> Path:
        return self.data_dir / "kb" / "summaries_en-us.json.gz"

    @property
    def pprforned(self) -> Path:
        return self.data_dir / "kb" / "pprforned" / "AIDA_candidates.tar.gz"

    @property
    def dwie(self) -> Path:
        return self.data_dir / "kb" / "dwie_aliases.jsonl.gz"

    @property
    def gum_wiki_map(self) -> Path:
        return self.data_dir / "gum" / "coref" / "wiki_map.tab"

    def check(self) -> None:
        for path in (self.summaries, self.pprforned, self.dwie, self.gum_wiki_map):
            if not path.is_file():
                raise FileNotFoundError(f"[spacy_el] Evaluation-KB source not found: {path} (is --data right?)")


def collect_entities(sources: EvalKBSources, progress: bool = True) -> Dict[str, EntityRecord]:
    entities: Dict[str, EntityRecord] = {}
    for record in read_wikipedia_summaries(sources.summaries):
        entities[record.id] = record
    for title, candidate in read_pprforned_candidates(sources.pprforned, progress=progress).items():
        record = entities.setdefault(title, EntityRecord(title, name_of(title)))
        record.frequency = float(candidate.in_count)
        coarse = PPR_TYPES.get(candidate.predicted_type)
        if coarse and coarse not in record.types:
            record.types.insert(0, coarse)
    from ..corpora.titles import load_wiki_map

    for title in load_wiki_map(sources.gum_wiki_map):
        entities.setdefault(title, EntityRecord(title, name_of(title)))
    for _, candidates in read_dwie_aliases(sources.dwie):
        for title, _ in candidates:
            entities.setdefault(title, EntityRecord(title, name_of(title)))
    return entities


def linked_mentions(docs: Iterable[Doc], spans_key: str = "", names_only: bool = False) -> Iterator[Tuple[str, str]]:
    """(mention text, kb id) of every gold linked (non-NIL) mention in ``doc.ents`` or ``doc.spans[spans_key]``.

    names_only: skip mentions without an upper-case letter (pronouns, common-noun phrases).
    """
    for doc in docs:
        for span in doc.spans[spans_key] if spans_key else doc.ents:
            if span.kb_id_ in NIL_IDS:
                continue
            if names_only and not any(c.isupper() for c in span.text):
                continue
            yield span.text, span.kb_id_


def mention_counts(docs: Iterable[Doc], spans_key: str = "", names_only: bool = False) -> Counter:
    """(mention text, kb id) -> count over gold linked mentions (see ``linked_mentions``)."""
    return Counter(linked_mentions(docs, spans_key, names_only))


def alias_table_recall(
    kb: ElKnowledgeBase, mentions: Sequence[Tuple[str, str]], ks: Sequence[int] = (1, 10, 30, 100)
) -> Dict[str, float]:
    """``cand_recall_at_K`` of the KB's alias lookup for (mention text, gold kb id) pairs."""
    ranked = [[hit.entity_id for hit in kb.lookup(text, top_k=max(ks))] for text, _ in mentions]
    return candidate_recall_at_k(ranked, [kb_id for _, kb_id in mentions], ks)


def has_own_candidate(kb: ElKnowledgeBase, texts: Sequence[str], kb_id: str, top_k: int = 16) -> List[bool]:
    """Per mention text: is ``kb_id`` among its own ``top_k`` exact alias candidates (no fuzzy tier, as
    ``joint_coref_linker`` looks them up)?"""
    return [any(hit.entity_id == kb_id for hit in kb.lookup(text, top_k=top_k, fuzzy=False)) for text in texts]


def mate_only_mentions(kb: ElKnowledgeBase, docs: Iterable[Doc], top_k: int = 16) -> Dict[str, int]:
    """The paper's Table 4 cases among the gold linked mentions of ``doc.ents``, with AIDA+-style
    clusters (the mentions of one doc linked to one entity).

    Returns ``{"mate_only": n, "in_linked_clusters": n}``: the mentions whose own ``top_k`` exact
    alias candidates (what ``joint_coref_linker`` scores) lack their gold entity while another mention
    of their cluster has it, and all mentions of linked clusters of two or more mentions.
    """
    counts = {"mate_only": 0, "in_linked_clusters": 0}
    for doc in docs:
        clusters: Dict[str, List[str]] = defaultdict(list)
        for span in doc.ents:
            if span.kb_id_ not in NIL_IDS and span.kb_id_ in kb:
                clusters[span.kb_id_].append(span.text)
        for kb_id, texts in clusters.items():
            if len(texts) < 2:
                continue
            has = has_own_candidate(kb, texts, kb_id, top_k)
            counts["in_linked_clusters"] += len(texts)
            if any(has):
                counts["mate_only"] += has.count(False)
    return counts


def combine_alias_sources(
    entities: Dict[str, EntityRecord],
    train_counts: Counter,
    dwie: Iterable[Tuple[str, List[Tuple[str, float]]]],
) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: prior}, from pseudo-counts of all sources (see the module docstring)."""
    pseudo: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (alias, entity_id), count in train_counts.items():
        pseudo[alias][entity_id] += count
    for alias, candidates in dwie:
        for entity_id, prior in candidates:
            pseudo[alias][entity_id] += DWIE_WEIGHT * prior
    for record in entities.values():
        pseudo[record.name][record.id] += TITLE_WEIGHT
        stripped = strip_disambiguator(record.name)
        if stripped and stripped != record.name:
            pseudo[stripped][record.id] += STRIPPED_WEIGHT
        words = stripped.split()
        if len(words) >= 2 and PERSON_TYPES & set(record.types) and words[-1][:1].isupper():
            pseudo[words[-1]][record.id] += SURNAME_WEIGHT
    priors = {}
    for alias, weights in pseudo.items():
        total = sum(weights.values())
        priors[alias] = {entity_id: weight / total for entity_id, weight in weights.items()}
    return priors


def build_eval_kb_builder(
    data_dir: PathLike, aida_train: List[Doc], gum_train: List[Doc], progress: bool = True
) -> KBBuilder:
    """Collect the evaluation KB's entities and aliases. ``aida_train``/``gum_train`` are gold train docs."""
    sources = EvalKBSources(Path(data_dir))
    sources.check()
    entities = collect_entities(sources, progress=progress)
    counts = mention_counts(aida_train) + mention_counts(gum_train, spans_key="mentions", names_only=True)
    for key, weight in read_pprforned_train_aliases(sources.pprforned, progress=progress).items():
        counts[key] += PPR_TRAIN_WEIGHT * weight
    missing = {entity_id for _, entity_id in counts} - set(entities)
    if missing:
        # Train gold titles absent from every KB source still belong in the KB: add them by title.
        msg.info(f"Adding {len(missing)} train-gold titles that no KB source lists")
        for entity_id in missing:
            entities[entity_id] = EntityRecord(entity_id, name_of(entity_id))
    builder = KBBuilder()
    for record in entities.values():
        builder.add_entity(record.id, record.name, record.description, record.types, record.frequency)
    for alias, priors in combine_alias_sources(entities, counts, read_dwie_aliases(sources.dwie)).items():
        builder.add_alias(alias, list(priors), [min(1.0, p) for p in priors.values()])
    return builder

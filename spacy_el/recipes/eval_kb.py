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
  and, for people, the surname (``SURNAME_WEIGHT``; "Bob Woolmer" -> "Woolmer"), see :func:`title_aliases`.

Dev/test data never contributes an alias, a prior or a frequency. ``alias_sources`` selects the alias sources
(``ALIAS_SOURCES`` names them, with their licences): ``OPEN_ALIAS_SOURCES`` leaves out the AIDA mentions and
the PPRforNED lists, whose mention strings are Reuters text (data rule 1), for a KB that may be packaged;
:func:`open_data_aliases` gives an existing KB such an alias table, keeping its entities, vectors and index.
The bundled demo KB
(``scripts/make_demo_assets.py``) uses the same rules (:func:`mention_counts`, :func:`title_aliases`,
:func:`combine_alias_sources`), so there is one alias rule in the project.
"""
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from wasabi import msg

from ..corpora.titles import load_wiki_map
from ..kb import ElKnowledgeBase, KBBuilder
from ..scoring.candidates import linked_mentions
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


class AliasSource(NamedTuple):
    """One source of the evaluation KB's aliases: what it is, its licence and whether aliases from it may
    be distributed in a package (``python -m spacy_el package`` refuses a KB with one that may not)."""

    what: str
    licence: str
    redistributable: bool


#: The evaluation KB's alias sources by the name its manifest records (``ElKnowledgeBase.alias_sources``).
ALIAS_SOURCES: Dict[str, AliasSource] = {
    "titles": AliasSource(
        "KB entity titles (Wikipedia article titles), without their disambiguator, and people's surnames",
        "Wikipedia article titles, from the KB's entity sources (Wikipedia summaries: CC BY-SA 4.0; GUM "
        "wiki_map: CC BY 4.0; DWIE: GPL-3.0; PPRforNED candidate URLs)",
        True,
    ),
    "gum": AliasSource(
        "GUM train name mentions (amir-zeldes/gum, coref/gum)",
        "annotations CC BY 4.0; the mention strings come from texts under per-genre licences (CC BY, CC BY-SA, "
        "CC BY-NC-SA 3.0 for wikiHow and fiction, ...; see GUM's LICENSE.txt); Reddit text is masked, so none",
        True,
    ),
    "dwie": AliasSource(
        "DWIE alias priors p(e|m) (klimzaporojets/DWIE, data/annos)", "GPL-3.0", True
    ),
    "aida": AliasSource(
        "AIDA CoNLL-YAGO train mentions",
        "Reuters text (CoNLL-2003), research use only: never distributed (data rule 1)",
        False,
    ),
    "pprforned": AliasSource(
        "PPRforNED candidate lists of the AIDA train documents",
        "no licence stated; its mention strings are AIDA (Reuters) text: never distributed (data rule 1)",
        False,
    ),
}
#: The sources a packaged KB's aliases may come from.
OPEN_ALIAS_SOURCES: Tuple[str, ...] = tuple(name for name, source in ALIAS_SOURCES.items() if source.redistributable)


def check_alias_sources(names: Iterable[str]) -> Tuple[str, ...]:
    """``names`` in ``ALIAS_SOURCES`` order, each checked to be one of them."""
    names = list(names)
    unknown = [name for name in names if name not in ALIAS_SOURCES]
    if unknown or not names:
        raise ValueError(
            f"[spacy_el] Unknown alias sources {unknown or names!r}: choose one or more of {list(ALIAS_SOURCES)} "
            f"(the open-data set is {','.join(OPEN_ALIAS_SOURCES)})."
        )
    return tuple(name for name in ALIAS_SOURCES if name in names)


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
    for title in load_wiki_map(sources.gum_wiki_map):
        entities.setdefault(title, EntityRecord(title, name_of(title)))
    for _, candidates in read_dwie_aliases(sources.dwie):
        for title, _ in candidates:
            entities.setdefault(title, EntityRecord(title, name_of(title)))
    return entities


def mention_counts(docs: Iterable[Doc], spans_key: str = "", names_only: bool = False) -> Counter:
    """(mention text, kb id) -> count over gold linked mentions (see ``linked_mentions``)."""
    return Counter(linked_mentions(docs, spans_key, names_only))


def title_aliases(record: EntityRecord) -> Dict[str, float]:
    """alias -> pseudo-count that an entity's title gives it: the title (``TITLE_WEIGHT``), the title
    without its disambiguator (``STRIPPED_WEIGHT``) and, for people (``PERSON_TYPES``), the last word of
    that when it is capitalised, as a surname (``SURNAME_WEIGHT``; "Bob Woolmer" -> "Woolmer")."""
    aliases = {record.name: TITLE_WEIGHT}
    stripped = strip_disambiguator(record.name)
    if stripped and stripped != record.name:
        aliases[stripped] = STRIPPED_WEIGHT
    words = stripped.split()
    if len(words) >= 2 and PERSON_TYPES & set(record.types) and words[-1][:1].isupper():
        aliases[words[-1]] = aliases.get(words[-1], 0.0) + SURNAME_WEIGHT
    return aliases


def combine_alias_sources(
    entities: Dict[str, EntityRecord],
    train_counts: Counter,
    dwie: Iterable[Tuple[str, List[Tuple[str, float]]]],
    titles: bool = True,
) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: prior}, from pseudo-counts of all sources (see the module docstring);
    ``titles=False`` leaves out the title aliases."""
    pseudo: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (alias, entity_id), count in train_counts.items():
        pseudo[alias][entity_id] += count
    for alias, candidates in dwie:
        for entity_id, prior in candidates:
            pseudo[alias][entity_id] += DWIE_WEIGHT * prior
    for record in entities.values() if titles else ():
        for alias, weight in title_aliases(record).items():
            pseudo[alias][record.id] += weight
    priors = {}
    for alias, weights in pseudo.items():
        total = sum(weights.values())
        priors[alias] = {entity_id: weight / total for entity_id, weight in weights.items()}
    return priors


def build_eval_kb_builder(
    data_dir: PathLike, aida_train: List[Doc], gum_train: List[Doc], progress: bool = True,
    alias_sources: Sequence[str] = tuple(ALIAS_SOURCES),
) -> KBBuilder:
    """Collect the evaluation KB's entities and aliases. ``aida_train``/``gum_train`` are gold train docs;
    ``alias_sources`` (names of ``ALIAS_SOURCES``) the sources whose aliases it takes. The entities are the
    same whatever the alias sources, train gold titles included."""
    alias_sources = check_alias_sources(alias_sources)
    sources = EvalKBSources(Path(data_dir))
    sources.check()
    entities = collect_entities(sources, progress=progress)
    by_source = {
        "aida": mention_counts(aida_train),
        "gum": mention_counts(gum_train, spans_key="mentions", names_only=True),
        "pprforned": Counter(),
    }
    for key, weight in read_pprforned_train_aliases(sources.pprforned, progress=progress).items():
        by_source["pprforned"][key] += PPR_TRAIN_WEIGHT * weight
    gold_ids = {entity_id for counts in by_source.values() for _, entity_id in counts}
    missing = gold_ids - set(entities)
    if missing:
        # Train gold titles absent from every KB source still belong in the KB: add them by title (in
        # sorted order, so that every build has the same entity rows).
        msg.info(f"Adding {len(missing)} train-gold titles that no KB source lists")
        for entity_id in sorted(missing):
            entities[entity_id] = EntityRecord(entity_id, name_of(entity_id))
    counts: Counter = Counter()
    for name, source_counts in by_source.items():
        if name in alias_sources:
            counts.update(source_counts)
    dwie = read_dwie_aliases(sources.dwie) if "dwie" in alias_sources else ()
    builder = KBBuilder()
    for record in entities.values():
        builder.add_entity(record.id, record.name, record.description, record.types, record.frequency)
    for alias, priors in combine_alias_sources(entities, counts, dwie, titles="titles" in alias_sources).items():
        builder.add_alias(alias, list(priors), [min(1.0, p) for p in priors.values()])
    return builder


def open_data_aliases(
    kb: ElKnowledgeBase, data_dir: PathLike, gum_train: List[Doc], alias_sources: Sequence[str] = OPEN_ALIAS_SOURCES,
) -> ElKnowledgeBase:
    """Give ``kb`` (an evaluation KB) the alias table that ``alias_sources`` (redistributable ones only, by
    default ``OPEN_ALIAS_SOURCES``) make over its own entities, in place: its entity rows, vectors, dense
    index and type distributions stay, so nothing is encoded again. Title aliases come from the KB's names
    and types, as :func:`build_eval_kb_builder` makes them from the same records. RETURNS: ``kb``."""
    alias_sources = check_alias_sources(alias_sources)
    closed = [name for name in alias_sources if not ALIAS_SOURCES[name].redistributable]
    if closed:
        raise ValueError(f"[spacy_el] open_data_aliases takes redistributable alias sources only, not {closed}.")
    entities = {
        entity_id: EntityRecord(entity_id, kb.entities.names[row], types=kb.entities.types_of(row))
        for row, entity_id in enumerate(kb.entities.ids)
    }
    counts = mention_counts(gum_train, spans_key="mentions", names_only=True) if "gum" in alias_sources else Counter()
    dwie_path = EvalKBSources(Path(data_dir)).dwie
    dwie = read_dwie_aliases(dwie_path) if "dwie" in alias_sources else ()
    builder = KBBuilder()
    for record in entities.values():
        builder.add_entity(record.id, record.name, types=record.types)
    for alias, priors in combine_alias_sources(entities, counts, dwie, titles="titles" in alias_sources).items():
        builder.add_alias(alias, list(priors), [min(1.0, p) for p in priors.values()])
    # Gold titles of GUM train that the KB lacks (none for a KB built by build-eval) are dropped.
    built = builder.build(fuzzy=kb.aliases.fuzzy_index is not None, drop_unknown=True)
    kb.set_aliases(built.aliases, alias_sources)
    return kb

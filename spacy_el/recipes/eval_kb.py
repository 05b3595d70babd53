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

Dev/test data never contributes an alias, a prior or a frequency. The bundled demo KB
(``scripts/make_demo_assets.py``) uses the same rules (:func:`mention_counts`, :func:`title_aliases`,
:func:`combine_alias_sources`), so there is one alias rule in the project.
"""
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Tuple, Union

from spacy.tokens import Doc
from wasabi import msg

from ..corpora.titles import load_wiki_map
from ..kb import KBBuilder
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
) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: prior}, from pseudo-counts of all sources (see the module docstring)."""
    pseudo: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (alias, entity_id), count in train_counts.items():
        pseudo[alias][entity_id] += count
    for alias, candidates in dwie:
        for entity_id, prior in candidates:
            pseudo[alias][entity_id] += DWIE_WEIGHT * prior
    for record in entities.values():
        for alias, weight in title_aliases(record).items():
            pseudo[alias][record.id] += weight
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

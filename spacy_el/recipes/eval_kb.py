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

Each alias records its total pseudo-count, and the KB carries what each counted training document added
(:func:`held_out_table`), so that a linker trained on those documents can use held-out priors
(:mod:`spacy_el.candidates.held_out`).

Dev/test data never contributes an alias, a prior or a frequency. ``alias_sources`` selects the alias sources
(``ALIAS_SOURCES`` names them, with their licences): ``OPEN_ALIAS_SOURCES`` leaves out the AIDA mentions and
the PPRforNED lists, whose mention strings are Reuters text (data rule 1), for a KB that may be packaged;
:func:`open_data_aliases` gives an existing KB such an alias table, keeping its entities, vectors and index.
``entity_sources`` selects the entity sources (``ENTITY_SOURCES``; each also adds the train gold titles it
annotates): ``OPEN_ENTITY_SOURCES`` (the Wikipedia summaries and GUM) gives a KB whose entity list has no AIDA
or PPRforNED origin, for the `pretrained` pipelines; aliases naming an entity outside the KB are dropped.
``skip_pronoun_aliases`` counts only the GUM mentions that read as names (:func:`spacy_el.recipes.names.is_name`)
and leaves out every pronoun alias: the default rules let in "He", "I" and "The city" at a sentence start from
GUM, and "He", "She" and "I" as the surnames of "Zheng He", "Lao She" and "Ahmose I", as the evaluation KB has
them (kept so, for its measured results).
The bundled demo KB
(``scripts/make_demo_assets.py``) uses the same rules (:func:`mention_counts`, :func:`title_aliases`,
:func:`combine_alias_sources`), so there is one alias rule in the project.
"""
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Container, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from wasabi import msg

from ..corpora.titles import load_wiki_map
from ..errors import Errors
from ..kb import ElKnowledgeBase, KBBuilder
from ..kb.held_out import HELD_OUT_ATTACHMENT, HeldOutTable, document_key, encode_held_out
from ..scoring.candidates import linked_mentions
from .data_sources import ALIAS_SOURCES, ENTITY_SOURCES, OPEN_ALIAS_SOURCES, check_alias_sources, check_entity_sources
from .names import is_name, is_pronoun
from .sources import (
    EntityRecord,
    name_of,
    read_dwie_aliases,
    read_pprforned_candidates,
    read_pprforned_train_lists,
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

    def check(self, names: Iterable[str] = ("summaries", "pprforned", "dwie", "gum_wiki_map")) -> None:
        """Refuse a missing source file among ``names`` (properties of this class)."""
        for path in (getattr(self, name) for name in names):
            if not path.is_file():
                raise FileNotFoundError(Errors.E604.format(path=path))


def collect_entities(
    sources: EvalKBSources, progress: bool = True, entity_sources: Sequence[str] = tuple(ENTITY_SOURCES),
) -> Dict[str, EntityRecord]:
    """The entities of ``entity_sources`` (names of ``ENTITY_SOURCES``; the train gold titles of "aida" and
    "gum" are added by :func:`build_eval_kb_builder`). GUM titles carry their Wikidata QID."""
    entities: Dict[str, EntityRecord] = {}
    if "summaries" in entity_sources:
        for record in read_wikipedia_summaries(sources.summaries):
            entities[record.id] = record
    if "pprforned" in entity_sources:
        for title, candidate in read_pprforned_candidates(sources.pprforned, progress=progress).items():
            record = entities.setdefault(title, EntityRecord(title, name_of(title)))
            record.frequency = float(candidate.in_count)
            coarse = PPR_TYPES.get(candidate.predicted_type)
            if coarse and coarse not in record.types:
                record.types.insert(0, coarse)
    if "gum" in entity_sources:
        for title, qid in load_wiki_map(sources.gum_wiki_map).items():
            entities.setdefault(title, EntityRecord(title, name_of(title))).qid = qid
    if "dwie" in entity_sources:
        for _, candidates in read_dwie_aliases(sources.dwie):
            for title, _ in candidates:
                entities.setdefault(title, EntityRecord(title, name_of(title)))
    return entities


def mention_counts(
    docs: Iterable[Doc], spans_key: str = "", names_only: bool = False, skip_pronouns: bool = False,
) -> Counter:
    """(mention text, kb id) -> count over gold linked mentions (see ``linked_mentions``); ``skip_pronouns``
    keeps only the mentions that read as names (:func:`spacy_el.recipes.names.is_name`: not "He", "The city")."""
    return Counter(m for m in linked_mentions(docs, spans_key, names_only) if not skip_pronouns or is_name(m[0]))


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
    return priors_of(alias_pseudo_counts(entities, train_counts, dwie, titles))


def priors_of(pseudo: Dict[str, Dict[str, float]]) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: prior}: each alias's pseudo-counts normalised by their total."""
    priors = {}
    for alias, weights in pseudo.items():
        total = sum(weights.values())
        priors[alias] = {entity_id: weight / total for entity_id, weight in weights.items()}
    return priors


def alias_pseudo_counts(
    entities: Dict[str, EntityRecord],
    train_counts: Counter,
    dwie: Iterable[Tuple[str, List[Tuple[str, float]]]],
    titles: bool = True,
) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: pseudo-count} of all sources (see the module docstring), before normalisation:
    an AIDA or GUM train mention counts 1, so a linker trained on those documents can take its own
    document's mentions out again (held-out priors)."""
    pseudo: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (alias, entity_id), count in train_counts.items():
        pseudo[alias][entity_id] += count
    for alias, candidates in dwie:
        for entity_id, prior in candidates:
            pseudo[alias][entity_id] += DWIE_WEIGHT * prior
    for record in entities.values() if titles else ():
        for alias, weight in title_aliases(record).items():
            pseudo[alias][record.id] += weight
    return pseudo


def build_eval_kb_builder(
    data_dir: PathLike, aida_train: List[Doc], gum_train: List[Doc], progress: bool = True,
    alias_sources: Sequence[str] = tuple(ALIAS_SOURCES), entity_sources: Sequence[str] = tuple(ENTITY_SOURCES),
    skip_pronoun_aliases: bool = False,
) -> KBBuilder:
    """Collect the evaluation KB's entities and aliases. ``aida_train``/``gum_train`` are gold train docs;
    ``alias_sources`` (names of ``ALIAS_SOURCES``) the sources whose aliases it takes, ``entity_sources``
    (names of ``ENTITY_SOURCES``) those whose entities, train gold titles included. With all entity sources
    the entities are the same whatever the alias sources. ``skip_pronoun_aliases``: see the module docstring."""
    alias_sources = check_alias_sources(alias_sources)
    entity_sources = check_entity_sources(entity_sources)
    sources = EvalKBSources(Path(data_dir))
    sources.check(_needed_files(alias_sources, entity_sources))
    entities = collect_entities(sources, progress=progress, entity_sources=entity_sources)
    by_source = {
        "aida": mention_counts(aida_train),
        "gum": mention_counts(gum_train, spans_key="mentions", names_only=True, skip_pronouns=skip_pronoun_aliases),
        "pprforned": Counter(),
    }
    ppr_lists: Dict[int, Counter] = {}
    if "pprforned" in alias_sources or "pprforned" in entity_sources:
        ppr_lists = read_pprforned_train_lists(sources.pprforned, progress=progress)
        for document in ppr_lists.values():
            for key, weight in document.items():
                by_source["pprforned"][key] += PPR_TRAIN_WEIGHT * weight
    gold_ids = {entity_id for name, counts in by_source.items() if name in entity_sources for _, entity_id in counts}
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
        builder.add_entity(record.id, record.name, record.description, record.types, record.frequency, qid=record.qid or None)
    pseudo = alias_pseudo_counts(entities, counts, dwie, titles="titles" in alias_sources)
    # Candidates outside the KB (DWIE or AIDA titles when their entity source is not taken) are dropped.
    add_aliases(builder, priors_of(pseudo), known=entities, skip_pronouns=skip_pronoun_aliases,
                counts=alias_totals(pseudo))
    builder.set_attachment(HELD_OUT_ATTACHMENT, encode_held_out(
        held_out_table(aida_train, gum_train, ppr_lists, alias_sources, skip_pronoun_aliases)))
    return builder


def held_out_table(
    aida_train: Sequence[Doc], gum_train: Sequence[Doc], ppr_lists: Dict[int, Counter], alias_sources: Sequence[str],
    skip_pronoun_aliases: bool = False,
) -> HeldOutTable:
    """Per counted training document, what it added to the alias pseudo-counts (:mod:`spacy_el.kb.held_out`):
    its gold mentions (AIDA, GUM names) and, for AIDA train, its PPRforNED candidate lists (``ppr_lists``,
    by document number in AIDA's order), each by the same rule and weight as :func:`build_eval_kb_builder`."""
    table: Dict[str, Dict[str, Dict[str, float]]] = {}

    def add(doc: Doc, counts: Counter) -> None:
        aliases = table.setdefault(document_key(doc.text), {})
        for (alias, entity_id), count in counts.items():
            aliases.setdefault(alias, {})
            aliases[alias][entity_id] = aliases[alias].get(entity_id, 0.0) + float(count)

    use_ppr = "pprforned" in alias_sources and bool(ppr_lists)
    if use_ppr and len(aida_train) != max(ppr_lists):
        msg.warn(f"{len(aida_train)} AIDA train documents but PPRforNED lists for {max(ppr_lists)}: their lists "
                 "cannot be paired with the documents, so held-out priors keep them.")
        use_ppr = False
    for number, doc in enumerate(aida_train if ("aida" in alias_sources or use_ppr) else (), start=1):
        own: Counter = Counter(mention_counts([doc])) if "aida" in alias_sources else Counter()
        for key, weight in (ppr_lists.get(number, Counter()) if use_ppr else Counter()).items():
            own[key] += PPR_TRAIN_WEIGHT * weight
        add(doc, own)
    for doc in gum_train if "gum" in alias_sources else ():
        add(doc, mention_counts([doc], spans_key="mentions", names_only=True, skip_pronouns=skip_pronoun_aliases))
    return table


def alias_totals(pseudo: Dict[str, Dict[str, float]]) -> Dict[str, float]:
    """alias -> the total pseudo-count behind its priors (the alias table's counts)."""
    return {alias: sum(weights.values()) for alias, weights in pseudo.items()}


def add_aliases(
    builder: KBBuilder, priors: Dict[str, Dict[str, float]], known: Optional[Container[str]] = None,
    skip_pronouns: bool = False, counts: Optional[Dict[str, float]] = None,
) -> None:
    """Add ``priors`` (alias -> {entity id: prior}) to ``builder``: only the candidates in ``known`` (None: all;
    the priors stay as counted, so a dropped candidate's mass is not moved to the others), and with
    ``skip_pronouns`` no pronoun alias (:func:`spacy_el.recipes.names.is_pronoun`: the title rule's surname of
    "Zheng He", "Lao She", "Ahmose I" is one). ``counts``: alias -> the count behind its priors, recorded with
    it (:func:`alias_totals`)."""
    for alias, candidates in priors.items():
        if skip_pronouns and is_pronoun(alias):
            continue
        kept = {entity_id: prior for entity_id, prior in candidates.items() if known is None or entity_id in known}
        if kept:
            builder.add_alias(alias, list(kept), [min(1.0, p) for p in kept.values()],
                              count=None if counts is None else counts.get(alias))


def _needed_files(alias_sources: Sequence[str], entity_sources: Sequence[str]) -> Tuple[str, ...]:
    """The ``EvalKBSources`` files that these sources read."""
    needed = {"summaries": "summaries" in entity_sources, "gum_wiki_map": "gum" in entity_sources,
              "pprforned": "pprforned" in alias_sources or "pprforned" in entity_sources,
              "dwie": "dwie" in alias_sources or "dwie" in entity_sources}
    return tuple(name for name, need in needed.items() if need)


def open_data_aliases(
    kb: ElKnowledgeBase, data_dir: PathLike, gum_train: List[Doc], alias_sources: Sequence[str] = OPEN_ALIAS_SOURCES,
    skip_pronoun_aliases: bool = False,
) -> ElKnowledgeBase:
    """Give ``kb`` (an evaluation KB) the alias table that ``alias_sources`` (redistributable ones only, by
    default ``OPEN_ALIAS_SOURCES``) make over its own entities, in place: its entity rows, vectors, dense
    index and type distributions stay, so nothing is encoded again. Title aliases come from the KB's names
    and types, as :func:`build_eval_kb_builder` makes them from the same records (``skip_pronoun_aliases`` as
    there). RETURNS: ``kb``."""
    alias_sources = check_alias_sources(alias_sources)
    closed = [name for name in alias_sources if not ALIAS_SOURCES[name].redistributable]
    if closed:
        raise ValueError(Errors.E602.format(closed=closed))
    entities = {
        entity_id: EntityRecord(entity_id, kb.entities.names[row], types=kb.entities.types_of(row))
        for row, entity_id in enumerate(kb.entities.ids)
    }
    counts = mention_counts(gum_train, spans_key="mentions", names_only=True,
                            skip_pronouns=skip_pronoun_aliases) if "gum" in alias_sources else Counter()
    dwie_path = EvalKBSources(Path(data_dir)).dwie
    dwie = read_dwie_aliases(dwie_path) if "dwie" in alias_sources else ()
    builder = KBBuilder()
    for record in entities.values():
        builder.add_entity(record.id, record.name, types=record.types)
    pseudo = alias_pseudo_counts(entities, counts, dwie, titles="titles" in alias_sources)
    add_aliases(builder, priors_of(pseudo), skip_pronouns=skip_pronoun_aliases, counts=alias_totals(pseudo))
    # Gold titles of GUM train that the KB lacks (none for a KB built by build-eval) are dropped.
    built = builder.build(fuzzy=kb.aliases.fuzzy_index is not None, drop_unknown=True)
    kb.set_aliases(built.aliases, alias_sources)
    # The held-out table goes with the aliases it describes: the evaluation KB's holds AIDA's mention strings.
    kb.set_attachment(HELD_OUT_ATTACHMENT, encode_held_out(
        held_out_table([], gum_train, {}, alias_sources, skip_pronoun_aliases)))
    return kb

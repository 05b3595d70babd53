"""Synthetic Wikidata JSON and Wikipedia XML dumps in the real formats, for ``benchmarks.kb_from_dumps``.

    python -m benchmarks.synthetic_dumps OUT_DIR --n-entities 1000000 --n-links 3300000

Writes ``OUT_DIR/wikidata.json.gz`` (the layout of ``latest-all.json``) and ``OUT_DIR/enwiki.xml.gz`` (export schema
0.10), streamed: nothing but a block of random numbers is held in memory, whatever the size.

- Entities: people, places, organisations and works with multi-word names from syllable tables; the mixed-radix
  construction makes every title unique, a repeated name gets a disambiguator ("(Kind 2)"), and shared surnames
  and place stems make the anchors ambiguous, as real ones are.
- Wikidata: English label, description, 0-3 aliases, P31, an enwiki sitelink (missing for 5% of the items).
- Wikipedia: an article per entity with its share of ``n_links`` links (targets Zipf-distributed over the
  entities; anchors the full name, the surname or stem, or an alias), redirects for 10% of the entities (some
  chained), disambiguation pages for 1% of the surnames. gzip level 1: bz2 compresses about 10x slower.
"""
import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List, Tuple
from xml.sax.saxutils import escape

import numpy as np

from spacy_el.kb.files import write_path

SYLLABLES = [
    "ka", "vel", "mar", "quel", "ton", "ri", "sa", "bran", "dor", "li", "ne", "os", "tha", "ven", "gar", "ull",
    "pe", "ra", "mon", "zi", "hal", "ber", "cor", "den", "fa", "lo", "wen", "tis", "ar", "bel", "cas", "dru",
]  # fmt: skip
KINDS = [  # (coarse kind, P31, description, title disambiguator)
    ("PER", "Q5", "invented person", "person"),
    ("LOC", "Q515", "invented city", "place"),
    ("ORG", "Q4830453", "invented company", "company"),
    ("MISC", "Q7725634", "invented literary work", "novel"),
]
N_STEMS = 32 ** 3  # three-syllable stems: 32,768 surnames / place stems
N_FIRST = 32 ** 2  # two-syllable given names


def stem(i: int, n_syllables: int) -> str:
    parts = []
    for _ in range(n_syllables):
        parts.append(SYLLABLES[i % 32])
        i //= 32
    return "".join(parts).capitalize()


def entity(i: int) -> Tuple[str, str, str, str, List[str], str]:
    """(title, label, description, P31, aliases, short anchor) of entity ``i`` (0-based)."""
    kind, p31, description, disambiguator = KINDS[i % 4]
    j = i // 4
    surname = stem(j % N_STEMS, 3)
    rest = j // N_STEMS
    if kind == "PER":
        first = stem(rest % N_FIRST, 2)
        label = f"{first} {surname}"
        aliases = [surname, f"{first[0]}. {surname}"]
        repeat = rest // N_FIRST
    elif kind == "LOC":
        label = f"{['Port', 'New', 'East', 'Upper'][rest % 4]} {surname}"
        aliases = [surname]
        repeat = rest // 4
    elif kind == "ORG":
        label = f"{surname} {['Group', 'Holdings', 'Records', 'United'][rest % 4]}"
        aliases = [surname, f"the {label}"]
        repeat = rest // 4
    else:
        label = f"The {surname} {['Chronicle', 'Letters', 'Affair', 'Garden'][rest % 4]}"
        aliases = []
        repeat = rest // 4
    title = label if repeat == 0 else f"{label} ({disambiguator} {repeat + 1})"
    return title, label, f"{description} number {i}", p31, aliases, surname


def wikidata_line(i: int, sitelink: bool) -> str:
    """Item ``i`` as a dump line."""
    title, label, description, p31, aliases, _ = entity(i)
    record: Dict[str, Any] = {
        "type": "item", "id": f"Q{i + 1}",
        "labels": {"en": {"language": "en", "value": label}},
        "descriptions": {"en": {"language": "en", "value": description}},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": {"P31": [{"mainsnak": {"snaktype": "value", "property": "P31", "datavalue": {
            "value": {"entity-type": "item", "numeric-id": int(p31[1:]), "id": p31}, "type": "wikibase-entityid"},
            "datatype": "wikibase-item"}, "type": "statement", "rank": "normal"}]},
        "sitelinks": {"enwiki": {"site": "enwiki", "title": title, "badges": []}} if sitelink else {},
    }
    return json.dumps(record, separators=(",", ":"))


SITEINFO = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def page(title: str, page_id: int, text: str, redirect: str = "") -> str:
    redirect_el = f'    <redirect title="{escape(redirect, {chr(34): "&quot;"})}" />\n' if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{redirect_el}"
        f"    <revision>\n      <id>{page_id}</id>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n'
    )


def link_targets(n_entities: int, n_links: int, seed: int, block: int = 1 << 20) -> Iterator[np.ndarray]:
    """Zipf-distributed entity numbers (exponent 1.1 over a random permutation), ``block`` at a time."""
    rng = np.random.default_rng(seed)
    permutation = rng.permutation(n_entities)
    done = 0
    while done < n_links:
        m = min(block, n_links - done)
        ranks = rng.zipf(1.1, size=m) - 1
        ranks = np.where(ranks < n_entities, ranks, rng.integers(0, n_entities, size=m))
        yield permutation[ranks]
        done += m


def write_dumps(
    out: Path, n_entities: int, n_links: int, seed: int = 0, progress: bool = True,
) -> Tuple[Path, Path]:
    """Write the two dumps; the same arguments give the same dumps (decompressed bytes)."""
    out.mkdir(parents=True, exist_ok=True)
    wikidata, wikipedia = out / "wikidata.json.gz", out / "enwiki.xml.gz"
    rng = np.random.default_rng(seed + 1)
    started = time.perf_counter()

    def write_wikidata(tmp: Path) -> None:
        with gzip.open(tmp, "wt", encoding="utf8", compresslevel=1) as f:
            f.write("[\n")
            for start in range(0, n_entities, 1 << 16):
                sitelinks = rng.random(min(1 << 16, n_entities - start)) >= 0.05
                f.writelines(wikidata_line(start + k, bool(s)) + (",\n" if start + k < n_entities - 1 else "\n")
                             for k, s in enumerate(sitelinks))
                _log(progress, f"wikidata {start + len(sitelinks):,}/{n_entities:,}", started)
            f.write("]\n")

    def write_wikipedia(tmp: Path) -> None:
        with gzip.open(tmp, "wt", encoding="utf8", compresslevel=1) as f:
            f.write(SITEINFO)
            _write_pages(f, n_entities, n_links, seed, progress, started)
            f.write("</mediawiki>\n")

    write_path(wikidata, write_wikidata)
    write_path(wikipedia, write_wikipedia)
    return wikidata, wikipedia


def _write_pages(f: IO[str], n_entities: int, n_links: int, seed: int, progress: bool, started: float) -> None:
    rng = np.random.default_rng(seed + 2)
    page_id = 1
    # Links are handed out to the articles in order: article i gets the links of its share.
    per_article, extra = divmod(n_links, n_entities)
    targets = _flatten(link_targets(n_entities, n_links, seed))
    seen_surnames = set()  # at most N_STEMS of them
    for i in range(n_entities):
        title, label, description, _, _, short = entity(i)
        k = per_article + (1 if i < extra else 0)
        links = []
        for _ in range(k):
            t = next(targets)
            t_title, t_label, _, _, t_aliases, t_short = entity(int(t))
            choice = rng.integers(0, 4)
            anchor = t_label if choice == 0 else t_short if choice == 1 else (t_aliases[-1] if t_aliases else t_label) if choice == 2 else t_title
            links.append(f"[[{t_title}]]" if anchor == t_title else f"[[{t_title}|{anchor}]]")
        text = f"'''{label}''' is an {description}.\n\nIt is linked with " + ", ".join(links) + ".\n\n== History ==\nNone."
        f.write(page(title, page_id, text))
        page_id += 1
        if rng.random() < 0.1:  # a redirect, sometimes through a chain of two
            f.write(page(f"{label} (redirect {i})", page_id, f"#REDIRECT [[{title}]]", redirect=title))
            page_id += 1
            if rng.random() < 0.2:
                f.write(page(f"{label} (old redirect {i})", page_id, f"#REDIRECT [[{label} (redirect {i})]]", redirect=f"{label} (redirect {i})"))
                page_id += 1
        if short not in seen_surnames and rng.random() < 0.01:
            seen_surnames.add(short)
            f.write(page(f"{short} (disambiguation)", page_id, f"'''{short}''' may refer to:\n* [[{title}]]\n{{{{disambiguation}}}}"))
            page_id += 1
        if progress and i % 200_000 == 0:
            _log(progress, f"wikipedia {i:,}/{n_entities:,}", started)


def _flatten(blocks: Iterator[np.ndarray]) -> Iterator[int]:
    for block in blocks:
        yield from block.tolist()


def _log(progress: bool, message: str, started: float) -> None:
    if progress:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--n-entities", type=int, default=1_000_000)
    parser.add_argument("--n-links", type=int, default=0, help="default: 10/3 per entity (20M at 6M entities)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_dumps(args.out, args.n_entities, args.n_links or args.n_entities * 10 // 3, args.seed)


if __name__ == "__main__":
    main()

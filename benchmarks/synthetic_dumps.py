"""Synthetic Wikidata JSON and Wikipedia XML dumps in the real formats, for ``benchmarks.kb_from_dumps``.

    python -m benchmarks.synthetic_dumps OUT_DIR --n-entities 1000000 --n-links 3300000
    python -m benchmarks.synthetic_dumps OUT_DIR --n-entities 20000 --profile excerpts --size-scale 0.25

Writes ``OUT_DIR/wikidata.json.gz`` and ``OUT_DIR/enwiki.xml.gz`` (gzip level 1), streamed, whatever the size. What
the entities, links, redirects and disambiguation pages are, and what ``--profile excerpts`` adds (sizes and markup
drawn from the real excerpts' ``ITEM_DECILES`` and ``ARTICLE_DECILES``), is on docs/kb_dumps_scale.md.
"""
import argparse
import gzip
import itertools
import json
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple
from xml.sax.saxutils import escape

import numpy as np

from spacy_el.kb.files import write_path

from .results_io import log

SYLLABLES = [
    "ka", "vel", "mar", "quel", "ton", "ri", "sa", "bran", "dor", "li", "ne", "os", "tha", "ven", "gar", "ull",
    "pe", "ra", "mon", "zi", "hal", "ber", "cor", "den", "fa", "lo", "wen", "tis", "ar", "bel", "cas", "dru",
]  # fmt: skip
KINDS = [  # (P31, description, title disambiguator, label, aliases, words: "" for a two-syllable given name)
    ("Q5", "invented person", "person", "{w} {s}", ("{s}", "{w[0]}. {s}"), ""),
    ("Q515", "invented city", "place", "{w} {s}", ("{s}",), "Port New East Upper"),
    ("Q4830453", "invented company", "company", "{s} {w}", ("{s}", "the {label}"), "Group Holdings Records United"),
    ("Q7725634", "invented literary work", "novel", "The {s} {w}", (), "Chronicle Letters Affair Garden"),
]
N_STEMS = 32 ** 3  # three-syllable stems: 32,768 surnames / place stems
N_FIRST = 32 ** 2  # two-syllable given names

# ``--profile excerpts``: deciles (0th to 100th percentile) of what an item or article of ../shared/dumps holds (the 49
# items of ``wikibase-dump-filter-entities.json.gz``, the head of the 2017 dump; the 106 articles of the enwiki excerpt,
# no redirects): larger than a whole dump's average, which ``size_scale`` < 1 brings them to.
ITEM_DECILES = {
    "statements": [4, 13, 18, 27, 35, 49, 60, 91, 167, 236, 398],
    "properties": [4, 12, 14, 17, 23, 30, 38, 56, 81, 96, 120],
    "labels": [33, 78, 92, 108, 138, 182, 208, 224, 247, 260, 298],
    "descriptions": [15, 17, 21, 24, 28, 36, 38, 41, 47, 59, 71],
    "sitelinks": [18, 68, 82, 106, 126, 198, 213, 235, 257, 279, 339],
    "aliases": [0, 3, 7, 11, 19, 23, 29, 35, 48, 73, 287],
}
ARTICLE_DECILES = {
    "text_bytes": [429, 4584, 8810, 15204, 25520, 39707, 53078, 71580, 92217, 133139, 180822],
    "templates": [1, 7, 14, 18, 35, 61, 100, 133, 178, 271, 391],
    "refs": [0, 1, 6, 11, 23, 41, 83, 110, 136, 215, 454],
}
INFOBOX_SHARE = 0.42  # 45 of the 106 articles
PROFILES = ("small", "excerpts")


def _draw(rng: np.random.Generator, deciles: Dict[str, List[int]], scale: float) -> Dict[str, int]:
    """A value per name at quantiles that move together (a large item has many statements and many labels, as in
    the excerpts: each around one shared draw), by inverse CDF, linear between the deciles, times ``scale``."""
    u = np.clip(rng.random() + rng.normal(0.0, 0.15, size=len(deciles)), 0.0, 1.0)
    return {name: int(round(float(np.interp(q, np.linspace(0.0, 1.0, 11), d)) * scale))
            for q, (name, d) in zip(u, deciles.items())}


def item_shape(rng: np.random.Generator, scale: float = 1.0) -> Dict[str, int]:
    """Counts of statements, properties, labels, ... of one item (at least 1 of each list the reader needs)."""
    shape = _draw(rng, ITEM_DECILES, scale)
    shape["statements"] = max(1, shape["statements"])
    shape["properties"] = max(1, min(shape["properties"], shape["statements"]))
    for name in ("labels", "descriptions", "sitelinks"):
        shape[name] = max(1, shape[name])
    return shape


def article_shape(rng: np.random.Generator, scale: float = 1.0) -> Dict[str, int]:
    shape = _draw(rng, ARTICLE_DECILES, scale)
    shape["infobox"] = int(rng.random() < INFOBOX_SHARE)
    return shape


def stem(i: int, n_syllables: int) -> str:
    parts = []
    for _ in range(n_syllables):
        parts.append(SYLLABLES[i % 32])
        i //= 32
    return "".join(parts).capitalize()


def entity(i: int) -> Tuple[str, str, str, str, List[str], str]:
    """(title, label, description, P31, aliases, short anchor) of entity ``i`` (0-based)."""
    p31, description, disambiguator, label_form, alias_forms, words = KINDS[i % 4]
    surname, rest = stem(i // 4 % N_STEMS, 3), i // 4 // N_STEMS
    radix = 4 if words else N_FIRST
    word = words.split()[rest % 4] if words else stem(rest % N_FIRST, 2)
    label = label_form.format(w=word, s=surname)
    aliases = [form.format(w=word, s=surname, label=label) for form in alias_forms]
    repeat = rest // radix
    title = label if repeat == 0 else f"{label} ({disambiguator} {repeat + 1})"
    return title, label, f"{description} number {i}", p31, aliases, surname


def wikidata_line(i: int, sitelink: bool, shape: Optional[Dict[str, int]] = None) -> str:
    """Item ``i`` as a dump line; with ``shape`` (``item_shape``) it also holds that many statements, labels,
    descriptions, aliases and sitelinks in other languages and sites, in the dump's own structures."""
    title, label, description, p31, aliases, _ = entity(i)
    record: Dict[str, Any] = {
        "type": "item", "id": f"Q{i + 1}",
        "labels": {"en": {"language": "en", "value": label}},
        "descriptions": {"en": {"language": "en", "value": description}},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": {"P31": [{"mainsnak": _snak("P31", "wikibase-item", _item(int(p31[1:]))), "type": "statement",
                            "rank": "normal"}]},
        "sitelinks": {"enwiki": {"site": "enwiki", "title": title, "badges": []}} if sitelink else {},
    }
    if shape is not None:
        _fill_item(record, i, label, shape)
    return json.dumps(record, separators=(",", ":"))


def _language(k: int) -> str:
    """The k-th language code other than "en" (real codes first, then made-up ones of the same form)."""
    return LANGUAGES[k] if k < len(LANGUAGES) else f"{SYLLABLES[k % 32][:2]}{SYLLABLES[(k // 32) % 32][:1]}"


LANGUAGES = [
    "de", "fr", "es", "it", "nl", "pl", "ru", "ja", "zh", "pt", "sv", "uk", "ca", "cs", "fi", "hu", "ko", "no", "ro",
    "tr", "ar", "fa", "he", "id", "vi", "da", "el", "bg", "sr", "sk", "sl", "et", "lt", "lv", "hr", "eu", "gl", "hi",
]  # fmt: skip
DATATYPES = ("wikibase-item", "external-id", "time", "quantity", "monolingualtext", "globe-coordinate")


def _hash(i: int, k: int) -> str:
    return f"{(i * 2654435761 + k * 40503) % (1 << 160):040x}"


def _item(n: int) -> Dict[str, Any]:
    return {"value": {"entity-type": "item", "numeric-id": n, "id": f"Q{n}"}, "type": "wikibase-entityid"}


def _snak(prop: str, datatype: str, datavalue: Dict[str, Any]) -> Dict[str, Any]:
    return {"snaktype": "value", "property": prop, "datavalue": datavalue, "datatype": datatype}


def _datavalue(datatype: str, i: int, k: int) -> Dict[str, Any]:
    if datatype == "wikibase-item":
        return _item((i * 7 + k * 13) % 1_000_000 + 1)
    if datatype == "external-id":
        return {"value": f"{i:07d}{k:03d}", "type": "string"}
    if datatype == "time":
        return {"value": {"time": f"+{1800 + (i + k) % 220}-01-01T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                          "precision": 9, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}, "type": "time"}
    if datatype == "quantity":
        return {"value": {"amount": f"+{(i * 31 + k) % 100000}", "unit": "http://www.wikidata.org/entity/Q11573"},
                "type": "quantity"}
    if datatype == "monolingualtext":
        return {"value": {"text": f"{stem(i + k, 3)} {stem(k, 2)}", "language": "en"}, "type": "monolingualtext"}
    return {"value": {"latitude": (i % 180) - 90 + k / 1000, "longitude": (k % 360) - 180 + i / 1e6, "altitude": None,
                      "precision": 0.0001, "globe": "http://www.wikidata.org/entity/Q2"}, "type": "globecoordinate"}


def _statement(i: int, k: int, prop: str) -> Dict[str, Any]:
    """A statement in the dump's layout: mainsnak, id, rank, and for one in four a reference (stated in,
    retrieved): the excerpt's statements average 390 bytes."""
    datatype = DATATYPES[(i + k) % len(DATATYPES)]
    statement: Dict[str, Any] = {
        "mainsnak": {"snaktype": "value", "property": prop, "hash": _hash(i, k),
                     "datavalue": _datavalue(datatype, i, k), "datatype": datatype},
        "type": "statement", "id": f"Q{i + 1}${_hash(k, i)[:8]}-{_hash(i, k)[:4]}-{_hash(k, k)[:4]}-{_hash(i, i)[:12]}",
        "rank": "normal",
    }
    if k % 4 == 0:
        statement["references"] = [{"hash": _hash(i, k + 1), "snaks": {
            p: [_snak(p, t, _datavalue(t, i, k + n))] for p, t, n in (("P248", "wikibase-item", 2), ("P813", "time", 3))
        }, "snaks-order": ["P248", "P813"]}]
    return statement


def _fill_item(record: Dict[str, Any], i: int, label: str, shape: Dict[str, int]) -> None:
    """Add the statements, labels, descriptions, aliases and sitelinks of ``shape`` beyond what the reader uses."""
    for k in range(shape["labels"] - 1):
        record["labels"][_language(k)] = {"language": _language(k), "value": label}
    for k in range(shape["descriptions"] - 1):
        record["descriptions"][_language(k)] = {"language": _language(k), "value": f"{stem(i + k, 3)} {stem(k, 2)}"}
    aliases = record["aliases"]
    for k in range(max(0, shape["aliases"] - len(aliases.get("en", [])))):
        aliases.setdefault(_language(k % 40), []).append({"language": _language(k % 40), "value": f"{label} {stem(k, 2)}"})
    props = [f"P{17 + 29 * p}" for p in range(max(1, shape["properties"] - 1))]
    for k in range(shape["statements"] - 1):  # P31 is one
        record["claims"].setdefault(props[k % len(props)], []).append(_statement(i, k, props[k % len(props)]))
    for k in range(shape["sitelinks"] - 1 if record["sitelinks"] else 0):
        site = f"{_language(k)}wiki"
        record["sitelinks"][site] = {"site": site, "title": record["sitelinks"]["enwiki"]["title"], "badges": []}


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
    out: Path, n_entities: int, n_links: int, seed: int = 0, progress: bool = True, profile: str = "small",
    size_scale: float = 1.0,
) -> Tuple[Path, Path]:
    """Write the two dumps; the same arguments give the same dumps (decompressed bytes). The "excerpts" profile
    changes the items' and articles' sizes and markup, not the entities, links, redirects or disambiguation
    pages: the KB built is the same."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    out.mkdir(parents=True, exist_ok=True)
    wikidata, wikipedia = out / "wikidata.json.gz", out / "enwiki.xml.gz"
    say = log if progress else (lambda message: None)
    rng, shapes = np.random.default_rng(seed + 1), np.random.default_rng(seed + 4)

    def write_wikidata(tmp: Path) -> None:
        with gzip.open(tmp, "wt", encoding="utf8", compresslevel=1) as f:
            f.write("[\n")
            for start in range(0, n_entities, 1 << 16):
                sitelinks = rng.random(min(1 << 16, n_entities - start)) >= 0.05
                f.writelines(wikidata_line(start + k, bool(s), item_shape(shapes, size_scale) if profile == "excerpts"
                                           else None) + (",\n" if start + k < n_entities - 1 else "\n")
                             for k, s in enumerate(sitelinks))
                say(f"wikidata {start + len(sitelinks):,}/{n_entities:,}")
            f.write("]\n")

    def write_wikipedia(tmp: Path) -> None:
        with gzip.open(tmp, "wt", encoding="utf8", compresslevel=1) as f:
            f.write(SITEINFO)
            _write_pages(f, n_entities, n_links, seed, say, profile == "excerpts", size_scale)
            f.write("</mediawiki>\n")

    write_path(wikidata, write_wikidata)
    write_path(wikipedia, write_wikipedia)
    return wikidata, wikipedia


def _write_pages(f: IO[str], n_entities: int, n_links: int, seed: int, say: Callable[[str], None], excerpts: bool,
                 size_scale: float) -> None:
    rng = np.random.default_rng(seed + 2)
    shapes = np.random.default_rng(seed + 3)  # its own stream: the links are those of the "small" profile
    page_ids = itertools.count(1)

    def put(title: str, text: str, redirect: str = "") -> None:
        f.write(page(title, next(page_ids), text, redirect))

    # Links are handed out to the articles in order: article i gets the links of its share.
    per_article, extra = divmod(n_links, n_entities)
    targets = (t for block in link_targets(n_entities, n_links, seed) for t in block.tolist())
    seen_surnames = set()  # at most N_STEMS of them
    for i in range(n_entities):
        title, label, description, _, _, short = entity(i)
        links = []
        for _ in range(per_article + (1 if i < extra else 0)):
            t_title, t_label, _, _, t_aliases, t_short = entity(int(next(targets)))
            anchor = (t_label, t_short, t_aliases[-1] if t_aliases else t_label, t_title)[rng.integers(0, 4)]
            links.append(f"[[{t_title}]]" if anchor == t_title else f"[[{t_title}|{anchor}]]")
        if excerpts:
            put(title, article_text(i, label, description, links, article_shape(shapes, size_scale)))
        else:
            put(title, f"'''{label}''' is an {description}.\n\nIt is linked with " + ", ".join(links) + ".\n\n== History ==\nNone.")
        if rng.random() < 0.1:  # a redirect, sometimes through a chain of two
            put(f"{label} (redirect {i})", f"#REDIRECT [[{title}]]", redirect=title)
            if rng.random() < 0.2:
                put(f"{label} (old redirect {i})", f"#REDIRECT [[{label} (redirect {i})]]", redirect=f"{label} (redirect {i})")
        if short not in seen_surnames and rng.random() < 0.01:
            seen_surnames.add(short)
            put(f"{short} (disambiguation)", f"'''{short}''' may refer to:\n* [[{title}]]\n{{{{disambiguation}}}}")
        if i % 200_000 == 0:
            say(f"wikipedia {i:,}/{n_entities:,}")


INLINE_TEMPLATES = (
    "{{{{citation needed|date=May {y}}}}}", "{{{{convert|{n}|km|mi}}}}", "{{{{lang|fr|{w}}}}}",
    "{{{{circa|{y}}}}}", "{{{{nowrap|{w} {n}}}}}",
)
HATNOTES = ("{{{{Short description|{d}}}}}", "{{{{Use dmy dates|date=June {y}}}}}", "{{{{About|the {w}|other uses}}}}")


def article_text(i: int, label: str, description: str, links: List[str], shape: Dict[str, int]) -> str:
    """An article with the markup of ``shape`` (``article_shape``): hatnote templates, an infobox, a lead
    sentence, ``refs`` references each with a citation template, the other templates inline, the ``links``
    spread over the prose, sections, and prose up to ``text_bytes``. No markup but ``links`` holds a ``[[``:
    the link count stays the one asked for."""
    templates_left = max(0, shape["templates"] - shape["refs"] - shape["infobox"])
    parts: List[str] = []
    for h in range(min(2, templates_left)):
        parts.append(HATNOTES[(i + h) % len(HATNOTES)].format(d=description, y=1990 + i % 30, w=stem(i, 2).lower()))
    templates_left -= min(2, templates_left)
    if shape["infobox"]:
        params = "".join(f"\n| {stem(p, 2).lower()}_{p} = {stem(i + p, 3)}" for p in range(18))
        parts.append(f"{{{{Infobox {KINDS[i % 4][2]}\n| name = {label}\n| image = {stem(i, 3)}.jpg{params}\n}}}}")
    body = [f"'''{label}''' is an {description}."]
    size = sum(len(p) for p in parts) + len(body[0])
    refs, links_left, k = shape["refs"], list(links), 0
    # Prose until the drawn size is reached and every link, reference and template is placed.
    while size < shape["text_bytes"] or links_left or refs or templates_left:
        sentence = (f"The {stem(i * 7 + k, 2).lower()} of {stem(i + k * 13, 3)} was {['built', 'named', 'moved', 'sold'][k % 4]} "
                    f"in {1700 + (i + k) % 320} by the {stem(k, 3).lower()} council.")  # made-up prose, about 70 bytes
        if links_left:
            sentence = sentence[:-1] + f", with {links_left.pop()}."
        if templates_left:
            sentence = sentence[:-1] + " " + INLINE_TEMPLATES[k % len(INLINE_TEMPLATES)].format(
                y=1800 + (i + k) % 200, n=(i + k) % 1000, w=stem(i + k, 2).lower()) + "."
            templates_left -= 1
        if refs:
            sentence += (f'<ref name="r{k}">{{{{cite web |url=https://example.org/{i}/{k} |title={stem(k, 3)} '
                         f"{stem(i, 2)} |website=Example |date={1 + k % 28} May {1990 + k % 30}}}}}</ref>")
            refs -= 1
        if k % 6 == 5:
            sentence += f"\n\n== {stem(i + k, 3)} ==\n"
        body.append(sentence)
        size += len(sentence) + 1
        k += 1
    return "\n".join(parts) + ("\n" if parts else "") + " ".join(body) + "\n\n== References ==\n{{Reflist}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--n-entities", type=int, default=1_000_000)
    parser.add_argument("--n-links", type=int, default=0, help="default: 10/3 per entity (20M at 6M entities)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", choices=PROFILES, default="small", help="excerpts: sizes and markup of ../shared/dumps")
    parser.add_argument("--size-scale", type=float, default=1.0, help="with --profile excerpts: scale the drawn sizes")
    args = parser.parse_args()
    write_dumps(args.out, args.n_entities, args.n_links or args.n_entities * 10 // 3, args.seed,
                profile=args.profile, size_scale=args.size_scale)


if __name__ == "__main__":
    main()

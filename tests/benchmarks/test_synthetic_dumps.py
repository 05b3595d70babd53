"""benchmarks.synthetic_dumps: real-format dumps that ``kb from-dumps`` reads, with exactly the links asked for;
the "excerpts" profile draws item and article sizes and markup from the real excerpts' distributions."""
import gzip
import json

import numpy as np
import pytest

pytest.importorskip("mwparserfromhell")

from benchmarks.synthetic_dumps import (  # noqa: E402
    ARTICLE_DECILES, INFOBOX_SHARE, ITEM_DECILES, article_shape, article_text, entity, item_shape, wikidata_line,
    write_dumps,
)
from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps  # noqa: E402


def test_titles_are_unique_and_names_multi_word():
    titles = [entity(i)[0] for i in range(20_000)]
    assert len(set(titles)) == len(titles)
    assert all(" " in entity(i)[1] for i in range(0, 400, 7))


@pytest.mark.parametrize("profile, scale", [("small", 1.0), ("excerpts", 0.03)])
def test_dumps_build_a_kb(tmp_path, profile, scale):
    wikidata, wikipedia = write_dumps(tmp_path, 2000, 6000, progress=False, profile=profile, size_scale=scale)
    lines = gzip.open(wikidata, "rt").read().splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and lines[-2].endswith("}")
    items = [json.loads(line.rstrip(",")) for line in lines[1:-1]]
    with_sitelink = sum(bool(i["sitelinks"]) for i in items)
    kb, report = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=tmp_path / "w"))
    counts = report.to_dict()
    assert kb.n_entities == with_sitelink and counts["wikidata"]["entities read"] == 2000
    assert counts["wikipedia"]["links counted"] == 6000 and counts["wikipedia"]["articles"] == 2000
    assert counts["wikipedia"]["redirects"] > 100 and counts["wikipedia"]["disambiguation pages"] > 0
    assert kb.entities.frequencies.sum() + counts["kb"]["links to pages that are not KB entities"] == 6000


def test_the_excerpts_profile_changes_the_bytes_not_the_kb(tmp_path):
    kbs = []
    for profile in ("small", "excerpts"):
        dumps = write_dumps(tmp_path / profile, 300, 900, progress=False, profile=profile, size_scale=0.05)
        kb, _ = build_kb_from_dumps(*dumps, None, DumpsSettings(progress=False, work_dir=tmp_path / "w"))
        kbs.append(kb)
        sizes = [path.stat().st_size for path in dumps]
        if profile == "small":
            small_sizes = sizes
    assert all(big > 2 * small for big, small in zip(sizes, small_sizes))
    small, real = kbs
    assert small.entities.ids.to_list() == real.entities.ids.to_list()
    assert np.array_equal(small.entities.frequencies, real.entities.frequencies)
    assert small.aliases.aliases.to_list() == real.aliases.aliases.to_list()
    assert np.array_equal(small.aliases.cand_priors, real.aliases.cand_priors)


def test_excerpts_profile_is_deterministic_for_a_seed(tmp_path):
    def content(seed, name):
        paths = write_dumps(tmp_path / name, 40, 120, seed=seed, progress=False, profile="excerpts", size_scale=0.1)
        return [gzip.decompress(p.read_bytes()) for p in paths]  # the gzip header holds a time: compare the bytes in

    first = content(7, "a")
    assert content(7, "b") == first
    other = content(8, "c")
    assert other[0] != first[0] and other[1] != first[1]


def test_drawn_shapes_follow_the_excerpts_distributions():
    rng = np.random.default_rng(0)
    items = [item_shape(rng) for _ in range(600)]
    articles = [article_shape(rng) for _ in range(600)]
    for shapes, deciles in ((items, ITEM_DECILES), (articles, ARTICLE_DECILES)):
        for name, values in deciles.items():
            drawn = np.array([s[name] for s in shapes])
            for q in (3, 5, 7):  # the drawn 30th, 50th and 70th percentiles sit near the excerpts'
                assert abs(np.quantile(drawn, q / 10) - values[q]) <= 0.2 * values[q] + 2, (name, q)
    assert abs(np.mean([a["infobox"] for a in articles]) - INFOBOX_SHARE) < 0.06
    # Sizes move together, as in the excerpts: an item with many statements has many labels.
    assert np.corrcoef([s["statements"] for s in items], [s["labels"] for s in items])[0, 1] > 0.5


def test_items_and_articles_hold_what_their_shape_says():
    shape = {"statements": 40, "properties": 9, "labels": 30, "descriptions": 12, "sitelinks": 25, "aliases": 17}
    record = json.loads(wikidata_line(5, True, shape))
    assert sum(len(v) for v in record["claims"].values()) == 40 and len(record["claims"]) == 9
    assert (len(record["labels"]), len(record["descriptions"]), len(record["sitelinks"])) == (30, 12, 25)
    assert sum(len(v) for v in record["aliases"].values()) == 17
    assert record["labels"]["en"]["value"] == entity(5)[1] and record["claims"]["P31"][0]["mainsnak"]["property"] == "P31"
    links = ["[[A]]", "[[B|b]]", "[[C]]"]
    text = article_text(5, "Ab Cd", "invented thing", links, {"text_bytes": 6000, "templates": 30, "refs": 12, "infobox": 1})
    assert text.count("[[") == 3 and all(link in text for link in links)
    assert text.count("<ref") == 12 and "{{Infobox" in text and len(text) >= 6000
    assert text.count("{{") >= 30


def test_kb_from_dumps_builds_from_the_excerpts_profile(tmp_path, monkeypatch):
    from benchmarks import kb_from_dumps

    monkeypatch.setattr(kb_from_dumps, "TMP", tmp_path)
    rows = kb_from_dumps.run_size("500", 1, profile="excerpts")
    assert (tmp_path / "dumps-500-excerpts" / "wikidata.json.gz").is_file()
    assert {r["dataset"] for r in rows} == {"synthetic-dump-500-excerpts"}
    assert "excerpts" in rows[0]["notes"] and rows[0]["value"] > 0

"""benchmarks.synthetic_dumps: real-format dumps that ``kb from-dumps`` reads, with exactly the links asked for."""
import gzip
import json

import pytest

pytest.importorskip("mwparserfromhell")

from benchmarks.synthetic_dumps import entity, write_dumps  # noqa: E402
from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps  # noqa: E402


def test_titles_are_unique_and_names_multi_word():
    titles = [entity(i)[0] for i in range(20_000)]
    assert len(set(titles)) == len(titles)
    assert all(" " in entity(i)[1] for i in range(0, 400, 7))


def test_dumps_build_a_kb(tmp_path):
    wikidata, wikipedia = write_dumps(tmp_path, 2000, 6000, progress=False)
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


def test_the_dumps_are_deterministic_for_a_seed(tmp_path):
    def content(seed, name):
        paths = write_dumps(tmp_path / name, 40, 120, seed=seed, progress=False)
        return [gzip.decompress(p.read_bytes()) for p in paths]  # the gzip header holds a time: compare the bytes in

    first = content(7, "a")
    assert content(7, "b") == first
    assert content(8, "c")[1] != first[1]

"""spacy_el.kb.dumps.build and ``kb from-dumps``: the KB from hand-written dumps (every edge case, figures
counted by hand) and from the shared real-format excerpts (fields compared with their source)."""
import gzip
import json

import pytest

pytest.importorskip("mwparserfromhell")

from typer.testing import CliRunner

from spacy_el.cli import app
from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps
from spacy_el.kb.dumps.coarse_types import coarse_type
from spacy_el.kb.serialization import is_memory_mapped

from .conftest import ENWIKI, PAGE_PROPS, WIKIDATA_HEAD, shared
from .fixtures import FREQUENCIES, PARIS_PRIORS, write_fixture_dumps


def build(tmp_path, **settings):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    return build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, **settings))


def candidates(kb, alias):
    rows = kb.aliases.exact_rows(alias)
    assert len(rows) == 1, alias
    entities, priors = kb.aliases.candidates_of(rows[0])
    return {kb.entities.ids[int(e)]: float(p) for e, p in zip(entities, priors)}


@pytest.mark.parametrize("max_pairs", [2_000_000, 1000])  # 1000: a run file per chunk, merged
def test_hand_written_dumps(tmp_path, max_pairs):
    kb, report = build(tmp_path, max_pairs=max_pairs)
    assert kb.entities.ids.to_list() == ["Paris", "Paris_Hilton", "Paris,_Texas", "IPod"]
    assert candidates(kb, "Paris") == pytest.approx(PARIS_PRIORS)
    assert candidates(kb, "the lights") == {"Paris": 1.0}  # through a chain of two redirects
    assert candidates(kb, "City of Light") == {"Paris": 1.0}  # a link count beats the label prior
    assert candidates(kb, "iPod") == {"IPod": 1.0}
    assert candidates(kb, "Paris Hilton") == pytest.approx({"Paris_Hilton": 0.01})  # label only
    assert kb.aliases.exact_rows("loop") == [] and kb.aliases.exact_rows("France") == []
    assert {kb.entities.ids[i]: float(f) for i, f in enumerate(kb.entities.frequencies)} == FREQUENCIES
    hilton = kb.get_entity("Paris_Hilton")
    assert hilton.description == "Paris Whitney Hilton is an American media personality."  # first paragraph
    assert hilton.types == ["Q5", "PER"] and hilton.qid == "Q830"
    assert kb.get_entity("Paris").types == ["Q515", "LOC"] and kb.get_entity("IPod").name == "iPod"
    counts = report.to_dict()
    assert counts["wikidata"] == {"entities read": 6, "kept": 5, "filtered: no enwiki sitelink": 1}
    assert counts["kb"]["dropped: enwiki page is a disambiguation page"] == 1
    assert counts["kb"]["link targets caught in a redirect cycle"] == 1
    assert counts["wikipedia"]["disambiguation pages"] == 1 and counts["wikipedia"]["redirects"] == 4
    assert counts["kb"]["descriptions from the first paragraph"] == 1


def test_min_count_and_qid_ids(tmp_path):
    kb, report = build(tmp_path, min_count=2, kb_id="qid", n_process=2)
    # Paris, Texas has one "Paris" link, below min_count, but "Paris" is its label: the label prior. The
    # denominator stays the unpruned total.
    assert candidates(kb, "Paris") == pytest.approx({"Q90": 4 / 7, "Q830": 2 / 7, "Q16": 0.01})
    # "the lights" -> Paris has one link and is no label: pruned; "City of Light" has one link, but is a label
    assert kb.aliases.exact_rows("the lights") == [] and candidates(kb, "City of Light") == pytest.approx({"Q90": 0.01})
    assert candidates(kb, "iPod") == {"Q9": 1.0}
    assert kb.qid_of("Q90") == "Q90" and kb.get_entity("Q90").name == "Paris"
    assert report.to_dict()["kb"]["candidates pruned (fewer links than min_count)"] == 1


def test_qids_are_saved_memory_mapped_and_old_kbs_load(tmp_path):
    kb, _ = build(tmp_path)
    kb.to_disk(tmp_path / "kb")
    loaded = ElKnowledgeBase.load(tmp_path / "kb", mmap=True)
    assert loaded.qid_of("Paris_Hilton") == "Q830" and loaded.qid_of("Nowhere") is None
    assert is_memory_mapped(loaded.entities.qids.data)
    # A KB saved before the QID column existed: no entities.qids arrays, loads without QIDs.
    manifest = json.loads((tmp_path / "kb" / "manifest.json").read_text())
    for name in ("entities.qids.data", "entities.qids.offsets"):
        (tmp_path / "kb" / "arrays" / f"{name}.npy").unlink()
        del manifest["files"][f"arrays/{name}.npy"]
    (tmp_path / "kb" / "manifest.json").write_text(json.dumps(manifest))
    old = ElKnowledgeBase.load(tmp_path / "kb")
    assert old.entities.qids is None and old.qid_of("Paris") is None and old.get_entity("Paris").qid is None


def test_cli(tmp_path):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    props = tmp_path / "pp.sql.gz"  # page 8 (Paris Hilton) marked as a disambiguation page by page_props
    props.write_bytes(gzip.compress(b"INSERT INTO `page_props` VALUES (8,'disambiguation','',NULL);\n"))
    out = tmp_path / "kb"
    result = CliRunner().invoke(app, [
        "kb", "from-dumps", str(out), "--wikidata", str(wikidata), "--wikipedia", str(wikipedia),
        "--page-props", str(props), "--n-process", "2",
    ])
    assert result.exit_code == 0, result.output
    kb = ElKnowledgeBase.load(out)
    assert "Paris_Hilton" not in kb and "Paris" in kb
    report = json.loads((out / "from_dumps_report.json").read_text())
    assert report["kb"]["dropped: enwiki page is a disambiguation page"] == 2
    assert report["page_props"] == {"rows: disambiguation": 1}


def test_cli_bad_input_is_one_clear_line(tmp_path):
    _, wikipedia = write_fixture_dumps(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'[\n{"type": "item", "id": "Q1",\n]\n')
    args = ["kb", "from-dumps", str(tmp_path / "kb"), "--wikidata", str(broken), "--wikipedia", str(wikipedia)]
    result = CliRunner().invoke(app, args)
    output = "".join(result.output.split())  # wasabi wraps long lines
    assert result.exit_code == 1 and f"{broken},line2:malformedJSON" in output
    result = CliRunner().invoke(app, args + ["--skip-bad"])
    assert result.exit_code == 1 and "Noentitywaskept" in "".join(result.output.split())


@shared
def test_shared_excerpts_match_their_source(tmp_path):
    kb, report = build_kb_from_dumps(WIKIDATA_HEAD, ENWIKI, PAGE_PROPS, DumpsSettings(progress=False))
    source = [json.loads(line.rstrip(b",\n")) for line in gzip.open(WIKIDATA_HEAD) if line.strip() not in (b"[", b"]")]
    assert kb.n_entities == len(source) == 49
    for record in source:
        title = record["sitelinks"]["enwiki"]["title"]
        info = kb.get_entity(title.replace(" ", "_"))
        p31 = [c["mainsnak"]["datavalue"]["value"]["id"] for c in record["claims"].get("P31", []) if c["rank"] != "deprecated"]
        assert info.qid == record["id"] and info.name == record["labels"]["en"]["value"]
        assert info.description == record["descriptions"]["en"]["value"]
        assert sorted(info.types) == sorted({*p31, coarse_type(p31)})
        for alias in [record["labels"]["en"]["value"]] + [a["value"] for a in record["aliases"].get("en", [])]:
            hits = {h.entity_id: h.prior for h in kb.lookup(alias) if h.match == "exact"}
            assert info.id in hits, (alias, info.id)
    # Link counts, checked with grep on the decompressed XML: [[George Washington]] x 5,
    # [[George Washington|Washington]] x 2, [[France]] x 6, [[French language|French]] x 6, [[Algeria]] x 4.
    freq = {i: float(kb.get_entity(i).frequency) for i in ("George_Washington", "France", "French_language", "Algeria")}
    assert freq == {"George_Washington": 7.0, "France": 6.0, "French_language": 6.0, "Algeria": 4.0}
    assert candidates(kb, "Washington") == {"George_Washington": 1.0}
    assert candidates(kb, "French") == {"French_language": 1.0}
    assert candidates(kb, "Caledonia") == pytest.approx({"Scotland": 0.01})  # a Wikidata alias only
    assert kb.get_entity("Scotland").types == ["Q3336843", "LOC"]
    counts = report.to_dict()
    assert counts["wikipedia"]["disambiguation pages"] == 8 and counts["wikipedia"]["redirects"] == 99


@pytest.mark.hostile("crashes that block a run")
def test_cli_odd_entities_are_counted_under_skip_bad_or_one_coded_line(tmp_path):
    """Issue 71, defects 9 and 10, through the command: no traceback, with or without --skip-bad."""
    from .conftest import item, wikidata_bytes, write_bz2
    from .fixtures import WIKIDATA

    odd = [item("Q71", "Odd", "Odd", ["Q5"]), item("Q72", "Odd\ud800", "Odder", ["Q5"])]
    odd[0]["claims"]["P31"] = [5]
    records = WIKIDATA[:2] + odd + WIKIDATA[2:]
    lines = ["["] + [json.dumps(r) + "," for r in records] + ["]"]  # ensure_ascii: "\ud800" as in a dump
    wikidata = write_bz2(tmp_path / "odd.json.bz2", "\n".join(lines).encode())
    _, wikipedia = write_fixture_dumps(tmp_path)
    args = ["kb", "from-dumps", str(tmp_path / "kb"), "--wikidata", str(wikidata), "--wikipedia", str(wikipedia)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "E323" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, args + ["--skip-bad"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "kb" / "from_dumps_report.json").read_text())
    assert report["skipped (bad input)"][str(wikidata)]["total"] == 2
    assert ElKnowledgeBase.load(tmp_path / "kb").n_entities == 4


@pytest.mark.hostile("silent wrong results")
def test_cli_pages_deeper_than_the_schema_fail(tmp_path):
    """Issue 71, defect 19, through the command: it exited 0 with a KB built from no page."""
    from .conftest import page_xml, wikipedia_bytes, write_bz2

    wikidata, _ = write_fixture_dumps(tmp_path)
    deeper = wikipedia_bytes(["<pages>", page_xml("Travel", "[[Paris]]", 1), "</pages>"])
    wikipedia = write_bz2(tmp_path / "deeper.xml.bz2", deeper)
    args = ["kb", "from-dumps", str(tmp_path / "kb"), "--wikidata", str(wikidata), "--wikipedia", str(wikipedia)]
    for extra in ([], ["--skip-bad"]):
        result = CliRunner().invoke(app, args + extra)
        assert result.exit_code == 1 and ("E327" in result.output or "E326" in result.output), result.output
        assert not (tmp_path / "kb" / "manifest.json").exists()


@pytest.mark.hostile("writing outside the folder")
@pytest.mark.parametrize("planted", [".from_dumps_report.json.tmp", "from_dumps_report.json"])
def test_cli_report_is_never_written_through_a_planted_symlink(tmp_path, planted):
    """Issue 71, defect 5: the report went through a fixed temporary name, following a symlink planted there
    (or at the report itself) to a file outside the KB folder."""
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me", encoding="utf8")
    out = tmp_path / "kb"
    args = ["kb", "from-dumps", str(out), "--wikidata", str(wikidata), "--wikipedia", str(wikipedia)]
    assert CliRunner().invoke(app, args).exit_code == 0
    (out / planted).unlink(missing_ok=True)
    (out / planted).symlink_to(outside)
    result = CliRunner().invoke(app, args)  # the rebuild of its own KB folder
    assert result.exit_code == 0, result.output
    assert outside.read_text(encoding="utf8") == "keep me"
    assert not (out / "from_dumps_report.json").is_symlink()

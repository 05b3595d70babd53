"""The dumps build writes the KB's columns straight to files and returns a KB that maps them: it is the KB
that the in-memory builders (``EntityStore.build``, ``AliasTable.build``) make of the same content, byte
for byte once saved, and saving it copies the files rather than reading them through the maps."""
import gc
import gzip
import signal
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mwparserfromhell")

from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_el.cli import app
from spacy_el.cli.kb_dumps import dumps_work_dir

from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.alias_table import AliasTable
from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps
from spacy_el.kb.entity_store import EntityStore
from spacy_el.kb.dumps.workdir import PREFIX
from spacy_el.kb.serialization import is_memory_mapped

from ...conftest import REPO_ROOT

from .conftest import ENWIKI, PAGE_PROPS, WIKIDATA_HEAD, item, page_xml, shared, wikidata_bytes, wikipedia_bytes
from .fixtures import write_fixture_dumps


def in_memory_twin(kb: ElKnowledgeBase) -> ElKnowledgeBase:
    """The KB the in-memory builders make of ``kb``'s entities and aliases (validated as it is made)."""
    e, a = kb.entities, kb.aliases
    n = len(e)
    entities = EntityStore.build(
        e.ids.to_list(), e.names.to_list(), e.descriptions.to_list(), [e.types_of(row) for row in range(n)],
        np.array(e.frequencies), qids=e.qids.to_list(),
    )
    aliases = AliasTable.build(
        a.aliases.to_list(), np.array(a.cand_offsets), np.array(a.cand_entities), np.array(a.cand_priors),
        fuzzy=a.fuzzy_index is not None,
    )
    return ElKnowledgeBase(Vocab(), entities=entities, aliases=aliases, settings=kb.settings)


def assert_same_saved_kb(kb: ElKnowledgeBase, twin: ElKnowledgeBase, tmp_path) -> None:
    kb.to_disk(tmp_path / "streamed")
    twin.to_disk(tmp_path / "in-memory")
    streamed = (tmp_path / "streamed" / "manifest.json").read_text()
    assert streamed == (tmp_path / "in-memory" / "manifest.json").read_text()
    for path in sorted((tmp_path / "in-memory" / "arrays").iterdir()):
        assert (tmp_path / "streamed" / "arrays" / path.name).read_bytes() == path.read_bytes(), path.name
    loaded = ElKnowledgeBase.load(tmp_path / "streamed", mmap=True)  # verified: checksums and structure
    assert loaded.n_entities == kb.n_entities and loaded.n_aliases == kb.n_aliases


@pytest.mark.parametrize("settings", [{}, {"kb_id": "qid", "min_count": 2}, {"fuzzy": True, "max_pairs": 1000}])
def test_fixture_kb_equals_the_in_memory_one(tmp_path, settings):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, **settings))
    arrays = kb._arrays()
    assert all(is_memory_mapped(array) for array in arrays.values()), "the KB maps its files, holds no copy"
    assert ("aliases.fuzzy_index.postings" in arrays) == bool(settings.get("fuzzy"))
    assert_same_saved_kb(kb, in_memory_twin(kb), tmp_path)


@shared
@pytest.mark.parametrize("settings", [{}, {"kb_id": "qid", "descriptions": False}])
def test_shared_excerpts_kb_equals_the_in_memory_one(tmp_path, settings):
    kb, _ = build_kb_from_dumps(WIKIDATA_HEAD, ENWIKI, PAGE_PROPS, DumpsSettings(progress=False, **settings))
    assert kb.n_entities == 49
    assert_same_saved_kb(kb, in_memory_twin(kb), tmp_path)


def test_saving_copies_the_built_files_without_reading_the_maps(tmp_path, monkeypatch):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False))
    twin = in_memory_twin(kb)

    def no_save(*args, **kwargs):
        raise AssertionError("np.save was called: an array was read through its map")

    monkeypatch.setattr(np, "save", no_save)
    kb.to_disk(tmp_path / "kb")
    monkeypatch.undo()
    twin.to_disk(tmp_path / "twin")
    for path in sorted((tmp_path / "twin" / "arrays").iterdir()):
        assert (tmp_path / "kb" / "arrays" / path.name).read_bytes() == path.read_bytes(), path.name
    # Arrays replaced after the build (here: vectors set) are written as usual, next to the copied files.
    kb.set_vectors(np.ones((kb.n_entities, 3), dtype=np.float32))
    kb.to_disk(tmp_path / "kb")
    assert ElKnowledgeBase.load(tmp_path / "kb").entities.vector_dim == 3


def _build_folders(work):
    return sorted(p for p in work.iterdir() if p.name.startswith(PREFIX))


def test_the_build_folder_goes_with_the_kb(tmp_path):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work))
    (folder,) = _build_folders(work)  # the work files are gone; the KB's own files remain while it lives
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "arrays"]
    assert sorted(p.name for p in (folder / "arrays").iterdir()) == sorted(f"{name}.npy" for name in kb._arrays())
    entities = kb.entities
    del kb
    gc.collect()
    assert _build_folders(work) == []
    assert entities.ids.to_list()[0] == "Paris"  # mapped files outlive their names
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work))
    kb.to_disk(tmp_path / "kb")  # the copy, after which the build folder may go at once
    del kb
    gc.collect()
    assert _build_folders(work) == [] and ElKnowledgeBase.load(tmp_path / "kb").n_entities == 4


_KILLED_BUILD = """
import os, signal, sys
from pathlib import Path
from spacy_el.kb.dumps import build, DumpsSettings, build_kb_from_dumps

def killed(*args, **kwargs):  # the assembly has begun: the run files and spools are all there
    os.kill(os.getpid(), signal.SIGKILL)

build._assemble = killed
build_kb_from_dumps(Path(sys.argv[1]), Path(sys.argv[2]), None, DumpsSettings(progress=False, work_dir=Path(sys.argv[3])))
"""


def kill_a_build(wikidata, wikipedia, work):
    """Run a build in another process and SIGKILL it mid-way: what it leaves in ``work``."""
    work.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-c", _KILLED_BUILD, str(wikidata), str(wikipedia), str(work)], cwd=REPO_ROOT)
    assert done.returncode == -signal.SIGKILL
    leftovers = [p for p in work.iterdir() if p.is_dir()]
    assert leftovers and any(any(p.iterdir()) for p in leftovers)
    return leftovers


@pytest.mark.hostile("resources")
def test_a_rerun_removes_what_a_killed_build_left(tmp_path):
    """Issue 71, defect 13: a SIGKILL left its build folder (GBs at full scale) where no rerun looked."""
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    work = tmp_path / "work"
    leftovers = kill_a_build(wikidata, wikipedia, work)
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work))
    assert not any(p.exists() for p in leftovers) and len(_build_folders(work)) == 1  # the new KB's own
    del kb
    gc.collect()
    assert _build_folders(work) == []


def test_a_live_build_folder_is_left_alone(tmp_path):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    work = tmp_path / "work"
    first, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work))
    (alive,) = _build_folders(work)
    second, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work))
    assert alive.exists() and len(_build_folders(work)) == 2
    assert first.entities.ids.to_list() == second.entities.ids.to_list()


@pytest.mark.hostile("resources")
def test_the_command_puts_its_work_beside_the_output_and_a_rerun_cleans_it(tmp_path):
    wikidata, wikipedia = write_fixture_dumps(tmp_path)
    out = tmp_path / "kb"
    work = dumps_work_dir(out)
    leftovers = kill_a_build(wikidata, wikipedia, work)
    args = ["kb", "from-dumps", str(out), "--wikidata", str(wikidata), "--wikipedia", str(wikipedia)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not any(p.exists() for p in leftovers) and not work.exists() and ElKnowledgeBase.load(out).n_entities == 4


def test_repeated_titles_and_qids(tmp_path):
    """The first item of a title or (as KB id) of a QID is kept; QIDs that are no "Q" and a number are told
    apart by their text ("Q0830" is not "Q830")."""
    records = [
        item("Q90", "Paris", "Paris", ["Q515"]), item("Q90", "Paris again", "Paris (city)", ["Q515"]),
        item("Q830", "Paris Hilton", "Paris Hilton", ["Q5"]), item("Q0830", "odd", "Odd one", ["Q5"]),
        item("Q0830", "odd", "Odd two", ["Q5"]), item("Q16", "Paris", "Paris, Texas", ["Q515"]),
        item("Q17", "Paris", "Paris, Texas", ["Q515"]), item("X1", "x", "Xone"), item("X1", "x", "Xtwo"),
    ]
    (tmp_path / "wd.json.gz").write_bytes(gzip.compress(wikidata_bytes(records)))
    links = "[[Paris]] [[Paris (city)|Paris]] [[Paris Hilton|Paris]] [[Odd one|odd]] [[Odd two|odd]] [[Xtwo|x]]"
    (tmp_path / "wp.xml.gz").write_bytes(gzip.compress(wikipedia_bytes([page_xml("Travel", links, 1)])))
    args = (tmp_path / "wd.json.gz", tmp_path / "wp.xml.gz", None)
    kb, report = build_kb_from_dumps(*args, DumpsSettings(progress=False, kb_id="qid"))
    assert kb.entities.ids.to_list() == ["Q90", "Q830", "Q0830", "Q16", "X1"]
    assert report.to_dict()["kb"]["dropped: repeated enwiki title"] == 1
    assert report.to_dict()["kb"]["dropped: repeated QID"] == 3
    assert_same_saved_kb(kb, in_memory_twin(kb), tmp_path / "qid")
    kb, report = build_kb_from_dumps(*args, DumpsSettings(progress=False))
    assert kb.entities.ids.to_list() == [
        "Paris", "Paris_(city)", "Paris_Hilton", "Odd_one", "Odd_two", "Paris,_Texas", "Xone", "Xtwo",
    ]
    assert "dropped: repeated QID" not in report.to_dict()["kb"]

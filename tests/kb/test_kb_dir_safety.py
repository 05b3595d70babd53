"""Writing a KB directory never destroys data: not the KB being saved, not a foreign folder, not a
symlink's target; and a KB whose float arrays hold NaN/inf is refused at load."""
import json

import numpy as np
import pytest
import spacy
from spacy.util import registry

from spacy_el.kb import ElKnowledgeBase, KBFormatError
from spacy_el.kb.serialization import ARRAY_DIR, MANIFEST

from ..conftest import build_invented_kb, build_toy_kb

QUERIES = ["Paris", "paris", "Hiltom", "beatles", "Fab Four", "Mercer", "Lumen", "unknown", ""]


def lookups(kb: ElKnowledgeBase):
    return {q: kb.lookup(q) for q in QUERIES}


# -- 1. saving over the KB's own folder / rebuilding a folder another process has loaded ------------
@pytest.mark.parametrize("index", [False, True])
def test_mmap_loaded_kb_saves_onto_its_own_folder(tmp_path, index):
    kb = build_toy_kb(vectors=True)
    if index:
        from spacy_el.kb.build_steps import attach_dense_index

        attach_dense_index(kb, "Flat")
    path = tmp_path / "kb"
    kb.to_disk(path)
    expected = lookups(kb)
    loaded = ElKnowledgeBase.load(path, mmap=True)
    loaded.to_disk(path)
    reloaded = ElKnowledgeBase.load(path)
    assert lookups(reloaded) == expected
    assert (reloaded.dense_index is not None) == index
    # Nothing but the KB's own files is left behind (no temporary files).
    written = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    assert written == set(json.loads((path / MANIFEST).read_text())["files"]) | {MANIFEST}


def test_loaded_kb_survives_its_folder_being_rebuilt(tmp_path):
    path = tmp_path / "kb"
    build_toy_kb(vectors=True).to_disk(path)
    loaded = ElKnowledgeBase.load(path, mmap=True)
    expected = lookups(loaded)
    build_invented_kb().to_disk(path)
    assert lookups(loaded) == expected
    assert lookups(ElKnowledgeBase.load(path)) == lookups(build_invented_kb())


def test_rebuilding_drops_files_the_new_kb_does_not_have(tmp_path):
    path = tmp_path / "kb"
    build_toy_kb(vectors=True, fuzzy=True).to_disk(path)
    build_toy_kb(vectors=False, fuzzy=False).to_disk(path)
    manifest = json.loads((path / MANIFEST).read_text())
    on_disk = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    assert on_disk == set(manifest["files"]) | {MANIFEST}
    assert ElKnowledgeBase.load(path).entities.vectors is None


# -- 2. a folder that is not a spacy_el KB is not overwritten without force ----------------------
def test_foreign_folder_is_refused(tmp_path):
    path = tmp_path / "model"
    path.mkdir()
    foreign = {"format": "something-else", "weights": "precious"}
    (path / MANIFEST).write_text(json.dumps(foreign))
    with pytest.raises(ValueError, match="E203"):
        build_toy_kb().to_disk(path)
    assert json.loads((path / MANIFEST).read_text()) == foreign
    assert sorted(p.name for p in path.iterdir()) == [MANIFEST]


def test_folder_with_same_named_arrays_is_refused(tmp_path):
    path = tmp_path / "data"
    (path / ARRAY_DIR).mkdir(parents=True)
    precious = path / ARRAY_DIR / "entities.frequencies.npy"
    np.save(precious, np.arange(3.0))
    with pytest.raises(ValueError, match="E203"):
        build_toy_kb().to_disk(path)
    np.testing.assert_array_equal(np.load(precious), np.arange(3.0))


def test_force_overwrites_a_foreign_folder(tmp_path):
    path = tmp_path / "data"
    path.mkdir()
    (path / "notes.txt").write_text("keep me")
    (path / MANIFEST).write_text("{}")
    kb = build_toy_kb()
    kb.to_disk(path, force=True)
    assert lookups(ElKnowledgeBase.load(path)) == lookups(kb)
    assert (path / "notes.txt").read_text() == "keep me"  # force overwrites, it does not clear


def test_a_file_as_target_is_refused(tmp_path):
    target = tmp_path / "kb"
    target.write_text("not a folder")
    with pytest.raises(ValueError, match="E202"):
        build_toy_kb().to_disk(target, force=True)
    assert target.read_text() == "not a folder"


def test_empty_and_missing_folders_and_old_kbs_are_fine(tmp_path):
    kb = build_toy_kb()
    (tmp_path / "empty").mkdir()
    kb.to_disk(tmp_path / "empty")
    kb.to_disk(tmp_path / "missing" / "nested")
    # A KB of another format version is still a spacy_el KB: rebuilding it is the fix its error suggests.
    manifest = json.loads((tmp_path / "empty" / MANIFEST).read_text())
    (tmp_path / "empty" / MANIFEST).write_text(json.dumps({**manifest, "format_version": 0}))
    kb.to_disk(tmp_path / "empty")
    for name in ("empty", "missing/nested"):
        assert lookups(ElKnowledgeBase.load(tmp_path / name)) == lookups(kb)


def test_spacy_pipeline_saves_twice_into_the_same_folder(tmp_path):
    kb_path = tmp_path / "kb"
    build_toy_kb(vectors=True).to_disk(kb_path)
    nlp = spacy.blank("en")
    linker = nlp.add_pipe(
        "entity_linker",
        config={"generate_empty_kb": {"@misc": "spacy-el.EmptyKB.v1"}, "use_gold_ents": True},
    )
    doc = nlp.make_doc("Paris")
    from spacy.training import Example

    examples = [Example.from_dict(doc, {"entities": [(0, 5, "LOC")], "links": {(0, 5): {"Paris": 1.0}}})]
    linker.initialize(lambda: examples, nlp=nlp, kb_loader=registry.misc.get("spacy-el.KBFromDisk.v1")(kb_path))
    nlp.to_disk(tmp_path / "pipeline")
    nlp.to_disk(tmp_path / "pipeline")
    reloaded = spacy.load(tmp_path / "pipeline")
    reloaded.to_disk(tmp_path / "pipeline")
    assert spacy.load(tmp_path / "pipeline").get_pipe("entity_linker").kb.n_entities == 4


# -- 3. symlinks in the target folder ---------------------------------------------------------------
@pytest.mark.parametrize(
    "planted,force",
    [([f"{ARRAY_DIR}/entities.ids.data.npy", f"{ARRAY_DIR}/entities.frequencies.npy"], False),
     # A manifest link to a non-KB file makes the folder foreign: refused, then written with force.
     ([f"{ARRAY_DIR}/entities.vectors.npy", MANIFEST], True)],
)
def test_symlinked_files_are_replaced_not_written_through(tmp_path, planted, force):
    path = tmp_path / "kb"
    kb = build_toy_kb(vectors=True)
    kb.to_disk(path)
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {}
    for rel in planted:
        assert (path / rel).is_file(), rel  # the names this test plants are names the KB writes
        victim = outside / rel.replace("/", "_")
        victim.write_bytes(b"precious bytes")
        (path / rel).unlink()
        (path / rel).symlink_to(victim)
        victims[rel] = victim
    if force:
        with pytest.raises(ValueError, match="E203"):
            kb.to_disk(path)
        kb.to_disk(path, force=True)
    else:
        kb.to_disk(path)
    for rel, victim in victims.items():
        assert victim.read_bytes() == b"precious bytes", rel
        assert not (path / rel).is_symlink(), rel
    assert lookups(ElKnowledgeBase.load(path)) == lookups(kb)


def test_symlinked_array_dir_is_refused(tmp_path):
    path = tmp_path / "kb"
    build_toy_kb().to_disk(path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "entities.frequencies.npy").write_bytes(b"precious bytes")
    for child in (path / ARRAY_DIR).iterdir():
        child.unlink()
    (path / ARRAY_DIR).rmdir()
    (path / ARRAY_DIR).symlink_to(outside, target_is_directory=True)
    for force in (False, True):
        with pytest.raises(ValueError, match="E204"):
            build_toy_kb().to_disk(path, force=force)
    assert sorted(p.name for p in outside.iterdir()) == ["entities.frequencies.npy"]
    assert (outside / "entities.frequencies.npy").read_bytes() == b"precious bytes"


def test_symlinked_target_dir_writes_into_the_linked_dir(tmp_path):
    real = tmp_path / "kb_v2"
    real.mkdir()
    link = tmp_path / "kb"
    link.symlink_to(real, target_is_directory=True)
    kb = build_toy_kb()
    kb.to_disk(link)
    assert link.is_symlink() and (real / MANIFEST).is_file()
    assert lookups(ElKnowledgeBase.load(link)) == lookups(kb)


# -- 8. NaN / inf in float arrays -------------------------------------------------------------------
def _poison(path, name, index, value=np.nan):
    """Write a NaN/inf into array ``name`` and fix up the manifest's checksum, as a buggy writer would."""
    import hashlib

    array_path = path / ARRAY_DIR / f"{name}.npy"
    array = np.load(array_path)
    array[index] = value
    np.save(array_path, array)
    manifest = json.loads((path / MANIFEST).read_text())
    rel = f"{ARRAY_DIR}/{name}.npy"
    manifest["files"][rel] = {
        "sha256": hashlib.sha256(array_path.read_bytes()).hexdigest(), "bytes": array_path.stat().st_size
    }
    (path / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "name,index,value",
    [("entities.vectors", (1, 2), np.nan), ("entities.frequencies", 0, np.inf),
     ("aliases.cand_priors", 0, np.nan), ("entities.type_probs", (0, 0), np.nan)],
)
@pytest.mark.parametrize("mmap", [False, True])
def test_non_finite_arrays_are_refused_at_load(tmp_path, name, index, value, mmap):
    kb = build_toy_kb(vectors=True)
    kb.set_type_probs(["LOC", "PER"], np.full((kb.n_entities, 2), 0.5))
    path = tmp_path / "kb"
    kb.to_disk(path)
    _poison(path, name, index, value)
    with pytest.raises(KBFormatError, match=rf"E220.*{name}"):
        ElKnowledgeBase.load(path, mmap=mmap)


def test_non_finite_vectors_are_refused_in_bytes():
    kb = build_toy_kb(vectors=True)
    kb.entities.vectors = kb.entities.vectors.copy()
    kb.entities.vectors[0, 0] = np.nan  # bypasses set_vectors, as a buggy caller could
    with pytest.raises(KBFormatError, match=r"E220.*entities\.vectors"):
        ElKnowledgeBase(kb.vocab).from_bytes(kb.to_bytes())


def test_finite_check_is_skipped_without_verify(tmp_path):
    path = tmp_path / "kb"
    build_toy_kb(vectors=True).to_disk(path)
    _poison(path, "entities.vectors", (0, 0))
    # verify=False is for large trusted KBs: neither checksums nor the value scan run.
    assert np.isnan(ElKnowledgeBase.load(path, verify=False).entities.vectors[0, 0])

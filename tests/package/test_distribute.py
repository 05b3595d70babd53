"""``python -m spacy_el package`` (``spacy_el/package/distribute.py``): a package carries open-data aliases only and no
training strings, and a pipeline whose KB records aliases that may not be distributed is refused (data rule 1).
On a tiny ner_stack_lstm pipeline trained on invented sentences; the package is written, not built (``--build
none``: ``tests/test_package.py`` builds and installs one)."""
import json
import shutil

import numpy as np
import pytest
import spacy
from typer.testing import CliRunner

import spacy_el.cli  # noqa: F401  (registers every command)
from spacy_el.cli._app import app
from spacy_el.kb import ElKnowledgeBase, KBBuilder
from spacy_el.package.distribute import alias_source_problems, check_redistributable, pipeline_kb_dirs, remap_aliases

from ..conftest import build_invented_kb
from ..pipeline.test_ner_stack_lstm import make_nlp, train

runner = CliRunner()
#: Words that only the training sentences hold (tests/pipeline/test_ner_stack_lstm.py TRAIN).
TRAINING_WORDS = ("Brisk", "Tobin", "harbour", "painted")


@pytest.fixture(scope="module")
def pipeline_dir(tmp_path_factory):
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    tmp = tmp_path_factory.mktemp("packaging")
    nlp, _ = make_nlp(tmp)
    train(nlp, steps=10)
    nlp.to_disk(tmp / "pipeline")
    torch.set_num_threads(previous)
    return tmp / "pipeline"


def open_kb(path, reverse=True):
    """The invented KB's entities (in reverse row order: the swap maps rows by id) with other aliases, recorded
    as coming from titles only."""
    source = build_invented_kb(False)
    builder = KBBuilder()
    rows = range(source.n_entities - 1, -1, -1) if reverse else range(source.n_entities)
    for row in rows:
        info = source.entity_at(row)
        builder.add_entity(info.id, info.name, info.description, info.types, info.frequency)
    builder.add_alias("Ada Mercer", ["Ada_Mercer"], [1.0])
    builder.add_alias("Mercer", ["Mercer_(town)"], [1.0])
    builder.add_alias("Velda", ["Velda"], [1.0])
    kb = builder.build(alias_sources=["titles"])
    kb.to_disk(path)
    return kb


def test_the_guard_refuses_unknown_and_closed_alias_sources(pipeline_dir, tmp_path):
    staged = tmp_path / "pipeline"
    shutil.copytree(pipeline_dir, staged)
    (kb_dir,) = pipeline_kb_dirs(staged)
    assert "records no alias sources" in alias_source_problems(staged)[0]
    with pytest.raises(ValueError, match="E736"):
        check_redistributable(staged)
    assert check_redistributable(staged, i_know_the_licences=True), "accepted, and returned for a warning"
    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    kb.set_aliases(kb.aliases, ["titles", "aida"])
    kb.to_disk(kb_dir)
    (problem,) = alias_source_problems(staged)
    assert "'aida'" in problem and "data rule 1" in problem
    kb.set_aliases(kb.aliases, ["titles", "gum", "dwie"])
    kb.to_disk(kb_dir)
    assert alias_source_problems(staged) == [] and check_redistributable(staged) == []


def test_the_guard_asks_about_entities_added_by_the_user(pipeline_dir, tmp_path):
    staged = tmp_path / "pipeline"
    shutil.copytree(pipeline_dir, staged)
    (kb_dir,) = pipeline_kb_dirs(staged)
    kb = build_invented_kb(with_vectors=False)  # the guard reads manifests only; no vectors: no encoder needed
    kb.set_aliases(kb.aliases, ["titles", "gum"])
    kb.entity_sources = ["summaries"]
    kb.add_entities([{"id": "Quill_Harbour", "name": "Quill Harbour", "aliases": ["the Quill"]}])
    assert kb.alias_sources == ["titles", "gum", "added"] and kb.entity_sources == ["summaries", "added"]
    kb.to_disk(kb_dir)
    problems = alias_source_problems(staged)
    assert len(problems) == 2 and all("kb.add_entities" in p and "'added'" in p for p in problems)
    with pytest.raises(ValueError, match="E736"):
        check_redistributable(staged)
    assert check_redistributable(staged, i_know_the_licences=True) == problems


def test_remap_aliases_maps_candidates_by_entity_id(tmp_path):
    target = build_invented_kb()
    source = open_kb(tmp_path / "open")
    assert list(source.entities.ids) != list(target.entities.ids)
    table, dropped = remap_aliases(source.aliases, list(source.entities.ids), target)
    target.set_aliases(table, ["titles"])
    assert dropped == 0
    assert [hit.entity_id for hit in target.lookup("Mercer", fuzzy=False)] == ["Mercer_(town)"]
    assert [hit.entity_id for hit in target.lookup("Ada Mercer", fuzzy=False)] == ["Ada_Mercer"]
    assert target.lookup("Lumen", fuzzy=False) == []
    smaller = KBBuilder()
    smaller.add_entity("Velda", "Velda")
    table, dropped = remap_aliases(source.aliases, list(source.entities.ids), smaller.build())
    assert dropped == 2 and [table.aliases[i] for i in range(len(table))] == ["Velda"]


def test_package_swaps_in_open_aliases_prunes_strings_and_writes_licences(pipeline_dir, tmp_path):
    open_kb(tmp_path / "open")
    out, staged = tmp_path / "packages", tmp_path / "staged"
    out.mkdir()
    original = ElKnowledgeBase.load(pipeline_dir / "ner_stack_lstm" / "kb")
    trained_strings = json.loads((pipeline_dir / "vocab" / "strings.json").read_text(encoding="utf8"))
    assert set(TRAINING_WORDS) <= set(trained_strings), "training put its words into the string store"
    result = runner.invoke(app, ["package", str(pipeline_dir), str(out), "--aliases-from", str(tmp_path / "open"),
                                 "--name", "el_open", "--version", "0.0.1", "--build", "none", "--staged-dir", str(staged)])
    assert result.exit_code == 0, result.output
    kb = ElKnowledgeBase.load(staged / "ner_stack_lstm" / "kb")
    assert kb.alias_sources == ["titles"] and kb.n_aliases == 3
    assert list(kb.entities.ids) == list(original.entities.ids), "the component's entity rows stay"
    assert np.array_equal(kb.entities.vectors, original.entities.vectors), "and so do its vectors"
    strings = json.loads((staged / "vocab" / "strings.json").read_text(encoding="utf8"))
    assert not set(TRAINING_WORDS) & set(strings), "no string of the training text"
    nlp = spacy.load(staged)
    doc = nlp("Ada Mercer painted the harbour of Velda at dawn .")
    assert all(ent.kb_id_ for ent in doc.ents), "the swapped pipeline runs and links"
    package = out / "en_el_open-0.0.1"
    meta = json.loads((package / "meta.json").read_text(encoding="utf8"))
    assert meta["spacy_el"]["alias_sources"] == ["titles"]
    assert any("KB aliases: titles" == source["name"] for source in meta["sources"])
    assert "Data and licences" in (package / "README.md").read_text(encoding="utf8")
    packaged_kb = package / "en_el_open" / "en_el_open-0.0.1" / "ner_stack_lstm" / "kb" / "manifest.json"
    assert json.loads(packaged_kb.read_text(encoding="utf8"))["alias_sources"] == ["titles"]
    assert [p.name for p in out.iterdir()] == ["en_el_open-0.0.1"], "the temporary staging folder is gone"


def test_package_refuses_a_pipeline_with_the_evaluation_kbs_aliases(pipeline_dir, tmp_path):
    out = tmp_path / "packages"
    out.mkdir()
    result = runner.invoke(app, ["package", str(pipeline_dir), str(out), "--build", "none"])
    assert result.exit_code == 1 and "Refusing to package" in result.output
    assert list(out.iterdir()) == [], "no package, and no staging folder left behind"


def test_package_meta_lists_the_entity_sources_the_kbs_record():
    from spacy_el.package.distribute import package_meta

    meta = {"pipeline": ["joint_coref_linker"]}
    open_meta = package_meta(meta, ["titles", "gum", "dwie"], entity_sources=["summaries", "gum"], trained_on=["gum"])
    names = [source["name"] for source in open_meta["sources"]]
    assert names[0].startswith("Training data: GUM train") and "KB aliases: dwie" in names
    assert not [name for name in names if "AIDA" in name or "PPRforNED" in name]
    assert "entities come from: summaries, gum" in open_meta["description"]
    assert open_meta["spacy_el"]["entity_sources"] == ["summaries", "gum"]
    # A KB that records no entity sources was built by `kb build-eval` with all of them (kb/eval, kb/open).
    legacy = [source["name"] for source in package_meta(meta, ["titles", "gum", "dwie"])["sources"]]
    assert any("AIDA" in name for name in legacy) and any("PPRforNED" in name for name in legacy)
    with pytest.raises(ValueError, match=r"E603.*\['reuters'\]"):
        package_meta(meta, [], trained_on=["reuters"])


def test_the_guard_refuses_an_unknown_entity_source(pipeline_dir, tmp_path):
    staged = tmp_path / "pipeline"
    shutil.copytree(pipeline_dir, staged)
    (kb_dir,) = pipeline_kb_dirs(staged)
    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    kb.set_aliases(kb.aliases, ["titles", "gum", "dwie"])
    kb.entity_sources = ["summaries", "wikidata"]
    kb.to_disk(kb_dir)
    (problem,) = alias_source_problems(staged)
    assert "entity source 'wikidata'" in problem


def test_swapped_aliases_take_the_open_kbs_held_out_counts(pipeline_dir, tmp_path):
    """The held-out table names the evaluation KB's alias strings (AIDA's mentions, data rule 1): it goes
    with them, and the pipeline's KB carries the open KB's instead (none here)."""
    from spacy_el.kb.held_out import HELD_OUT_ATTACHMENT, encode_held_out
    from spacy_el.package.distribute import swap_aliases

    staged = tmp_path / "pipeline"
    shutil.copytree(pipeline_dir, staged)
    (kb_dir,) = pipeline_kb_dirs(staged)
    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    kb.set_attachment(HELD_OUT_ATTACHMENT, encode_held_out({"0" * 32: {"Reuters-only string": {"Velda": 1.0}}}))
    kb.to_disk(kb_dir)
    swap_aliases(staged, open_kb(tmp_path / "open"))
    assert ElKnowledgeBase.load(kb_dir).attachment(HELD_OUT_ATTACHMENT) is None

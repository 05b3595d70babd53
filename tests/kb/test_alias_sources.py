"""A KB records where its aliases come from (``alias_sources`` in its manifest), for the packaging guard."""
import json

import numpy as np
import pytest

from spacy_el.kb import ElKnowledgeBase, KBFormatError

from ..conftest import build_invented_kb, build_toy_kb


def test_alias_sources_round_trip_and_default_to_unknown(tmp_path):
    kb = build_invented_kb()
    assert kb.alias_sources is None, "a KB built without them: unknown"
    kb.to_disk(tmp_path / "unknown")
    assert json.loads((tmp_path / "unknown" / "manifest.json").read_text())["alias_sources"] is None
    kb.set_aliases(kb.aliases, ["titles", "gum"])
    kb.to_disk(tmp_path / "kb")
    assert ElKnowledgeBase.load(tmp_path / "kb").alias_sources == ["titles", "gum"]
    other = ElKnowledgeBase(kb.vocab).from_bytes(kb.to_bytes())
    assert other.alias_sources == ["titles", "gum"]


def test_a_manifest_without_alias_sources_loads_as_unknown(tmp_path):
    kb = build_invented_kb()
    kb.set_aliases(kb.aliases, ["titles"])
    kb.to_disk(tmp_path / "kb")
    path = tmp_path / "kb" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["alias_sources"]  # as written before alias sources were recorded
    path.write_text(json.dumps(manifest))
    assert ElKnowledgeBase.load(tmp_path / "kb").alias_sources is None
    manifest["alias_sources"] = "titles"  # a string, not a list
    path.write_text(json.dumps(manifest))
    with pytest.raises(KBFormatError, match="E122"):
        ElKnowledgeBase.load(tmp_path / "kb")


def test_set_aliases_replaces_only_the_alias_table():
    kb = build_invented_kb()
    vectors = kb.entities.vectors.copy()
    kb.set_aliases(build_invented_kb().aliases, ["titles"])
    assert np.array_equal(kb.entities.vectors, vectors) and kb.alias_sources == ["titles"]
    with pytest.raises(ValueError, match="E116"):
        build_toy_kb().set_aliases(kb.aliases)  # candidate rows beyond its 4 entities


def test_entity_sources_round_trip_and_outlive_an_alias_swap(tmp_path):
    from spacy_el.kb import KBBuilder

    builder = KBBuilder()
    builder.add_entity("Velda", "Velda")
    builder.add_alias("Velda", ["Velda"], [1.0])
    kb = builder.build(alias_sources=["titles"], entity_sources=["summaries", "gum"])
    kb.set_aliases(kb.aliases, ["titles", "dwie"])
    assert kb.entity_sources == ["summaries", "gum"], "the entities stay when the aliases change"
    kb.to_disk(tmp_path / "kb")
    assert ElKnowledgeBase.load(tmp_path / "kb").entity_sources == ["summaries", "gum"]
    assert ElKnowledgeBase(kb.vocab).from_bytes(kb.to_bytes()).entity_sources == ["summaries", "gum"]
    path = tmp_path / "kb" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["entity_sources"]  # as written before entity sources were recorded
    path.write_text(json.dumps(manifest))
    assert ElKnowledgeBase.load(tmp_path / "kb").entity_sources is None
    assert build_invented_kb().entity_sources is None, "a KB built without them: unknown"

from pathlib import Path

import pytest

from spacy_el.kb import ElKnowledgeBase, KBBuilder

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def build_toy_kb(vectors: bool = False, fuzzy: bool = True) -> ElKnowledgeBase:
    """Four entities, two ambiguous aliases; small enough to reason about by hand."""
    builder = KBBuilder()
    entities = [
        ("Paris", "Paris", "Capital of France", ["LOC", "topic:Geography"], 100.0),
        ("Paris_Hilton", "Paris Hilton", "American media personality", ["PER"], 20.0),
        ("Paris,_Texas", "Paris, Texas", "City in Texas", ["LOC"], 5.0),
        ("The_Beatles", "The Beatles", "English rock band", ["ORG"], 50.0),
    ]
    for i, (entity_id, name, description, types, freq) in enumerate(entities):
        vector = [float(i == j) for j in range(4)] if vectors else None
        builder.add_entity(entity_id, name, description, types, freq, vector=vector)
    builder.add_alias("Paris", ["Paris", "Paris_Hilton", "Paris,_Texas"], [0.8, 0.15, 0.05])
    builder.add_alias("Hilton", ["Paris_Hilton"], [0.7])
    builder.add_alias("The Beatles", ["The_Beatles"], [1.0])
    builder.add_alias("Fab Four", ["The_Beatles"], [0.9])
    return builder.build(fuzzy=fuzzy)


@pytest.fixture
def toy_kb() -> ElKnowledgeBase:
    return build_toy_kb()


@pytest.fixture
def toy_kb_with_vectors() -> ElKnowledgeBase:
    return build_toy_kb(vectors=True)

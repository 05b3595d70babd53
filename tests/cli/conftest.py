"""Fixtures of the CLI tests."""
import json

import pytest


@pytest.fixture
def jsonl_files(tmp_path):
    """A two-entity KB as JSONL: (entities file, aliases file)."""
    entities = tmp_path / "entities.jsonl"
    aliases = tmp_path / "aliases.jsonl"
    entities.write_text(
        "\n".join(json.dumps(e) for e in [
            {"id": "Ada_Lovelace", "name": "Ada Lovelace", "description": "English mathematician", "types": ["PER"]},
            {"id": "Ada_(language)", "name": "Ada", "description": "Programming language", "types": ["MISC"]},
        ]) + "\n",
        encoding="utf8",
    )
    aliases.write_text(json.dumps({"alias": "Ada", "candidates": [["Ada_Lovelace", 0.6], ["Ada_(language)", 0.4]]}))
    return entities, aliases

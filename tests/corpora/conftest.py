"""What the corpus tests share: a blank English pipeline, and a fixture file changed in one place."""
from pathlib import Path

import pytest
import spacy


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def replace_once(path: Path, old: str, new: str) -> Path:
    """Replace the first ``old`` in the file at ``path`` by ``new`` (``old`` must be there). RETURNS: ``path``."""
    text = path.read_text(encoding="utf8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf8")
    return path

"""``python -m spacy_el`` commands. Each command lives in its own module and registers itself on import."""
from ._app import app, kb_app

# Importing the command modules registers their commands on the apps above.
from . import annotate, convert, evaluate, kb, summary, vectors, visualize  # noqa: E402,F401

__all__ = ["app", "kb_app"]

"""``python -m spacy_el`` commands. Each command lives in its own module and registers itself on import."""
from ._app import app, candidates_app, kb_app

# Importing the command modules registers their commands on the apps above.
from . import annotate, candidates, convert, evaluate, kb, kb_dumps, package, summary, train, tune, vectors, visualize  # noqa: E402,F401

__all__ = ["app", "candidates_app", "kb_app"]

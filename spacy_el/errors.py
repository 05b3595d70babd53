"""Every message spacy_el raises or warns, each defined once with its code, in the style of spaCy's
``Errors``/``Warnings``.

A message is a ``str.format`` template; reading it through its class renders the code, so
``Errors.E001.format(i=3)`` is ``"[spacy_el E001] Cluster 3 is empty; ..."``. A raise keeps its exception
type (``ValueError``, ``FileNotFoundError``, ...) and only takes its text from here; a warning goes through
``warnings.warn`` with a ``W`` code. Tests match on the code, not on the wording.

The KB's own messages are in ``spacy_el/kb/errors.py`` (``KBErrors``, ``KBWarnings``: ``spacy_el.kb`` is a
leaf and imports nothing else of the package), re-exported here. Each code is unique across both modules;
the hundreds say where a message comes from (a new message takes the next free code of its room):

- ``E0xx``/``W0xx``: the Doc extensions, algorithms, scoring, attaching a KB to a pipeline
- ``E1xx``: the KB, its builder, additions and types (``KBErrors``)
- ``E2xx``: the KB's files, its dense index, entity vectors and their encoder (``KBErrors``)
- ``E3xx``: building a KB from the Wikidata and Wikipedia dumps (``KBErrors``)
- ``E4xx``/``W4xx``: candidate generation
- ``E5xx``: annotating a corpus
- ``E6xx``/``W6xx``: corpora and dataset recipes
- ``E7xx``: the command line, training and packaging
- ``E8xx``: the pipeline components (reserved)
- ``E9xx``: the models (reserved)

This module imports neither spaCy, Thinc nor torch: pure code (``extensions.py``, the metrics) uses it.
"""
from .kb.errors import (
    ErrorsWithCodes,
    KBErrors,
    KBWarnings,
    codes,
    is_spacy_el_message,
    message_code,
    untagged,
    with_place,
)

__all__ = [
    "Errors",
    "ErrorsWithCodes",
    "KBErrors",
    "KBWarnings",
    "Warnings",
    "codes",
    "is_spacy_el_message",
    "message_code",
    "untagged",
    "with_place",
]


class Errors(metaclass=ErrorsWithCodes):
    """The errors of spacy_el outside ``spacy_el.kb`` (see the ranges above)."""


class Warnings(metaclass=ErrorsWithCodes):
    """The warnings of spacy_el outside ``spacy_el.kb``."""

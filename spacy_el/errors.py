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

    # -- E4xx: candidate generation ----------------------------------------------------------------------------
    E401 = "CandidateMemo limit must be >= 0, got {limit!r}."
    E402 = ("The mention encoder makes {dim}-d vectors but the KB's entity vectors are {vector_dim}-d: they come "
            "from different encoders.")
    E403 = ("The KB's entity vectors were made by the encoder {kb_encoder!r} (sha256 {kb_sha256}…), but the "
            "mention encoder was trained against {encoder!r} (sha256 {encoder_sha256}…). Re-encode the KB with "
            "`python -m spacy_el kb build ... --vectors compute --encoder <that encoder>`, or train a mention "
            "encoder against this KB (`python -m spacy_el candidates train-encoder`).")
    E404 = ("Dense candidates need a mention encoder, and this KB carries none. Give the generator an encoder "
            'folder (`encoder = "training/mention_encoder/best"`), or attach one: `python -m spacy_el candidates '
            "attach-encoder KB ENCODER`.")
    E405 = "DenseCandidates top_k must be >= 1, got {top_k!r}."
    E406 = "DenseCandidates cache_size must be >= 0, got {cache_size!r}."
    E407 = ("Dense candidates need the KB's dense index: build it with `python -m spacy_el kb build ... --vectors "
            "compute --index Flat`.")
    E408 = "AliasCandidates top_k must be null or an integer >= 1, got {top_k!r}."
    E409 = "held_out has {n_held} entries for {n_texts} mentions; give one per mention."
    E410 = "HybridCandidates top_k must be null or >= 1, got {top_k!r}."
    E411 = "HybridCandidates weights must be >= 0 and not both 0."
    E412 = "HybridCandidates skip_dense_above is a prior: null or in [0, 1], got {skip_dense_above!r}."


class Warnings(metaclass=ErrorsWithCodes):
    """The warnings of spacy_el outside ``spacy_el.kb``."""

    # -- W4xx: candidate generation ----------------------------------------------------------------------------
    W401 = ("The KB does not record which encoder made its entity vectors (it was built before spacy_el recorded "
            "it), so the mention encoder cannot check that they match. Rebuild the KB's vectors to record it.")

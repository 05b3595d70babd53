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

    # -- E5xx: annotating a corpus -----------------------------------------------------------------------------
    E501 = "A worker returned document {position}, which was not waiting."
    E502 = "A worker's output is one of {outputs}, not {output!r}."
    E503 = "Cannot load the pipeline {pipeline!r} in a worker: {err}"
    E504 = "--docbin writes .spacy parts; it cannot be combined with --output-format {output_format}."
    E505 = "Unknown output format {output_format!r}; choose one of {formats}."
    E506 = "The output {path} is a file; OUTPUT is a directory of part files."
    E507 = "Choose --resume or --overwrite, not both."
    E508 = "{manifest_path} is not an annotate manifest."
    E509 = "{manifest_path} has version {version}; this spacy_el reads {supported}."
    E510 = "Cannot resume {path}: the run had other settings ({what})."
    E511 = "Cannot read the manifest {manifest_path}: {err}"
    E512 = "{part} is a DocBin: read it with spacy.tokens.DocBin."
    E513 = ("The output directory {path} is not empty: continue its run with --resume, or replace it with "
            "--overwrite.")
    E514 = "top_candidates must be at least 0, not {top_candidates}."
    E515 = "Unknown engine {engine!r}; choose one of {engines}."
    E517 = "--{option} is an option of --engine ray."
    E518 = "--n-process is an option of the local engine; with --engine ray use --actors."
    E519 = "{name} must be at least 1, not {value}."
    E520 = ("Cannot tell the format of {path} from its suffix ({suffixes}, or a directory of .txt files): name it "
            "with --input-format.")
    E521 = "Cannot read the input {path}: it does not exist."
    E522 = "Cannot read the input {path}: it is a directory, not a file."
    E523 = "Unknown input format {input_format!r}; choose one of {formats}."
    E524 = "Cannot read the input {path}: {reason}."
    E525 = ("{path}:{number}: the record has no text field {text_field!r} (its fields: {fields}); name the field "
            "with --text-field.")
    E526 = "Cannot read the input {path}: it is not a directory."
    E527 = ("Parquet input and output need pyarrow: pip install pyarrow (or the extra: pip install -e "
            '".[annotate]").')
    E528 = "{path} has no column {text_field!r} (its columns: {columns}); name the text column with --text-field."
    E529 = "Cannot read the input {path} as Parquet: {err}"
    E530 = "The worker process did not start."
    E531 = "Waiting for documents that were never sent to a worker."
    E532 = ("A worker process of annotate died (killed, or out of memory). The chunks committed so far are kept: "
            "run again with --resume to go on. ({err})")
    E533 = "--engine ray writes JSONL or Parquet records, not DocBins: drop --docbin or use the local engine."
    E534 = "--engine ray needs Ray: {hint}"
    E535 = "Cannot start or connect to {where}: {err}"

    # -- E6xx: corpora and dataset recipes ---------------------------------------------------------------------
    E601 = "AIDA+ reader: {path} does not exist; run `python -m spacy project run convert-aida` first."
    E602 = "open_data_aliases takes redistributable alias sources only, not {closed}."
    E603 = "Unknown {what} {names!r}: choose one or more of {known}{hint}."
    E604 = "Evaluation-KB source not found: {path} (is --data right?)"


class Warnings(metaclass=ErrorsWithCodes):
    """The warnings of spacy_el outside ``spacy_el.kb``."""

    # -- W4xx: candidate generation ----------------------------------------------------------------------------
    W401 = ("The KB does not record which encoder made its entity vectors (it was built before spacy_el recorded "
            "it), so the mention encoder cannot check that they match. Rebuild the KB's vectors to record it.")

    # -- W6xx: corpora and dataset recipes ---------------------------------------------------------------------
    W601 = ("skip_masked: left out {n_left} text-masked document(s) of {n_docs} (every word underscores, as in "
            "GUM's Reddit documents).")
    W602 = "{path}: {repaired} I- tag(s) did not continue an entity of their type and started one."
    W603 = "{path}: {n_empty} empty token(s) replaced by {replacement!r} (line {lines})."
    W604 = ("{path}: {expanded} of {labels} labels were not on token boundaries and were expanded to the enclosing "
            "tokens.")
    W605 = ("{path}: {overlapping} non-nested labels overlap another one and are only in doc.spans['{spans_key}'], "
            "not in doc.ents.")

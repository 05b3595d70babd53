"""Annotate a corpus with a pipeline: streaming, chunked, resumable (``python -m spacy_el annotate``).

``annotate(pipeline, input, output, **options) -> Summary``; docs/annotate.md describes the input and
output formats and the commit protocol.
"""
from .readers import INPUT_FORMATS, InputDoc, open_reader
from .records import doc_record
from .compute import load_pipeline
from .runner import Summary, annotate
from .writers import ERRORS, MANIFEST, OUTPUT_FORMATS, read_output

__all__ = [
    "annotate",
    "Summary",
    "load_pipeline",
    "open_reader",
    "InputDoc",
    "doc_record",
    "read_output",
    "INPUT_FORMATS",
    "OUTPUT_FORMATS",
    "MANIFEST",
    "ERRORS",
]

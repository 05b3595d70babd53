"""One worker of a multi-process engine: the pipeline, loaded once, annotating batches of documents.

The local process pool (:mod:`.process_pool`) and the Ray actors (:mod:`.ray_engine`) both run this class.
A worker gets a batch of ``(position, text)`` pairs and gives back, per document, ``(position, value,
None)`` or ``(position, None, error)``. The value is the document's ``{"entities", "clusters"}``
(:func:`~spacy_el.annotate.records.doc_annotations`), or, for DocBin output, the annotated Doc's bytes.
Either is small next to a Doc pickled whole, and the driver only adds ids and carried fields.
"""
from typing import Any, List, Optional, Tuple

from ..errors import Errors, is_spacy_el_message
from .records import doc_annotations
from .compute import error_text, load_pipeline, pipe_chunk

Result = Tuple[int, Optional[Any], Optional[str]]
# What a worker sends back for each document.
WORKER_OUTPUTS = ("annotations", "doc_bytes")


class AnnotateWorker:
    """The state of one worker process or actor: the pipeline, loaded once when the worker starts."""

    def __init__(self, pipeline: Any, batch_size: int, top_candidates: int, output: str = "annotations") -> None:
        if output not in WORKER_OUTPUTS:
            raise ValueError(Errors.E502.format(outputs=", ".join(WORKER_OUTPUTS), output=output))
        self.batch_size = batch_size
        self.top_candidates = top_candidates
        self.output = output
        self.error: Optional[str] = None
        try:
            self.nlp = load_pipeline(pipeline)
        except Exception as err:  # reported by ready(), so that the driver stops with one line
            self.nlp = None
            message = str(err)
            if not is_spacy_el_message(message):
                message = Errors.E503.format(pipeline=str(pipeline)[:200], err=error_text(err))
            self.error = message

    def ready(self) -> Optional[str]:
        """None, or why the pipeline could not be loaded."""
        return self.error

    def annotate(self, batch: List[Tuple[int, str]]) -> List[Result]:
        """``(position, value, None)`` or ``(position, None, error)`` for each ``(position, text)``."""
        out: List[Result] = []
        docs = pipe_chunk(self.nlp, [text for _, text in batch], self.batch_size)
        for (position, _), (doc, error) in zip(batch, docs):
            value: Optional[Any] = None
            if error is None:
                try:
                    value = self._value(doc)
                except Exception as err:  # as the in-process engine: the document goes to the error log
                    error = error_text(err)
            out.append((position, value, error))
        return out

    def _value(self, doc) -> Any:
        if self.output == "doc_bytes":
            return doc.to_bytes()
        return doc_annotations(doc, self.top_candidates)

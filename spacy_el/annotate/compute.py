"""Running a pipeline over documents, with failing documents isolated: what every engine's workers share,
and the in-process engine itself (``n_process=1``)."""
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class ConfiguredPipeline:
    """A pipeline to load (a package name or a path) and component settings to apply once it is loaded
    (``{component: {setting: value}}``, :func:`spacy_el.pipeline.configure.configure_pipeline`): what a
    worker process or a Ray actor is given, so that each loads it itself with the same settings."""

    name: str
    settings: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def load_pipeline(pipeline: Any):
    """A loaded pipeline: ``pipeline`` itself if it is one, else ``spacy.load(pipeline)`` with a clear error
    (for a :class:`ConfiguredPipeline`, its settings applied)."""
    from spacy.language import Language

    if isinstance(pipeline, Language):
        return pipeline
    from ..pipeline.configure import load_pipeline as load

    name, settings = (pipeline.name, pipeline.settings) if isinstance(pipeline, ConfiguredPipeline) else (pipeline, {})
    return load(name, settings, "annotate")


def error_text(err: BaseException) -> str:
    """One line naming an exception: what the error log records for a document."""
    return f"{type(err).__name__}: {' '.join(str(err).split())}"


def pipe_chunk(nlp, texts: List[str], batch_size: int,
               on_doc: Callable[[], Any] = lambda: None) -> List[Tuple[Any, Optional[str]]]:
    """``(doc, None)`` or ``(None, error)`` for each text, in order.

    A chunk whose ``nlp.pipe`` raises is not lost: the documents it had already given are kept, the next
    ``batch_size`` documents are run one at a time (``nlp(text)``, so the failing ones are isolated) and
    ``nlp.pipe`` goes on with the rest.
    """
    out: List[Tuple[Any, Optional[str]]] = []
    pending = texts
    while pending:
        done = 0
        try:
            for doc in nlp.pipe(pending, batch_size=batch_size):
                out.append((doc, None))
                done += 1
                on_doc()
            pending = []
        except Exception:  # isolate the failing documents: the next batch one at a time
            pending = pending[done:]
            for text in pending[:batch_size]:
                try:
                    out.append((nlp(text), None))
                except Exception as err:
                    out.append((None, error_text(err)))
                on_doc()
            pending = pending[batch_size:]
    return out


class InProcessEngine:
    """The engine of ``n_process=1``: ``nlp.pipe`` in this process, when a chunk's results are collected.
    It gives Docs (``yields_docs``), which the driver turns into records or DocBins."""

    yields_docs = True

    def __init__(self, pipeline: Any, batch_size: int) -> None:
        self.nlp = load_pipeline(pipeline)
        self.batch_size = batch_size

    def submit(self, texts: List[str]) -> List[str]:
        return texts

    def collect(self, texts: List[str], on_doc: Callable[[], Any]) -> List[Tuple[Any, Optional[str]]]:
        return pipe_chunk(self.nlp, texts, self.batch_size, on_doc)

"""Running a pipeline over documents, with failing documents isolated: what every engine's workers share,
and the in-process engine itself (``n_process=1``)."""
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
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


def pipeline_identity(pipeline: Any) -> Dict[str, Any]:
    """What identifies ``pipeline`` in the output manifest, so that ``--resume`` refuses another one: its path
    (resolved; None for a loaded ``Language``, a package name as given), its meta ``name`` (``lang_name``) and
    ``version``, and the SHA-256 of its config and meta (``config.cfg`` and ``meta.json`` of a saved one).
    Nothing is loaded; a pipeline that cannot be found is identified by its name alone (loading it then fails
    with its own error)."""
    from spacy.language import Language

    if isinstance(pipeline, ConfiguredPipeline):
        pipeline = pipeline.name
    if isinstance(pipeline, Language):
        return _identity(None, dict(pipeline.meta), pipeline.config.to_str().encode("utf8"))
    where = Path(str(pipeline))
    if not where.exists():
        try:
            from spacy.util import get_package_path

            where = get_package_path(str(pipeline))
        except Exception:  # not an installed package either
            return {"path": str(pipeline)}
        path = str(pipeline)
    else:
        path = str(where.resolve())
    try:
        meta_bytes = (where / "meta.json").read_bytes()
        meta = json.loads(meta_bytes)
        if not (where / "config.cfg").exists() and isinstance(meta, dict):  # an installed package: in its data folder
            where = where / f"{where.name}-{meta.get('version')}"
        config = (where / "config.cfg").read_bytes()
    except (OSError, ValueError):
        return {"path": path}
    return _identity(path, meta if isinstance(meta, dict) else {}, config + b"\0" + meta_bytes)


def _identity(path: Optional[str], meta: Dict[str, Any], content: bytes) -> Dict[str, Any]:
    if path is None:  # a loaded pipeline: its meta as JSON, keys sorted
        content += b"\0" + json.dumps(meta, sort_keys=True, default=str).encode("utf8")
    return {"path": path, "name": f"{meta.get('lang')}_{meta.get('name')}", "version": meta.get("version"),
            "checksum": hashlib.sha256(content).hexdigest()}


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

"""The annotate loop: read a chunk, hand it to the engine, commit the chunk before it, repeat.

The driver (this process) always reads the input and commits the output, so the commit protocol and
``--resume`` are the same for every engine; an engine only computes a chunk's Docs or records:

* ``n_process=1``: ``nlp.pipe`` in this process (:class:`~.compute.InProcessEngine`);
* ``n_process=N``: N worker processes started once for the run (:mod:`.process_pool`);
* ``engine="ray"``: a pool of Ray actors (:mod:`.ray_engine`).

The driver submits chunk k+1 before it collects and commits chunk k, so workers are never idle while it
commits. Memory is bounded by two chunks (``chunk_size`` documents each, with their Docs or records); the
pipeline runs in batches of ``batch_size``. A document that fails goes to the error log, and the rest of
its batch is kept (:func:`~.compute.pipe_chunk`).
"""
import contextlib
import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from ..errors import Errors
from .compute import ConfiguredPipeline, InProcessEngine, error_text, pipeline_identity
from .readers import InputDoc, open_reader
from .records import doc_record, encodable, merge_record, unencodable
from .carried import carried_columns, conform
from .writers import OutputDir, docbin_bytes, jsonl_bytes, output_format_of, parquet_bytes

ENGINES = ("local", "ray")


@dataclass
class Summary:
    """What a run did. ``read``, ``written`` and ``failed`` count the whole output (resumed runs included);
    ``resumed_from`` is the number of documents an earlier run had committed."""

    output: str
    read: int
    written: int
    failed: int
    resumed_from: int
    parts: int
    seconds: float
    errors: Optional[str]


def _problem(item: InputDoc, carries_fields: bool) -> Optional[str]:
    """Why ``item`` cannot be annotated or written (its error record), or None. An id or a carried field that
    UTF-8 cannot encode (a lone surrogate) is one: no output holds it, and its error record can be written."""
    if item.error is not None:
        return item.error
    if not isinstance(item.text, str):
        return f"bad text: expected a string, got {type(item.text).__name__}"
    try:
        item.text.encode("utf8")
    except UnicodeEncodeError as err:
        return f"bad text: not valid Unicode ({err.reason} at {err.start})"
    found = unencodable(item.id, "id")
    for name, value in item.fields.items() if carries_fields and found is None else ():
        found = unencodable(name, "field name") or unencodable(value, f"field {encodable(str(name))!r}")
        if found is not None:
            break
    return None if found is None else Errors.E538.format(what=found[0], reason=found[1])


def _chunks(docs: Iterator[InputDoc], size: int) -> Iterator[List[InputDoc]]:
    while True:
        chunk = list(itertools.islice(docs, size))
        if not chunk:
            return
        yield chunk


def _check_options(batch_size: int, chunk_size: int, n_process: int, top_candidates: int, engine: str = "local",
                   actors: Optional[int] = None, address: Optional[str] = None) -> None:
    for name, value in (("batch_size", batch_size), ("chunk_size", chunk_size), ("n_process", n_process)):
        if value < 1:
            raise ValueError(Errors.E519.format(name=name, value=value))
    if top_candidates < 0:
        raise ValueError(Errors.E514.format(top_candidates=top_candidates))
    if engine not in ENGINES:
        raise ValueError(Errors.E515.format(engine=engine, engines=", ".join(ENGINES)))
    if actors is not None and actors < 1:
        raise ValueError(Errors.E519.format(name="actors", value=actors))
    if engine == "local" and (actors is not None or address is not None):
        raise ValueError(Errors.E517.format(option="actors" if actors is not None else "address"))
    if engine == "ray" and n_process != 1:
        raise ValueError(Errors.E518)


def annotate(
    pipeline: Any,
    input: Union[str, Path],
    output: Union[str, Path],
    *,
    input_format: Optional[str] = None,
    output_format: Optional[str] = None,
    docbin: bool = False,
    text_field: str = "text",
    id_field: str = "id",
    batch_size: int = 64,
    chunk_size: int = 1000,
    n_process: int = 1,
    top_candidates: int = 5,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    on_commit: Optional[Callable[[Dict[str, int]], None]] = None,
    engine: str = "local",
    address: Optional[str] = None,
    actors: Optional[int] = None,
    component_settings: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> Summary:
    """Annotate a corpus with a pipeline, streaming, into the output directory ``output``.

    pipeline: a loaded ``Language`` or what ``spacy.load`` takes (a package name or a path).
    input: a text file (one document per line), a ``.jsonl`` file, a ``.parquet`` file or a directory of
        ``.txt`` files (``input_format`` names the format when the suffix does not tell it).
    output: the output directory (part files, ``errors.jsonl``, ``manifest.json``; docs/annotate.md).
    on_commit: called with the committed counts after each chunk's commit (a hook for tests and monitors).
    n_process: with the local engine, 1 runs ``nlp.pipe`` in this process; N > 1 starts N worker processes
        for the run, each holding the pipeline (forked from this process where the platform forks).
    engine: ``"local"`` (this machine's processes) or ``"ray"`` (a pool of Ray actors, each loading the
        pipeline once; ``pip install 'spacy_el[ray]'``). The output is the same.
    address: with ``engine="ray"``, the address of a Ray cluster to connect to (``ray.init(address=...)``);
        None starts a local Ray, or uses the one this process already initialized.
    actors: with ``engine="ray"``, the number of actors (one CPU each); None: one per CPU of the cluster.
    component_settings: ``{component: {setting: value}}``, prediction settings of the pipeline's spacy_el
        components applied once it is loaded (``pipe.configure``; every worker applies them too). They are
        recorded in the manifest, and ``resume`` refuses other ones. A loaded ``Language`` is configured in place.
    RETURNS: the :class:`Summary` of the run; documents that failed are in ``OUTPUT/errors.jsonl``.
    """
    _check_options(batch_size, chunk_size, n_process, top_candidates, engine, actors, address)
    start_time = time.perf_counter()
    reader = open_reader(Path(input), input_format, text_field, id_field)
    fmt = output_format_of(Path(output), output_format, docbin)
    if engine == "ray":
        from .ray_engine import check_ray

        check_ray(fmt)  # before anything is written: Ray installed, an output format it can write
    settings = {**reader.describe(), "output_format": fmt, "top_candidates": top_candidates,
                "pipeline": pipeline_identity(pipeline)}
    if component_settings:
        component_settings = {name: dict(changes) for name, changes in component_settings.items()}
        settings["component_settings"] = component_settings  # only when given: older manifests resume as before
        pipeline = _configured(pipeline, component_settings)
    declared = fmt == "parquet" and reader.format == "parquet"  # else the first part fixes the carried columns
    out = OutputDir(Path(output), fmt, settings, reader.carried_schema() if declared else None)

    with contextlib.ExitStack() as stack:
        # OUTPUT locked first, so that it is released last, once the engine has stopped.
        state = stack.enter_context(out.opened(resume=resume, overwrite=overwrite))
        skip = state["docs_read"]
        pool = stack.enter_context(_open_engine(engine, pipeline, n_process, batch_size, top_candidates,
                                                fmt == "docbin", address, actors))
        make_output = _from_doc(fmt, top_candidates) if pool.yields_docs else _from_annotations(fmt)
        on_doc: Callable[[], Any] = lambda: None
        if progress:
            from tqdm import tqdm

            bar = stack.enter_context(
                tqdm(total=reader.total(), initial=skip, unit="doc", desc="annotate", dynamic_ncols=True))
            on_doc = bar.update

        def submit(chunk: List[InputDoc]) -> Tuple[List[InputDoc], List[Optional[str]], Any]:
            problems = [_problem(item, fmt != "docbin") for item in chunk]
            for _ in range(sum(problem is not None for problem in problems)):
                on_doc()
            good_texts = [item.text for item, problem in zip(chunk, problems) if problem is None]
            return chunk, problems, pool.submit(good_texts)

        def commit(chunk: List[InputDoc], problems: List[Optional[str]], ticket: Any) -> None:
            results = iter(pool.collect(ticket, on_doc))  # (value, None) or (None, error) per good item, in order
            made: List[Any] = []  # per document, in input order: its output, or None and its problem
            for i, (item, problem) in enumerate(zip(chunk, problems)):
                output = None
                if problem is None:
                    value, problem = next(results)
                if problem is None:
                    try:
                        output = make_output(value, item)
                    except Exception as err:  # a value the output cannot hold
                        problem = error_text(err)
                made.append(output)
                problems[i] = problem
            schema = out.carried_schema  # the run's, once its first part (or a Parquet input) fixed it
            if fmt == "parquet" and not declared:  # one schema for every part, so they read as one dataset
                kept = [i for i, output in enumerate(made) if problems[i] is None]
                if schema is None:  # the first part: the columns' types from its records
                    schema, rejected = carried_columns([made[i] for i in kept])
                else:
                    rejected = conform([made[i] for i in kept], schema)
                for j, message in rejected.items():
                    problems[kept[j]] = message
            errors = [{"id": encodable(item.id), "error": encodable(problem)}
                      for item, problem in zip(chunk, problems) if problem is not None]  # input order
            outputs = [output for output, problem in zip(made, problems) if problem is None]
            part = _part_bytes(outputs, fmt, schema) if outputs else None
            out.commit(part, errors, docs_read=len(chunk), docs_written=len(outputs), carried_schema=schema)
            if on_commit is not None:
                on_commit(dict(out.state))

        submitted = None  # the chunk whose documents are with the engine, not yet committed
        for chunk in _chunks(reader.docs(skip), chunk_size):
            following = submit(chunk)  # the workers go on with it while the driver commits the one before
            if submitted is not None:
                commit(*submitted)
            submitted = following
        if submitted is not None:
            commit(*submitted)
    state = out.state
    return Summary(
        output=str(out.path), read=state["docs_read"], written=state["docs_written"], failed=state["docs_failed"],
        resumed_from=skip, parts=state["parts"], seconds=round(time.perf_counter() - start_time, 3),
        errors=str(out.errors_path) if out.errors_path.exists() else None,
    )


def _configured(pipeline: Any, component_settings: Dict[str, Dict[str, Any]]) -> Any:
    """A loaded ``Language`` configured now; a name, what every engine loads and then configures."""
    from spacy.language import Language

    if isinstance(pipeline, Language):
        from ..pipeline.configure import configure_pipeline

        return configure_pipeline(pipeline, component_settings, "annotate")
    return ConfiguredPipeline(str(pipeline), component_settings)


def _open_engine(engine: str, pipeline: Any, n_process: int, batch_size: int, top_candidates: int, docbin: bool,
                 address: Optional[str], actors: Optional[int]) -> ContextManager[Any]:
    """The engine, as a context manager: it has ``submit(texts) -> ticket``, ``collect(ticket, on_doc)`` and
    ``yields_docs`` (Docs, else ``doc_annotations`` records)."""
    if engine == "ray":
        from .ray_engine import RayPool

        return RayPool(pipeline, batch_size, top_candidates, address, actors)
    if n_process > 1:
        from .process_pool import ProcessPool

        return ProcessPool(pipeline, n_process, batch_size, top_candidates, docbin=docbin)
    return contextlib.nullcontext(InProcessEngine(pipeline, batch_size))


def _from_doc(fmt: str, top_candidates: int) -> Callable[[Any, InputDoc], Any]:
    """What a part holds for one document, from its Doc (the in-process engine, or DocBin output)."""
    def prepare(doc, item: InputDoc) -> Any:
        if fmt == "docbin":
            doc._.doc_id = item.id
            return doc
        record = doc_record(doc, item.id, item.fields, top_candidates)
        return jsonl_bytes([record]) if fmt == "jsonl" else record

    return prepare


def _from_annotations(fmt: str) -> Callable[[Dict[str, Any], InputDoc], Any]:
    """What a part holds for one document, from its ``doc_annotations`` (worker processes, Ray actors)."""
    def prepare(annotations: Dict[str, Any], item: InputDoc) -> Any:
        record = merge_record(item.id, item.fields, annotations)
        return jsonl_bytes([record]) if fmt == "jsonl" else record

    return prepare


def _part_bytes(outputs: List[Any], fmt: str, carried_schema) -> bytes:
    if fmt == "jsonl":
        return b"".join(outputs)
    if fmt == "parquet":
        return parquet_bytes(outputs, carried_schema)
    return docbin_bytes(outputs)

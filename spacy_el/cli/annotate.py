"""``python -m spacy_el annotate PIPELINE INPUT OUTPUT [--components.NAME.SETTING VALUE ...]``: annotate a corpus,
streaming and resumable."""
from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app


class InputFormat(str, Enum):
    text = "text"
    jsonl = "jsonl"
    parquet = "parquet"
    dir = "dir"


class OutputFormat(str, Enum):
    jsonl = "jsonl"
    parquet = "parquet"


class Engine(str, Enum):
    local = "local"
    ray = "ray"


@app.command("annotate", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def annotate_cli(
    ctx: typer.Context,
    pipeline: str = typer.Argument(..., help="Pipeline package name or path"),
    input_path: Path = typer.Argument(..., help="A text file (one document per line), .jsonl, .parquet, or a directory of .txt files"),
    output: Path = typer.Argument(..., help="Output directory: part-<n> files, errors.jsonl, manifest.json"),
    input_format: Optional[InputFormat] = typer.Option(None, "--input-format", help="Input format (default: from the suffix)"),
    output_format: Optional[OutputFormat] = typer.Option(None, "--output-format", help="Output format (default: parquet if OUTPUT ends in .parquet, else jsonl)"),
    docbin: bool = typer.Option(False, "--docbin", help="Write spaCy DocBin parts (.spacy, user data kept) instead of records"),
    text_field: str = typer.Option("text", "--text-field", help="JSONL field / Parquet column of the text"),
    id_field: str = typer.Option("id", "--id-field", help="JSONL field / Parquet column of the document id (default id: line or row number, file name)"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", min=1, help="nlp.pipe batch size"),
    chunk_size: int = typer.Option(1000, "--chunk-size", "-c", min=1, help="Documents per committed part (memory holds one chunk)"),
    n_process: int = typer.Option(1, "--n-process", "-p", min=1, help="Worker processes, started once for the run, each holding the pipeline (see docs/annotate.md)"),
    engine: Engine = typer.Option(Engine.local, "--engine", help="local: nlp.pipe in this process; ray: a pool of Ray actors, here or on a cluster (pip install 'spacy_el[ray]')"),
    address: Optional[str] = typer.Option(None, "--address", help="--engine ray: address of the Ray cluster to connect to (default: start a local Ray)"),
    actors: Optional[int] = typer.Option(None, "--actors", min=1, help="--engine ray: number of actors, one CPU each (default: one per CPU of the cluster)"),
    top_candidates: int = typer.Option(5, "--top-candidates", min=0, help="Candidates kept per entity (from span._.candidate_scores)"),
    resume: bool = typer.Option(False, "--resume", help="Continue after the last committed chunk of OUTPUT"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the output of an earlier run in OUTPUT"),
    allow_errors: bool = typer.Option(False, "--allow-errors", help="Exit 0 even when documents failed"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for CPU"),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar"),
) -> None:
    """Annotate a corpus with a pipeline: one record per document (entities, links, candidates, coreference
    clusters), committed chunk by chunk so that --resume continues a killed run without losing or repeating
    a document. Documents that fail go to OUTPUT/errors.jsonl. Prediction settings of the pipeline's spacy_el
    components as config overrides: --components.joint_coref_linker.predict_max_antecedents 100."""
    from spacy.cli._util import parse_config_overrides

    from ..annotate import annotate
    from ..pipeline.configure import settings_from_overrides

    component_settings = settings_from_overrides(parse_config_overrides(ctx.args), "annotate")

    if gpu_id >= 0:
        if engine == Engine.ray:
            raise ValueError(Errors.E701)
        import spacy

        spacy.require_gpu(gpu_id)
    summary = annotate(
        pipeline, input_path, output,
        input_format=input_format.value if input_format else None,
        output_format=output_format.value if output_format else None,
        docbin=docbin, text_field=text_field, id_field=id_field, batch_size=batch_size, chunk_size=chunk_size,
        n_process=n_process, top_candidates=top_candidates, resume=resume, overwrite=overwrite,
        progress=show_progress, engine=engine.value, address=address, actors=actors,
        component_settings=component_settings,
    )
    msg.table(
        [["read", summary.read], ["written", summary.written], ["failed", summary.failed],
         ["resumed after", summary.resumed_from], ["parts", summary.parts], ["seconds", summary.seconds]],
        header=["documents", ""], divider=True,
    )
    if summary.failed:
        report = msg.warn if allow_errors else msg.fail
        report(f"{summary.failed} document(s) failed: see {summary.errors}")
        if not allow_errors:
            raise typer.Exit(code=1)
    else:
        msg.good(f"Wrote {summary.written} document(s) to {summary.output}")

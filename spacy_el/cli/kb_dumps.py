"""``python -m spacy_el kb from-dumps``: a KB from the Wikidata JSON and Wikipedia XML dumps (docs/kb_dumps.md)."""
import gc
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import kb_app
from .kb import (
    BATCH_SIZE_OPTION, ENCODER_OPTION, FORCE_OPTION, GPU_ID_OPTION, INDEX_OPTION, VECTORS_CHUNK_SIZE_OPTION,
    VECTORS_OPTION, VECTORS_WORK_DIR_OPTION, add_vectors_and_save, check_output_dir,
)

REPORT_FILE = "from_dumps_report.json"


def _p31_allow(value: Optional[str]) -> Optional[frozenset]:
    """A comma-separated list of QIDs, or a file with one QID per line."""
    if not value:
        return None
    path = Path(value)
    items = path.read_text(encoding="utf8").split() if path.is_file() else value.split(",")
    qids = frozenset(q.strip() for q in items if q.strip())
    bad = sorted(q for q in qids if not (q[:1] == "Q" and q[1:].isdigit()))
    if bad:
        raise ValueError(Errors.E703.format(qid=bad[0]))
    return qids


def dumps_work_dir(output_dir: Path) -> Path:
    """The default work root: OUTPUT_DIR.from-dumps-work beside the output (as OUTPUT_DIR.vectors-work), where
    a rerun of the same command finds and removes the build folder of a killed run."""
    output_dir = output_dir.resolve()
    return output_dir.with_name(f"{output_dir.name}.from-dumps-work")


@kb_app.command("from-dumps")
def from_dumps_cli(
    output_dir: Path = typer.Argument(..., help="Directory to write the KB to"),
    wikidata: Path = typer.Option(..., "--wikidata", help="Wikidata JSON dump (latest-all.json.bz2; .gz or plain too)", exists=True, dir_okay=False),
    wikipedia: Path = typer.Option(..., "--wikipedia", help="Wikipedia pages-articles XML dump (.bz2, .gz or plain)", exists=True, dir_okay=False),
    page_props: Optional[Path] = typer.Option(None, "--page-props", help="enwiki page_props SQL dump: pages marked 'disambiguation'", exists=True, dir_okay=False),
    n_process: int = typer.Option(1, "--n-process", "-n", min=1, help="Worker processes for parsing"),
    min_count: int = typer.Option(1, "--min-count", min=1, help="Drop (anchor, entity) pairs seen in fewer links"),
    label_prior: float = typer.Option(0.01, "--label-prior", min=0.0, max=1.0, help="Prior of a candidate that is only a Wikidata label/alias"),
    kb_id: str = typer.Option("title", "--kb-id", help="KB ids: 'title' (enwiki title, URL form) or 'qid'"),
    p31_allow: Optional[str] = typer.Option(None, "--p31-allow", help="Keep only items with one of these P31 values: Q5,Q515 or a file of QIDs"),
    types_map: Optional[Path] = typer.Option(None, "--types-map", help="JSON {P31 QID: coarse label} replacing the default PER/LOC/ORG table", exists=True, dir_okay=False),
    descriptions: bool = typer.Option(True, "--descriptions/--no-descriptions", help="First paragraph as description when Wikidata has none"),
    fuzzy: bool = typer.Option(False, "--fuzzy/--no-fuzzy", help="Build the trigram index for fuzzy lookup (several GB at full scale)"),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Skip malformed lines/pages and count them in the report instead of failing"),
    max_pairs: int = typer.Option(2_000_000, "--max-pairs", min=1000, help="Distinct (alias, target) pairs in memory before a sorted run file is written"),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Where the build folder goes (default: OUTPUT_DIR.from-dumps-work beside the output); a rerun removes what a killed run left there", file_okay=False),
    max_line_mb: int = typer.Option(64, "--max-line-mb", min=1, help="Longest Wikidata line read, in MiB: a longer one is an error (or skipped with --skip-bad)"),
    vectors: Optional[str] = VECTORS_OPTION,
    index: Optional[str] = INDEX_OPTION,
    encoder: Optional[str] = ENCODER_OPTION,
    batch_size: int = BATCH_SIZE_OPTION,
    gpu_id: int = GPU_ID_OPTION,
    vectors_work: Optional[Path] = VECTORS_WORK_DIR_OPTION,
    vectors_chunk_size: int = VECTORS_CHUNK_SIZE_OPTION,
    force: bool = FORCE_OPTION,
) -> None:
    """Build a KB from the Wikidata and Wikipedia dumps, streamed without unpacking, in bounded memory,
    optionally with entity vectors (--vectors compute, on a GPU with --gpu-id) and a FAISS index."""
    from ..kb.dumps import DumpsSettings, build_kb_from_dumps
    from ..kb.dumps.coarse_types import read_coarse_map
    from ..kb.dumps.workdir import remove_root_if_empty
    from ..kb.files import write_json

    check_output_dir(output_dir, force)
    work_root = work_dir if work_dir is not None else dumps_work_dir(output_dir)
    if kb_id not in ("title", "qid"):
        raise ValueError(Errors.E704.format(kb_id=kb_id))
    settings = DumpsSettings(
        n_process=n_process, min_count=min_count, label_prior=label_prior, kb_id=kb_id,  # type: ignore[arg-type]
        skip_bad=skip_bad, p31_allow=_p31_allow(p31_allow), coarse_map=read_coarse_map(types_map),
        descriptions=descriptions, fuzzy=fuzzy, max_pairs=max_pairs, work_dir=work_root,
        max_line_bytes=max_line_mb << 20,
    )
    try:
        kb, report = build_kb_from_dumps(wikidata, wikipedia, page_props, settings)
        if kb.n_entities == 0:
            raise ValueError(Errors.E705.format(wikidata=wikidata))
        add_vectors_and_save(
            kb, output_dir, vectors, index, encoder, batch_size, gpu_id, force, vectors_work, vectors_chunk_size
        )
        n_entities, n_aliases = kb.n_entities, kb.n_aliases
    finally:
        kb = None  # saved (or failed): its build folder goes with it, and the default work root beside the output
        gc.collect()
        if work_dir is None:
            remove_root_if_empty(work_root)
    summary = report.to_dict()
    write_json(output_dir / REPORT_FILE, summary)
    for section in ("wikidata", "wikipedia", "page_props", "kb"):
        if summary.get(section):
            msg.table(sorted(summary[section].items()), header=(section, "count"), divider=True)
    skipped = sum(bad["total"] for bad in summary["skipped (bad input)"].values())
    if skipped:
        msg.warn(f"Skipped {skipped} bad records (--skip-bad): see {output_dir / REPORT_FILE}")
    msg.good(f"{n_entities} entities, {n_aliases} aliases (report: {output_dir / REPORT_FILE})")

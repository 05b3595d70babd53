"""Write a results file in the project's format (see ../shared/RESULTS.md)."""
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spacy_el.kb.files import write_text

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
Row = Dict[str, Any]
#: Joins a learning-curve row's metric to its training step: ``coref_avg_f@step=191`` (benchmarks.common.curve_rows).
CURVE_STEP = "@step="


def log(message: str) -> None:
    """A progress line on stderr, with the time of day."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def row(system: str, dataset: str, metric: str, value: float, notes: str = "") -> Row:
    return {"system": system, "dataset": dataset, "metric": metric, "value": value, "notes": notes}


def cpu_name(cpuinfo: Optional[str] = None) -> str:
    """The CPU model name, with its family/model/stepping: cloud CPUs often report only a vendor line
    ("AMD EPYC"), which cannot tell two machines of different speed apart. ``cpuinfo``: the text of
    ``/proc/cpuinfo`` (read when None)."""
    try:
        first = (cpuinfo if cpuinfo is not None else Path("/proc/cpuinfo").read_text()).split("\n\n", 1)[0]
    except OSError:
        return platform.processor() or platform.machine()
    info = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first.splitlines())}
    name = info.get("model name") or platform.processor() or platform.machine()
    ids = [f"{key} {info[field]}" for key, field in (("family", "cpu family"), ("model", "model"), ("stepping", "stepping"))
           if info.get(field)]
    return f"{name} ({', '.join(ids)})" if ids else name


def gpu_name() -> Optional[str]:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        return None


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def this_machine() -> Dict[str, Any]:
    """The ``machine`` of a results file: CPU model, core count, GPU (or None)."""
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "gpu": gpu_name()}


def merge_rerun(out: Path, new_rows: List[Row], command: str) -> List[Row]:
    """The rows of a partial rerun merged into the earlier results file ``out``.

    A new row replaces the earlier rows of the same ``(system, dataset, metric)`` in their place (all of
    them: a metric may have several rows, such as a speed per encoder precision); other earlier rows are
    kept, so a rerun that measures only some metrics of a system (``--no-speed``) leaves the others as they
    were. A learning curve (``<metric>@step=N`` rows) is one measurement: a rerun's curve replaces the whole
    earlier curve of its system, dataset and metric, so that a shorter rerun leaves no stale later steps
    behind. New rows go after the last row of their system and dataset, else after the last row of their
    dataset (last if the dataset is new). Every row says when and where it was measured (``measured`` and
    ``machine``: its own, else the earlier file's ``created`` and ``machine``, since the merged file's
    ``machine`` is the rerun's), and by which ``command`` (the rerun's, or the earlier row's or file's).
    """
    measured, machine = utc_now(), this_machine()
    fresh: Dict[Tuple[str, str, str], List[Row]] = {}
    for r in new_rows:
        fresh.setdefault((r["system"], r["dataset"], r["metric"]), []).append(
            {**r, "measured": measured, "machine": machine, "command": command})
    earlier = json.loads(out.read_text(encoding="utf8")) if out.exists() else {"rows": [], "created": measured}
    new_curves = {curve_of(key) for key in fresh} - {None}
    merged: List[Row] = []
    replaced = set()
    for r in earlier["rows"]:
        key = (r["system"], r["dataset"], r["metric"])
        if key in fresh:  # the key's first earlier row makes way for all its new rows
            merged += fresh.pop(key)
            replaced.add(key)
        elif key not in replaced and curve_of(key) not in new_curves:
            merged.append({**r, "measured": r.get("measured", earlier["created"]),
                           "machine": r.get("machine", earlier.get("machine")),
                           "command": r.get("command", earlier.get("command"))})
    # New rows join their system's rows, else their dataset's, so that tables keep both together.
    for (system, dataset, _), rows in fresh.items():
        same_dataset = [i for i, r in enumerate(merged) if r["dataset"] == dataset]
        same_system = [i for i in same_dataset if merged[i]["system"] == system]
        last = max(same_system or same_dataset or [len(merged) - 1])
        merged[last + 1:last + 1] = rows
    return merged


def curve_of(key: Tuple[str, str, str]) -> Optional[Tuple[str, str, str]]:
    """``(system, dataset, metric)`` of a learning-curve row's key (metric ``<metric>@step=N``); None for others."""
    system, dataset, metric = key
    return (system, dataset, metric.split(CURVE_STEP)[0]) if CURVE_STEP in metric else None


def write_results(out: Path, command: str, rows: List[Row], machine: Optional[Dict[str, Any]] = None) -> Path:
    """The results file ``out``; ``machine``: where the rows were measured, when not on this machine."""
    result = {"command": command, "created": utc_now(), "machine": machine or this_machine(), "rows": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, json.dumps(result, indent=2) + "\n")
    return out


def write_merged(out: Path, command: str, rows: List[Row]) -> Path:
    """The results file ``out`` with ``rows`` merged into its earlier rows (:func:`merge_rerun`): a run replaces its
    own rows and leaves the others as they were."""
    return write_results(Path(out), command, merge_rerun(Path(out), rows, command))


def repo_relative(path: Path) -> str:
    """``path`` relative to the repository root where it lies inside it, else as given: notes that name a file do
    not depend on the working directory the benchmark ran in."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(path)

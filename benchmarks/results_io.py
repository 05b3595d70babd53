"""Write a results file in the project's format (see ../shared/RESULTS.md)."""
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "benchmarks" / "results"
Row = Dict[str, Any]


def row(system: str, dataset: str, metric: str, value: float, notes: str = "") -> Row:
    return {"system": system, "dataset": dataset, "metric": metric, "value": value, "notes": notes}


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name() -> Optional[str]:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        return None


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def carried_over_rows(out: Path, keep: Callable[[Row], bool]) -> List[Row]:
    """The rows of an earlier results file that a partial rerun keeps, each with the date it was measured.

    A row keeps its own ``measured`` field if it has one, else takes the earlier file's ``created``.
    Returns ``[]`` when there is no earlier file.
    """
    if not out.exists():
        return []
    earlier = json.loads(out.read_text(encoding="utf8"))
    return [{**r, "measured": r.get("measured", earlier["created"])} for r in earlier["rows"] if keep(r)]


def write_results(out: Path, command: str, rows: List[Row]) -> Path:
    result = {
        "command": command,
        "created": utc_now(),
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "gpu": gpu_name()},
        "rows": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    return out

"""Markdown tables from ``benchmarks/results/*.json`` (format in /work/shared/RESULTS.md).

Tables in the README and docs are generated, never typed: a benchmark writes its JSON, then calls
``results_to_markdown`` and ``update_readme_section`` to replace the text between the markers
``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``.
"""
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

PathLike = Union[str, Path]
Row = Dict[str, Any]


def format_value(value: Any) -> str:
    """Numbers for humans: thousands separators for big values, 3 significant digits for small ones."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN
            return "nan"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.0f}"
        if value == 0:
            return "0"
        if abs(value) >= 0.01:
            return f"{value:.3g}" if abs(value) >= 1 else f"{value:.3f}"
        return f"{value:.2g}"  # 0.0016, and 3e-05 only below 1e-4
    return str(value)


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def results_to_markdown(
    json_path: PathLike,
    *,
    pivot: bool = False,
    notes: bool = True,
    select: Optional[Callable[[Row], bool]] = None,
) -> str:
    """A markdown table of a results file.

    pivot=False: one line per row: system | dataset | metric | value | notes.
    pivot=True: one line per (system, dataset) and one column per metric, in order of first
        appearance; with ``notes`` the distinct notes of a line are joined in a last column.
    select: keep only the rows for which it returns True.
    """
    data = json.loads(Path(json_path).read_text(encoding="utf8"))
    rows: List[Row] = [row for row in data["rows"] if select is None or select(row)]
    if not pivot:
        header = ["system", "dataset", "metric", "value"] + (["notes"] if notes else [])
        lines = [
            [row["system"], row["dataset"], row["metric"], format_value(row["value"])]
            + ([row.get("notes", "")] if notes else [])
            for row in rows
        ]
        return markdown_table(header, lines)
    metrics: List[str] = []
    cells: Dict[Tuple[str, str], Dict[str, str]] = {}
    row_notes: Dict[Tuple[str, str], List[str]] = {}
    for row in rows:
        key = (row["system"], row["dataset"])
        if row["metric"] not in metrics:
            metrics.append(row["metric"])
        cells.setdefault(key, {})[row["metric"]] = format_value(row["value"])
        note = row.get("notes", "")
        if note and note not in row_notes.setdefault(key, []):
            row_notes[key].append(note)
    header = ["system", "dataset"] + metrics + (["notes"] if notes else [])
    lines = []
    for key, values in cells.items():
        line = list(key) + [values.get(m, "") for m in metrics]
        lines.append(line + ["; ".join(row_notes.get(key, []))] if notes else line)
    return markdown_table(header, lines)


def results_to_matrix(json_path: PathLike, metric: str) -> str:
    """One line per system, one column per dataset, the values of ``metric`` (first appearance order)."""
    data = json.loads(Path(json_path).read_text(encoding="utf8"))
    systems: List[str] = []
    datasets: List[str] = []
    cells: Dict[Tuple[str, str], str] = {}
    for row in data["rows"]:
        if row["metric"] != metric:
            continue
        if row["system"] not in systems:
            systems.append(row["system"])
        if row["dataset"] not in datasets:
            datasets.append(row["dataset"])
        cells[row["system"], row["dataset"]] = format_value(row["value"])
    lines = [[system] + [cells.get((system, d), "") for d in datasets] for system in systems]
    return markdown_table([f"system ({metric})"] + datasets, lines)


def markdown_table(header: List[str], lines: List[List[str]]) -> str:
    out = ["| " + " | ".join(_escape(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_escape(c) for c in line) + " |" for line in lines]
    return "\n".join(out) + "\n"


def update_readme_section(readme_path: PathLike, marker_name: str, table_md: str) -> bool:
    """Replace the text between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` in a file.

    RETURNS (bool): True when the file was updated, False when it lacks the markers (the file is left
    untouched, so a benchmark can run before the README has its section).
    """
    path = Path(readme_path)
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf8")
    start, end = f"<!-- results:{marker_name} -->", f"<!-- /results:{marker_name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), flags=re.DOTALL)
    if not pattern.search(text):
        return False
    replacement = f"{start}\n{table_md.rstrip()}\n{end}"
    path.write_text(pattern.sub(lambda _: replacement, text, count=1), encoding="utf8")
    return True


def publish_table(readme_path: PathLike, marker_name: str, table_md: str) -> None:
    """:func:`update_readme_section`, then print the table: a benchmark shows what it wrote."""
    update_readme_section(readme_path, marker_name, table_md)
    print(table_md)

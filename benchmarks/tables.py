"""Markdown tables from ``benchmarks/results/*.json`` (format in /work/shared/RESULTS.md).

Tables in the README and docs are generated, never typed: a benchmark writes its JSON, then calls
``results_to_markdown`` and ``update_readme_section`` to replace the text between the markers
``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` of the page ``PAGES[NAME]`` names.

``python -m benchmarks.tables`` re-renders every table from the results files as they are, without running
any benchmark (each benchmark's ``write_tables``, then the README's summary, ``summary_table``).
"""
import argparse
import importlib
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from .results_io import RESULTS_DIR, ROOT

PathLike = Union[str, Path]
Row = Dict[str, Any]

README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Where each generated table lives: marker name -> page. tests/test_readme.py checks that every page has
# the markers of its tables and that no page has markers missing from here.
PAGES: Dict[str, Path] = {
    "summary": README,
    "project_timings": DOCS / "reproducing.md",
    "eval_kb": DOCS / "reproducing.md",
    "baselines": DOCS / "reproducing.md",
    "encoder_dtype": DOCS / "reproducing.md",
    "kb_scale": DOCS / "kb_scale.md",
    "kb_scale_details": DOCS / "kb_scale.md",
    "kb_from_dumps": DOCS / "kb_dumps.md",
    "kb_from_dumps_guide": README,  # the measured sizes, in the README's KB quickstart
    "ner_constrained_linker": DOCS / "ner_constrained_linker.md",
    "ner_stack_lstm": DOCS / "ner_stack_lstm.md",
    "joint_coref_linker": DOCS / "joint_coref_linker.md",
    "entqa": DOCS / "entqa.md",
    "entqa-gamma": DOCS / "entqa.md",
    "entqa-k": DOCS / "entqa.md",
    "pipelines": DOCS / "pipelines.md",
    "annotate": DOCS / "annotate.md",
    "prediction_parity": DOCS / "prediction_parity.md",
    "jcl_train_speed": DOCS / "training.md",
    "candidates": DOCS / "candidates.md",
}
# The benchmark modules whose ``write_tables()`` renders their tables from their results file, in
# ``python -m benchmarks.tables`` order (prediction_parity renders only when run: its table has no default file).
RENDERERS = ("baselines", "eval_kb", "candidates", "encoder_dtype", "kb_scale", "kb_from_dumps", "ner_constrained_linker",
             "ner_stack_lstm", "joint_coref_linker", "entqa", "pipelines", "annotate", "project_timings",
             "jcl_train_speed")


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


class Headline(NamedTuple):
    """One row of the README's summary: a component's figure beside its peers', all from one results file."""
    component: str
    results: str  # file name under benchmarks/results
    dataset: str
    metric: str
    system: str
    peers: Tuple[Tuple[str, str], ...]  # (label, system) in the same file, dataset and metric
    page: str  # the docs page with the detailed tables


# The figure each component is measured by, against the peers it is compared with on that page.
HEADLINES: Tuple[Headline, ...] = (
    Headline("`ner_stack_lstm` → `joint_coref_linker` (the `train` pipeline)", "pipelines.json", "aida-test",
             "el_micro_f", "ner_stack_lstm+joint_coref_linker",
             (("spaCy `ner` + `entity_linker`", "ner+spacy_entity_linker"),), "docs/pipelines.md"),
    Headline("`ner_constrained_linker` (NER4EL)", "ner_constrained_linker.json", "aida-test", "ed_accuracy",
             "ner4el_all", (("spaCy `entity_linker`", "spacy_entity_linker"), ("prior only", "prior_only")),
             "docs/ner_constrained_linker.md"),
    Headline("`ner_stack_lstm` (joint NER + EL)", "ner_stack_lstm.json", "aida-test", "el_micro_f", "ner_stack_lstm",
             (("spaCy `ner` + `entity_linker`, same features", "spacy_entity_linker"),), "docs/ner_stack_lstm.md"),
    Headline("`joint_coref_linker` (coreference + EL)", "joint_coref_linker.json", "aida-test", "elh_f", "global",
             (("Standalone", "standalone"), ("spaCy `entity_linker` on its clusters", "spacy_entity_linker")),
             "docs/joint_coref_linker.md"),
    Headline("candidate generation (`spacy-el.HybridCandidates.v1`)", "candidates.json", "aida-test",
             "cand_recall_at_30", "hybrid", (("alias table", "alias"),), "docs/candidates.md"),
    Headline("`entity_retriever` (EntQA)", "entqa.json", "aida-test", "recall_at_100", "entity_retriever",
             (("BM25", "bm25"),), "docs/entqa.md"),
    Headline("`entqa_reader` (EntQA)", "entqa.json", "msnbc", "el_micro_f", "entqa_reader",
             (("spaCy `ner` + `entity_linker`", "spacy_entity_linker"),), "docs/entqa.md"),
)


def result_value(rows: Sequence[Row], system: str, dataset: str, metric: str) -> Any:
    """The one value of (system, dataset, metric) in ``rows``; KeyError when absent."""
    for r in rows:
        if (r["system"], r["dataset"], r["metric"]) == (system, dataset, metric):
            return r["value"]
    raise KeyError(f"no row ({system}, {dataset}, {metric})")


def summary_table(headlines: Sequence[Headline] = HEADLINES, results_dir: PathLike = RESULTS_DIR) -> str:
    """The README's summary: one line per component, its figure and its peers', linked to the details."""
    lines = []
    for h in headlines:
        path = Path(results_dir) / h.results
        rows = json.loads(path.read_text(encoding="utf8"))["rows"]
        try:
            ours = result_value(rows, h.system, h.dataset, h.metric)
            peers = "; ".join(f"{label} {format_value(result_value(rows, system, h.dataset, h.metric))}"
                              for label, system in h.peers)
        except KeyError as error:
            raise KeyError(f"{path.name}: {error.args[0]}") from None
        lines.append([h.component, f"`{h.metric}`", h.dataset, format_value(ours), peers,
                      f"[{Path(h.page).stem}]({h.page})"])
    return markdown_table(["component", "metric", "dataset", "spacy_el", "peers", "details"], lines)


def render_all(names: Sequence[str] = RENDERERS) -> List[str]:
    """Re-render the tables of ``names`` (benchmark modules) and the README summary from the results files.

    Runs no benchmark: each module's ``write_tables()`` reads its ``benchmarks/results/<name>.json``; a
    benchmark that has no results file yet is left out. RETURNS: the names rendered.
    """
    done = []
    for name in names:
        if not (RESULTS_DIR / f"{name}.json").is_file():
            continue
        module = importlib.import_module(f"{__package__}.{name}")
        module.write_tables()
        done.append(name)
    update_readme_section(PAGES["summary"], "summary", summary_table())
    return done + ["summary"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Re-render the README and docs tables from benchmarks/results/*.json.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks whose tables to render: {', '.join(RENDERERS)} (default: all); the README "
                             "summary is always rendered")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(RENDERERS))
    if unknown:
        parser.error(f"not a benchmark with tables: {', '.join(unknown)}")
    for name in render_all(args.names or RENDERERS):
        print(f"rendered {name}")


if __name__ == "__main__":
    main()

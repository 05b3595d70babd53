"""Markdown tables from ``benchmarks/results/*.json`` (format in /work/shared/RESULTS.md).

The text between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` of the page ``PAGES[NAME]`` is a table
rendered from the results files: a benchmark's own (its ``write_tables()``), or one chosen here (the summary,
``HEADLINES``; ``SELECTIONS``, each component beside its peers; ``timings_table``, the workflows' minutes).
``python -m benchmarks.tables`` re-renders them all and runs no benchmark. A table that no page lists (a study's)
is printed and written nowhere; ``published_only`` keeps a smoke run's ``--out /tmp/...`` off the pages.
"""
import argparse
import functools
import importlib
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from spacy_el.kb.files import write_text

from .results_io import RESULTS_DIR, ROOT

PathLike = Union[str, Path]
Row = Dict[str, Any]

README = ROOT / "README.md"
DOCS = ROOT / "docs"


class Pages(Dict[str, Optional[Path]]):
    """Marker name -> the page that shows its table; None for a name not listed (a study's table)."""

    def __missing__(self, name: str) -> None:
        return None


# tests/test_readme.py checks that every page has the markers of its tables and no others.
PAGES = Pages({
    "summary": README,
    "headlines": DOCS / "results.md",
    "baselines": DOCS / "results.md",
    "coref_resolvers": DOCS / "results.md",
    "ner_constrained_linker_peers": DOCS / "ner_constrained_linker.md",
    "ner_stack_lstm_peers": DOCS / "ner_stack_lstm.md",
    "joint_coref_linker_peers": DOCS / "joint_coref_linker.md",
    "jcl_long_documents": DOCS / "joint_coref_linker.md",
    "entqa_peers": DOCS / "entqa.md",
    "entqa_long": DOCS / "entqa.md",
    "candidates_peers": DOCS / "candidates.md",
    "pipelines": DOCS / "pipelines.md",
    "pretrained": DOCS / "pretrained.md",
    "project_timings": DOCS / "reproducing.md",
    "eval_kb": DOCS / "reproducing.md",
    "kb_scale": DOCS / "kb_scale.md",
    "kb_scale_details": DOCS / "kb_scale.md",
    "kb_lookup": DOCS / "kb_lookup.md",
    "kb_from_dumps": DOCS / "kb_dumps_scale.md",
    "kb_from_dumps_real": DOCS / "kb_dumps_scale.md",
    "kb_from_dumps_stages": DOCS / "kb_dumps_scale.md",
    "kb_from_dumps_projection": DOCS / "kb_dumps_scale.md",
    "annotate": DOCS / "annotate.md",
    "prediction_parity": DOCS / "prediction_parity.md",
    "gpu": DOCS / "gpu.md",
    "reliability": DOCS / "reliability.md",
})
# The benchmark modules whose ``write_tables()`` renders a table that a page shows, from their results file
# (prediction_parity renders only when run: its table has no default file).
RENDERERS = ("baselines", "eval_kb", "kb_scale", "kb_from_dumps", "pipelines", "annotate", "pretrained", "gpu", "reliability", "jcl_long_documents", "kb_lookup", "entqa")


def format_value(value: Any) -> str:
    """Numbers for humans: thousands separators for big values, 3 significant digits for small ones."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not isinstance(value, float):
        return str(value)
    if value != value or value == 0:  # NaN
        return "nan" if value != value else "0"
    size = abs(value)
    return (f"{value:,.0f}" if size >= 1000 else f"{value:.0f}" if size >= 100 else f"{value:.3g}" if size >= 1
            else f"{value:.3f}" if size >= 0.01 else f"{value:.2g}")  # 0.0016, and 3e-05 only below 1e-4


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows(json_path: PathLike) -> List[Row]:
    return json.loads(Path(json_path).read_text(encoding="utf8"))["rows"]


def results_to_markdown(json_path: PathLike, *, pivot: bool = False, notes: bool = True,
                        select: Optional[Callable[[Row], bool]] = None, column_order: Sequence[str] = ()) -> str:
    """A markdown table of the rows of a results file that ``select`` keeps: one line per row (system | dataset
    | metric | value | notes), or with ``pivot`` one per (system, dataset) and one column per metric, in order of
    first appearance (``column_order``'s first), the line's distinct notes joined in the last column."""
    rows = [row for row in _rows(json_path) if select is None or select(row)]
    if not pivot:
        header = ["system", "dataset", "metric", "value"] + (["notes"] if notes else [])
        lines = [[row["system"], row["dataset"], row["metric"], format_value(row["value"])]
                 + ([row.get("notes", "")] if notes else []) for row in rows]
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
    metrics = [m for m in column_order if m in metrics] + [m for m in metrics if m not in column_order]
    header = ["system", "dataset"] + metrics + (["notes"] if notes else [])
    lines = []
    for key, values in cells.items():
        line = list(key) + [values.get(m, "") for m in metrics]
        lines.append(line + ["; ".join(row_notes.get(key, []))] if notes else line)
    return markdown_table(header, lines)


def suffix_table(results: PathLike, marker: str, name: str, metrics: Sequence[str],
                 select: Optional[Callable[[Row], bool]] = None) -> str:
    """One line per (system, dataset, value of the ``metric{marker}value`` suffix), one column per metric, in the
    results file's order: e.g. a learning curve's ``el_micro_f@step=250`` rows (marker ``"@step="``, name
    ``"step"``). ``select``: only the rows it accepts."""
    cells: Dict[Tuple[str, str, str], Dict[str, str]] = {}
    for r in _rows(results):
        if marker in r["metric"] and (select is None or select(r)):
            metric, value = r["metric"].split(marker)
            cells.setdefault((r["system"], r["dataset"], value), {})[metric] = format_value(r["value"])
    lines = [[s, d, v] + [c.get(m, "") for m in metrics] for (s, d, v), c in cells.items()]
    return markdown_table(["system", "dataset", name, *metrics], lines)


def markdown_table(header: List[str], lines: List[List[str]]) -> str:
    out = ["| " + " | ".join(_escape(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_escape(c) for c in line) + " |" for line in lines]
    return "\n".join(out) + "\n"


def update_readme_section(readme_path: Optional[PathLike], marker_name: str, table_md: str) -> bool:
    """Replace the text between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` in a file. RETURNS: False
    where there is no page (it is said so) or the page lacks the markers (left untouched), else True."""
    if readme_path is None:
        print(f"{marker_name}: on no page (benchmarks.tables.PAGES), not published")
        return False
    path = Path(readme_path)
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf8")
    start, end = f"<!-- results:{marker_name} -->", f"<!-- /results:{marker_name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), flags=re.DOTALL)
    if not pattern.search(text):
        return False
    replacement = f"{start}\n{table_md.rstrip()}\n{end}"
    new_text = pattern.sub(lambda _: replacement, text, count=1)
    if new_text != text:  # an unchanged page keeps its file (and its time stamp)
        write_text(path, new_text)
    return True


def published_only(write_tables: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a benchmark's ``write_tables(results, [page])``: it renders when the results file is under
    ``benchmarks/results`` or the caller names its own page (a test's); otherwise it says why and writes nothing."""
    signature = inspect.signature(write_tables)

    @functools.wraps(write_tables)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        (_, results), *pages = bound.arguments.items()
        own_page = any(_page(value) != _page(signature.parameters[name].default) for name, value in pages)
        if own_page or is_published(results):
            return write_tables(*args, **kwargs)
        print(f"Docs left as they are: {results} is not under {RESULTS_DIR.relative_to(ROOT)}, "
              f"so its tables are not published (python -m benchmarks.tables renders the published results).")
        return None

    return guarded


def _page(value: Optional[PathLike]) -> Optional[Path]:
    return None if value is None else Path(value)


def is_published(results: PathLike) -> bool:
    """Whether a results file lies under ``benchmarks/results``, the files the docs are rendered from."""
    return Path(results).resolve().parent == RESULTS_DIR.resolve()


def publish_table(readme_path: Optional[PathLike], marker_name: str, table_md: str) -> None:
    """:func:`update_readme_section`, then print the table: a benchmark shows what it wrote."""
    update_readme_section(readme_path, marker_name, table_md)
    print(table_md)


def result_value(rows: Sequence[Row], system: str, dataset: str, metric: str) -> Any:
    """The one value of (system, dataset, metric) in ``rows``; KeyError when absent."""
    for r in rows:
        if (r["system"], r["dataset"], r["metric"]) == (system, dataset, metric):
            return r["value"]
    raise KeyError(f"no row ({system}, {dataset}, {metric})")


class Headline(NamedTuple):
    """One row of the README's summary: a component's figure beside its peers', all from one results file."""
    component: str
    results: str  # file name under benchmarks/results
    dataset: str
    metric: str
    system: str
    peers: Tuple[Tuple[str, str], ...]  # (label, system) in the same file, dataset and metric; () where none exists
    page: str  # the docs page with the component's table, relative to the repository root


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
    Headline("`joint_coref_linker` (coreference + EL, trained to convergence)", "joint_coref_linker.json", "gum-test",
             "elh_f", "global_converged", (("Standalone, trained to convergence", "standalone_converged"),),
             "docs/joint_coref_linker.md"),
    Headline("`joint_coref_linker` (coreference alone)", "joint_coref_linker.json", "litbank-test",
             "coref_avg_f", "coref_antecedent_averaging_converged_coarse_width16", (), "docs/results.md"),
    Headline("candidate generation (`spacy-el.HybridCandidates.v1`)", "candidates.json", "aida-test",
             "cand_recall_at_30", "hybrid", (("alias table", "alias"),), "docs/candidates.md"),
    Headline("`entity_retriever` (EntQA)", "entqa.json", "aida-test", "recall_at_100", "entity_retriever",
             (("BM25", "bm25"),), "docs/entqa.md"),
    Headline("`entqa_reader` (EntQA, `reader_mode = \"joint\"`)", "entqa.json", "aida-test", "el_micro_f",
             "entqa_joint", (("spaCy `ner` + `entity_linker`", "spacy_entity_linker"),), "docs/entqa.md"),
)


def summary_table(headlines: Sequence[Headline] = HEADLINES, results_dir: PathLike = RESULTS_DIR,
                  page_dir: PathLike = ROOT) -> str:
    """The summary: one line per component, its figure and its peers', linked to its page (the links relative
    to ``page_dir``, the folder of the page that shows the table)."""
    lines = []
    for h in headlines:
        path = Path(results_dir) / h.results
        rows = _rows(path)
        try:
            ours = result_value(rows, h.system, h.dataset, h.metric)
            peers = "; ".join(f"{label} {format_value(result_value(rows, system, h.dataset, h.metric))}"
                              for label, system in h.peers)
        except KeyError as error:
            raise KeyError(f"{path.name}: {error.args[0]}") from None
        link = Path(os.path.relpath(ROOT / h.page, page_dir)).as_posix()
        lines.append([h.component, f"`{h.metric}`", h.dataset, format_value(ours), peers or "–",
                      f"[{Path(h.page).stem}]({link})"])
    return markdown_table(["component", "metric", "dataset", "spacy_el", "peers", "details"], lines)


class Selection(NamedTuple):
    """Chosen rows of one results file: one line per (system, dataset) of ``lines``, in their order, one
    column per metric (empty where a line has none)."""
    results: str  # file name under benchmarks/results
    lines: Tuple[Tuple[str, str], ...]  # (system, dataset)
    metrics: Tuple[str, ...]


def grid(systems: Sequence[str], datasets: Sequence[str]) -> Tuple[Tuple[str, str], ...]:
    """Every system on every dataset, system by system."""
    return tuple((system, dataset) for system in systems for dataset in datasets)


#: Marker name -> the rows it shows: each component beside its peers on the same data (their pages say what
#: each system is), and the coreference resolvers that the headlines read. Only rows that a product benchmark
#: writes (with its ``--variant``s): a study's seeds, means and dev sweeps are in its ``studies/*/REPORT.md``.
SELECTIONS: Dict[str, Selection] = {
    "ner_constrained_linker_peers": Selection(
        "ner_constrained_linker.json",
        grid(("ner4el_baseline", "ner4el_all", "prior_only", "spacy_entity_linker"), ("aida-test", "msnbc", "ace2004")),
        ("ed_accuracy", "el_micro_f", "mentions_per_s")),
    "ner_stack_lstm_peers": Selection(
        "ner_stack_lstm.json",
        grid(("ner_stack_lstm", "ner_stack_lstm_ner_only", "ner_stack_lstm_el_only", "spacy_ner", "spacy_entity_linker",
              "prior_only"), ("aida-test",)),
        ("ner_f", "el_micro_f", "el_macro_f", "nil_accuracy", "words_per_s")),
    "joint_coref_linker_peers": Selection(
        "joint_coref_linker.json",
        grid(("global_converged", "local_converged", "standalone_converged"), ("gum-test",))
        + grid(("global", "local", "standalone", "prior_only", "spacy_entity_linker"), ("aida-test",)),
        ("coref_avg_f", "elm_f", "elh_f", "cluster_accuracy_multi", "hard_case_accuracy")),
    "entqa_peers": Selection(
        "entqa.json",
        grid(("entity_retriever",), ("aida-test", "msnbc")) + (("bm25", "aida-test"),)
        + grid(("alias_table", "entqa_joint", "entqa_reader", "entqa_joint_ents_alias", "spacy_entity_linker",
                "prior_only"), ("aida-test", "msnbc")),
        ("recall_at_100", "mention_recall_at_100", "el_micro_f", "docs_per_s")),
    "candidates_peers": Selection(
        "candidates.json",
        grid(("alias", "dense_zeroshot", "dense", "hybrid", "hybrid_fast_skip_confident_hnsw"),
             ("aida-test", "msnbc", "ace2004")),
        ("cand_recall_at_1", "cand_recall_at_10", "cand_recall_at_30", "cand_recall_at_100", "mentions_per_s")),
    "coref_resolvers": Selection(
        "joint_coref_linker.json",
        (("coref_antecedent_averaging_converged_coarse_width16", "litbank-test"),
         ("coref_none_converged_coarse", "ontogum-test"))
        + grid(("global_converged_coarse_width16", "global_converged_coarse_averaging"), ("gum-test",)),
        ("coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_avg_f_unmasked",
         "coref_avg_f_no_singletons", "elh_f")),
}


def selection_table(selection: Selection, results_dir: PathLike = RESULTS_DIR) -> str:
    """The table of ``selection``; KeyError naming the file when a line has no value, or a cell several."""
    path = Path(results_dir) / selection.results
    cells: Dict[Tuple[str, str, str], List[Any]] = {}
    for r in _rows(path):
        cells.setdefault((r["system"], r["dataset"], r["metric"]), []).append(r["value"])
    lines = []
    for system, dataset in selection.lines:
        values = [cells.get((system, dataset, metric), []) for metric in selection.metrics]
        if not any(values) or any(len(v) > 1 for v in values):
            raise KeyError(f"{path.name}: ({system}, {dataset}) has {'no' if not any(values) else 'several'} values "
                           f"of {', '.join(selection.metrics)}")
        lines.append([system, dataset] + [format_value(v[0]) if v else "" for v in values])
    return markdown_table(["system", "dataset", *selection.metrics], lines)


def timings_table(rows: Sequence[Row]) -> str:
    """The workflows' minutes (``project_timings.json``): one line per timed step and per workflow total."""
    lines = []
    for r in rows:
        total = r["system"] == "(workflow total)"
        step = f"**{r['system']}**" if total else f"`{r['system']}`"
        if r["metric"] == "wall_minutes":
            where = "sum of the steps above" if total else r["notes"]
            lines.append([r["dataset"], step, f"{r['value']:.1f}", where, r.get("measured", "")[:10]])
        else:  # steps_timed: no total yet
            lines.append([r["dataset"], step, "", f"{r['value']} {r['notes']}", r.get("measured", "")[:10]])
    return markdown_table(["workflow", "step", "minutes", "measured on", "date"], lines)


def render_all(names: Sequence[str] = RENDERERS) -> List[str]:
    """Re-render the tables of the benchmarks ``names`` (each ``write_tables()`` reads its results file), the
    summaries, ``SELECTIONS`` and the workflows' minutes; one without its results file is left out, with a note.
    RETURNS: the names rendered."""
    done = []
    for name in names:
        if not (RESULTS_DIR / f"{name}.json").is_file():
            print(f"{name}: no benchmarks/results/{name}.json, its tables are left as they are")
            continue
        importlib.import_module(f"{__package__}.{name}").write_tables()
        done.append(name)
    update_readme_section(PAGES["summary"], "summary", summary_table())
    update_readme_section(PAGES["headlines"], "headlines", summary_table(page_dir=DOCS))
    if (RESULTS_DIR / "project_timings.json").is_file():
        update_readme_section(PAGES["project_timings"], "project_timings",
                              timings_table(_rows(RESULTS_DIR / "project_timings.json")))
        done.append("project_timings")
    for name, selection in SELECTIONS.items():
        if not (RESULTS_DIR / selection.results).is_file():
            print(f"{name}: no benchmarks/results/{selection.results}, its table is left as it is")
            continue
        update_readme_section(PAGES[name], name, selection_table(selection))
        done.append(name)
    return done + ["summary", "headlines"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Re-render the README and docs tables from benchmarks/results/*.json.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks whose tables to render: {', '.join(RENDERERS)} (default: all); the "
                             "summaries and the selections (SELECTIONS) are always rendered")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(RENDERERS))
    if unknown:
        parser.error(f"not a benchmark with tables on a page: {', '.join(unknown)}")
    for name in render_all(args.names or RENDERERS):
        print(f"rendered {name}")


if __name__ == "__main__":
    main()

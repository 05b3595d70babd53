"""Frozen at commit d9be9f1 (see REPORT.md), not maintained; moved from ``benchmarks/``.

joint_coref_linker prediction speed, memory and coreference quality of trained pipelines against a baseline
pipeline, document by document in the same run (docs/results.md).

The pipelines (``--models name=path``, the first the baseline; ``--set name.setting=value`` configures one, so one
model can run under several prediction settings) run the texts of one test set, each document by every pipeline in
an order that rotates from one document to the next, so that a shared machine slows every pipeline alike; the first
``--warmup`` documents are not timed. Rows per pipeline: ``words_per_s``, ``speed_ratio`` (the baseline's seconds
over the pipeline's: above 1 is faster), the coreference scores of the same predictions (the test set's singleton
protocol). A run replaces its test set's rows and keeps the others'. The long-document rows (``long_doc_*``, the
dense decoding that prediction used before the sparse graph) were measured by code now in
``studies/jcl_sparse_prediction/``; the table still shows them.

    python -m benchmarks.jcl_inference_speed --dataset gum-test \\
        --models global=training/jcl/gum-converged/global/model-best en_spacy_el_coref=training/pretrained/coref/model-tuned
"""
import argparse
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import spacy
import srsly
import torch
from spacy.language import Language
from spacy.tokens import Doc

from .common import SHARED_DATA
from .joint_coref_linker import NAME as COMPONENT
from .joint_coref_linker import coref_only_rows, load_datasets, span_width_of
from .results_io import RESULTS_DIR, Row, merge_rerun, repo_relative, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_inference_speed"
COMMAND = "python -m benchmarks.jcl_inference_speed"
DATASETS = ("gum-test", "ontogum-test", "litbank-test")
QUALITY_METRICS = ("coref_avg_f", "coref_avg_f_no_singletons")
LONG_METRICS = ("long_doc_seconds", "long_doc_peak_rss_mb")


def named_paths(values: Sequence[str]) -> List[Tuple[str, Path]]:
    """``name=path`` pairs, in order; a malformed pair, a repeated name or a missing folder exits naming it."""
    pairs: List[Tuple[str, Path]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--models: expected name=path, got {value!r}")
        if name in dict(pairs):
            raise SystemExit(f"--models: the name {name!r} is given twice")
        if not Path(path).is_dir():
            raise SystemExit(f"--models: {name}'s pipeline folder {path} does not exist (train it first)")
        pairs.append((name, Path(path)))
    if len(pairs) < 2:
        raise SystemExit("--models: give a baseline and at least one pipeline to compare with it")
    return pairs


def component_settings(values: Sequence[str], names: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """``name.setting=value`` -> ``{name: {setting: value}}``, the value read as JSON where it is JSON (``30``,
    ``true``) and as a string otherwise; a malformed one or an unknown pipeline name exits naming it."""
    settings: Dict[str, Dict[str, Any]] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        name, dot, setting = key.partition(".")
        if not sep or not dot or not name or not setting:
            raise SystemExit(f"--set: expected name.setting=value, got {value!r}")
        if name not in names:
            raise SystemExit(f"--set: {name!r} is not one of the --models names ({', '.join(names)})")
        try:
            parsed = srsly.json_loads(raw)
        except ValueError:
            parsed = raw
        settings.setdefault(name, {})[setting] = parsed
    return settings


def rotations(names: Sequence[str], n_docs: int) -> List[List[str]]:
    """The order in which ``names`` run each of ``n_docs`` documents: each starts first in turn."""
    return [list(names[i % len(names):]) + list(names[: i % len(names)]) for i in range(n_docs)]


def measure(pipelines: Dict[str, Language], texts: Sequence[str], warmup: int) -> Tuple[Dict[str, float], Dict[str, List[Doc]]]:
    """Summed seconds of each pipeline over ``texts``, one document at a time, after an untimed pass over the
    first ``warmup`` texts; and each pipeline's docs, in text order."""
    for text in texts[:warmup]:
        for nlp in pipelines.values():
            nlp(text)
    seconds = {name: 0.0 for name in pipelines}
    docs: Dict[str, List[Doc]] = {name: [] for name in pipelines}
    for text, order in zip(texts, rotations(list(pipelines), len(texts))):
        for name in order:
            start = time.perf_counter()
            doc = pipelines[name](text)
            seconds[name] += time.perf_counter() - start
            docs[name].append(doc)
    return seconds, docs


def speed_rows(dataset: str, words: int, seconds: Dict[str, float], note: str) -> List[Row]:
    """``words_per_s`` and ``speed_ratio`` (against the first of ``seconds``, the baseline) per pipeline."""
    baseline = next(iter(seconds))
    rows: List[Row] = []
    for name, total in seconds.items():
        rows.append(row(name, dataset, "words_per_s", round(words / total), note))
        rows.append(row(name, dataset, "speed_ratio", round(seconds[baseline] / total, 2),
                        f"{baseline}'s seconds / {name}'s, same documents, same run"))
    return rows


def replacing_test_set(out: Path, rows: List[Row], dataset: str) -> List[Row]:
    """The results file ``out``'s rows with this run's ``rows`` of ``dataset`` in place of all its earlier rows of
    ``dataset``: a run measures every pipeline of a test set together, so a pipeline left out of it (or a metric
    it did not measure) is not kept from an earlier run. The other test sets' rows stay."""
    measured = {(r["system"], r["dataset"], r["metric"]) for r in rows}
    return [r for r in merge_rerun(out, rows, COMMAND)
            if r["dataset"] != dataset or (r["system"], r["dataset"], r["metric"]) in measured]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", required=True, help="name=path of each pipeline; the first is the baseline")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME.SETTING=VALUE",
                        help=f"configure the {COMPONENT} of the pipeline NAME (repeatable)")
    parser.add_argument("--dataset", choices=DATASETS, default="litbank-test")
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--limit", type=int, default=0, help="first N documents only (smoke runs)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed documents first")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args(argv)
    models = named_paths(args.models)
    settings = component_settings(args.settings, [name for name, _ in models])
    torch.set_num_threads(args.threads)
    args.datasets = [args.dataset]
    gold = load_datasets(args, spacy.blank("en")).get(args.dataset)  # the first --limit documents
    if not gold:
        raise SystemExit(f"{args.dataset} not found under {args.data}")
    pipelines = {}
    for name, path in models:
        pipelines[name] = spacy.load(path)
        pipelines[name].get_pipe(COMPONENT).configure(**settings.get(name, {}))
    texts = [g.text for g in gold]
    words = sum(len(g) for g in gold)
    seconds, predictions = measure(pipelines, texts, args.warmup)
    described = "; ".join(f"{name}: {repo_relative(path)}" + "".join(f", {k} {v}" for k, v in settings.get(name, {}).items())
                          for name, path in models)
    note = (f"{len(texts)} documents ({words:,} words), one at a time, each by every pipeline in a rotating order, "
            f"after {args.warmup} untimed; {args.threads} torch threads; load average {os.getloadavg()[0]:.1f} at the end; "
            f"{described}")
    rows = speed_rows(args.dataset, words, seconds, note)
    for name, _ in models:
        scored = coref_only_rows(name, args.dataset, gold, predictions[name], "the predictions timed",
                                 span_width_of(pipelines[name]))
        rows += [r for r in scored if r["metric"] in QUALITY_METRICS]
    for r in rows:
        print(f"{r['system']:>12} {r['metric']:>26} {r['value']}")
    out = write_results(Path(args.out), COMMAND, replacing_test_set(Path(args.out), rows, args.dataset))
    print(f"wrote {out}")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Optional[Path] = PAGES[NAME]) -> None:
    """One line per pipeline and test set, then how each test set was run (the notes its speed rows share)."""
    table = results_to_markdown(results, pivot=True, notes=False,
                                column_order=("words_per_s", "speed_ratio") + QUALITY_METRICS + LONG_METRICS)
    how = {(r["dataset"], r["metric"]): r["notes"] for r in srsly.read_json(results)["rows"]
           if r["metric"] in ("words_per_s", "long_doc_peak_rss_mb")}
    lines = [f"{dataset}{', long document' if metric != 'words_per_s' else ''}: {note}."
             for (dataset, metric), note in how.items()]
    publish_table(page, NAME, table + "\n" + "\n".join(lines))


if __name__ == "__main__":
    main()

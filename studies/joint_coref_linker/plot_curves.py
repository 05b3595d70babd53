"""Learning curves from a results file, drawn as a PNG (issue 30).

A training run's curve is in its benchmark's results file as ``<metric>@step=N`` rows (dev scores) and
``train_minutes@step=N`` rows (:func:`benchmarks.common.curve_rows`). This module draws one panel per
(system, dev set): each metric against the training step, the minutes on a second axis at the top. The
picture is made from the results file only, so it can be redrawn at any time without the models:

    python -m benchmarks.plot_curves docs/jcl_learning_curves.png benchmarks/results/joint_coref_linker.json \\
        benchmarks/results/pretrained.json benchmarks/results/gpu.json \\
        --systems global_converged en_spacy_el_coref coref_none_converged coref_none_gpu

Needs matplotlib (``pip install -e ".[plots]"``). The PNG is written to a temporary name and renamed into place.
"""
import argparse
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .results_io import CURVE_STEP

MINUTES = "train_minutes"
#: Panels side by side; more curves start another row, so that the picture stays readable on a page.
PANELS_PER_ROW = 3
#: ``(system, dataset)`` -> metric -> ``[(step, value)]`` by step.
Curves = Dict[Tuple[str, str], Dict[str, List[Tuple[int, float]]]]


def learning_curves(rows: Sequence[Dict[str, Any]], systems: Optional[Sequence[str]] = None) -> Curves:
    """The ``<metric>@step=N`` rows of ``rows`` (the systems of ``systems`` when given), by system and dataset."""
    curves: Curves = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if CURVE_STEP not in r["metric"] or (systems and r["system"] not in systems):
            continue
        metric, step = r["metric"].split(CURVE_STEP)
        curves[(r["system"], r["dataset"])][metric].append((int(step), float(r["value"])))
    return {key: {metric: sorted(points) for metric, points in by_metric.items()} for key, by_metric in curves.items()}


def hardware(rows: Sequence[Dict[str, Any]]) -> Dict[Tuple[str, str], str]:
    """``(system, dataset)`` -> what its curve's minutes were measured on ("1 NVIDIA H200", "2 CPU cores"),
    from each row's ``machine`` (set by :func:`main` from the row's own or its file's)."""
    found = {}
    for r in rows:
        machine = r.get("machine") or {}
        if CURVE_STEP in r["metric"] and machine:
            found[(r["system"], r["dataset"])] = f"1 {machine['gpu']}" if machine.get("gpu") else f"{machine.get('cores')} CPU cores"
    return found


def plot(curves: Curves, out: Path, title: str = "", machines: Optional[Dict[Tuple[str, str], str]] = None) -> Path:
    """One panel per curve, :data:`PANELS_PER_ROW` to a row: its scores (every metric but the minutes) against
    the step; the minutes of the first and last evaluation label a top axis, named after
    ``machines[(system, dataset)]`` when given. Returns ``out``."""
    if not curves:
        raise ValueError("no learning-curve rows (<metric>@step=N) to plot: give a results file with a training curve")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(len(curves), PANELS_PER_ROW)
    rows = -(-len(curves) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 3.8 * rows), squeeze=False)
    for ax in axes.flat[len(curves):]:
        ax.set_visible(False)
    machines = machines or {}
    for ax, ((system, dataset), by_metric) in zip(axes.flat, sorted(curves.items())):
        for metric, points in sorted(by_metric.items()):
            if metric != MINUTES:
                ax.plot([s for s, _ in points], [v for _, v in points], marker="o", markersize=3, label=metric)
        ax.set_xlabel("training step")
        ax.set_ylabel(f"score on {dataset}")
        ax.set_title(f"{system} ({dataset})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        minutes = by_metric.get(MINUTES)
        if minutes:
            ticks = minutes[:: max(1, len(minutes) // 5)]  # about five labelled evaluations
            top = ax.twiny()
            top.set_xlim(ax.get_xlim())
            top.set_xticks([s for s, _ in ticks])
            top.set_xticklabels([f"{m:.0f}" for _, m in ticks], fontsize=8)
            on = machines.get((system, dataset))
            top.set_xlabel(f"minutes of training ({on})" if on else "minutes of training", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.with_name(f".{out.name}.tmp")
    fig.savefig(temp, format="png", dpi=110)
    plt.close(fig)
    os.replace(temp, out)
    return out


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("results", type=Path, nargs="+", help="benchmarks/results/*.json files")
    parser.add_argument("--systems", nargs="+", default=None, help="only these systems' curves")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    rows = []
    for path in args.results:
        data = json.loads(path.read_text(encoding="utf8"))
        rows += [{**r, "machine": r.get("machine") or data.get("machine")} for r in data["rows"]]
    print(f"wrote {plot(learning_curves(rows, args.systems), args.out, args.title, hardware(rows))}")


if __name__ == "__main__":
    main()

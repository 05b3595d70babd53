"""What ``max_span_width`` and the antecedent window ``max_antecedents`` cost coreference at best (issue 30).

A span-enumerating model such as ``joint_coref_linker`` scores only spans of at most ``max_span_width`` tokens,
so even a perfect one misses the wider gold mentions. The rows of system ``gold_width_<W>`` are the MUC, B³,
CEAF-e, CoNLL average F1 and mention recall of that perfect model (the gold clusters without their mentions
wider than ``W`` tokens, scored against the full gold): the ceiling of a model trained with
``max_span_width = W``.

The model also links a mention only to one of the ``K = max_antecedents`` kept spans before it (Lee et al.
2017), and it keeps ``span_ratio`` spans per token (0.4). So a gold mention whose nearest earlier mention of
its cluster is more than ``K / span_ratio`` tokens before it (start to start) cannot join that cluster: it
starts a new one, and the cluster is split there. The rows of system ``gold_window_<K>`` are a perfect model
with that window: the gold clusters split wherever two consecutive mentions are further apart than that. It
takes the kept spans to be spread evenly at ``span_ratio`` per token, which the model's pruning only
approximates.

Singletons count on GUM and LitBank, which annotate them, and are left out on both sides on OntoGUM, which
annotates none, as ``benchmarks/joint_coref_linker.py`` scores each (:func:`~.joint_coref_linker.scores_singletons`):
a mention that a split leaves alone is then not output. Cheap: no model runs. Writes
``benchmarks/results/coref_ceiling.json`` and its table in docs/joint_coref_linker.md.

    python -m benchmarks.coref_ceiling --widths 5,8,16 --windows 50,150
"""
import argparse
from pathlib import Path
from typing import Dict, List, Sequence

import spacy
from spacy.tokens import Doc, Span

import spacy_el  # noqa: F401  (registers the readers)
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.scorers import cluster_groups, doc_clusters

from .common import SHARED_DATA
from .joint_coref_linker import load_datasets, scores_singletons
from .results_io import RESULTS_DIR, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "coref_ceiling"
COMMAND = "python -m benchmarks.coref_ceiling"
DATASETS = ("gum-test", "ontogum-test", "litbank-test")
#: 5: the seed paper's; 8: configs/joint_coref_linker.cfg's; 16 and 21: the widths its initialize warning names.
WIDTHS = (5, 8, 12, 16, 21)
#: 50: configs/joint_coref_linker*.cfg's max_antecedents; 250: Lee et al. (2017)'s.
WINDOWS = (25, 50, 100, 150, 250)
#: configs/joint_coref_linker*.cfg's span_ratio (Lee et al.'s).
SPAN_RATIO = 0.4
METRICS = ("coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_mention_r")


def width_ceiling(docs: Sequence[Doc], width: int, keep_singletons: bool = True) -> Dict[str, float]:
    """The coreference scores of the gold clusters of ``docs`` (``coref_clusters_N`` span groups) without the
    mentions wider than ``width`` tokens (a cluster left with none is dropped), against the full gold."""
    pairs = []
    for doc in docs:
        kept = [[(span.start_char, span.end_char) for span in group if len(span) <= width] for group in cluster_groups(doc)]
        pairs.append((doc_clusters(doc), [group for group in kept if group]))
    return coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")


def split_by_window(group: Sequence[Span], window: int, span_ratio: float) -> List[List[Span]]:
    """``group`` (one gold cluster) as a model with antecedent window ``window`` can at best predict it: in text
    order, a mention more than ``window`` kept spans after the previous mention of the cluster (``span_ratio``
    kept spans per token, start to start) starts a new cluster."""
    ordered = sorted(group, key=lambda span: (span.start, span.end))
    parts = [[ordered[0]]]
    for previous, span in zip(ordered, ordered[1:]):
        if span_ratio * (span.start - previous.start) <= window:
            parts[-1].append(span)
        else:
            parts.append([span])
    return parts


def window_ceiling(docs: Sequence[Doc], window: int, span_ratio: float = SPAN_RATIO,
                   keep_singletons: bool = True) -> Dict[str, float]:
    """The coreference scores of the gold clusters of ``docs`` split by :func:`split_by_window`, against the full
    gold."""
    pairs = []
    for doc in docs:
        parts = [part for group in cluster_groups(doc) for part in split_by_window(list(group), window, span_ratio)]
        pairs.append((doc_clusters(doc), [[(span.start_char, span.end_char) for span in part] for part in parts]))
    return coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")


def ceiling_rows(datasets: Dict[str, List[Doc]], widths: Sequence[int], windows: Sequence[int] = ()) -> List[Row]:
    rows: List[Row] = []
    for dataset, docs in datasets.items():
        singletons = scores_singletons(dataset)
        protocol = "singletons counted" if singletons else "singletons left out on both sides"
        for width in widths:
            scores = width_ceiling(docs, width, singletons)
            note = (f"the gold clusters of {len(docs)} docs without their mentions wider than {width} tokens, "
                    f"against the full gold: a perfect model with that max_span_width; {protocol}")
            rows += [row(f"gold_width_{width}", dataset, metric, round(scores[metric], 4), note) for metric in METRICS]
        for window in windows:
            scores = window_ceiling(docs, window, keep_singletons=singletons)
            note = (f"the gold clusters of {len(docs)} docs split where two consecutive mentions are more than "
                    f"{window} kept spans apart ({SPAN_RATIO} per token), against the full gold: a perfect model "
                    f"with that max_antecedents; {protocol}")
            rows += [row(f"gold_window_{window}", dataset, metric, round(scores[metric], 4), note)
                     for metric in METRICS if metric != "coref_mention_r"]  # a window loses no mention
    return rows


def positive_ints(text: str, flag: str, what: str) -> List[int]:
    """The comma-separated positive ints of ``text``, or an exit that names ``flag`` and the value."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or any(value < 1 for value in values):
        raise SystemExit(f"[coref_ceiling] {flag} must be comma-separated positive {what}, got {text!r}")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    args = parser.parse_args()
    widths = positive_ints(args.widths, "--widths", "token counts")
    windows = positive_ints(args.windows, "--windows", "span counts")
    loader_args = argparse.Namespace(data=args.data, datasets=args.datasets.split(","), limit=None)
    datasets = load_datasets(loader_args, spacy.blank("en"))
    if not datasets:
        raise SystemExit(f"[coref_ceiling] none of {args.datasets} found under {args.data}")
    out = write_results(Path(args.out), COMMAND, ceiling_rows(datasets, widths, windows))
    print(f"wrote {out}")
    write_tables(out)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True, notes=False))


if __name__ == "__main__":
    main()

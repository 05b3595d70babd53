"""What ``max_span_width`` costs coreference at best: the gold clusters without their mentions wider than ``W``
tokens, scored against the full gold (issue 30).

A span-enumerating model such as ``joint_coref_linker`` scores only spans of at most ``max_span_width`` tokens,
so even a perfect one misses the wider gold mentions. The rows of system ``gold_width_<W>`` are the MUC, B³,
CEAF-e, CoNLL average F1 and mention recall of that perfect model: the ceiling of a model trained with
``max_span_width = W`` (singletons count, as the datasets annotate them). Cheap: no model runs.

Writes ``benchmarks/results/coref_ceiling.json`` and its table in docs/joint_coref_linker.md.

    python -m benchmarks.coref_ceiling --widths 5,8,16
"""
import argparse
from pathlib import Path
from typing import Dict, List, Sequence

import spacy
from spacy.tokens import Doc

import spacy_el  # noqa: F401  (registers the readers)
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.scorers import cluster_groups, doc_clusters

from .common import SHARED_DATA
from .joint_coref_linker import load_datasets
from .results_io import RESULTS_DIR, Row, row, write_results
from .tables import PAGES, publish_table, results_to_markdown

NAME = "coref_ceiling"
COMMAND = "python -m benchmarks.coref_ceiling"
DATASETS = ("gum-test", "ontogum-test", "litbank-test")
#: 5: the seed paper's; 8: configs/joint_coref_linker.cfg's; 16 and 21: the widths its initialize warning names.
WIDTHS = (5, 8, 12, 16, 21)
METRICS = ("coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_mention_r")


def width_ceiling(docs: Sequence[Doc], width: int) -> Dict[str, float]:
    """The coreference scores of the gold clusters of ``docs`` (``coref_clusters_N`` span groups) without the
    mentions wider than ``width`` tokens (a cluster left with none is dropped), against the full gold."""
    pairs = []
    for doc in docs:
        kept = [[(span.start_char, span.end_char) for span in group if len(span) <= width] for group in cluster_groups(doc)]
        pairs.append((doc_clusters(doc), [group for group in kept if group]))
    return coref_scores(pairs, keep_singletons=True, on_overlap="first")


def ceiling_rows(datasets: Dict[str, List[Doc]], widths: Sequence[int]) -> List[Row]:
    rows: List[Row] = []
    for dataset, docs in datasets.items():
        for width in widths:
            scores = width_ceiling(docs, width)
            note = (f"the gold clusters of {len(docs)} docs without their mentions wider than {width} tokens, "
                    "against the full gold: a perfect model with that max_span_width")
            rows += [row(f"gold_width_{width}", dataset, metric, round(scores[metric], 4), note) for metric in METRICS]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    if any(w < 1 for w in widths):
        raise SystemExit(f"[coref_ceiling] --widths must be positive token counts, got {args.widths!r}")
    loader_args = argparse.Namespace(data=args.data, datasets=args.datasets.split(","), limit=None)
    datasets = load_datasets(loader_args, spacy.blank("en"))
    if not datasets:
        raise SystemExit(f"[coref_ceiling] none of {args.datasets} found under {args.data}")
    out = write_results(Path(args.out), COMMAND, ceiling_rows(datasets, widths))
    print(f"wrote {out}")
    write_tables(out)


def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True, notes=False))


if __name__ == "__main__":
    main()

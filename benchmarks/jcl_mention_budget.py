"""Where a trained ``joint_coref_linker`` loses gold mentions, and what a larger mention budget at prediction wins
(issue 30).

A gold mention reaches the output only when it passes three gates:

1. it is at most ``max_span_width`` tokens wide (``coref_mention_reachable``);
2. pruning keeps it: the model keeps ``span_ratio`` spans per token (0.4 in every config), ranked by the mention
   score ``Phi_p`` (``mention_kept_r``: the share of the gold mentions among the kept spans);
3. the decoder writes it: it joins a cluster, gets a link, or is a singleton above ``singleton_threshold``
   (``coref_mention_r``).

The corpora differ in how dense their gold mentions are (``gold_mentions_per_token``): GUM annotates every
entity mention, singletons included, and a fixed budget per token may cost it at gate 2 what it does not cost the
others. The component setting ``predict_span_ratio`` changes that budget at prediction without retraining.

The rows of system ``gold`` give ``gold_mentions_per_token`` of each split (no model needed). For each model
(``--model SYSTEM=PATH``, trained on ``--corpus``), on the corpus's dev split and for each of
``--ratios`` (cheapest first): rows ``<metric>_predict_span_ratio_<R>`` for ``mention_kept_r``,
``coref_mention_r``, ``coref_mention_p`` and the score the model was selected by in training (coreference average
F1, for a joint model its mean with ELh), which chooses the ratio (ties: the cheaper). On the test split: rows
``<SYSTEM>`` with the model's own ratio and ``<SYSTEM>_predict_span_ratio`` with the one chosen on dev. Singletons
count as ``benchmarks/joint_coref_linker.py`` counts them on each corpus. Writes
``benchmarks/results/jcl_mention_budget.json`` (a rerun replaces its systems' rows and keeps the others) and its
table in docs/joint_coref_linker.md.

    python -m benchmarks.jcl_mention_budget --corpus litbank \\
        --model coref_none_converged_coarse=training/jcl/litbank-converged-coarse/none/model-best
"""
import argparse
import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import spacy
from spacy.language import Language
from spacy.tokens import Doc

import spacy_el  # noqa: F401  (registers the readers and factories)
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.scorers import cluster_groups, doc_clusters
from spacy_el.training.tune import kept_index

from .common import SHARED_DATA
from .joint_coref_linker import (NAME as COMPONENT, predict, read_split, reachable_share, scores_singletons,
                                 selection_metric, selection_score)
from .results_io import RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, format_value, markdown_table, publish_table, published_only

NAME = "jcl_mention_budget"
RATIOS = (0.4, 0.6, 0.8)
SETTING = "predict_span_ratio"
CHOSEN = f"_{SETTING}"
#: The metrics measured at each ratio, beside the selection score; the table's columns, in order.
MENTION_METRICS = ("mention_kept_r", "coref_mention_r", "coref_mention_p")
Offsets = Tuple[int, int]


def gold_mentions(doc: Doc, keep_singletons: bool) -> List[Offsets]:
    """The character offsets of ``doc``'s gold cluster mentions (a singleton's only with ``keep_singletons``)."""
    return [(span.start_char, span.end_char) for group in cluster_groups(doc) if keep_singletons or len(group) > 1
            for span in group]


def kept_recall(nlp: Language, gold: Sequence[Doc], keep_singletons: bool) -> float:
    """The share of ``gold``'s mentions among the spans the pipeline's pruning keeps in the same texts
    (:meth:`~spacy_el.pipeline.joint_coref_linker.JointCorefLinker.kept_spans`), matched by character offsets."""
    pipe = nlp.get_pipe(COMPONENT)
    found = total = 0
    for doc in gold:
        made = nlp.make_doc(doc.text)
        kept = {(span.start_char, span.end_char) for span in pipe.kept_spans([made])[0]}
        mentions = gold_mentions(doc, keep_singletons)
        found += sum(mention in kept for mention in mentions)
        total += len(mentions)
    return found / max(total, 1)


def budget_scores(nlp: Language, gold: Sequence[Doc], keep_singletons: bool, joint: bool,
                  batch_size: int) -> Dict[str, float]:
    """``MENTION_METRICS`` and the selection score (:func:`selection_metric`) of ``nlp`` as it is configured."""
    pred, _ = predict(nlp, gold, batch_size)
    pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
    coref = coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")
    return {"mention_kept_r": round(kept_recall(nlp, gold, keep_singletons), 4),
            "coref_mention_r": round(coref["coref_mention_r"], 4), "coref_mention_p": round(coref["coref_mention_p"], 4),
            selection_metric(joint): selection_score(gold, pred, keep_singletons, joint)}


def gold_rows(corpus: str, splits: Dict[str, List[Doc]]) -> List[Row]:
    """``gold_mentions_per_token`` of each split (singletons as the benchmark counts them on ``corpus``)."""
    rows = []
    keep = scores_singletons(f"{corpus}-test")
    for split, docs in splits.items():
        mentions = sum(len(gold_mentions(doc, keep)) for doc in docs)
        tokens = sum(len(doc) for doc in docs)
        note = f"{len(docs)} docs, {tokens:,} tokens, {mentions:,} gold mentions{'' if keep else ' (no singletons)'}"
        rows.append(row("gold", f"{corpus}-{split}", "gold_mentions_per_token", round(mentions / max(tokens, 1), 4), note))
    return rows


def model_rows(system: str, nlp: Language, corpus: str, dev: List[Doc], test: List[Doc], ratios: Sequence[float],
               batch_size: int) -> List[Row]:
    """The dev sweep of ``predict_span_ratio`` and the test rows of ``system`` (module docstring)."""
    pipe = nlp.get_pipe(COMPONENT)
    attrs = pipe.model.attrs
    joint = attrs["mode"] in ("global", "local")
    keep = scores_singletons(f"{corpus}-test")
    own = pipe.settings.predict_span_ratio
    rows = [row(system, f"{corpus}-{split}", "coref_mention_reachable", reachable_share(docs, attrs["max_span_width"], keep),
                f"gold mentions no wider than max_span_width {attrs['max_span_width']}")
            for split, docs in (("dev", dev), ("test", test))]
    scored: List[Tuple[float, float]] = []
    for ratio in ratios:
        print(f"{corpus}-dev: {system} with {SETTING} {ratio:g}", flush=True)
        pipe.configure(**{SETTING: ratio})
        scores = budget_scores(nlp, dev, keep, joint, batch_size)
        rows += [row(system, f"{corpus}-dev", f"{metric}_{SETTING}_{ratio:g}", value, "dev sweep")
                 for metric, value in scores.items()]
        scored.append((ratio, scores[selection_metric(joint)]))
    chosen = scored[kept_index(scored)][0]
    trained = attrs["span_ratio"]

    def test_scores(ratio: float) -> Dict[str, float]:
        print(f"{corpus}-test: {system} with {SETTING} {ratio:g}", flush=True)
        pipe.configure(**{SETTING: ratio})
        return budget_scores(nlp, test, keep, joint, batch_size)

    as_trained = test_scores(0.0)
    best = as_trained if chosen == trained else test_scores(chosen)  # the model's own ratio won: the same predictions
    for name, scores, note in ((system, as_trained, f"the model's span_ratio {trained:g}"),
                               (f"{system}{CHOSEN}", best, f"{SETTING} {chosen:g} (best on {corpus} dev)")):
        rows += [row(name, f"{corpus}-test", metric, value, note) for metric, value in scores.items()]
    pipe.configure(**{SETTING: own})
    return rows


def budget_table(rows: Sequence[Row]) -> str:
    """The gold density of each split, then one line per model, split and ratio: the dev sweep's ratios, then the
    test rows with the model's own ratio and with the one chosen on dev."""
    values = {(r["system"], r["dataset"], r["metric"]): r["value"] for r in rows}
    density = [[dataset, format_value(value)] for (system, dataset, metric), value in values.items()
               if system == "gold" and metric == "gold_mentions_per_token"]
    header = ["system", "dataset", SETTING, "reachable (width)", *MENTION_METRICS, "selection score"]
    lines = []
    for system, dataset in dict.fromkeys((r["system"], r["dataset"]) for r in rows):
        if system == "gold" or system.endswith(CHOSEN):
            continue
        reachable = format_value(values[(system, dataset, "coref_mention_reachable")])
        if dataset.endswith("-dev"):
            measured = [(f"{ratio:g}", system, f"_{SETTING}_{ratio:g}") for ratio in swept_ratios(values, system, dataset)]
        else:
            measured = [("the model's", system, ""), ("best on dev", f"{system}{CHOSEN}", "")]
        for label, name, suffix in measured:
            metric = next(m for m in ("coref_elh_mean", "coref_avg_f") if (name, dataset, m + suffix) in values)
            lines.append([name, dataset, label, reachable,
                          *(format_value(values[(name, dataset, m + suffix)]) for m in MENTION_METRICS),
                          f"{format_value(values[(name, dataset, metric + suffix)])} ({metric})"])
    return (markdown_table(["dataset", "gold mentions per token"], density) + "\n"
            + markdown_table(header, lines))


def swept_ratios(values: Dict[Tuple[str, str, str], float], system: str, dataset: str) -> List[float]:
    """The ``predict_span_ratio`` values of ``system``'s dev sweep on ``dataset``, in increasing order."""
    prefix = f"{MENTION_METRICS[0]}_{SETTING}_"
    return sorted(float(metric[len(prefix):]) for name, split, metric in values
                  if name == system and split == dataset and metric.startswith(prefix))


def parse_models(specs: Sequence[str]) -> List[Tuple[str, Path]]:
    """``SYSTEM=PATH`` pairs, each path an existing folder; an exit that names the bad one otherwise."""
    models = []
    for spec in specs:
        system, _, path = spec.partition("=")
        if not system or not path:
            raise SystemExit(f"[{NAME}] --model takes SYSTEM=PATH, got {spec!r}")
        if not Path(path).is_dir():
            raise SystemExit(f"[{NAME}] --model {spec}: {path} is not a folder (train the model first)")
        models.append((system, Path(path)))
    return models


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, choices=("gum", "ontogum", "litbank"))
    parser.add_argument("--model", action="append", default=[], metavar="SYSTEM=PATH", help="a trained pipeline (repeat)")
    parser.add_argument("--ratios", default=",".join(map(str, RATIOS)), help="predict_span_ratio values, cheapest first")
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--limit", type=int, default=0, help="the first N documents of each split (0: all)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    args = parser.parse_args(argv)
    models = parse_models(args.model)  # none: only the gold density rows
    try:
        ratios = [float(part) for part in args.ratios.split(",")]
    except ValueError:
        parser.error(f"--ratios must be comma-separated numbers, got {args.ratios!r}")
    splits = {split: (read_split(Path(args.data), args.corpus, split, spacy.blank("en")) or [])[: args.limit or None]
              for split in ("dev", "test")}
    if not all(splits.values()):
        raise SystemExit(f"[{NAME}] {args.corpus}'s dev and test splits are not both under {args.data}")
    rows = gold_rows(args.corpus, splits)
    for system, path in models:
        rows += model_rows(system, spacy.load(path), args.corpus, splits["dev"], splits["test"], ratios, args.batch_size)
    command = " ".join([f"python -m benchmarks.jcl_mention_budget --corpus {args.corpus} --ratios {args.ratios}",
                        *(f"--model {system}={os.path.relpath(path.resolve(), ROOT)}" for system, path in models)])
    out = Path(args.out)
    if out.exists():
        rows = merge_rerun(out, rows, command)
    out = write_results(out, command, rows)
    print(f"wrote {out}")
    write_tables(out)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, budget_table(json.loads(Path(results).read_text())["rows"]))


if __name__ == "__main__":
    main()

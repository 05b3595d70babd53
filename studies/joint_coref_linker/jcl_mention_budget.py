"""Where a trained ``joint_coref_linker`` loses gold mentions, and what a larger mention budget or a lower singleton
threshold at prediction wins (issue 30).

A gold mention reaches the output only when it passes three gates:

1. it is at most ``max_span_width`` tokens wide (``coref_mention_reachable``);
2. pruning keeps it: the model keeps ``span_ratio`` spans per token (0.4 in every config), ranked by the mention
   score ``Phi_p`` (``mention_kept_r``: the share of the gold mentions among the kept spans);
3. the decoder writes it: it joins a cluster, gets a link, or is a singleton above ``singleton_threshold``
   (``coref_mention_r``).

The corpora differ in how dense their gold mentions are (``gold_mentions_per_token``): GUM annotates every
entity mention, singletons included, and a fixed budget per token may cost it at gate 2 what it does not cost the
others. Two component settings move the gates at prediction without retraining (``--setting``):
``predict_span_ratio`` the budget of gate 2, ``singleton_threshold`` gate 3 (a mention that joins no cluster and
gets no link is written when its mention probability is above it).

The rows of system ``gold`` give ``gold_mentions_per_token`` of each split (no model needed). For each model
(``--model SYSTEM=PATH``, trained on ``--corpus``), on the corpus's dev split and for each of ``--values`` of the
setting (the model's own first, then cheapest first): rows ``<metric>_<setting>_<V>`` for ``mention_kept_r``,
``coref_mention_r``, ``coref_mention_p`` and the score the model was selected by in training (coreference average
F1, for a joint model its mean with ELh), which chooses the value (ties: the earlier). On the test split: rows
``<SYSTEM>`` with the model's own settings and ``<SYSTEM>_<setting>`` with the value chosen on dev. Singletons
count as ``benchmarks/joint_coref_linker.py`` counts them on each corpus; where they count, the model's own test
rows also give gates 2 and 3 for gold singletons and for the mentions of gold clusters apart
(``<metric>_singleton``, ``<metric>_clustered``, and ``gold_share_<kind>``). Writes
``benchmarks/results/jcl_mention_budget.json`` (a rerun replaces its systems' rows and keeps the others) and its
table in docs/joint_coref_linker.md.

    python -m benchmarks.jcl_mention_budget --corpus litbank \\
        --model coref_none_converged_coarse=training/jcl/litbank-converged-coarse/none/model-best
    python -m benchmarks.jcl_mention_budget --corpus litbank --setting singleton_threshold --model ...
"""
import argparse
import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

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
#: The prediction settings this benchmark sweeps, each with its default values: the component's default first
#: (``predict_span_ratio`` 0.4 is every config's ``span_ratio``), then by cost, so that a tie keeps the cheaper.
SWEEPS: Dict[str, Tuple[float, ...]] = {"predict_span_ratio": (0.4, 0.6, 0.8), "singleton_threshold": (0.5, 0.4, 0.3, 0.6)}
#: The metrics measured at each value swept, beside the selection score; the table's columns, in order.
MENTION_METRICS = ("mention_kept_r", "coref_mention_r", "coref_mention_p")
#: Gold singletons and the mentions of gold clusters, measured apart (:func:`kind_scores`) on test, as saved.
KINDS = ("singleton", "clustered")
KIND_METRICS = tuple(f"{metric}_{kind}" for kind in KINDS for metric in ("gold_share", "mention_kept_r", "coref_mention_r"))
Offsets = Tuple[int, int]


def gold_mentions(doc: Doc, keep_singletons: bool) -> List[Offsets]:
    """The character offsets of ``doc``'s gold cluster mentions (a singleton's only with ``keep_singletons``)."""
    return [(span.start_char, span.end_char) for group in cluster_groups(doc) if keep_singletons or len(group) > 1
            for span in group]


def kept_offsets(nlp: Language, gold: Sequence[Doc]) -> List[Set[Offsets]]:
    """Per doc of ``gold``, the character offsets of the spans the pipeline's pruning keeps in its text
    (:meth:`~spacy_el.pipeline.joint_coref_linker.JointCorefLinker.kept_spans`)."""
    pipe = nlp.get_pipe(COMPONENT)
    return [{(span.start_char, span.end_char) for span in pipe.kept_spans([nlp.make_doc(doc.text)])[0]}
            for doc in gold]


def found_share(mentions: Sequence[Sequence[Offsets]], found: Sequence[Set[Offsets]]) -> float:
    """The share of the mentions (per doc) that are in the doc's ``found`` set; 0 without mentions."""
    total = sum(len(doc_mentions) for doc_mentions in mentions)
    return sum(m in doc_found for doc_mentions, doc_found in zip(mentions, found) for m in doc_mentions) / max(total, 1)


def kept_recall(gold: Sequence[Doc], kept: Sequence[Set[Offsets]], keep_singletons: bool) -> float:
    """The share of ``gold``'s mentions among the spans pruning keeps in the same texts (``kept``, from
    :func:`kept_offsets`), matched by character offsets."""
    return found_share([gold_mentions(doc, keep_singletons) for doc in gold], kept)


def kind_scores(gold: Sequence[Doc], kept: Sequence[Set[Offsets]], pred: Sequence[Doc]) -> Dict[str, float]:
    """Gates 2 and 3 for gold singletons and for the mentions of gold clusters apart: ``mention_kept_r_<kind>``,
    ``coref_mention_r_<kind>`` (the share of them written, in any predicted cluster or as a predicted singleton),
    and ``gold_share_<kind>`` (their share of the gold mentions)."""
    written = [{offsets for cluster in doc_clusters(doc) for offsets in cluster} for doc in pred]
    by_kind = {kind: [[(span.start_char, span.end_char) for group in cluster_groups(doc)
                       if (len(group) == 1) == (kind == "singleton") for span in group] for doc in gold]
               for kind in KINDS}
    total = sum(len(mentions) for kind in by_kind.values() for mentions in kind)
    scores = {}
    for kind, mentions in by_kind.items():
        scores[f"gold_share_{kind}"] = round(sum(map(len, mentions)) / max(total, 1), 4)
        scores[f"mention_kept_r_{kind}"] = round(found_share(mentions, kept), 4)
        scores[f"coref_mention_r_{kind}"] = round(found_share(mentions, written), 4)
    return scores


def written_scores(gold: Sequence[Doc], pred: Sequence[Doc], keep_singletons: bool, joint: bool) -> Dict[str, float]:
    """``coref_mention_r``, ``coref_mention_p`` and the selection score (:func:`selection_metric`) of ``pred``."""
    pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
    coref = coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")
    return {"coref_mention_r": round(coref["coref_mention_r"], 4), "coref_mention_p": round(coref["coref_mention_p"], 4),
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


def model_rows(system: str, nlp: Language, corpus: str, dev: List[Doc], test: List[Doc], setting: str,
               values: Sequence[float], batch_size: int) -> List[Row]:
    """The dev sweep of ``setting`` over ``values`` and the test rows of ``system`` (module docstring)."""
    pipe = nlp.get_pipe(COMPONENT)
    attrs = pipe.model.attrs
    joint = attrs["mode"] in ("global", "local")
    keep = scores_singletons(f"{corpus}-test")
    own = getattr(pipe.settings, setting)
    splits = {"dev": dev, "test": test}
    rows = [row(system, f"{corpus}-{split}", "coref_mention_reachable", reachable_share(docs, attrs["max_span_width"], keep),
                f"gold mentions no wider than max_span_width {attrs['max_span_width']}")
            for split, docs in splits.items()]
    kept: Dict[Tuple[str, float], List[Set[Offsets]]] = {}  # (split, span ratio) -> kept spans: only the ratio moves them

    def effective() -> Tuple[float, float]:
        """(span ratio, singleton threshold) as the component is configured now: what its predictions depend on."""
        return pipe.settings.predict_span_ratio or attrs["span_ratio"], pipe.settings.singleton_threshold

    def scores_at(split: str, value: float, by_kind: bool = False) -> Dict[str, float]:
        """The gates' scores on ``split`` with ``setting`` at ``value``; ``by_kind``: with :func:`kind_scores`."""
        print(f"{corpus}-{split}: {system} with {setting} {value:g}", flush=True)
        pipe.configure(**{setting: value})
        gold = splits[split]
        key = (split, effective()[0])
        if key not in kept:
            kept[key] = kept_offsets(nlp, gold)
        pred, _ = predict(nlp, gold, batch_size)
        scores = {"mention_kept_r": round(kept_recall(gold, kept[key], keep), 4),
                  **written_scores(gold, pred, keep, joint)}
        # Where singletons count, whether it is they or the clusters' mentions that are lost (the model as saved).
        return {**scores, **kind_scores(gold, kept[key], pred)} if by_kind and keep else scores

    scored: List[Tuple[float, float]] = []
    for value in values:
        scores = scores_at("dev", value)
        rows += [row(system, f"{corpus}-dev", f"{metric}_{setting}_{value:g}", measured, "dev sweep")
                 for metric, measured in scores.items()]
        scored.append((value, scores[selection_metric(joint)]))
    chosen = scored[kept_index(scored)][0]
    as_saved = scores_at("test", own, by_kind=True)
    saved = effective()
    pipe.configure(**{setting: chosen})
    # Where the value chosen predicts as the saved settings do (span ratio 0.4 and 0, "the model's", are one),
    # its test rows are the saved settings' own.
    swept = {metric: value for metric, value in as_saved.items() if metric not in KIND_METRICS}
    best = swept if effective() == saved else scores_at("test", chosen)
    for name, scores, note in ((system, as_saved, f"as saved: span ratio {saved[0]:g}, singleton_threshold {saved[1]:g}"),
                               (f"{system}_{setting}", best, f"{setting} {chosen:g} (best on {corpus} dev)")):
        rows += [row(name, f"{corpus}-test", metric, value, note) for metric, value in scores.items()]
    pipe.configure(**{setting: own})
    return rows


def budget_table(rows: Sequence[Row]) -> str:
    """The gold density of each split, then one line per model, split and setting: the dev sweeps' values, then the
    test rows with the model's own settings and with each value chosen on dev."""
    values = {(r["system"], r["dataset"], r["metric"]): r["value"] for r in rows}
    density = [[dataset, format_value(value)] for (system, dataset, metric), value in values.items()
               if system == "gold" and metric == "gold_mentions_per_token"]
    header = ["system", "dataset", "prediction setting", "reachable (width)", *MENTION_METRICS, "selection score"]
    lines = []
    for system, dataset in dict.fromkeys((r["system"], r["dataset"]) for r in rows):
        if system == "gold" or any(system.endswith(f"_{setting}") for setting in SWEEPS):
            continue
        reachable = format_value(values[(system, dataset, "coref_mention_reachable")])
        if dataset.endswith("-dev"):
            measured = [(f"{setting} {value:g}", system, f"_{setting}_{value:g}") for setting in SWEEPS
                        for value in swept_values(values, system, dataset, setting)]
        else:
            measured = [("the model's", system, "")]
            measured += [(f"{setting} best on dev", f"{system}_{setting}", "") for setting in SWEEPS
                         if (f"{system}_{setting}", dataset, MENTION_METRICS[0]) in values]
        for label, name, suffix in measured:
            metric = next(m for m in ("coref_elh_mean", "coref_avg_f") if (name, dataset, m + suffix) in values)
            lines.append([name, dataset, label, reachable,
                          *(format_value(values[(name, dataset, m + suffix)]) for m in MENTION_METRICS),
                          f"{format_value(values[(name, dataset, metric + suffix)])} ({metric})"])
    kinds = [[system, dataset, kind, *(format_value(values[(system, dataset, f"{m}_{kind}")])
                                       for m in ("gold_share", "mention_kept_r", "coref_mention_r"))]
             for system, dataset in dict.fromkeys((r["system"], r["dataset"]) for r in rows) for kind in KINDS
             if (system, dataset, f"gold_share_{kind}") in values]
    tables = [markdown_table(["dataset", "gold mentions per token"], density), markdown_table(header, lines)]
    if kinds:
        tables.append("Gold singletons and the mentions of gold clusters apart (test, the model's settings):\n\n"
                      + markdown_table(["system", "dataset", "gold mentions", "share", "mention_kept_r",
                                        "coref_mention_r"], kinds))
    return "\n".join(tables)


def swept_values(values: Dict[Tuple[str, str, str], float], system: str, dataset: str, setting: str) -> List[float]:
    """The values of ``setting`` in ``system``'s dev sweep on ``dataset``, in the order they were measured."""
    prefix = f"{MENTION_METRICS[0]}_{setting}_"
    return [float(metric[len(prefix):]) for name, split, metric in values
            if name == system and split == dataset and metric.startswith(prefix)]


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
    parser.add_argument("--setting", default="predict_span_ratio", choices=sorted(SWEEPS), help="the setting swept on dev")
    parser.add_argument("--values", "--ratios", help="its values, the model's own first, then cheapest first (default: "
                                                     "predict_span_ratio 0.4,0.6,0.8; singleton_threshold 0.5,0.4,0.3,0.6)")
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--limit", type=int, default=0, help="the first N documents of each split (0: all)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    args = parser.parse_args(argv)
    models = parse_models(args.model)  # none: only the gold density rows
    values_arg = args.values or ",".join(f"{value:g}" for value in SWEEPS[args.setting])
    try:
        values = [float(part) for part in values_arg.split(",")]
    except ValueError:
        parser.error(f"--values must be comma-separated numbers, got {values_arg!r}")
    splits = {split: (read_split(Path(args.data), args.corpus, split, spacy.blank("en")) or [])[: args.limit or None]
              for split in ("dev", "test")}
    if not all(splits.values()):
        raise SystemExit(f"[{NAME}] {args.corpus}'s dev and test splits are not both under {args.data}")
    rows = gold_rows(args.corpus, splits)
    for system, path in models:
        rows += model_rows(system, spacy.load(path), args.corpus, splits["dev"], splits["test"], args.setting, values,
                           args.batch_size)
    command = " ".join([f"python -m benchmarks.jcl_mention_budget --corpus {args.corpus} --setting {args.setting} "
                        f"--values {values_arg}",
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

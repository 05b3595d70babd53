"""Prediction parity: does this version of spacy_el predict exactly what another version predicted with
the same saved pipelines? The check behind "a refactor changes no figure".

Two steps, the first run with the other version of the package on the path (it imports nothing of
this repository but ``spacy_el``, so it runs as a plain script)::

    PYTHONPATH=OLD_CHECKOUT python benchmarks/prediction_parity.py write PIPELINE ... --out ref.json
    python -m benchmarks.prediction_parity compare ref.json

``write`` records everything the components write on the bundled GUM texts; ``compare`` predicts again with this
version and writes the rows described on docs/prediction_parity.md to ``benchmarks/results/prediction_parity.json``.
"""
import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
GUM_ASSETS = ROOT / "assets" / "corpus" / "gum"
RESULTS = ROOT / "benchmarks" / "results" / "prediction_parity.json"
SPAN_EXTENSIONS = ("qid", "nil_prob", "candidate_scores", "link_score", "cluster_id", "nil_reason")


def texts(corpus: Path = GUM_ASSETS) -> List[str]:
    """The texts of the bundled GUM documents (WebAnno TSV; train, dev, test), in file order."""
    from spacy_el.corpora.gum import read_gum_file

    found = [read_gum_file(path).text for split in ("train", "dev", "test") for path in sorted((corpus / split).glob("*.tsv"))]
    if not found:
        raise SystemExit(f"No .tsv documents under {corpus}.")
    return found


def annotations(doc: Any) -> Dict[str, Any]:
    """Everything spacy_el's components write on ``doc``, as JSON data."""

    def span(s: Any) -> Dict[str, Any]:
        extensions = {name: s._.get(name) for name in SPAN_EXTENSIONS if s.has_extension(name)}
        return {"start": s.start_char, "end": s.end_char, "label": s.label_, "kb_id": s.kb_id_, **extensions}

    passages = doc._.get("entqa_passages") if doc.has_extension("entqa_passages") else None
    return {
        "ents": [span(e) for e in doc.ents],
        "spans": {key: [span(s) for s in group] for key, group in sorted(doc.spans.items())},
        "passages": passages or [],
    }


def predict(pipeline: str, inputs: List[str]) -> List[Dict[str, Any]]:
    import spacy

    nlp = spacy.load(pipeline)
    return [json.loads(json.dumps(annotations(doc), default=list)) for doc in nlp.pipe(inputs, batch_size=4)]


def torch_parameters_on_gpu(pipeline: str) -> Optional[float]:
    """The share of the torch parameters of a loaded pipeline's components that sit on a GPU, after it has
    annotated one text (torch layers are built lazily); None when it has none."""
    import spacy

    nlp = spacy.load(pipeline)
    nlp("A first text builds the lazy layers.")
    on_gpu = total = 0
    for _, component in nlp.pipeline:
        for node in component.model.walk() if hasattr(component, "model") else ():
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                for parameter in module.parameters() if hasattr(module, "parameters") else ():
                    total += parameter.numel()
                    on_gpu += parameter.numel() if parameter.is_cuda else 0
    return on_gpu / total if total else None


#: What :func:`annotations` records that is a score, not a decision.
SCORE_FIELDS = ("nil_prob", "candidate_scores", "link_score")


def decisions(annotated: Dict[str, Any]) -> Dict[str, Any]:
    """An :func:`annotations` record without its scores: the entities and span groups (offsets, labels, KB ids,
    clusters, NIL reasons) and the EntQA passages' candidate lists, without the passages' scores."""

    def span(s: Dict[str, Any]) -> Dict[str, Any]:
        return {k: v for k, v in s.items() if k not in SCORE_FIELDS}

    return {"ents": [span(s) for s in annotated["ents"]],
            "spans": {key: [span(s) for s in group] for key, group in annotated["spans"].items()},
            "passages": [passage[:3] for passage in annotated["passages"]]}  # (start, end, ids[, scores])


def numbers(value: Any) -> Iterator[Tuple[str, float]]:
    """(path, number) of every number in nested JSON data, so two records can be compared score by score."""
    if isinstance(value, dict):
        for key, item in value.items():
            for path, number in numbers(item):
                yield f"{key}/{path}", number
    elif isinstance(value, list):
        for i, item in enumerate(value):
            for path, number in numbers(item):
                yield f"{i}/{path}", number
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield "", float(value)


def largest_difference(old: Any, new: Any) -> float:
    """The largest absolute difference between same-placed numbers (inf when the structures differ)."""
    a, b = dict(numbers(old)), dict(numbers(new))
    if a.keys() != b.keys():
        return math.inf
    return max((abs(a[k] - b[k]) for k in a), default=0.0)


def write(args: argparse.Namespace) -> None:
    if args.gpu_id >= 0:
        import spacy

        spacy.require_gpu(args.gpu_id)
    inputs = texts()
    reference = {"texts": len(inputs), "pipelines": {p: predict(p, inputs) for p in args.pipelines},
                 "on_gpu": {p: torch_parameters_on_gpu(p) for p in args.pipelines} if args.gpu_id >= 0 else {}}
    Path(args.out).write_text(json.dumps(reference), encoding="utf8")
    print(f"Wrote the predictions of {len(args.pipelines)} pipelines on {len(inputs)} texts to {args.out}")


def compare(args: argparse.Namespace) -> None:
    from .results_io import row, write_results
    from .tables import publish_table, results_to_markdown

    reference = json.loads(Path(args.reference).read_text(encoding="utf8"))
    inputs = texts()
    if len(inputs) != reference["texts"]:
        raise SystemExit(f"{args.reference} holds {reference['texts']} texts, the assets {len(inputs)}.")
    rows = []
    for pipeline, old in reference["pipelines"].items():
        new = predict(pipeline, inputs)
        same = sum(a == b for a, b in zip(old, new))
        same_decisions = sum(decisions(a) == decisions(b) for a, b in zip(old, new))
        worst = max(largest_difference(a, b) for a, b in zip(old, new))
        name = Path(pipeline).name
        note = f"{args.note}; {len(new)} GUM texts" if args.note else f"{len(new)} GUM texts"
        rows.append(row(name, "gum-assets", "identical_docs", round(same / len(new), 4), note))
        rows.append(row(name, "gum-assets", "same_decisions", round(same_decisions / len(new), 4), note))
        rows.append(row(name, "gum-assets", "max_abs_score_diff", worst, note))
    out = write_results(Path(args.out), "python -m benchmarks.prediction_parity compare " + args.reference, rows)
    table = results_to_markdown(out, pivot=True)
    publish_table(args.readme, "prediction_parity", table) if args.readme else print(table)
    print(f"Wrote {out}")


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    w = steps.add_parser("write", help="record the predictions of saved pipelines (run with the other version)")
    w.add_argument("pipelines", nargs="+", help="saved pipeline directories")
    w.add_argument("--out", required=True, help="the reference predictions file to write")
    w.add_argument("--gpu-id", type=int, default=-1, help="predict on this GPU (-1: CPU)")
    c = steps.add_parser("compare", help="predict again with this version and compare")
    c.add_argument("reference", help="a file written by `write`")
    c.add_argument("--note", default="", help="what the reference is (e.g. the commit that wrote it)")
    c.add_argument("--readme", default="", help="README whose results table to update (default: none)")
    c.add_argument("--out", default=str(RESULTS), help="the results file to write")
    args = parser.parse_args(argv)
    write(args) if args.step == "write" else compare(args)


if __name__ == "__main__":
    main(sys.argv[1:])

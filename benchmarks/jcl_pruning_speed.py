"""joint_coref_linker span pruning: the mention score of every enumerated span with ``Phi_p``'s first layer applied
per token (``SpanEmbedder.projector``, what the component runs) against the same layer applied to each span's ``g``
(``mention_ffnn(span_embedder(...))``, as before), on the same documents in the same run.

A trained pipeline (``--model``) predicts the documents of ``--dataset`` once, which records the token vectors
and the enumerated spans that its pruning step received for each document. Both ways then score those spans,
document by document, in turn (the order alternating), ``--rounds`` times after a warm-up, without gradients
and in chunks of ``PRUNE_CHUNK`` spans, as the component does. Rows: ``ms_per_doc`` (median over documents and
rounds) and ``speedup`` (the reference's total time over the variant's) of each; for the per-token way also
``same_kept_docs`` (documents whose kept spans, ``prune_spans`` of the scores, are identical) and
``max_score_diff`` (the largest difference between the two ways' scores: float rounding).
Writes ``benchmarks/results/jcl_pruning_speed.json`` and its table in docs/joint_coref_linker.md::

    python -m benchmarks.jcl_pruning_speed --model training/jcl/litbank-converged-coarse/none/model-best
"""
import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import spacy
import torch

import spacy_el.ml.joint_coref.modules as jcl_modules
from spacy_el.ml.joint_coref.span_representations import prune_spans

from .common import SHARED_DATA, torch_module
from .joint_coref_linker import read_split
from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_pruning_speed"
COMMAND = "python -m benchmarks.jcl_pruning_speed"
COMPONENT = "joint_coref_linker"
#: The two ways: the reference first.
WAYS = ("pruning_per_span", "pruning_per_token")


def pruning_inputs(nlp: Any, texts: List[str]) -> List[Tuple[Any, Any, int]]:
    """``(token vectors, enumerated spans, n_keep)`` that the pruning step receives for each text."""
    recorded: List[Tuple[Any, Any, int]] = []
    kept = jcl_modules.JointCorefModule._kept

    def recording(module: Any, vectors: Any, spans: Any, doc: Any) -> Any:
        recorded.append((vectors.detach(), spans, doc.n_keep))
        return kept(module, vectors, spans, doc)

    jcl_modules.JointCorefModule._kept = recording
    try:
        for text in texts:
            nlp(text)
    finally:
        jcl_modules.JointCorefModule._kept = kept
    return recorded


def scorers(module: Any) -> Dict[str, Callable[[Any, Any], Any]]:
    """Each way's ``(vectors, spans) -> (S,)`` mention scores, in chunks: the per-token way is the module's own."""
    ffnn, embedder = module.scorer.mention_ffnn, module.span_embedder

    def per_span(vectors: Any, spans: Any) -> Any:
        return torch.cat([ffnn(embedder(vectors, chunk)).squeeze(-1) for chunk in spans.split(jcl_modules.PRUNE_CHUNK)])

    return {"pruning_per_span": per_span, "pruning_per_token": module.pruning_scores}


def measure(module: Any, inputs: List[Tuple[Any, Any, int]], rounds: int) -> Tuple[Dict[str, List[float]], int, float]:
    """Seconds per document of each way, the documents whose kept spans agree, the largest score difference."""
    ways = scorers(module)
    seconds: Dict[str, List[float]] = {name: [] for name in WAYS}
    same, max_diff = 0, 0.0
    with torch.no_grad():
        for vectors, spans, n_keep in inputs:  # warm-up, and the agreement of the two ways
            scores = {name: ways[name](vectors, spans) for name in WAYS}
            max_diff = max(max_diff, float((scores[WAYS[0]] - scores[WAYS[1]]).abs().max()))
            same += bool(torch.equal(*(prune_spans(scores[name], spans, n_keep) for name in WAYS)))
        for r in range(rounds):
            for i, (vectors, spans, _) in enumerate(inputs):
                for name in (WAYS if (r + i) % 2 == 0 else WAYS[::-1]):
                    start = time.perf_counter()
                    ways[name](vectors, spans)
                    seconds[name].append(time.perf_counter() - start)
    return seconds, same, max_diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "training" / "jcl" / "litbank-converged-coarse" / "none" / "model-best"))
    parser.add_argument("--dataset", default="litbank-test", help="<corpus>-<split> of --data")
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    corpus, split = args.dataset.rsplit("-", 1)
    docs = read_split(Path(args.data), corpus, split, spacy.blank("en")) or []
    if not docs:
        raise SystemExit(f"no {args.dataset} under {args.data}")
    nlp = spacy.load(args.model)
    module = torch_module(nlp, COMPONENT).eval()
    inputs = pruning_inputs(nlp, [doc.text for doc in docs])
    seconds, same, max_diff = measure(module, inputs, args.rounds)
    spans = sum(int(s.shape[0]) for _, s, _ in inputs)
    model = os.path.relpath(Path(args.model).resolve(), ROOT)
    note = (f"{model}, {len(inputs)} {args.dataset} documents ({spans:,} enumerated spans), {args.rounds} timed rounds "
            f"after a warm-up, the two ways in turn; {args.threads} torch thread(s); load average {os.getloadavg()[0]:.1f}")
    base = sum(seconds[WAYS[0]])
    rows: List[Row] = []
    for name in WAYS:  # the setup in one note, on the reference's row; the columns are explained in the docs
        rows.append(row(name, args.dataset, "ms_per_doc", round(statistics.median(seconds[name]) * 1000, 1),
                        note if name == WAYS[0] else ""))
        rows.append(row(name, args.dataset, "speedup", round(base / sum(seconds[name]), 2)))
    rows.append(row(WAYS[1], args.dataset, "same_kept_docs", same))
    rows.append(row(WAYS[1], args.dataset, "max_score_diff", float(f"{max_diff:.2g}")))
    out = write_results(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True))


if __name__ == "__main__":
    main()

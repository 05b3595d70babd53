"""joint_coref_linker span pruning: the mention score of every enumerated span three ways, on the same documents in
the same run: ``Phi_p``'s first layer applied to each span's ``g`` (``mention_ffnn(span_embedder(...))``, the
reference); applied per token, each span gathering the ``(W, H)`` rows of its tokens for its head part (the
component's earlier way); and per token, one width at a time with a streaming softmax for the head part
(``SpanEmbedder.rows_by_width``, what the component runs).

A trained pipeline (``--model``) predicts the documents of ``--dataset`` once, which records the token vectors
and the enumerated spans that its pruning step received for each document. Both ways then score those spans,
document by document, in turn (the order alternating), ``--rounds`` times after a warm-up, without gradients
the first two in chunks of ``CHUNK`` spans. Rows: ``ms_per_doc`` (median over documents and rounds) and ``speedup``
(the reference's total time over the variant's) of each; for the per-token ways also ``same_kept_docs`` (documents
whose kept spans, ``prune_spans`` of the scores, are the reference's) and ``max_score_diff`` (the largest difference
from the reference's scores: float rounding).
Writes ``benchmarks/results/jcl_pruning_speed.json`` and its table in docs/joint_coref_linker.md::

    python -m benchmarks.jcl_pruning_speed --model training/pretrained/coref/model-tuned --dataset gum-test
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
from .results_io import RESULTS_DIR, ROOT, Row, repo_relative, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_pruning_speed"
COMMAND = "python -m benchmarks.jcl_pruning_speed"
COMPONENT = "joint_coref_linker"
#: The three ways: the reference first, the component's last.
WAYS = ("pruning_per_span", "pruning_per_token", "pruning_per_width")
CHUNK = 4096  # spans scored at once by the per-span and per-token ways


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


def per_token_gather(embedder: Any, vectors: Any, linear: Any) -> Callable[[Any], Any]:
    """``linear(g)`` of any spans, its blocks applied once per token, each span gathering its tokens' ``(W, H)``
    head rows (the component's earlier way, kept here as the peer)."""
    start_rows, end_rows, head_rows, alpha, width_rows = embedder.token_rows(vectors, linear)

    def project(spans: Any) -> Any:
        index, _ = embedder._token_index(spans, vectors.shape[0])  # (S, W)
        head = torch.einsum("sw,swh->sh", embedder._attention(alpha, spans), head_rows[index])  # (S, H)
        rows = start_rows[spans[:, 0]] + end_rows[spans[:, 1] - 1] + head
        if width_rows is not None:
            rows = rows + width_rows[spans[:, 1] - spans[:, 0] - 1]
        return rows if linear.bias is None else rows + linear.bias

    return project


def scorers(module: Any) -> Dict[str, Callable[[Any, Any], Any]]:
    """Each way's ``(vectors, spans) -> (S,)`` mention scores: the per-width way is the module's own."""
    ffnn, embedder = module.scorer.mention_ffnn, module.span_embedder

    def per_span(vectors: Any, spans: Any) -> Any:
        return torch.cat([ffnn(embedder(vectors, chunk)).squeeze(-1) for chunk in spans.split(CHUNK)])

    def per_token(vectors: Any, spans: Any) -> Any:
        project = per_token_gather(embedder, vectors, ffnn[0])
        return torch.cat([ffnn[1](project(chunk)).squeeze(-1) for chunk in spans.split(CHUNK)])

    return {"pruning_per_span": per_span, "pruning_per_token": per_token, "pruning_per_width": module.pruning_scores}


def measure(module: Any, inputs: List[Tuple[Any, Any, int]],
            rounds: int) -> Tuple[Dict[str, List[float]], Dict[str, int], Dict[str, float]]:
    """Seconds per document of each way and, for each variant, the documents whose kept spans are the
    reference's and its largest score difference from the reference."""
    ways = scorers(module)
    seconds: Dict[str, List[float]] = {name: [] for name in WAYS}
    same = {name: 0 for name in WAYS[1:]}
    max_diff = {name: 0.0 for name in WAYS[1:]}
    with torch.no_grad():
        for vectors, spans, n_keep in inputs:  # warm-up, and the agreement with the reference
            scores = {name: ways[name](vectors, spans) for name in WAYS}
            reference_kept = prune_spans(scores[WAYS[0]], spans, n_keep)
            for name in WAYS[1:]:
                max_diff[name] = max(max_diff[name], float((scores[WAYS[0]] - scores[name]).abs().max()))
                same[name] += bool(torch.equal(reference_kept, prune_spans(scores[name], spans, n_keep)))
        for r in range(rounds):
            for i, (vectors, spans, _) in enumerate(inputs):
                shift = (r + i) % len(WAYS)  # each way first in turn
                for name in WAYS[shift:] + WAYS[:shift]:
                    start = time.perf_counter()
                    ways[name](vectors, spans)
                    seconds[name].append(time.perf_counter() - start)
    return seconds, same, max_diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "training" / "pretrained" / "coref" / "model-tuned"))
    parser.add_argument("--dataset", default="gum-test", help="<corpus>-<split> of --data")
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
    if not Path(args.model).is_dir():
        raise SystemExit(f"--model: the pipeline folder {args.model} does not exist (the root project's pretrained "
                         "workflow makes the default one)")
    nlp = spacy.load(args.model)
    module = torch_module(nlp, COMPONENT).eval()
    inputs = pruning_inputs(nlp, [doc.text for doc in docs])
    seconds, same, max_diff = measure(module, inputs, args.rounds)
    spans = sum(int(s.shape[0]) for _, s, _ in inputs)
    note = (f"{repo_relative(Path(args.model))} (mentions of up to {module.span_embedder.max_width} tokens), "
            f"{len(inputs)} {args.dataset} documents ({spans:,} enumerated spans), {args.rounds} timed rounds "
            f"after a warm-up, the three ways in turn; {args.threads} torch thread(s); "
            f"load average {os.getloadavg()[0]:.1f}")
    base = sum(seconds[WAYS[0]])
    rows: List[Row] = []
    for name in WAYS:  # the setup in one note, on the reference's row; the columns are explained in the docs
        rows.append(row(name, args.dataset, "ms_per_doc", round(statistics.median(seconds[name]) * 1000, 1),
                        note if name == WAYS[0] else ""))
        rows.append(row(name, args.dataset, "speedup", round(base / sum(seconds[name]), 2)))
    for name in WAYS[1:]:
        rows.append(row(name, args.dataset, "same_kept_docs", same[name]))
        rows.append(row(name, args.dataset, "max_score_diff", float(f"{max_diff[name]:.2g}")))
    out = write_results(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True))


if __name__ == "__main__":
    main()

"""Frozen copy of ``benchmarks/jcl_long_documents.py`` at commit 40bafb1, when it also ran the dense prediction.

Not maintained (see REPORT.md); the maintained module keeps the sparse runs only. Its docstring follows.

joint_coref_linker on book-length documents: peak memory and seconds of the sparse prediction against today's
dense one, in the same run (issue 70, docs/joint_coref_linker.md).

One document of each ``--tokens`` length (GUM's texts joined, from ``../shared/data`` where it is, else the bundled
ones, repeated if need be) runs through one pipeline in each ``--modes`` decoding (the model's ``mode`` set after
loading: the scores are the same, the decoding differs), once with the sparse antecedent graph (what the component
predicts with) and once with the dense ``(M, M)`` matrices (``JointCorefBatch.dense_scores``), each run in a fresh
process under a memory limit (``--memory-limit-gb``), so that its peak RSS (``getrusage``, loading included) is its
own. A dense run whose matrices alone would pass the limit is not started: its row holds ``None`` and the estimate.
Rows: ``long_doc_seconds``, ``long_doc_peak_rss_mb``, ``same_as_dense`` (1 when both decodings wrote the same
clusters and links) and, for the longest document, ``time_growth`` (its seconds over the shortest's, divided by the
length ratio: the target is at most 1.2). ``--parity`` also runs every bundled GUM test document both ways
(``docs_same_as_dense`` of ``gum-test-bundled``).

    flock /work/brief/bench.lock python -m benchmarks.jcl_long_documents --model training/demo/joint_coref_linker \\
        --tokens 20000 100000 --parity
"""
import argparse
import hashlib
import math
import multiprocessing
import os
import resource
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .common import SHARED_DATA, process_peak_mb, proc_status_mb, timed
from .results_io import RESULTS_DIR, Row, repo_relative, row, write_merged
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_long_documents"
COMMAND = "python -m benchmarks.jcl_long_documents"
COMPONENT = "joint_coref_linker"
MODES = ("global", "local", "coref")
METRICS = ("long_doc_seconds", "long_doc_peak_rss_mb", "same_as_dense", "time_growth")
BUNDLED_GUM = Path(__file__).resolve().parent.parent / "assets" / "corpus" / "gum"
#: Bytes per mention pair that the dense prediction holds at once, at least: the float32 coreference matrix, then
#: for Global the float64 graph and the dense Edmonds' float64 scores and two int32 edge maps
#: (spacy_el/algorithms/arborescence.py), for Local and Coref the float32 logits with their masked copy and masks.
DENSE_BYTES_PER_PAIR = {"global": 4 + 8 + 8 + 4 + 4, "local": 4 + 4 + 4 + 1 + 1, "coref": 4 + 4 + 4 + 1 + 1}


def conll_texts(folder: Path) -> List[str]:
    """The texts of the ``.conll`` files under ``folder`` (CoNLL-2012 style, the word in the second column), sorted by
    path; the documents of one file are one text each."""
    texts: List[str] = []
    for path in sorted(folder.rglob("*.conll")):
        words: List[str] = []
        for line in path.read_text(encoding="utf8").splitlines():
            if line.startswith("#end") and words:
                texts.append(" ".join(words))
                words = []
            elif line and not line.startswith("#") and "\t" in line:
                words.append(line.split("\t")[1])
        if words:
            texts.append(" ".join(words))
    return texts


def book(tokens: int, data: Path) -> str:
    """A text of ``tokens`` spaCy tokens: GUM's documents (``data/gum/coref/gum`` where it is, else the bundled ones)
    joined by blank lines, repeated until long enough, cut at ``tokens``."""
    import spacy

    shared = data / "gum" / "coref" / "gum"
    texts = conll_texts(shared if shared.is_dir() else BUNDLED_GUM)
    nlp = spacy.blank("en")
    nlp.max_length = 10 ** 8  # only tokenized
    taken: List[str] = []
    count = 0
    while count < tokens:
        for text in texts:
            taken.append(text)
            count += len(nlp.make_doc(text)) + 1
            if count >= tokens:
                break
    doc = nlp.make_doc("\n\n".join(taken))
    return doc[:tokens].text


def fingerprint(doc: Any) -> str:
    """A digest of the clusters and links ``doc`` holds (each cluster's mentions with their KB ids)."""
    from spacy_el.extensions import get_cluster_spans

    clusters = sorted(tuple((span.start, span.end, span.kb_id_) for span in cluster) for cluster in get_cluster_spans(doc))
    return hashlib.sha1(repr(clusters).encode("utf8")).hexdigest()


def _load(model: str, mode: str, dense: bool, threads: int) -> Any:
    """The pipeline at ``model``, its component decoding in ``mode``, through the dense matrices when ``dense``."""
    import spacy
    import torch

    torch.set_num_threads(threads)
    nlp = spacy.load(model)
    nlp.max_length = 10 ** 8
    pipe = nlp.get_pipe(COMPONENT)
    pipe.model.attrs["mode"] = mode
    if dense:
        make_batch = pipe._batch

        def dense_batch(docs: Any, golds: Any = None) -> Any:
            batch = make_batch(docs, golds)
            batch.dense_scores = True
            return batch

        pipe._batch = dense_batch  # this process only: today's dense prediction, the reference
    return nlp


def run_one(model: str, text: str, mode: str, dense: bool, threads: int, limit_bytes: int) -> Dict[str, Any]:
    """One prediction of ``text`` in *this* (fresh) process under an address-space limit: its seconds, the process's
    peak RSS in MB (loading included), the RSS after loading and the fingerprint of the clusters and links."""
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    try:
        nlp = _load(model, mode, dense, threads)
        loaded = proc_status_mb("VmRSS") or process_peak_mb()
        doc, seconds = timed(lambda: nlp(text))
    except MemoryError:
        return {"error": "MemoryError", "peak_mb": process_peak_mb()}
    return {"seconds": seconds, "peak_mb": process_peak_mb(), "loaded_mb": loaded, "fingerprint": fingerprint(doc)}


def parity_run(model: str, texts: Sequence[str], modes: Sequence[str], threads: int) -> Dict[str, int]:
    """Per mode, how many of ``texts`` the sparse and the dense prediction annotate alike (in this process)."""
    same = {}
    for mode in modes:
        sparse, dense = _load(model, mode, False, threads), _load(model, mode, True, threads)
        same[mode] = sum(fingerprint(sparse(text)) == fingerprint(dense(text)) for text in texts)
    return same


def in_child(function: Any, *args: Any) -> Any:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def dense_gb(tokens: int, span_ratio: float, mode: str) -> float:
    """The dense prediction's matrices in ``mode`` for the mentions kept from ``tokens`` tokens, in GB (a lower bound)."""
    mentions = math.ceil(span_ratio * tokens)
    return DENSE_BYTES_PER_PAIR[mode] * (mentions + 1) ** 2 / 1e9


def not_run_rows(system: str, dataset: str, tokens: int, span_ratio: float, mode: str, limit_gb: float) -> List[Row]:
    """The rows of a dense run that is not started, with the reason: its matrices alone pass the memory limit."""
    gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30)
    why = (f"not run: {math.ceil(span_ratio * tokens):,} mentions need at least {dense_gb(tokens, span_ratio, mode):.0f} GB "
           f"of dense matrices, over the {limit_gb:g} GB limit of this {gib} GiB machine")
    return [row(system, dataset, "long_doc_seconds", None, why), row(system, dataset, "long_doc_peak_rss_mb", None, why)]


def span_ratio_of(model: str) -> float:
    import srsly

    config = Path(model) / "config.cfg"
    for line in config.read_text(encoding="utf8").splitlines():
        if line.startswith("span_ratio"):
            return float(line.split("=")[1])
    return float(srsly.read_json(Path(model) / COMPONENT / "cfg").get("span_ratio", 0.4))


def long_rows(model: str, tokens: Sequence[int], modes: Sequence[str], data: Path, threads: int,
              limit_gb: float) -> List[Row]:
    limit = int(limit_gb * 2 ** 30)
    ratio = span_ratio_of(model)
    rows: List[Row] = []
    base = f"{threads} torch threads; 2 cores shared with other jobs (load average {{load:.1f}}); {repo_relative(Path(model))}"
    seconds: Dict[tuple, float] = {}
    for n in sorted(tokens):
        text = book(n, data)
        dataset = f"gum-joined-{n // 1000}k"
        for mode in modes:
            results = {}
            for variant in ("sparse", "dense"):
                system = f"{mode}_{variant}"
                if variant == "dense" and dense_gb(n, ratio, mode) > 0.8 * limit_gb:
                    rows += not_run_rows(system, dataset, n, ratio, mode, limit_gb)
                    continue
                result = in_child(run_one, model, text, mode, variant == "dense", threads, limit)
                note = base.format(load=os.getloadavg()[0])
                print(n, system, result, flush=True)
                if "error" in result:
                    why = f"failed: {result['error']} under the {limit_gb:g} GB limit; {note}"
                    rows += [row(system, dataset, "long_doc_seconds", None, why),
                             row(system, dataset, "long_doc_peak_rss_mb", None, why)]
                    continue
                results[variant] = result
                if variant == "sparse":
                    seconds[(mode, n)] = result["seconds"]
                rows.append(row(system, dataset, "long_doc_seconds", round(result["seconds"], 1), note))
                rows.append(row(system, dataset, "long_doc_peak_rss_mb", round(result["peak_mb"]),
                                f"process peak RSS, loading included ({result['loaded_mb']:.0f} MB after loading); {note}"))
            if len(results) == 2:
                same = int(results["sparse"]["fingerprint"] == results["dense"]["fingerprint"])
                rows.append(row(f"{mode}_sparse", dataset, "same_as_dense", same,
                                "1: the sparse and the dense prediction wrote the same clusters and links"))
    shortest, longest = min(tokens), max(tokens)
    if shortest != longest:
        for mode in modes:
            if (mode, shortest) in seconds and (mode, longest) in seconds:
                growth = seconds[(mode, longest)] / seconds[(mode, shortest)] / (longest / shortest)
                rows.append(row(f"{mode}_sparse", f"gum-joined-{longest // 1000}k", "time_growth", round(growth, 2),
                                f"seconds at {longest:,} tokens over those at {shortest:,}, divided by the length ratio "
                                f"{longest / shortest:g} (target: at most 1.2)"))
    return rows


def parity_rows(model: str, modes: Sequence[str], threads: int) -> List[Row]:
    texts = conll_texts(BUNDLED_GUM / "test")
    same = in_child(parity_run, model, texts, modes, threads)
    return [row(f"{mode}_sparse", "gum-test-bundled", "docs_same_as_dense", same[mode],
                f"of the {len(texts)} bundled GUM test documents, those whose clusters and links the sparse prediction "
                "writes exactly as the dense one")
            for mode in modes]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a pipeline with a joint_coref_linker")
    parser.add_argument("--tokens", type=int, nargs="+", default=[20000, 100000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-limit-gb", type=float, default=20.0, help="address-space limit of each run")
    parser.add_argument("--parity", action="store_true", help="also compare both ways on the bundled GUM test documents")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args(argv)
    rows = long_rows(args.model, args.tokens, args.modes, Path(args.data), args.threads, args.memory_limit_gb)
    if args.parity:
        rows += parity_rows(args.model, args.modes, args.threads)
    for r in rows:
        print(f"{r['system']:>14} {r['dataset']:>18} {r['metric']:>22} {r['value']}")
    out = write_merged(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Optional[Path] = PAGES[NAME]) -> None:
    """One line per decoding and document: seconds, peak RSS, whether it matches the dense one, the time growth."""
    table = results_to_markdown(results, pivot=True, notes=False, column_order=METRICS + ("docs_same_as_dense",))
    publish_table(page, NAME, table)


if __name__ == "__main__":
    main()

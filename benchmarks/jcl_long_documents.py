"""joint_coref_linker on book-length documents: seconds and peak memory of the prediction (issue 70,
docs/joint_coref_linker.md).

One document of each ``--tokens`` length (GUM's texts joined) runs through one pipeline in each ``--modes`` decoding
(the model's ``mode`` set after loading), each run in a fresh process under a memory limit, so that its peak RSS
(loading included) is its own. Rows: ``long_doc_seconds``, ``long_doc_peak_rss_mb`` and, for the longest document,
``time_growth`` (its seconds over the shortest's, divided by the length ratio). The dense prediction's rows beside
them were measured by the study in ``studies/jcl_sparse_prediction/``.

    flock /work/brief/bench.lock python -m benchmarks.jcl_long_documents --model training/demo/joint_coref_linker \\
        --tokens 20000 100000
"""
import argparse
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


def _load(model: str, mode: str, threads: int) -> Any:
    """The pipeline at ``model``, its component decoding in ``mode``."""
    import spacy
    import torch

    torch.set_num_threads(threads)
    nlp = spacy.load(model)
    nlp.max_length = 10 ** 8
    nlp.get_pipe(COMPONENT).model.attrs["mode"] = mode
    return nlp


def run_one(model: str, text: str, mode: str, threads: int, limit_bytes: int) -> Dict[str, Any]:
    """One prediction of ``text`` in *this* (fresh) process under an address-space limit: its seconds, the process's
    peak RSS in MB (loading included) and the RSS after loading."""
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    try:
        nlp = _load(model, mode, threads)
        loaded = proc_status_mb("VmRSS") or process_peak_mb()
        _, seconds = timed(lambda: nlp(text))
    except MemoryError:
        return {"error": "MemoryError", "peak_mb": process_peak_mb()}
    return {"seconds": seconds, "peak_mb": process_peak_mb(), "loaded_mb": loaded}


def in_child(function: Any, *args: Any) -> Any:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def long_rows(model: str, tokens: Sequence[int], modes: Sequence[str], data: Path, threads: int,
              limit_gb: float) -> List[Row]:
    limit = int(limit_gb * 2 ** 30)
    rows: List[Row] = []
    base = f"{threads} torch threads; 2 cores shared with other jobs (load average {{load:.1f}}); {repo_relative(Path(model))}"
    seconds: Dict[tuple, float] = {}
    for n in sorted(tokens):
        text = book(n, data)
        dataset = f"gum-joined-{n // 1000}k"
        for mode in modes:
            system = f"{mode}_sparse"
            result = in_child(run_one, model, text, mode, threads, limit)
            note = base.format(load=os.getloadavg()[0])
            print(n, system, result, flush=True)
            if "error" in result:
                why = f"failed: {result['error']} under the {limit_gb:g} GB limit; {note}"
                rows += [row(system, dataset, "long_doc_seconds", None, why),
                         row(system, dataset, "long_doc_peak_rss_mb", None, why)]
                continue
            seconds[(mode, n)] = result["seconds"]
            rows.append(row(system, dataset, "long_doc_seconds", round(result["seconds"], 1), note))
            rows.append(row(system, dataset, "long_doc_peak_rss_mb", round(result["peak_mb"]),
                            f"process peak RSS, loading included ({result['loaded_mb']:.0f} MB after loading); {note}"))
    shortest, longest = min(tokens), max(tokens)
    if shortest != longest:
        for mode in modes:
            if (mode, shortest) in seconds and (mode, longest) in seconds:
                growth = seconds[(mode, longest)] / seconds[(mode, shortest)] / (longest / shortest)
                rows.append(row(f"{mode}_sparse", f"gum-joined-{longest // 1000}k", "time_growth", round(growth, 2),
                                f"seconds at {longest:,} tokens over those at {shortest:,}, divided by the length ratio "
                                f"{longest / shortest:g} (target: at most 1.2)"))
    return rows


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a pipeline with a joint_coref_linker")
    parser.add_argument("--tokens", type=int, nargs="+", default=[20000, 100000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-limit-gb", type=float, default=20.0, help="address-space limit of each run")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args(argv)
    rows = long_rows(args.model, args.tokens, args.modes, Path(args.data), args.threads, args.memory_limit_gb)
    for r in rows:
        print(f"{r['system']:>14} {r['dataset']:>18} {r['metric']:>22} {r['value']}")
    out = write_merged(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Optional[Path] = PAGES[NAME]) -> None:
    """One line per decoding and document: seconds, peak RSS, the time growth (and the study's dense rows)."""
    table = results_to_markdown(results, pivot=True, notes=False, column_order=METRICS + ("docs_same_as_dense",))
    publish_table(page, NAME, table)


if __name__ == "__main__":
    main()

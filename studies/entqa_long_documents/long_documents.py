"""The long-document timing of ``benchmarks/entqa.py`` (``--long-documents``, issue 71, #14), moved here once measured.

Frozen, not maintained (see REPORT.md): at commit 3ff4f9f this code was part of ``benchmarks/entqa.py`` and ran as
``python -m benchmarks.entqa --long-documents --baseline-root /tmp/entqa_old`` (the main below is that branch):
one short and two long documents through each reader mode, the seconds, tokens per second and spans written,
with ``--baseline-root`` (a ``git worktree`` of an earlier commit) timed in the same run; rows merged into --out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import spacy
import torch
from spacy.language import Language

from benchmarks.entqa import LONG_SUFFIX, SYSTEMS, write_tables
from benchmarks.results_io import RESULTS_DIR, ROOT, Row, row, write_merged

LONG_COMMAND = "flock /work/brief/bench.lock python -m benchmarks.entqa --long-documents"  # the machine is shared
LONG_PIPELINE = ROOT / "training" / "test" / "pipelines" / "entqa_jcl"  # the `test` workflow's (MiniLM)
LONG_TOKENS = (200, 2000, 20000)  # a short document (AIDA's are about 200 tokens), then two long ones
LONG_DATASET = "gum-repeated"
GUM_ASSETS = ROOT / "assets" / "corpus" / "gum"


def gum_text(n_tokens: int) -> str:
    """A text of ``n_tokens`` whitespace-separated words: the bundled GUM documents' words (CC BY), in order,
    repeated as needed (spaCy's tokenizer finds about as many tokens)."""
    words = [line.split("\t")[1] for path in sorted(GUM_ASSETS.glob("*/*.conll"))
             for line in path.read_text(encoding="utf8").splitlines() if "\t" in line and not line.startswith("#")]
    return " ".join((words * (n_tokens // len(words) + 1))[:n_tokens])


def long_document_pipeline(path: Path, reader_mode: str, top_k: int) -> Language:
    """The retriever of the pipeline at ``path`` and a fresh reader in ``reader_mode`` over its KB: MiniLM with
    heads untrained (seed 0), K = ``top_k``, γ = 0, so every span above the "no mention" one is kept: the most
    spans a reader writes, and so the most bookkeeping (the test workflow's trained reader writes none)."""
    source = spacy.load(path)
    retriever = source.get_pipe("entity_retriever")
    nlp = spacy.blank(source.lang)
    nlp.add_pipe("entity_retriever", source=source)
    nlp.add_pipe("entqa_reader", config={"reader_mode": reader_mode, "top_k": top_k, "threshold": 0.0,
                                         "model": {"encoder": retriever.model.attrs["encoder"], "encoder_dtype": "float32"}})
    torch.manual_seed(0)
    nlp.get_pipe("entqa_reader").initialize(lambda: [], nlp=nlp, kb_loader=lambda vocab: retriever.kb)
    return nlp


def time_long_documents(path: Path, plan: Sequence[Tuple[str, Sequence[int]]], top_k: int, threads: int) -> List[Dict]:
    """Per reader mode and document size of ``plan`` (``(mode, [words, ...])``): ``{"mode", "tokens", "words",
    "seconds", "spans"}`` of ``nlp(text)`` on one document, after a warm-up. Uses only spaCy's API, so that it times whatever spacy_el is imported (the
    baseline's subprocess imports the code of another commit)."""
    torch.set_num_threads(threads)
    timings = []
    for mode, tokens in plan:
        nlp = long_document_pipeline(path, mode, top_k)
        nlp(gum_text(50))  # warm-up: the first call builds the tokenizers
        for n in tokens:
            text = gum_text(n)
            seconds_each = []
            for _ in range(max(1, min(5, 2000 // n))):  # a short document is timed 5 times: the median
                start = time.perf_counter()
                doc = nlp(text)
                seconds_each.append(time.perf_counter() - start)
            seconds = statistics.median(seconds_each)
            timings.append({"mode": mode, "tokens": len(doc), "words": n, "seconds": seconds, "spans": len(doc.spans["entqa"])})
            print(f"{mode}: {len(doc)} tokens in {seconds:.1f} s, {len(doc.spans['entqa'])} spans", file=sys.stderr)
    return timings


def baseline_timings(root: Path, path: Path, plan: Sequence[Tuple[str, Sequence[int]]], top_k: int, threads: int) -> List[Dict]:
    """:func:`time_long_documents` in a subprocess that imports spacy_el from ``root`` (a ``git worktree`` of an
    earlier commit) and this file's benchmarks package."""
    here = str(Path(__file__).resolve().parent.parent)
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import spacy_el; sys.path.remove(sys.argv[1]); "
            "sys.path.insert(0, sys.argv[2]); from pathlib import Path; from benchmarks.entqa import time_long_documents; "
            "a = json.loads(sys.argv[3]); print(json.dumps(time_long_documents(Path(a['path']), a['plan'], a['top_k'], a['threads'])))")
    arguments = json.dumps({"path": str(path), "plan": [[m, list(t)] for m, t in plan], "top_k": top_k, "threads": threads})
    done = subprocess.run([sys.executable, "-c", code, str(root), here, arguments], check=True, stdout=subprocess.PIPE,
                          text=True, env={**os.environ, "PYTHONPATH": ""})
    return json.loads(done.stdout.strip().splitlines()[-1])


def long_document_rows(args: argparse.Namespace) -> List[Row]:
    """Seconds, tokens per second and spans written for one short and two long documents (the short one timed 5 times:
    the median), per reader mode, with
    this code and (``--baseline-root``) an earlier commit's, in the same run."""
    plan = [("joint", args.long_tokens),  # the mode for corpora (docs/entqa.md); the paper's reads K times as much
            ("per_candidate", [n for n in args.long_tokens if n <= args.per_candidate_max_tokens])]
    runs = [("", time_long_documents(args.long_pipeline, plan, args.long_top_k, args.threads))]
    if args.baseline_root:
        commit = subprocess.run(["git", "-C", str(args.baseline_root), "rev-parse", "--short", "HEAD"], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip()
        before = [(mode, [n for n in tokens if n <= args.baseline_max_tokens]) for mode, tokens in plan]
        runs.append((f" ({commit}, before the fix)", baseline_timings(args.baseline_root, args.long_pipeline, before,
                                                                      args.long_top_k, args.threads)))
    rows = []
    for label, timings in runs:
        for t in timings:
            system = SYSTEMS[t["mode"]] + label
            note = (f"nlp(text) on one document of {t['tokens']} tokens (the bundled GUM texts' words, repeated); the `test` "
                    f"workflow's retriever (MiniLM, top_k 10) and a fresh {t['mode']} reader (heads untrained, seed 0, "
                    f"K = {args.long_top_k}, gamma = 0: {t['spans']} spans); float32, {args.threads} thread(s), "
                    "2 cores shared with other jobs")
            suffix = f"{LONG_SUFFIX}{t['words']}"
            rows += [row(system, LONG_DATASET, f"seconds{suffix}", round(t["seconds"], 2), note),
                     row(system, LONG_DATASET, f"tokens_per_s{suffix}", round(t["tokens"] / t["seconds"], 1), note),
                     row(system, LONG_DATASET, f"spans{suffix}", t["spans"], note)]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "entqa.json")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--long-pipeline", type=Path, default=LONG_PIPELINE, help="its retriever and KB (--long-documents)")
    parser.add_argument("--long-tokens", type=int, nargs="+", default=list(LONG_TOKENS))
    parser.add_argument("--long-top-k", type=int, default=4, help="K of the fresh readers (the test config's)")
    parser.add_argument("--baseline-root", type=Path, default=None,
                        help="a `git worktree` of an earlier commit, timed too (--long-documents)")
    parser.add_argument("--baseline-max-tokens", type=int, default=2000, help="the longest document the baseline reads")
    parser.add_argument("--per-candidate-max-tokens", type=int, default=2000,
                        help="the longest document the per-candidate reader reads (it reads K rows per passage)")
    args = parser.parse_args()
    write_merged(args.out, LONG_COMMAND, long_document_rows(args))
    write_tables(args.out)


if __name__ == "__main__":
    main()

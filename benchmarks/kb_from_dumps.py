"""``kb from-dumps`` at scale, on synthetic dumps in the real formats, with spaCy's ``InMemoryLookupKB`` as the peer.

    python -m benchmarks.kb_from_dumps --sizes 1m          # ~15 min on 2 cores (dumps generated once)
    python -m benchmarks.kb_from_dumps --sizes 20k --out benchmarks/tmp/kb_from_dumps_20k.json   # smoke check
    python -m benchmarks.kb_from_dumps --sizes 100k --profile excerpts   # items and articles as large as the excerpts

The dumps (``benchmarks.synthetic_dumps``) are kept in ``benchmarks/tmp/dumps-<size>/`` (``dumps-<size>-excerpts/``
and the dataset ``synthetic-dump-<size>-excerpts`` with ``--profile excerpts``). Each measurement runs in
a fresh process; the method is on docs/kb_dumps_scale.md. The real-bytes rows of the results file (stages, floor,
projection) were measured by the code now in ``studies/kb_dumps_real/``; this module still renders their tables.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from .results_io import RESULTS_DIR, ROOT, log, write_merged
from .results_io import row as result_row
from .tables import PAGES, published_only, results_to_markdown, update_readme_section

COMMAND = "python -m benchmarks.kb_from_dumps"
SYSTEM = "spacy_el kb from-dumps"
PEER = "spacy InMemoryLookupKB"
TMP = ROOT / "benchmarks" / "tmp"
N_LOOKUPS = 20_000
Row = Dict[str, Any]


def parse_size(label: str) -> int:
    label = label.strip().lower()
    factor = {"k": 1_000, "m": 1_000_000}.get(label[-1], 1)
    return int(float(label[:-1] if label[-1] in "km" else label) * factor)


def peak_rss_bytes(who: int) -> int:
    return resource.getrusage(who).ru_maxrss * 1024  # kB on Linux


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def sample_aliases(kb: Any, n: int, seed: int = 0) -> List[str]:
    import numpy as np

    rows = np.random.default_rng(seed).integers(0, kb.n_aliases, size=min(n, kb.n_aliases))
    return [kb.aliases.aliases[int(r)] for r in rows]


# -- children: each measurement in its own process -----------------------------------------------------
def child_build(args: argparse.Namespace) -> Dict[str, Any]:
    from spacy_el.cli import app

    started = time.perf_counter()
    try:
        app([
            "kb", "from-dumps", str(args.kb), "--wikidata", str(args.wikidata), "--wikipedia", str(args.wikipedia),
            "--n-process", str(args.n_process), "--force", "--work-dir", str(args.work_dir),
        ])
    except SystemExit as done:
        if done.code:
            raise
    return {
        "build_s": time.perf_counter() - started,
        "main_peak": peak_rss_bytes(resource.RUSAGE_SELF),
        "worker_peak": peak_rss_bytes(resource.RUSAGE_CHILDREN),
    }


def child_query(args: argparse.Namespace) -> Dict[str, Any]:
    from spacy_el.kb import ElKnowledgeBase

    started = time.perf_counter()
    kb = ElKnowledgeBase.load(args.kb, mmap=True, verify=False)
    load_s = time.perf_counter() - started
    aliases = sample_aliases(kb, N_LOOKUPS)
    kb.lookup(aliases[0])
    started = time.perf_counter()
    for alias in aliases:
        kb.lookup(alias)
    lookup_us = (time.perf_counter() - started) / len(aliases) * 1e6
    return {"load_s": load_s, "lookup_us": lookup_us, "n_entities": kb.n_entities, "n_aliases": kb.n_aliases,
            "n_candidates": int(len(kb.aliases.cand_entities))}


def child_peer(args: argparse.Namespace) -> Dict[str, Any]:
    from spacy.kb import InMemoryLookupKB
    from spacy.vocab import Vocab

    from spacy_el.kb import ElKnowledgeBase
    from spacy_el.kb.interop import to_in_memory_lookup_kb

    kb = ElKnowledgeBase.load(args.kb, mmap=True, verify=False)
    aliases = sample_aliases(kb, N_LOOKUPS)
    status = Path("/proc/self/status").read_text().splitlines()
    before = next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
    started = time.perf_counter()
    peer = to_in_memory_lookup_kb(kb, Vocab())
    build_s = time.perf_counter() - started
    peak = peak_rss_bytes(resource.RUSAGE_SELF)
    peer.get_alias_candidates(aliases[0])
    started = time.perf_counter()
    for alias in aliases:
        peer.get_alias_candidates(alias)
    lookup_us = (time.perf_counter() - started) / len(aliases) * 1e6
    out = Path(args.peer_dir)
    shutil.rmtree(out, ignore_errors=True)
    peer.to_disk(out)
    started = time.perf_counter()
    InMemoryLookupKB(Vocab(), entity_vector_length=0).from_disk(out)
    load_s = time.perf_counter() - started
    return {"build_s": build_s, "peak": peak, "before": before, "disk": folder_bytes(out), "load_s": load_s, "lookup_us": lookup_us}


CHILDREN = {"build": child_build, "query": child_query, "peer": child_peer}


def run_child(mode: str, **kwargs: Any) -> Dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.kb_from_dumps", "--child", mode]
    for key, value in kwargs.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        return {"error": f"exit status {done.returncode}" + (" (killed: out of memory?)" if done.returncode < 0 else "")}
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the benchmark ---------------------------------------------------------------------------------------
def run_size(label: str, n_process: int, profile: str = "small") -> List[Row]:
    from .synthetic_dumps import write_dumps  # not in the children, whose peak memory is measured

    n = parse_size(label)
    dataset = f"synthetic-dump-{label}" + ("" if profile == "small" else f"-{profile}")
    dumps = TMP / dataset.replace("synthetic-dump", "dumps")
    wikidata, wikipedia = dumps / "wikidata.json.gz", dumps / "enwiki.xml.gz"
    if not (wikidata.is_file() and wikipedia.is_file()):
        log(f"writing synthetic dumps of {n:,} entities ({profile} profile) to {dumps}")
        write_dumps(dumps, n, n * 10 // 3, profile=profile)
    kb_dir, work = TMP / f"kb-from-dumps-{label}", TMP / f"kb-from-dumps-{label}-work"
    work.mkdir(parents=True, exist_ok=True)
    log(f"{dataset}: kb from-dumps --n-process {n_process}")
    build = run_child("build", kb=kb_dir, wikidata=wikidata, wikipedia=wikipedia, n_process=n_process, work_dir=work)
    if "error" in build:
        raise SystemExit(f"kb from-dumps failed on {dataset}: {build['error']}")
    query = run_child("query", kb=kb_dir)
    log(f"{dataset}: {build} {query}")
    sizes = f"{query['n_entities']:,} entities, {query['n_aliases']:,} aliases, {query['n_candidates']:,} candidates"
    note = f"{sizes}; {n_process} worker processes (largest worker peak {build['worker_peak'] / 2**20:.0f} MB)"
    note += "" if profile == "small" else f"; dumps of the synthetic_dumps {profile} profile"
    rows = [
        result_row(SYSTEM, dataset, "build_s", round(build["build_s"], 1), note),
        result_row(SYSTEM, dataset, "peak_rss_bytes", build["main_peak"], "main process"),
        result_row(SYSTEM, dataset, "disk_bytes", folder_bytes(kb_dir), "KB folder, no vectors, no fuzzy index"),
        result_row(SYSTEM, dataset, "load_s", round(query["load_s"], 3), "mmap=True, verify=False"),
        result_row(SYSTEM, dataset, "lookup_us_exact", round(query["lookup_us"], 1), f"kb.lookup of {N_LOOKUPS:,} KB aliases"),
    ]
    log(f"{dataset}: the spaCy peer")
    peer = run_child("peer", kb=kb_dir, peer_dir=TMP / f"spacy-kb-{label}")
    if "error" in peer:
        rows.append(result_row(PEER, dataset, "build_s", float("nan"), f"failed: {peer['error']}"))
    else:
        rows += [
            result_row(PEER, dataset, "build_s", round(peer["build_s"], 1), "filling only, from parsed input"),
            result_row(PEER, dataset, "peak_rss_bytes", peer["peak"], f"process peak; {peer['before'] / 2**20:.0f} MB before filling"),
            result_row(PEER, dataset, "disk_bytes", peer["disk"], "to_disk"),
            result_row(PEER, dataset, "load_s", round(peer["load_s"], 3), "from_disk"),
            result_row(PEER, dataset, "lookup_us_exact", round(peer["lookup_us"], 1), "get_alias_candidates"),
        ]
    shutil.rmtree(TMP / f"spacy-kb-{label}", ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return rows


# The tables of docs/kb_dumps_scale.md: marker name -> the rows it shows (a page without a table's markers is left
# as it is); the real-bytes rows' notes repeat the method that the page states once, the projection keeps its
# notes, which carry the dump sizes it assumes.
TABLES = {
    "kb_from_dumps": lambda r: r["dataset"].startswith("synthetic-dump-"),
    "kb_from_dumps_real": lambda r: r["dataset"].startswith("real excerpts") and not r["system"].startswith(("stage", "projected")),
    "kb_from_dumps_stages": lambda r: r["system"].startswith("stage"),
    "kb_from_dumps_projection": lambda r: r["system"].startswith("projected"),
}
NOTED_TABLES = ("kb_from_dumps", "kb_from_dumps_projection")


@published_only
def write_tables(out: Path = RESULTS_DIR / "kb_from_dumps.json") -> None:
    for name, select in TABLES.items():
        table = results_to_markdown(out, pivot=True, notes=name in NOTED_TABLES, select=select)
        updated = update_readme_section(PAGES["kb_from_dumps"], name, table)
        log(f"{'updated' if updated else 'no ' + name + ' markers in'} {PAGES['kb_from_dumps']}")


def main() -> None:
    from .synthetic_dumps import PROFILES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1m", help="comma-separated: 20k, 1m, 6m, ...")
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--profile", choices=PROFILES, default="small", help="of benchmarks.synthetic_dumps")
    parser.add_argument("--out", type=Path, default=None, help="results JSON (default: benchmarks/results/kb_from_dumps.json)")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    for name in ("kb", "wikidata", "wikipedia", "work-dir", "peer-dir"):
        parser.add_argument(f"--{name}", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    out = args.out or RESULTS_DIR / "kb_from_dumps.json"
    rows: List[Row] = []
    log(f"load {os.getloadavg()}")
    for label in filter(None, args.sizes.split(",")):
        rows += run_size(label.strip(), args.n_process, args.profile)
    write_merged(out, f"{COMMAND} --sizes {args.sizes}" + (f" --profile {args.profile}" if args.profile != "small" else ""), rows)
    log(f"wrote {out}")
    if args.out is None:
        write_tables(out)


if __name__ == "__main__":
    main()

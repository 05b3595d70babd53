"""Throughput, per-worker memory and crash safety of ``python -m spacy_el annotate`` (docs/annotate.md).

    python -m benchmarks.annotate --pipeline training/test/pipelines/nsl_jcl --docs 3000

AIDA documents and GUM pieces in a temporary JSONL under ``benchmarks/tmp/``; the rows are described on the page.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .common import SHARED_DATA, reset_peak_rss
from .results_io import RESULTS_DIR, ROOT, Row, repo_relative, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "annotate"
COMMAND = "python -m spacy project run annotate-benchmark projects/pipelines"
DEFAULT_PIPELINE = ROOT / "training" / "test" / "pipelines" / "nsl_jcl"
DATASET = "aida+gum"
TMP = ROOT / "benchmarks" / "tmp"


# -- documents ------------------------------------------------------------------------------------
def interleave(*lists: Sequence[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The items of the lists taken in turn (so that any prefix mixes them)."""
    out: List[Tuple[str, str]] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out += [x[i] for x in lists if i < len(x)]
    return out


def load_documents(data: Path, n_docs: int, gum_sentences: int) -> Tuple[List[Tuple[str, str]], Dict[str, int]]:
    """``n_docs`` ``(id, text)`` pairs: AIDA documents (train, dev, test) and GUM documents (all splits) cut into
    pieces of ``gum_sentences`` sentences, taken in turn; and how many of each."""
    from spacy_el.corpora import read_aida_split, read_gum

    aida = [(f"aida-{split}-{i}", doc.text) for split in ("train", "dev", "test")
            for i, doc in enumerate(read_aida_split(data / "aida", split))]
    gum = []
    for doc in read_gum(data / "gum"):
        name = doc.user_data.get("doc_id", f"gum{len(gum)}")
        sents = [s.text for s in doc.sents]
        gum += [(f"{name}-{k // gum_sentences}", " ".join(sents[k:k + gum_sentences]))
                for k in range(0, len(sents), gum_sentences)]
    docs = [(doc_id, text) for doc_id, text in interleave(aida, gum) if text.strip()][:n_docs]
    counts = Counter("aida" if doc_id.startswith("aida-") else "gum" for doc_id, _ in docs)
    return docs, {"aida": counts["aida"], "gum": counts["gum"]}


def write_jsonl(path: Path, docs: Iterable[Tuple[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf8") as f:
        for doc_id, text in docs:
            f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return path


# -- worker memory --------------------------------------------------------------------------------
def _status_kb(pid: int, fields: Sequence[str]) -> Dict[str, int]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {f: int(m.group(1)) * 1024 for f in fields if (m := re.search(rf"^{f}:\s+(\d+) kB", text, re.M))}


def _rollup_bytes(pid: int, kind: str) -> int:
    """The ``kind`` (``Shared`` or ``Private``) bytes of a process's resident pages (``smaps_rollup``)."""
    text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    return sum(int(m.group(1)) * 1024 for m in re.finditer(rf"^{kind}_(?:Clean|Dirty):\s+(\d+) kB", text, re.M))


def kb_mapping_bytes(pid: int, pipeline: Path) -> Dict[str, int]:
    """Resident and private bytes of a process's mappings of the files of ``pipeline``'s KBs (``/proc/PID/smaps``,
    paths under the pipeline folder with a ``kb`` folder): ``rss``, and ``private_dirty``, the KB pages this
    process wrote or copied (zero when it only reads the shared KB)."""
    root = str(pipeline.resolve()) + os.sep
    totals = {"rss": 0, "private_dirty": 0}
    in_kb = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", fields[0]):  # a mapping's header line
            in_kb = len(fields) >= 6 and fields[5].startswith(root) and "/kb/" in fields[5][len(root) - 1:]
        elif in_kb and fields[0] in ("Rss:", "Private_Dirty:"):
            totals["rss" if fields[0] == "Rss:" else "private_dirty"] += int(fields[1]) * 1024
    return totals


def descendants(root: int) -> List[int]:
    """The pids of ``root``'s descendant processes (Linux ``/proc``)."""
    children: Dict[int, List[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class WorkerSampler:
    """A thread that samples the descendants of this process every ``interval`` s while it runs: per pid, its
    peak RSS (``VmHWM``), its command line, and the shared and private bytes (``smaps_rollup``) and its KB
    mappings' bytes (:func:`kb_mapping_bytes`) at its largest sampled RSS. The private bytes are what the
    process adds to the machine's memory: its pages no other process maps (a memory-mapped KB read by several
    workers is shared, not private)."""

    def __init__(self, pipeline: Path, interval: float = 0.2) -> None:
        self.pipeline, self.interval = pipeline, interval
        self.seen: Dict[int, Dict] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "WorkerSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def sample(self) -> None:
        for pid in descendants(os.getpid()):
            try:
                status = _status_kb(pid, ("VmHWM", "VmRSS"))
                shared, private = _rollup_bytes(pid, "Shared"), _rollup_bytes(pid, "Private")
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf8", "replace")
            except (OSError, ValueError):
                continue
            if "VmRSS" not in status:
                continue
            rec = self.seen.setdefault(pid, {"hwm": 0, "rss": 0, "shared": 0, "private": 0, "cmds": set(),
                                             "kb": {"rss": 0, "private_dirty": 0}})
            rec["hwm"] = max(rec["hwm"], status.get("VmHWM", 0))
            rec["cmds"].add(cmd)
            if status["VmRSS"] >= rec["rss"]:
                rec["rss"], rec["shared"], rec["private"] = status["VmRSS"], shared, private
                try:
                    rec["kb"] = kb_mapping_bytes(pid, self.pipeline)
                except (OSError, ValueError):
                    pass


def self_peak() -> Tuple[int, int]:
    """This process's peak RSS (``VmHWM``) and the bytes of it now shared with other processes."""
    return _status_kb(os.getpid(), ("VmHWM",))["VmHWM"], _rollup_bytes(os.getpid(), "Shared")


def kb_bytes(nlp) -> Tuple[int, List[str]]:
    """The bytes of the KB arrays held by the pipeline's components (``kb.memory_usage()``) and their names."""
    total, names = 0, []
    for name, pipe in nlp.components:
        kb = getattr(pipe, "kb", None)
        if kb is not None and hasattr(kb, "memory_usage"):
            total += sum(kb.memory_usage().values())
            names.append(name)
    return total, names


def mib(n: float) -> str:
    return f"{n / 2 ** 20:.0f} MiB"


# -- kill and resume ------------------------------------------------------------------------------
def lost_and_duplicated(expected: Sequence[str], found: Sequence[str]) -> Tuple[int, int]:
    """Input ids absent from the output, and output entries beyond the first for an id (or not in the input)."""
    counts = Counter(found)
    lost = sum(1 for doc_id in set(expected) if doc_id not in counts)
    duplicated = sum(n - 1 for n in counts.values()) + sum(1 for doc_id in counts if doc_id not in set(expected))
    return lost, duplicated


def output_ids(out: Path) -> List[str]:
    """The ids of an output directory's committed records and error lines."""
    from spacy_el.annotate import read_output

    records, errors = read_output(out)
    return [r["id"] for r in records] + [e["id"] for e in errors]


def kill_and_resume(pipeline: Path, input_path: Path, out: Path, kills: int, seed: int, chunk_size: int,
                    delay: Tuple[float, float], n_process: int = 1) -> Dict:
    """Run the CLI over ``input_path`` as a subprocess, SIGKILL it after a random delay (seeded, uniform in
    ``delay`` seconds) ``kills`` times, resuming each time with ``--resume``, then let the last run finish.
    Returns the kills that hit a running process, the documents committed at each kill, the final ids, and
    how many of the killed drivers' worker processes were still alive 10 s after the kill."""
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    base = [sys.executable, "-m", "spacy_el", "annotate", str(pipeline), str(input_path), str(out),
            "--chunk-size", str(chunk_size), "--n-process", str(n_process), "--no-progress", "--allow-errors"]
    landed, committed, workers = 0, [], []
    for attempt in range(kills + 1):
        cmd = base + (["--resume"] if attempt else [])
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if attempt < kills:
            try:
                proc.wait(timeout=rng.uniform(*delay))
            except subprocess.TimeoutExpired:
                workers += descendants(proc.pid)
                proc.send_signal(signal.SIGKILL)
                landed += 1
        proc.wait()
        err = proc.stderr.read().decode("utf8", "replace")
        proc.stderr.close()
        if proc.returncode not in (0, -signal.SIGKILL):
            raise RuntimeError(f"annotate exited {proc.returncode}: {err[-2000:]}")
        manifest = out / "manifest.json"
        committed.append(json.loads(manifest.read_text())["docs_read"] if manifest.exists() else 0)
        if proc.returncode == 0:
            break
    deadline = time.time() + 10
    while time.time() < deadline and any(alive(pid) for pid in workers):
        time.sleep(0.1)
    return {"kills": landed, "committed": committed, "ids": output_ids(out),
            "orphans": sum(alive(pid) for pid in workers)}


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- throughput -----------------------------------------------------------------------------------
def pipe_records(nlp, docs: Sequence[Tuple[str, str]], batch_size: int) -> int:
    """The bare loop: ``nlp.pipe`` over the texts, building each document's output record (in memory)."""
    from spacy_el.annotate import doc_record
    from spacy_el.annotate.writers import jsonl_bytes

    size = 0
    texts = (text for _, text in docs)
    for (doc_id, _), doc in zip(docs, nlp.pipe(texts, batch_size=batch_size)):
        size += len(jsonl_bytes([doc_record(doc, doc_id, {}, 5)]))
    return size


def timed_annotate(pipeline, input_path: Path, out: Path, **options) -> Tuple[float, object]:
    from spacy_el.annotate import annotate

    if out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    summary = annotate(pipeline, input_path, out, progress=False, **options)
    return time.perf_counter() - start, summary


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", type=Path, default=DEFAULT_PIPELINE)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--docs", type=int, default=2000, help="documents of the throughput runs")
    parser.add_argument("--gum-sentences", type=int, default=8, help="sentences per GUM piece")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--kill-docs", type=int, default=600, help="documents of the kill/resume run")
    parser.add_argument("--kill-chunk-size", type=int, default=20)
    parser.add_argument("--kill-n-process", type=int, default=2, help="--n-process of the killed runs")
    parser.add_argument("--kill-delay", type=float, nargs=2, default=(3.0, 10.0), metavar=("MIN", "MAX"),
                        help="seconds after each start at which the run is killed (uniform)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / f"{NAME}.json")
    args = parser.parse_args(argv)
    dataset = DATASET

    import spacy
    import torch

    spacy.util.fix_random_seed(args.seed)
    TMP.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="annotate-", dir=TMP))  # git-ignored; removed at the end
    try:
        docs, counts = load_documents(args.data, args.docs, args.gum_sentences)
        input_path = write_jsonl(work / "input.jsonl", docs)
        n = len(docs)
        words = sum(len(text.split()) for _, text in docs)
        tiny = args.pipeline.resolve() == DEFAULT_PIPELINE.resolve()
        where = f"pipeline {repo_relative(args.pipeline)}" + (" (tiny test-workflow model)" if tiny else "")
        where_speed = where + (": the figures measure the command's machinery and scaling, not a production model's "
                               "speed" if tiny else "")
        corpus = (f"{n:,} docs ({counts['aida']:,} AIDA documents, {counts['gum']:,} GUM pieces of "
                  f"{args.gum_sentences} sentences; {words:,} whitespace words)")
        common = f"{where_speed}; {corpus}; batch {args.batch_size}, chunk {args.chunk_size}"
        print(f"{corpus}; input {input_path}", flush=True)

        nlp = spacy.load(args.pipeline)
        threads = torch.get_num_threads()
        pipe_records(nlp, docs[:64], args.batch_size)  # warm-up
        rows: List[Row] = []

        # nlp_pipe: the bare loop, in this process
        reset_peak_rss()
        start = time.perf_counter()
        pipe_records(nlp, docs, args.batch_size)
        t_pipe = time.perf_counter() - start
        hwm_pipe, _ = self_peak()
        print(f"nlp_pipe {t_pipe:.1f}s", flush=True)

        # local_1proc, with the loaded pipeline (its load is outside the time, as for nlp_pipe)
        reset_peak_rss()
        t_1, s_1 = timed_annotate(nlp, input_path, work / "out1", batch_size=args.batch_size,
                                  chunk_size=args.chunk_size)
        hwm_1, shared_1 = self_peak()
        assert s_1.read == n, s_1
        print(f"local_1proc {t_1:.1f}s", flush=True)

        # local_2proc: 2 worker processes for the run, forked from this process (pipeline already loaded)
        with WorkerSampler(args.pipeline) as sampler:
            t_2, s_2 = timed_annotate(nlp, input_path, work / "out2", batch_size=args.batch_size,
                                      chunk_size=args.chunk_size, n_process=2)
        assert s_2.read == n, s_2
        workers_2 = [rec for rec in sampler.seen.values() if rec["hwm"]]
        print(f"local_2proc {t_2:.1f}s, {len(workers_2)} worker processes sampled", flush=True)

        kb_total, kb_pipes = kb_bytes(nlp)
        rows += [
            row("nlp_pipe", dataset, "docs_per_s", round(n / t_pipe, 1),
                f"{common}; for doc in nlp.pipe(texts): the same JSONL record built in memory, no files; torch {threads} threads"),
            row("nlp_pipe", dataset, "peak_rss_bytes", hwm_pipe,
                f"VmHWM of the process (pipeline loaded, reset before the loop); {where}"),
            row("local_1proc", dataset, "docs_per_s", round(n / t_1, 1),
                f"{common}; annotate(nlp, input.jsonl, out) end to end, pipeline already loaded, no progress bar; torch {threads} threads"),
            row("local_1proc", dataset, "overhead", round(t_1 / t_pipe - 1, 3),
                f"local_1proc seconds / nlp_pipe seconds - 1 ({t_1:.1f} s / {t_pipe:.1f} s); {where}"),
            row("local_1proc", dataset, "peak_rss_bytes", hwm_1,
                f"VmHWM of the process (pipeline loaded, reset before the run); {mib(shared_1)} shared with other processes afterwards; {where}"),
            row("local_2proc", dataset, "docs_per_s", round(n / t_2, 1),
                f"{common}; annotate(..., n_process=2): 2 worker processes started once, forked from the loaded pipeline, torch 1 thread each, "
                "sending back records; the next chunk is submitted before the current one is committed"),
            speedup_row("local_2proc", dataset, t_2, t_1, threads, where),
        ]
        rows += peak_worker_rows("local_2proc", dataset, workers_2, "forked worker processes",
                                 "(copy-on-write from the parent)", where)
        del nlp

        if not args.no_ray:
            rows += ray_rows(args, dataset, input_path, work, n, common, where, t_1, threads)

        # the KB, for comparison with the workers' memory
        kb_dir_bytes = sum(p.stat().st_size for p in args.pipeline.rglob("*") if p.is_file() and "kb" in p.parts)
        rows.append(row("kb", dataset, "kb_bytes", kb_total,
                        f"kb.memory_usage() of {', '.join(kb_pipes) or 'no component'} (memory-mapped when the "
                        f"pipeline is loaded from disk, so processes loading it share these pages); kb folders "
                        f"{kb_dir_bytes:,} bytes on disk; {where}"))

        # kill and resume
        if args.kills == 0:
            return finish(args, rows)
        kill_docs = docs[:args.kill_docs]
        kill_input = write_jsonl(work / "kill_input.jsonl", kill_docs)
        result = kill_and_resume(args.pipeline, kill_input, work / "out_kill", args.kills, args.seed,
                                 args.kill_chunk_size, tuple(args.kill_delay), args.kill_n_process)
        lost, dup = lost_and_duplicated([doc_id for doc_id, _ in kill_docs], result["ids"])
        kill_notes = (f"CLI subprocess over {len(kill_docs):,} docs, chunk {args.kill_chunk_size}, "
                      f"--n-process {args.kill_n_process}: SIGKILL of the driver after "
                      f"uniform({args.kill_delay[0]:g}, {args.kill_delay[1]:g}) s (seed {args.seed}), "
                      f"{result['kills']} kills landed, each followed by --resume, then run to the end; "
                      f"committed docs at each stop {result['committed']}; {where}")
        print(f"kill/resume: {result['kills']} kills, committed {result['committed']}", flush=True)
        killed = "local_2proc" if args.kill_n_process == 2 else "local_1proc"
        rows += [row(killed, dataset, "lost_docs", lost, kill_notes),
                 row(killed, dataset, "duplicated_docs", dup, kill_notes),
                 row(killed, dataset, "orphan_workers", result["orphans"],
                     f"worker processes still alive 10 s after the kills of their driver; {kill_notes}")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    finish(args, rows)


def finish(args: argparse.Namespace, rows: List[Row]) -> None:
    """Write the results file and, when it is the published one, the docs table."""
    order = {"local_1proc": 0, "local_2proc": 1, "ray_2actors": 2, "nlp_pipe": 3, "kb": 4}
    rows.sort(key=lambda r: order[r["system"]])
    write_results(args.out, f"{COMMAND}  # python -m benchmarks.annotate --docs {args.docs}", rows)
    write_tables(args.out)  # published only when --out is the published results file


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Optional[Path] = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, notes=False))


def speedup_row(system: str, dataset: str, seconds: float, t_1: float, threads: int, where: str) -> Row:
    """The scaling figure: local_1proc's seconds (torch on ``threads`` threads, which already spreads the matrix
    work over the cores) over the system's."""
    return row(system, dataset, "speedup", round(t_1 / seconds, 2),
               f"local_1proc seconds / {system} seconds ({t_1:.1f} s / {seconds:.1f} s), local_1proc with torch on "
               f"{threads} threads; {where}")


def ray_rows(args, dataset: str, input_path: Path, work: Path, n: int, common: str, where: str, t_1: float,
             threads: int) -> List[Row]:
    """docs_per_s, start-up seconds and peak actor RSS of the Ray engine with 2 actors."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        tiny = write_jsonl(work / "tiny.jsonl", [("t1", "Ada Mercer went to Orvik.")])
        t_start, _ = timed_annotate(args.pipeline, tiny, work / "out_tiny", engine="ray", actors=2)
        with WorkerSampler(args.pipeline) as sampler:
            t_ray, s_ray = timed_annotate(args.pipeline, input_path, work / "out_ray", engine="ray", actors=2,
                                          batch_size=args.batch_size, chunk_size=args.chunk_size)
        assert s_ray.read == n, s_ray
        actors = [rec for rec in sampler.seen.values() if rec["hwm"] and any("AnnotateWorker" in c for c in rec["cmds"])]
    finally:
        ray.shutdown()
    print(f"ray_2actors {t_ray:.1f}s (start-up alone {t_start:.1f}s), {len(actors)} actors sampled", flush=True)
    rows = [
        row("ray_2actors", dataset, "docs_per_s", round(n / t_ray, 1),
            f"{common}; annotate(path, ..., engine='ray', actors=2) after ray.init(num_cpus=2) (Ray start-up "
            f"outside the time; the actors' start-up, each loading the pipeline, inside: "
            f"{n / max(t_ray - t_start, 1e-9):.1f} docs/s without it)"),
        row("ray_2actors", dataset, "startup_s", round(t_start, 2),
            "annotate over 1 document with engine='ray', actors=2 on the running Ray: start 2 actors that each load "
            f"the pipeline, then stop them; {where}"),
        speedup_row("ray_2actors", dataset, t_ray, t_1, threads, where),
    ]
    return rows + peak_worker_rows("ray_2actors", dataset, actors, "AnnotateWorker actor processes",
                                   "(each actor loads the pipeline from its folder; the memory-mapped KB's pages are shared)",
                                   where)


def peak_worker_rows(system: str, dataset: str, workers: List[Dict[str, int]], what: str, sharing: str, where: str) -> List[Row]:
    """The ``peak_rss_bytes`` row of the worker with the largest VmHWM (none when no worker was sampled);
    ``sharing`` says what its shared pages are."""
    if not workers:
        return []
    peak = max(workers, key=lambda rec: rec["hwm"])
    most_private = max(workers, key=lambda rec: rec["private"])
    return [
        row(system, dataset, "peak_rss_bytes", peak["hwm"],
            f"largest VmHWM of the {len(workers)} {what} (sampled every 0.2 s); {mib(peak['shared'])} of its "
            f"{mib(peak['rss'])} resident were pages shared with other processes {sharing} at its largest sample; "
            f"{where}"),
        row(system, dataset, "worker_private_bytes", most_private["private"],
            f"the largest private resident memory (smaps_rollup Private_*) of the {len(workers)} {what}, at its "
            f"largest sampled RSS: what one more worker adds to the machine's memory (compare kb_bytes); {where}"),
        row(system, dataset, "worker_kb_private_bytes", max(rec["kb"]["private_dirty"] for rec in workers),
            f"the largest Private_Dirty of the mappings of the pipeline's KB files (/proc/PID/smaps) among the "
            f"{len(workers)} {what}: the KB bytes a worker copied rather than shared; "
            f"{mib(max(rec['kb']['rss'] for rec in workers))} of KB pages were resident in the largest; {where}"),
    ]


if __name__ == "__main__":
    main()

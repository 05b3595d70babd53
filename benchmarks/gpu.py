"""Every component on a GPU: it trains and predicts with ``--gpu-id`` as on the CPU, and predicts the same.

    python -m benchmarks.gpu --gpu-id 0          # on the lent machine: scripts/gpu_bundle/run.sh

The ``test`` workflow runs with ``vars.gpu_id``; each trained pipeline then annotates the bundled GUM texts on the
GPU and, in another process, on the CPU (:mod:`benchmarks.prediction_parity`). The rows are described on
docs/gpu.md; the coreference trainings on a GPU are frozen in ``studies/joint_coref_linker/``.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .results_io import RESULTS_DIR, ROOT, Row, row, write_merged
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "gpu"
#: The ``test`` workflow's pipelines, one per component (and the composed ones).
TEST_PIPELINES = (
    ("ner_stack_lstm", "training/test/ner_stack_lstm/model-best"),
    ("joint_coref_linker", "training/test/joint_coref_linker/model-best"),
    ("ner_constrained_linker", "training/test/ner4el/model-best"),
    ("entity_retriever", "training/test/entqa_retriever/model-best"),
    ("entqa_reader", "training/test/entqa/model-best"),
    ("pipeline_ner_ner4el", "training/test/pipelines/ner_ner4el"),
    ("pipeline_nsl_jcl", "training/test/pipelines/nsl_jcl"),
    ("pipeline_entqa_jcl", "training/test/pipelines/entqa_jcl"),
)


def run_logged(command: Sequence[str], log: Path, env: Dict[str, str]) -> subprocess.Popen:
    print("$ " + " ".join(command), flush=True)
    return subprocess.Popen(list(command), cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def wait(process: subprocess.Popen, log: Path, what: str) -> bool:
    """Whether the process ended well; when not, the end of its log is printed (the check goes on with
    what it can still measure: one failure should not hide the other results)."""
    if process.wait() == 0:
        return True
    sys.stdout.write(log.read_text(encoding="utf8")[-4000:])
    print(f"{what} failed (exit {process.returncode}); the end of its log is above.", flush=True)
    return False


def parity_rows(gpu_id: int, env: Dict[str, str], workdir: Path) -> List[Row]:
    """Each test pipeline's GUM predictions on the GPU against the CPU's (module docstring, part 1)."""
    pipelines = [path for _, path in TEST_PIPELINES if (ROOT / path).exists()]
    outputs = {}
    for device in (gpu_id, -1):
        out = workdir / f"predictions_{device}.json"
        command = [sys.executable, "benchmarks/prediction_parity.py", "write", *pipelines, "--out", str(out),
                   "--gpu-id", str(device)]
        log = workdir / f"parity_{device}.log"
        if not wait(run_logged(command, log, env), log, "prediction_parity write"):
            return []
        outputs[device] = json.loads(out.read_text(encoding="utf8"))
    return compare_rows(outputs[gpu_id], outputs[-1], gpu_id)


def compare_rows(on_gpu: Dict[str, Any], on_cpu: Dict[str, Any], gpu_id: int) -> List[Row]:
    """The parity rows of two ``prediction_parity write`` files, one written on the GPU, one on the CPU:
    ``gpu_params_on_gpu``, ``gpu_cpu_identical_docs`` (every float equal too), ``gpu_cpu_same_decisions``
    (entities, labels, KB ids, clusters, passages' candidates equal) and ``gpu_cpu_max_score_diff``."""
    from .prediction_parity import decisions, largest_difference

    rows = []
    for name, path in TEST_PIPELINES:
        if path not in on_gpu["pipelines"]:
            continue
        gpu, cpu = on_gpu["pipelines"][path], on_cpu["pipelines"][path]
        note = f"{path} (test workflow, --gpu-id {gpu_id}); {len(gpu)} GUM texts"
        if on_gpu["on_gpu"].get(path) is not None:  # measured on a GPU, for a pipeline with torch layers
            rows.append(row(name, "gum-assets", "gpu_params_on_gpu", round(on_gpu["on_gpu"][path], 4), note))
        rows.append(row(name, "gum-assets", "gpu_cpu_identical_docs", round(sum(a == b for a, b in zip(gpu, cpu)) / len(gpu), 4), note))
        rows.append(row(name, "gum-assets", "gpu_cpu_same_decisions",
                        round(sum(decisions(a) == decisions(b) for a, b in zip(gpu, cpu)) / len(gpu), 4), note))
        rows.append(row(name, "gum-assets", "gpu_cpu_max_score_diff", max(largest_difference(a, b) for a, b in zip(gpu, cpu)), note))
    return rows


def gpu_name() -> str:
    from .results_io import gpu_name as name

    return name() or "no GPU"


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads of each process (0: the cores)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args(list(argv) or None)
    threads = args.threads or os.cpu_count() or 1
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    workdir = Path(tempfile.mkdtemp(prefix="spacy_el_gpu_"))
    started = time.monotonic()
    print(f"GPU: {gpu_name()}; {threads} torch threads a process; logs in {workdir}", flush=True)
    workflow = [sys.executable, "-m", "spacy", "project", "run", "test", ".", "--vars.gpu_id", str(args.gpu_id)]
    wait(run_logged(workflow, workdir / "test_workflow.log", env), workdir / "test_workflow.log", "the test workflow")
    print(f"test workflow on the GPU: ended after {time.monotonic() - started:.0f} s", flush=True)
    rows = [row(name, "test-fixtures", "gpu_trained", float((ROOT / path).exists()),
                f"{path} made by the test workflow with --gpu-id {args.gpu_id}") for name, path in TEST_PIPELINES]
    rows += parity_rows(args.gpu_id, env, workdir)
    command = "python -m benchmarks.gpu --gpu-id 0"
    out = write_merged(Path(args.out), command, rows)
    print(f"wrote {out} after {time.monotonic() - started:.0f} s")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Optional[Path] = PAGES[NAME]) -> None:
    """The component checks (the file's coreference rows are the GPU studies', in studies/joint_coref_linker)."""
    publish_table(readme, NAME, results_to_markdown(
        results, pivot=True, select=lambda r: r["metric"].startswith("gpu_"),
        column_order=("gpu_trained", "gpu_params_on_gpu", "gpu_cpu_same_decisions", "gpu_cpu_identical_docs")))


if __name__ == "__main__":
    main(sys.argv[1:])

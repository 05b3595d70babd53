"""Every component on a GPU: it trains and predicts with ``--gpu-id`` as on the CPU, and predicts the same.

    python -m benchmarks.gpu --gpu-id 0 --data ../shared/data --minutes 4.5   # on the lent machine: scripts/gpu_bundle

1. The ``test`` workflow of project.yml (tiny configs, invented fixtures) runs with ``vars.gpu_id``; each trained
   pipeline then annotates the bundled GUM texts on the GPU and, in another process, on the CPU
   (:mod:`benchmarks.prediction_parity`): rows ``gpu_params_on_gpu``, ``gpu_cpu_identical_docs``,
   ``gpu_cpu_same_decisions`` and ``gpu_cpu_max_score_diff``. ``--skip-workflow`` leaves this part out.
2. joint_coref_linker in mode ``coref`` trains on OntoGUM and LitBank (``python -m spacy_el train --resume
   --max-minutes``: it stops at a checkpoint after ``--minutes``, and the same command resumes it); once finished,
   rows ``coref_none_gpu`` on their test sets and the learning curve on ``<corpus>-dev``.

Rows are merged into ``benchmarks/results/gpu.json`` and the tables of docs/gpu.md regenerated. The GPU studies of
the refinements and of the joint systems over seeds are frozen in ``studies/joint_coref_linker/gpu.py``.
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

from .results_io import CURVE_STEP, RESULTS_DIR, ROOT, Row, row, write_merged
from .tables import PAGES, publish_table, published_only, results_to_markdown, suffix_table

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
#: Coreference trainings: (corpus, dataset, corpus folder, splits file, max_steps, eval_frequency), as in
#: projects/joint_coref_linker's train-jcl-ontogum-converged and train-jcl-litbank-converged.
COREF_RUNS = (
    ("ontogum", "ontogum-test", "gum/coref/ontogum/conll", "gum/splits.md", 2865, 191),
    ("litbank", "litbank-test", "litbank/coref/conll", "litbank/splits.json", 1200, 80),
)
MODELS = ROOT / "training" / "jcl"
#: The trainings: each corpus's resolver with refinement ``none``, into ``training/jcl/<corpus>-gpu/none``.
RESOLVER = "none"


def coref_train_command(data: Path, corpus: str, folder: str, splits: str, max_steps: int, eval_frequency: int,
                        gpu_id: int, minutes: float, singletons: bool = False) -> List[str]:
    """``python -m spacy_el train`` of a coreference model on ``data/folder`` into ``training/jcl/<corpus>-gpu/none``
    (resumed when it holds a checkpoint), selected on dev with the singletons counted when ``singletons`` (as the
    test set is then scored)."""
    overrides: Dict[str, object] = {"paths.corpus": data / folder, "paths.splits": data / splits,
                                    "components.joint_coref_linker.refinement": RESOLVER, "paths.kb": "kb/demo"}
    if singletons:
        overrides["components.joint_coref_linker.scorer.keep_singletons"] = "true"  # JSON, as the CLI parses it
    return train_command("configs/joint_coref_linker_coref.cfg", MODELS / f"{corpus}-gpu" / RESOLVER, gpu_id, minutes,
                         max_steps, eval_frequency, max_steps * 2 // 3, overrides)


def train_command(config: str, output: Path, gpu_id: int, minutes: float, max_steps: int, eval_frequency: int,
                  patience: int, overrides: Dict[str, object]) -> List[str]:
    """``python -m spacy_el train CONFIG --output OUTPUT --resume`` on the GPU, stopped at its first checkpoint
    after ``minutes``, with the schedule and the config ``overrides`` (dotted name -> value)."""
    return [
        sys.executable, "-m", "spacy_el", "train", config, "--output", str(output), "--resume",
        "--gpu-id", str(gpu_id), "--max-minutes", str(minutes),
        *[arg for name, value in overrides.items() for arg in (f"--{name}", str(value))],
        "--training.max_steps", str(max_steps), "--training.eval_frequency", str(eval_frequency),
        "--training.patience", str(patience),
    ]


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


def coref_rows(data: Path, gpu_id: int) -> List[Row]:
    """Test scores and learning curves of the GPU-trained coreference models (module docstring, part 2)."""
    import spacy

    from spacy_el.training.resume import EVALUATIONS

    from .common import curve_rows, read_corpus
    from .joint_coref_linker import resolver_rows, unfinished

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    rows: List[Row] = []
    for corpus, dataset, folder, splits, _, _ in COREF_RUNS:
        run = MODELS / f"{corpus}-gpu" / RESOLVER
        if unfinished(run) or not (run / "model-best").exists():
            print(f"  (no {corpus} rows: the training in {run} has not finished; rerun to resume it)")
            continue
        gold = read_corpus("spacy-el.CorefConllReader.v1", spacy.blank("en"), path=data / folder, split="test",
                           splits_path=data / splits)
        trained = f"trained on {corpus} train on the GPU ({gpu_name()})"
        rows += resolver_rows(run / "model-best", "coref_none_gpu", dataset, gold, trained, batch_size=8)
        rows += curve_rows(run / EVALUATIONS, "coref_none_gpu", f"{corpus}-dev", ("coref_avg_f",),
                           train_dataset=f"{corpus}-train")
    return rows


def gpu_name() -> str:
    from .results_io import gpu_name as name

    return name() or "no GPU"


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--data", default="../shared/data", help="the shared data folder (OntoGUM and LitBank)")
    parser.add_argument("--minutes", type=float, default=4.5, help="time budget of each coreference training")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads of each process (0: the cores shared out)")
    parser.add_argument("--skip-workflow", action="store_true", help="only the coreference trainings (resumed)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args(list(argv) or None)
    from spacy_el.scoring.coref_protocol import keeps_singletons

    data = Path(args.data).resolve()
    runs = {corpus: coref_train_command(data, corpus, folder, splits, steps, every, args.gpu_id, args.minutes,
                                        singletons=keeps_singletons(dataset))
            for corpus, dataset, folder, splits, steps, every in COREF_RUNS}
    threads = args.threads or max(1, (os.cpu_count() or 2) // (len(runs) + 1))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    workdir = Path(tempfile.mkdtemp(prefix="spacy_el_gpu_"))
    started = time.monotonic()
    print(f"GPU: {gpu_name()}; {threads} torch threads a process; logs in {workdir}", flush=True)
    kb = [sys.executable, "-m", "spacy", "project", "run", "kb-demo", ".", "--vars.gpu_id", str(args.gpu_id),
          "--vars.data", str(data)]
    if not wait(run_logged(kb, workdir / "kb.log", env), workdir / "kb.log", "kb-demo"):
        raise SystemExit("The trainings need the KB of the kb-demo step.")
    trainings = {name: run_logged(command, workdir / f"train_{name}.log", env) for name, command in runs.items()}
    rows: List[Row] = []
    if not args.skip_workflow:
        workflow = [sys.executable, "-m", "spacy", "project", "run", "test", ".", "--vars.gpu_id", str(args.gpu_id)]
        wait(run_logged(workflow, workdir / "test_workflow.log", env), workdir / "test_workflow.log", "the test workflow")
        print(f"test workflow on the GPU: ended after {time.monotonic() - started:.0f} s", flush=True)
        rows += [row(name, "test-fixtures", "gpu_trained", float((ROOT / path).exists()),
                     f"{path} made by the test workflow with --gpu-id {args.gpu_id}") for name, path in TEST_PIPELINES]
        rows += parity_rows(args.gpu_id, env, workdir)
    for name, process in trainings.items():
        wait(process, workdir / f"train_{name}.log", f"the {name} training")
        print(f"{name} training stopped after {time.monotonic() - started:.0f} s", flush=True)
    rows += coref_rows(data, args.gpu_id)
    command = (f"python -m benchmarks.gpu --gpu-id 0 --data ../shared/data --minutes {args.minutes:g}"
               + (" --skip-workflow" if args.skip_workflow else ""))
    out = write_merged(Path(args.out), command, rows)
    print(f"wrote {out} after {time.monotonic() - started:.0f} s")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Optional[Path] = PAGES[NAME]) -> None:
    """The component checks, the coreference test scores (OntoGUM, LitBank) and the learning curves."""
    publish_table(readme, NAME, results_to_markdown(
        results, pivot=True, select=lambda r: r["metric"].startswith("gpu_"),
        column_order=("gpu_trained", "gpu_params_on_gpu", "gpu_cpu_same_decisions", "gpu_cpu_identical_docs")))
    publish_table(readme, f"{NAME}_coref", results_to_markdown(
        results, pivot=True, select=lambda r: r["dataset"] in ("ontogum-test", "litbank-test") and r["metric"].startswith("coref_")))
    publish_table(readme, f"{NAME}_curve", suffix_table(results, CURVE_STEP, "step", ("coref_avg_f", "elh_f", "train_minutes")))


if __name__ == "__main__":
    main(sys.argv[1:])

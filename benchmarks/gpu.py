"""The GPU check: every component trains and predicts with ``--gpu-id``, and joint_coref_linker's
coreference resolver trains on a GPU with the converged workflow's settings.

Run on a machine with a GPU, from the repository root::

    python -m benchmarks.gpu --gpu-id 0 --data ../shared/data --minutes 4.5

Writes ``benchmarks/results/gpu.json`` (the file's ``machine`` names the GPU) and the tables of docs/gpu.md.
With ``--skip-workflow`` (part 2 only: the trainings resumed) its rows replace those of the same system,
dataset and metric in the ``--out`` file, and the others are kept.

1. **Every component on the GPU.** The ``test`` workflow of project.yml (tiny configs, invented
   fixtures: a KB built with GPU encoding, then ner_stack_lstm, joint_coref_linker, spaCy ``ner`` +
   ner_constrained_linker, entity_retriever + entqa_reader trained with ``--gpu-id``, the three composed
   pipelines assembled and scored) runs with ``vars.gpu_id``. Each trained pipeline then annotates the
   bundled GUM texts on the GPU and, in another process, on the CPU (:mod:`benchmarks.prediction_parity`):
   rows ``gpu_params_on_gpu`` (share of its torch parameters on the GPU), ``gpu_cpu_identical_docs``
   (share of documents annotated identically) and ``gpu_cpu_max_score_diff``. The tiny models are
   checks, not models: their scores mean nothing.
2. **Coreference on the GPU.** joint_coref_linker in mode ``coref`` (refinement ``none``,
   configs/joint_coref_linker_coref.cfg) on OntoGUM and LitBank, with the settings of the ``converged``
   workflow (projects/joint_coref_linker: 15 epochs, one evaluation and checkpoint per epoch, the learning
   rate decaying to 0 at the last step), the two trainings side by side on the one GPU. Each stops at its
   first checkpoint after ``--minutes`` (``python -m spacy_el train --max-minutes``); rerunning the command
   on the same machine resumes them. Rows ``coref_none_gpu`` on ``ontogum-test`` and ``litbank-test``
   (CoNLL-2012 scores, singletons left out) and the learning curve on ``<corpus>-dev``.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .results_io import RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, publish_table, results_to_markdown, suffix_table

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


def coref_train_command(data: Path, corpus: str, folder: str, splits: str, max_steps: int, eval_frequency: int,
                        gpu_id: int, minutes: float) -> List[str]:
    """``python -m spacy_el train`` of a coreference model on ``data/folder`` into
    ``training/jcl/<corpus>-gpu/none`` (resumed when it holds a checkpoint)."""
    return [
        sys.executable, "-m", "spacy_el", "train", "configs/joint_coref_linker_coref.cfg",
        "--output", str(MODELS / f"{corpus}-gpu" / "none"), "--resume", "--gpu-id", str(gpu_id),
        "--max-minutes", str(minutes),
        "--paths.corpus", str(data / folder), "--paths.splits", str(data / splits),
        "--components.joint_coref_linker.refinement", "none", "--paths.kb", "kb/demo",
        "--training.max_steps", str(max_steps), "--training.eval_frequency", str(eval_frequency),
        "--training.patience", str(max_steps * 2 // 3),
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
    print(f"[spacy_el] {what} failed (exit {process.returncode}); the end of its log is above.", flush=True)
    return False


def parity_rows(gpu_id: int, env: Dict[str, str], workdir: Path) -> List[Row]:
    """Each test pipeline's GUM predictions on the GPU against the CPU's (module docstring, part 1)."""
    from .prediction_parity import largest_difference

    pipelines = [(name, path) for name, path in TEST_PIPELINES if (ROOT / path).exists()]
    outputs = {}
    for device in (gpu_id, -1):
        out = workdir / f"predictions_{device}.json"
        command = [sys.executable, "benchmarks/prediction_parity.py", "write", *[p for _, p in pipelines],
                   "--out", str(out), "--gpu-id", str(device)]
        log = workdir / f"parity_{device}.log"
        if not wait(run_logged(command, log, env), log, "prediction_parity write"):
            return []
        outputs[device] = json.loads(out.read_text(encoding="utf8"))
    rows = []
    for name, path in pipelines:
        gpu, cpu = outputs[gpu_id]["pipelines"][path], outputs[-1]["pipelines"][path]
        note = f"{path} (test workflow, --gpu-id {gpu_id}); {len(gpu)} GUM texts"
        if path in outputs[gpu_id]["on_gpu"]:  # measured when predicting on a GPU
            rows.append(row(name, "gum-assets", "gpu_params_on_gpu", round(outputs[gpu_id]["on_gpu"][path], 4), note))
        rows.append(row(name, "gum-assets", "gpu_cpu_identical_docs", round(sum(a == b for a, b in zip(gpu, cpu)) / len(gpu), 4), note))
        rows.append(row(name, "gum-assets", "gpu_cpu_max_score_diff", max(largest_difference(a, b) for a, b in zip(gpu, cpu)), note))
    return rows


def coref_rows(data: Path, gpu_id: int) -> List[Row]:
    """Test scores and learning curves of the GPU-trained coreference models (module docstring, part 2)."""
    import spacy

    from .common import read_corpus
    from .joint_coref_linker import learning_curve_rows, score_refinement

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    args = argparse.Namespace(models=str(MODELS), batch_size=8)
    rows: List[Row] = []
    for corpus, dataset, folder, splits, _, _ in COREF_RUNS:
        gold = read_corpus("spacy-el.CorefConllReader.v1", spacy.blank("en"), path=data / folder, split="test",
                           splits_path=data / splits)
        trained = f"trained on {corpus} train on the GPU ({gpu_name()})"
        rows += score_refinement(args, f"{corpus}-gpu", "none", "coref_none_gpu", dataset, gold, trained) or []
        rows += learning_curve_rows(args, f"{corpus}-gpu", {"none": "coref_none_gpu"}, corpus, ("coref_avg_f",))
    return rows


def gpu_name() -> str:
    from .results_io import gpu_name as name

    return name() or "no GPU"


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--data", default="../shared/data", help="the shared data folder (OntoGUM and LitBank)")
    parser.add_argument("--minutes", type=float, default=4.5, help="time budget of each coreference training")
    parser.add_argument("--threads", type=int, default=4, help="torch CPU threads of each process")
    parser.add_argument("--skip-workflow", action="store_true", help="reuse the test workflow's models")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args(list(argv) or None)
    data = Path(args.data).resolve()
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    workdir = Path(tempfile.mkdtemp(prefix="spacy_el_gpu_"))
    started = time.monotonic()
    print(f"GPU: {gpu_name()}; logs in {workdir}", flush=True)
    kb = [sys.executable, "-m", "spacy", "project", "run", "kb-demo", ".", "--vars.gpu_id", str(args.gpu_id)]
    if not wait(run_logged(kb, workdir / "kb_demo.log", env), workdir / "kb_demo.log", "kb-demo"):
        raise SystemExit("[spacy_el] The coreference trainings need kb/demo.")
    trainings = [
        (corpus, run_logged(coref_train_command(data, corpus, folder, splits, steps, every, args.gpu_id, args.minutes),
                            workdir / f"train_{corpus}.log", env))
        for corpus, _, folder, splits, steps, every in COREF_RUNS
    ]
    rows: List[Row] = []
    if not args.skip_workflow:
        workflow = [sys.executable, "-m", "spacy", "project", "run", "test", ".", "--vars.gpu_id", str(args.gpu_id)]
        wait(run_logged(workflow, workdir / "test_workflow.log", env), workdir / "test_workflow.log", "the test workflow")
        print(f"test workflow on the GPU: ended after {time.monotonic() - started:.0f} s", flush=True)
        rows += [row(name, "test-fixtures", "gpu_trained", float((ROOT / path).exists()),
                     f"{path} made by the test workflow with --gpu-id {args.gpu_id}") for name, path in TEST_PIPELINES]
        rows += parity_rows(args.gpu_id, env, workdir)
    for corpus, process in trainings:
        wait(process, workdir / f"train_{corpus}.log", f"the {corpus} training")
        print(f"{corpus} training stopped after {time.monotonic() - started:.0f} s", flush=True)
    rows += coref_rows(data, args.gpu_id)
    command = f"python -m benchmarks.gpu --gpu-id 0 --data ../shared/data --minutes {args.minutes:g}"
    if args.skip_workflow and Path(args.out).exists():  # a resumed run: its rows replace the earlier run's
        rows = merge_rerun(Path(args.out), rows, command + " --skip-workflow")
    out = write_results(Path(args.out), command, rows)
    print(f"wrote {out} after {time.monotonic() - started:.0f} s")
    write_tables(out, Path(args.readme))


def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Path = PAGES[NAME]) -> None:
    """Three tables: the component checks, the coreference test scores, the learning curves."""
    publish_table(readme, NAME, results_to_markdown(results, pivot=True, select=lambda r: r["metric"].startswith("gpu_")))
    publish_table(readme, f"{NAME}_coref", results_to_markdown(
        results, pivot=True, select=lambda r: r["dataset"].endswith("-test") and r["metric"].startswith("coref_")))
    publish_table(readme, f"{NAME}_curve", suffix_table(results, "@step=", "step", ("coref_avg_f", "train_minutes")))


if __name__ == "__main__":
    main(sys.argv[1:])

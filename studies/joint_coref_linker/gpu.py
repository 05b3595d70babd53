"""Studies on a GPU: every component trains and predicts with ``--gpu-id``; the trainings a CPU cannot
finish in a session (joint_coref_linker towards a plateau, its comparisons over two seeds).

Run on a machine with a GPU, from the repository root::

    python -m benchmarks.gpu --study check --gpu-id 0 --data ../shared/data --minutes 4.5
    python -m benchmarks.gpu --study ee --gpu-id 0 --data ../shared/data --minutes 5
    python -m benchmarks.gpu --study systems --gpu-id 0 --data ../shared/data --minutes 5
    python -m benchmarks.gpu --study model --gpu-id 0 --data ../shared/data --minutes 6

Each writes its rows into ``benchmarks/results/gpu.json`` (the rows of the other studies, and of an earlier
run that these do not replace, are kept; every row names its machine) and the tables of docs/gpu.md. Every
training is a ``python -m spacy_el train --resume --max-minutes`` run: it stops at its first checkpoint
after ``--minutes``, and the same command on the same machine resumes it. The trainings of a study run side
by side on the one GPU, the CPU cores shared out between them.

``check``

1. **Every component on the GPU.** The ``test`` workflow of project.yml (tiny configs, invented
   fixtures: a KB built with GPU encoding, then ner_stack_lstm, joint_coref_linker, spaCy ``ner`` +
   ner_constrained_linker, entity_retriever + entqa_reader trained with ``--gpu-id``, the three composed
   pipelines assembled and scored) runs with ``vars.gpu_id``. Each trained pipeline then annotates the
   bundled GUM texts on the GPU and, in another process, on the CPU (:mod:`benchmarks.prediction_parity`):
   rows ``gpu_params_on_gpu`` (share of its torch parameters on the GPU), ``gpu_cpu_identical_docs``
   (share of documents annotated identically) and ``gpu_cpu_max_score_diff``. The tiny models are
   checks, not models: their scores mean nothing. ``--skip-workflow`` leaves this part out.
2. **Coreference on the GPU.** joint_coref_linker in mode ``coref`` (refinement ``none``,
   configs/joint_coref_linker_coref.cfg) on OntoGUM and LitBank, with the settings of the ``converged``
   workflow (projects/joint_coref_linker: 15 epochs, one evaluation and checkpoint per epoch, the learning
   rate decaying to 0 at the last step). Rows ``coref_none_gpu`` on ``ontogum-test`` and ``litbank-test``
   (singletons counted on LitBank, left out on OntoGUM, as benchmarks.joint_coref_linker scores them; a
   LitBank model is selected on dev the same way) and the learning curve on ``<corpus>-dev``.

``ee``: the Entity-Equalization comparison at convergence (:data:`EE_STEPS`), the four refinements with seeds
0 and 1 on OntoGUM: rows ``coref_<refinement>_converged_gpu`` (``_seed1``, ``_seed_mean``) on ontogum-test.

``systems``: Global against Local against Standalone on GUM (:data:`SYSTEMS_RUNS`): rows
``<system>_converged_gpu`` (``_seed1``, ``_seed_mean``) on gum-test, scored as benchmarks.joint_coref_linker
scores its models (coreference, ELm, ELh, cluster accuracies, hard cases).

``model``: the coreference model's settings, one change at a time (:data:`MODEL_VARIANTS`: a wider encoder
window, more antecedents, wider mentions, a faster-learning encoder), each trained as the EE study's
``none`` with seed 0 (764 OntoGUM steps): rows ``coref_none_<variant>_converged_gpu`` on ontogum-test, beside
that study's ``coref_none_converged_gpu`` (seeds 0 and 1), which differ only in the setting. Coreference is
below its targets at the CPU plateau (issue 30), so the next gain has to come from the model; this finds
which setting is worth a CPU training.

``--seeds 0`` (or ``1``) runs one seed's trainings of ``ee`` or ``systems``: a lent machine's session holds
one seed's, not both (eight OntoGUM trainings side by side on an H200 trained 573 to 764 steps each in 5
minutes). The ``_seed_mean`` rows are then made from the merged results file once it holds every seed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .results_io import CURVE_STEP, RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
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
#: The seeds of the ``ee`` and ``systems`` studies (the seeded ones).
SEEDS = (0, 1)
SEEDED = ("ee", "systems")
#: The Entity-Equalization study (``--study ee``): the four refinements of the OntoGUM comparison, seeds 0
#: and 1, 4 epochs of OntoGUM train with the learning rate decaying to 0 (the GPU OntoGUM run's dev score,
#: with the rate still high, was within 0.01 of its plateau after 3 epochs), one evaluation per epoch, no
#: early stop. Sized for one seed's four trainings side by side within a lent machine's 10-minute call.
EE_STEPS, EE_EVAL = 764, 191
EE_MODELS = ROOT / "training" / "jcl-gpu-ee"
#: Global against Local against Standalone (``--study systems``): configs/joint_coref_linker.cfg's model on GUM
#: in each mode (``coref`` and ``link`` make Standalone), Global and Local with seeds 0 and 1, 4 epochs with the
#: learning rate decaying to 0, sized as the EE study for one seed's trainings in a call (the CPU Global run's
#: dev coreference score, with the rate still high, was 0.04 below its last after 4 epochs and 0.015 below after
#: 5: the decay has to close that gap, which the rows' learning curves show). The KB is the
#: open-data kb/pretrained, built on the machine by the root project's ``pretrained-data`` step: kb/eval
#: (256 MB) cannot travel to a lent machine. (mode, seed) pairs:
SYSTEMS_RUNS = (("global", 0), ("local", 0), ("coref", 0), ("link", 0), ("global", 1), ("local", 1))
SYSTEMS_STEPS, SYSTEMS_EVAL = 764, 191
SYSTEMS_MODELS = ROOT / "training" / "jcl-gpu-gum"
#: The coreference-model study (``--study model``): variant name -> the model settings it changes from
#: configs/joint_coref_linker_coref.cfg, each trained as the EE study's ``none`` (OntoGUM, seed 0, EE_STEPS).
MODEL_VARIANTS = {
    "window256": {"window": 256, "stride": 128},  # twice the context per encoder pass (MiniLM reads 512)
    "antecedents100": {"max_antecedents": 100},  # antecedents twice as far back
    # the 50 best earlier mentions by a coarse score, any distance back (Lee et al. 2018's coarse-to-fine)
    "coarse": {"antecedent_pruning": "coarse"},
    # Mentions of up to 16 tokens instead of 8: gold noun phrases wider than max_span_width cannot be found at all.
    "width16": {"max_span_width": 16},
    "encoder_lr2x": {"encoder_lr_scale": 0.1},  # the encoder learns at 1e-4 instead of 5e-5
}
MODEL_MODELS = ROOT / "training" / "jcl-gpu-model"


def coref_train_command(data: Path, corpus: str, folder: str, splits: str, max_steps: int, eval_frequency: int,
                        gpu_id: int, minutes: float, singletons: bool = False) -> List[str]:
    """``python -m spacy_el train`` of a coreference model on ``data/folder`` into
    ``training/jcl/<corpus>-gpu/none`` (resumed when it holds a checkpoint), selected on dev with the singletons
    counted when ``singletons`` (as the test set is then scored)."""
    overrides = coref_overrides(data, folder, splits, "none")
    if singletons:
        overrides["components.joint_coref_linker.scorer.keep_singletons"] = "true"  # JSON, as the CLI parses it
    return train_command("configs/joint_coref_linker_coref.cfg", MODELS / f"{corpus}-gpu" / "none", gpu_id, minutes,
                         max_steps, eval_frequency, max_steps * 2 // 3, overrides)


def ee_train_command(data: Path, refinement: str, seed: int, gpu_id: int, minutes: float) -> List[str]:
    """The OntoGUM training of one refinement and seed of the EE study, into
    ``training/jcl-gpu-ee/ontogum[-seed<N>]/<refinement>`` (the folders benchmarks.joint_coref_linker reads as seeds)."""
    folder = "ontogum" if seed == 0 else f"ontogum-seed{seed}"
    overrides = {**coref_overrides(data, "gum/coref/ontogum/conll", "gum/splits.md", refinement), "system.seed": seed}
    return train_command("configs/joint_coref_linker_coref.cfg", EE_MODELS / folder / refinement, gpu_id, minutes,
                         EE_STEPS, EE_EVAL, EE_STEPS, overrides)


def systems_train_command(data: Path, mode: str, seed: int, gpu_id: int, minutes: float) -> List[str]:
    """The GUM training of one mode and seed of the systems study, into
    ``training/jcl-gpu-gum/gum[-seed<N>]/<mode>`` (the folders benchmarks.joint_coref_linker reads as seeds)."""
    folder = "gum" if seed == 0 else f"gum-seed{seed}"
    overrides = {"components.joint_coref_linker.mode": mode, "paths.gum": data / "gum", "paths.kb": "kb/pretrained",
                 "system.seed": seed}
    return train_command("configs/joint_coref_linker.cfg", SYSTEMS_MODELS / folder / mode, gpu_id, minutes,
                         SYSTEMS_STEPS, SYSTEMS_EVAL, SYSTEMS_STEPS, overrides)


def model_train_command(data: Path, variant: str, gpu_id: int, minutes: float) -> List[str]:
    """The OntoGUM training of one :data:`MODEL_VARIANTS` variant, into ``training/jcl-gpu-model/ontogum-<variant>/none``."""
    overrides = {**coref_overrides(data, "gum/coref/ontogum/conll", "gum/splits.md", "none"),
                 **{f"components.joint_coref_linker.model.{name}": value for name, value in MODEL_VARIANTS[variant].items()}}
    return train_command("configs/joint_coref_linker_coref.cfg", MODEL_MODELS / f"ontogum-{variant}" / "none", gpu_id,
                         minutes, EE_STEPS, EE_EVAL, EE_STEPS, overrides)


def coref_overrides(data: Path, folder: str, splits: str, refinement: str) -> Dict[str, object]:
    """configs/joint_coref_linker_coref.cfg on the CoNLL corpus ``data/folder`` with the refinement."""
    return {"paths.corpus": data / folder, "paths.splits": data / splits,
            "components.joint_coref_linker.refinement": refinement, "paths.kb": "kb/demo"}


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
    print(f"[spacy_el] {what} failed (exit {process.returncode}); the end of its log is above.", flush=True)
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


def scoring_args(models: Path, gpu_id: int) -> argparse.Namespace:
    """What benchmarks.joint_coref_linker's scoring functions take, for the models under ``models``; the
    pipelines they load then run on the GPU ``gpu_id`` (-1: the CPU)."""
    import spacy

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    return argparse.Namespace(models=str(models), batch_size=8, variants=None)


def coref_rows(data: Path, gpu_id: int) -> List[Row]:
    """Test scores and learning curves of the GPU-trained coreference models (module docstring, part 2)."""
    import spacy

    from .common import read_corpus
    from .joint_coref_linker import learning_curve_rows, score_refinement

    args = scoring_args(MODELS, gpu_id)
    rows: List[Row] = []
    for corpus, dataset, folder, splits, _, _ in COREF_RUNS:
        gold = read_corpus("spacy-el.CorefConllReader.v1", spacy.blank("en"), path=data / folder, split="test",
                           splits_path=data / splits)
        trained = f"trained on {corpus} train on the GPU ({gpu_name()})"
        rows += score_refinement(args, f"{corpus}-gpu", "none", "coref_none_gpu", dataset, gold, trained) or []
        rows += learning_curve_rows(args, f"{corpus}-gpu", {"none": "coref_none_gpu"}, corpus, ("coref_avg_f",))
    return rows


def ontogum_test(data: Path) -> List[Any]:
    """OntoGUM test (the ``ee`` and ``model`` studies' test set) as docs with their gold clusters."""
    import spacy

    from .common import read_corpus

    return read_corpus("spacy-el.CorefConllReader.v1", spacy.blank("en"), path=data / "gum/coref/ontogum/conll",
                       split="test", splits_path=data / "gum/splits.md")


def ee_name(system: str) -> str:
    """``coref_<refinement>[_seed<N>|_seed_mean]`` as the EE study's row name, ``coref_<refinement>_converged_gpu...``."""
    from .joint_coref_linker import REFINEMENTS

    for refinement in sorted(REFINEMENTS, key=len, reverse=True):
        stem = f"coref_{refinement}"
        if system.startswith(stem):
            return f"{stem}_converged_gpu{system[len(stem):]}"
    return system


def ee_rows(data: Path, gpu_id: int) -> List[Row]:
    """The EE study's OntoGUM test rows (each refinement and seed, and the seed means) and learning curves."""
    from .joint_coref_linker import REFINEMENTS, learning_curve_rows, refinement_rows, seeded

    args = scoring_args(EE_MODELS, gpu_id)
    gold = ontogum_test(data)
    rows = refinement_rows(args, "ontogum", "ontogum-test", gold)
    for seed in SEEDS:
        folder = "ontogum" if seed == 0 else f"ontogum-seed{seed}"
        rows += learning_curve_rows(args, folder, {r: seeded(f"coref_{r}", seed) for r in REFINEMENTS}, "ontogum",
                                    ("coref_avg_f",))
    for r in rows:
        r["system"] = ee_name(r["system"])
        r["notes"] = r["notes"].replace("trained on ontogum train", f"trained on ontogum train on the GPU ({gpu_name()})")
    return rows


def model_rows(data: Path, gpu_id: int) -> List[Row]:
    """The model study's OntoGUM test rows and learning curves, one system per variant."""
    from .joint_coref_linker import learning_curve_rows, score_refinement

    args = scoring_args(MODEL_MODELS, gpu_id)
    gold = ontogum_test(data)
    rows: List[Row] = []
    for variant, changes in MODEL_VARIANTS.items():
        name, folder = f"coref_none_{variant}_converged_gpu", f"ontogum-{variant}"
        setting = ", ".join(f"{key} {value}" for key, value in changes.items())
        trained = f"trained on ontogum train on the GPU ({gpu_name()}) with {setting}, seed 0"
        rows += score_refinement(args, folder, "none", name, "ontogum-test", gold, trained) or []
        rows += learning_curve_rows(args, folder, {"none": name}, "ontogum", ("coref_avg_f",))
    return rows


def systems_name(system: str) -> str:
    """``global[_seed<N>|_seed_mean]`` (and ``local``, ``standalone``) as the systems study's row name,
    ``global_converged_gpu...``."""
    for base in ("standalone", "global", "local"):
        if system == base or system.startswith(base + "_seed"):
            return f"{base}_converged_gpu{system[len(base):]}"
    return system


def systems_rows(data: Path, gpu_id: int) -> List[Row]:
    """The systems study's GUM test rows (Standalone, Global, Local; seeds and their means) and learning curves."""
    import spacy

    from .common import read_corpus
    from .joint_coref_linker import CURVE_METRICS, learning_curve_rows, model_set_rows, seeded

    args = scoring_args(SYSTEMS_MODELS, gpu_id)
    gold = read_corpus("spacy-el.GumReader.v1", spacy.blank("en"), path=data / "gum", split="test")
    trained = f"trained on gum on the GPU ({gpu_name()}) with kb/pretrained"
    rows = model_set_rows(args, "gum", "", trained, "gum-test", gold, peers=False)
    for mode, seed in SYSTEMS_RUNS:
        if mode in ("global", "local"):
            rows += learning_curve_rows(args, "gum" if seed == 0 else f"gum-seed{seed}", {mode: seeded(mode, seed)},
                                        "gum", CURVE_METRICS)
    for r in rows:
        r["system"] = systems_name(r["system"])
    return rows


def seed_means_across_runs(out: Path, new_rows: List[Row], study: str) -> List[Row]:
    """The study's ``<system>_seed_mean`` rows over the seed rows of ``new_rows`` and, for the seeds this run
    did not train, those of the results file ``out``: empty unless every seed of the study has its rows.
    ``<system>`` is a ``..._converged_gpu`` name; seed 0's rows carry it bare, seed N's with ``_seedN``."""
    from .joint_coref_linker import SEED_MEAN_METRICS, seed_means_across_runs as join_seeds

    metrics, dataset = (("coref_avg_f",), "ontogum-test") if study == "ee" else (SEED_MEAN_METRICS, "gum-test")
    return join_seeds([r for r in new_rows if r["dataset"] == dataset], out, metrics, required_seeds=SEEDS)


def study_seeds(text: str) -> List[int]:
    """``--seeds``: comma-separated seeds, each one of :data:`SEEDS`."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        seeds = []
    if not seeds or any(seed not in SEEDS for seed in seeds):
        raise argparse.ArgumentTypeError(f"give comma-separated seeds of {', '.join(map(str, SEEDS))}, got {text!r}")
    return seeds


def gpu_name() -> str:
    from .results_io import gpu_name as name

    return name() or "no GPU"


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=("check", "ee", "systems", "model"), default="check",
                        help="check: the components on the GPU and the OntoGUM and LitBank trainings; ee: the "
                             "Entity-Equalization comparison (4 refinements x 2 seeds on OntoGUM); systems: Global, "
                             "Local and Standalone on GUM (Global and Local with 2 seeds); model: the coreference "
                             "model's settings, one change at a time, on OntoGUM")
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--data", default="../shared/data", help="the shared data folder (OntoGUM and LitBank)")
    parser.add_argument("--minutes", type=float, default=4.5, help="time budget of each coreference training")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads of each process (0: the cores shared out)")
    parser.add_argument("--seeds", default="0,1", type=study_seeds,
                        help="ee, systems: the seeds whose trainings to run (comma-separated, of 0 and 1)")
    parser.add_argument("--skip-workflow", action="store_true", help="check: only the coreference trainings (resumed)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("GPU_PREDICTIONS", "CPU_PREDICTIONS"),
                        help="run nothing: recompute the parity rows from the prediction files that a check run left in "
                             "its log folder (predictions_0.json, predictions_-1.json) and merge them into --out, "
                             "stamped with --out's machine, where they were written")
    args = parser.parse_args(list(argv) or None)
    if args.compare:
        return compare_files(*args.compare, args.gpu_id, Path(args.out), Path(args.readme))
    data = Path(args.data).resolve()
    seeds = set(args.seeds)
    if args.study == "ee":
        from .joint_coref_linker import REFINEMENTS

        runs = {f"{r}_seed{seed}": ee_train_command(data, r, seed, args.gpu_id, args.minutes)
                for seed in SEEDS if seed in seeds for r in REFINEMENTS}
    elif args.study == "systems":
        runs = {f"{mode}_seed{seed}": systems_train_command(data, mode, seed, args.gpu_id, args.minutes)
                for mode, seed in SYSTEMS_RUNS if seed in seeds}
    elif args.study == "model":
        runs = {variant: model_train_command(data, variant, args.gpu_id, args.minutes) for variant in MODEL_VARIANTS}
    else:
        from .joint_coref_linker import SINGLETONS_SCORED

        runs = {corpus: coref_train_command(data, corpus, folder, splits, steps, every, args.gpu_id, args.minutes,
                                            singletons=dataset in SINGLETONS_SCORED)
                for corpus, dataset, folder, splits, steps, every in COREF_RUNS}
    threads = args.threads or max(1, (os.cpu_count() or 2) // (len(runs) + (args.study == "check")))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    workdir = Path(tempfile.mkdtemp(prefix="spacy_el_gpu_"))
    started = time.monotonic()
    print(f"GPU: {gpu_name()}; {threads} torch threads a process; logs in {workdir}", flush=True)
    kb_step = "pretrained-data" if args.study == "systems" else "kb-demo"
    kb = [sys.executable, "-m", "spacy", "project", "run", kb_step, ".", "--vars.gpu_id", str(args.gpu_id),
          "--vars.data", str(data)]
    if not wait(run_logged(kb, workdir / "kb.log", env), workdir / "kb.log", kb_step):
        raise SystemExit(f"[spacy_el] The trainings need the KB of the {kb_step} step.")
    trainings = {name: run_logged(command, workdir / f"train_{name}.log", env) for name, command in runs.items()}
    rows: List[Row] = []
    if args.study == "check" and not args.skip_workflow:
        workflow = [sys.executable, "-m", "spacy", "project", "run", "test", ".", "--vars.gpu_id", str(args.gpu_id)]
        wait(run_logged(workflow, workdir / "test_workflow.log", env), workdir / "test_workflow.log", "the test workflow")
        print(f"test workflow on the GPU: ended after {time.monotonic() - started:.0f} s", flush=True)
        rows += [row(name, "test-fixtures", "gpu_trained", float((ROOT / path).exists()),
                     f"{path} made by the test workflow with --gpu-id {args.gpu_id}") for name, path in TEST_PIPELINES]
        rows += parity_rows(args.gpu_id, env, workdir)
    for name, process in trainings.items():
        wait(process, workdir / f"train_{name}.log", f"the {name} training")
        print(f"{name} training stopped after {time.monotonic() - started:.0f} s", flush=True)
    score = {"ee": ee_rows, "systems": systems_rows, "model": model_rows, "check": coref_rows}[args.study]
    rows += score(data, args.gpu_id)
    command = (f"python -m benchmarks.gpu --study {args.study} --gpu-id 0 --data ../shared/data --minutes {args.minutes:g}"
               + (" --skip-workflow" if args.skip_workflow else "")
               + (f" --seeds {','.join(map(str, sorted(seeds)))}" if args.study in SEEDED and seeds != set(SEEDS) else ""))
    if args.study in SEEDED:  # the means over this run's seeds and the file's others, made once
        from .joint_coref_linker import SEED_MEAN

        rows = [r for r in rows if not r["system"].endswith(SEED_MEAN)]
        rows += seed_means_across_runs(Path(args.out), rows, args.study)
    if Path(args.out).exists():  # the rows of another study or an earlier run stay, unless these replace them
        rows = merge_rerun(Path(args.out), rows, command)
    out = write_results(Path(args.out), command, rows)
    print(f"wrote {out} after {time.monotonic() - started:.0f} s")
    write_tables(out, Path(args.readme))


def compare_files(gpu_predictions: Path, cpu_predictions: Path, gpu_id: int, out: Path, readme: Path) -> None:
    """``--compare``: the parity rows of saved prediction files merged into ``out`` with its machine (the GPU
    machine that wrote the predictions; the comparison itself is arithmetic)."""
    machine = json.loads(out.read_text(encoding="utf8"))["machine"]
    rows = compare_rows(*(json.loads(p.read_text(encoding="utf8")) for p in (gpu_predictions, cpu_predictions)), gpu_id)
    fresh = {(r["system"], r["dataset"], r["metric"]) for r in rows}
    merged = merge_rerun(out, rows, f"python -m benchmarks.gpu --compare {gpu_predictions.name} {cpu_predictions.name}")
    for r in merged:
        if (r["system"], r["dataset"], r["metric"]) in fresh:
            r["machine"] = machine
    write_results(out, f"python -m benchmarks.gpu --compare {gpu_predictions.name} {cpu_predictions.name}", merged, machine)
    print(f"wrote {out}")
    write_tables(out, readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Path = PAGES[NAME]) -> None:
    """Four tables: the component checks, the coreference test scores (OntoGUM, LitBank), the systems study
    (GUM), the learning curves."""
    publish_table(readme, NAME, results_to_markdown(
        results, pivot=True, select=lambda r: r["metric"].startswith("gpu_"),
        column_order=("gpu_trained", "gpu_params_on_gpu", "gpu_cpu_same_decisions", "gpu_cpu_identical_docs")))
    publish_table(readme, f"{NAME}_coref", results_to_markdown(
        results, pivot=True, select=lambda r: r["dataset"] in ("ontogum-test", "litbank-test") and r["metric"].startswith("coref_")))
    publish_table(readme, f"{NAME}_systems", results_to_markdown(
        results, pivot=True, select=lambda r: r["dataset"] == "gum-test",
        column_order=("coref_avg_f", "elm_f", "elh_f", "cluster_accuracy_multi", "hard_case_accuracy")))
    publish_table(readme, f"{NAME}_curve", suffix_table(results, CURVE_STEP, "step", ("coref_avg_f", "elh_f", "train_minutes")))


if __name__ == "__main__":
    main(sys.argv[1:])

"""joint_coref_linker training memory: the peak resident memory and the time of training steps on long
documents, with and without ``encoder_checkpointing``, in the same run.

Each variant runs in a process of its own (the allocator keeps what an earlier variant freed, so a peak
measured after it would not be the variant's own): the coreference
resolver of configs/joint_coref_linker_coref.cfg (the packaged MiniLM, ``kb/demo``) is initialised on
OntoGUM train, then updated once on each of its ``--docs`` longest documents, one document per step. Rows per
variant: ``peak_rss_mb`` (the process's peak resident memory after the updates), ``init_rss_mb`` (after
initialising, before the first update) and ``ms_per_step`` (the median update). Writes
``benchmarks/results/jcl_train_memory.json`` and its table in docs/training.md.

    python -m benchmarks.jcl_train_memory --docs 3 --threads 1
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

from .common import SHARED_DATA, proc_status_mb, timed
from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_train_memory"
CONFIG = ROOT / "configs" / "joint_coref_linker_coref.cfg"
VARIANTS: Dict[str, Dict[str, Any]] = {
    "default": {},
    "encoder_checkpointing": {"components.joint_coref_linker.encoder_checkpointing": True},
}


def measure(variant: str, docs: int, data: Path) -> Dict[str, Any]:
    """In this process: initialise, then one update on each of the ``docs`` longest OntoGUM train documents."""
    from spacy import util
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp

    import spacy_el  # noqa: F401  (registers the factories and readers)

    overrides = {"paths.corpus": str(data / "gum/coref/ontogum/conll"), "paths.splits": str(data / "gum/splits.md"),
                 "paths.kb": str(ROOT / "kb" / "demo"), "components.joint_coref_linker.refinement": "none",
                 **VARIANTS[variant]}
    nlp = init_nlp(util.load_config(CONFIG, overrides=overrides, interpolate=False))
    config = nlp.config.interpolate()
    training = util.registry.resolve(config["training"], schema=ConfigSchemaTraining)
    (corpus,) = util.resolve_dot_names(config, [training["train_corpus"]])
    longest = sorted(corpus(nlp), key=lambda eg: -len(eg.reference))[:docs]
    optimizer = training["optimizer"]
    init_rss = proc_status_mb("VmHWM")
    if init_rss is None:
        raise SystemExit("[spacy_el] This benchmark reads /proc/self/status (Linux) for the peak memory.")
    times = [timed(lambda: nlp.update([example], sgd=optimizer))[1] for example in longest]
    return {"init_rss_mb": init_rss, "peak_rss_mb": proc_status_mb("VmHWM"), "ms_per_step": 1000 * statistics.median(times),
            "tokens": [len(eg.reference) for eg in longest]}


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=3, help="the N longest OntoGUM train documents")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--variant", choices=list(VARIANTS), help="measure this variant in this process (internal)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / f"{NAME}.json")
    parser.add_argument("--readme", type=Path, default=PAGES[NAME])
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(measure(args.variant, args.docs, args.data)))
        return
    if not (ROOT / "kb" / "demo").is_dir():
        raise SystemExit("[spacy_el] Build kb/demo first: python -m spacy project run kb-demo")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    rows: List[Row] = []
    for variant in VARIANTS:
        print(f"measuring {variant}", flush=True)
        done = subprocess.run([sys.executable, "-m", f"benchmarks.{NAME}", "--variant", variant, "--docs", str(args.docs),
                               "--data", str(args.data)], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        note = (f"joint_coref_linker_coref.cfg, one update on each of the {args.docs} longest OntoGUM train docs "
                f"({', '.join(f'{n:,}' for n in found['tokens'])} tokens), {args.threads} torch thread(s), a process per variant")
        rows += [row(f"joint_coref_linker_{variant}", "ontogum-train", metric, round(found[metric], 1), note)
                 for metric in ("peak_rss_mb", "init_rss_mb", "ms_per_step")]
    out = write_results(args.out, "python -m benchmarks.jcl_train_memory " + " ".join(argv), rows)
    print(f"wrote {out}")
    write_tables(out, args.readme)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Path = PAGES[NAME]) -> None:
    publish_table(readme, NAME, results_to_markdown(results, pivot=True))


if __name__ == "__main__":
    main(sys.argv[1:])

"""joint_coref_linker training speed: ms per training step (one GUM document) with each training-speed switch
against the default, in the same run (issue 30).

The pipeline of ``configs/joint_coref_linker.cfg`` (the packaged MiniLM, ``kb/eval``) is updated on the first
``--docs`` GUM train documents, one document per step, each variant in turn on the same documents
(interleaved, in an order that rotates, so that a machine shared with other work slows all variants alike). The learning rate is
0, so the weights, and with them the work of a step, stay the same for every variant. A first round is not
timed: it warms up. The ``*_cache`` variants then run one after the other, each in a block of its own, whose
first round fills its cache (what every epoch after the first finds): a step of any other variant replaces the
weights, and a cache is emptied when the frozen weights it was made with are replaced.
Variants (the component's settings, ``configure``; ``encoder_float32`` sets the model's ``encoder_dtype``):

* ``default``: the config as it is (``encoder_dtype = "auto"``: bfloat16 autocast where the CPU computes it
  natively, as on CPUs with AVX512-BF16/AMX; float32 elsewhere);
* ``encoder_float32``: the encoder in float32;
* ``frozen_N``, ``frozen_N_cache``: ``frozen_encoder_layers = N``, without and with ``encoder_cache_mb``;
* ``early_K``: ``early_max_antecedents = K`` (as in the first ``early_steps`` updates);
* ``window_N``: encoder windows of N wordpieces (the model's ``window``, at most the encoder's 512 positions)
  ``N / 2`` apart (its ``stride``), instead of the config's 128 and 64: as many wordpieces encoded (each in two
  windows), each with more context, at the cost of longer self-attention;
* ``dropout_bernoulli``, ``dropout_uniform``: the model's ``dropout_masks`` (torch's ``nn.Dropout`` masks, or
  uniform draws compared with ``p``: :mod:`spacy_el.ml.dropout`);
* ``no_memo`` (with ``--candidates hybrid``): the kept spans' candidates generated at every step, as before the
  training memo (which holds the warm-up round's spans, as it holds an earlier epoch's for the spans kept again);
* ``batch_N``: N documents per update (the config's ``batcher.size``) instead of one. Run last, in a block of its own:
  the documents in consecutive groups of N, each group once as N one-document updates of the default and once as
  one update of N, in alternating order. Its ``ms_per_step`` is per update (N documents), its ``speedup`` the
  default's time over its own on the same groups. Fewer updates per epoch is another training: its scores are
  not measured here.

``--config configs/joint_coref_linker_aida.cfg`` trains on AIDA+ (``--aida``, the ``convert-aida`` output), whose
documents are short (about 200 tokens against GUM's 900), the case for ``batch_N``.
``--candidates hybrid`` trains on the hybrid generator (``spacy-el.HybridCandidates.v1``, the encoder that
``--kb`` carries) instead of the config's alias table.

Rows: ``ms_per_step`` (median over documents and rounds) and ``speedup`` (the default's total time over the
variant's) per variant. Writes ``benchmarks/results/jcl_train_speed.json`` and its table in docs/training.md.

    python -m benchmarks.jcl_train_speed --docs 2 --rounds 1
"""
import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch
from spacy import util
from spacy.training.initialize import init_nlp
from thinc.api import Adam

import spacy_el  # noqa: F401  (registers the factories and readers)
from spacy_el.candidates import CandidateMemo
from spacy_el.ml.autocast import cpu_has_native_bf16, resolve_encoder_dtype
from spacy_el.ml.dropout import DROPOUT_MASKS, set_dropout_masks

from .common import SHARED_DATA, torch_module
from .results_io import RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_train_speed"
COMMAND = "python -m benchmarks.jcl_train_speed"
COMPONENT = "joint_coref_linker"
DEFAULT_VARIANTS = ("default", "encoder_float32", "frozen_3", "frozen_3_cache", "frozen_6", "frozen_6_cache",
                    "early_25", "dropout_bernoulli", "dropout_uniform", "window_256", "window_512")


def is_batch(name: str) -> bool:
    """Whether ``name`` is a ``batch_N`` variant (N >= 2 documents per update)."""
    return name.startswith("batch_") and name[len("batch_"):].isdigit() and int(name[len("batch_"):]) >= 2


def variant_setter(nlp: Any, name: str) -> Callable[[], None]:
    """A callable that puts the component in variant ``name`` (from the default state)."""
    pipe = nlp.get_pipe(COMPONENT)
    module = torch_module(nlp, COMPONENT)
    dtype = module.encoder_dtype
    memo = pipe._training_memo
    masks = module.dropout_masks
    attrs = pipe.model.attrs
    window = (attrs["window"], attrs["stride"])  # the model's; DocInputs read them at every step
    settings: Dict[str, Any] = {}
    if name.startswith("frozen_"):
        parts = name.split("_")
        settings["frozen_encoder_layers"] = int(parts[1])
        settings["encoder_cache_mb"] = 4096 if parts[-1] == "cache" else 0
    elif name.startswith("early_"):
        settings["early_max_antecedents"] = int(name.split("_")[1])
        settings["early_steps"] = 10**9
    elif name.startswith("dropout_") and name[len("dropout_"):] in DROPOUT_MASKS:
        masks = name[len("dropout_"):]
    elif name.startswith("window_") and name[len("window_"):].isdigit():
        size = int(name[len("window_"):])
        limit = getattr(module.encoder.config, "max_position_embeddings", size)
        if not 4 <= size <= limit:
            raise ValueError(f"variant {name!r}: a window is 4 to {limit} wordpieces (the encoder's positions)")
        window = (size, size // 2)
    elif name not in ("default", "encoder_float32", "no_memo") and not is_batch(name):
        raise ValueError(f"unknown variant {name!r}")

    def apply() -> None:
        pipe.configure(frozen_encoder_layers=0, encoder_cache_mb=0, early_max_antecedents=0, early_steps=0)
        pipe.configure(**settings)
        module.encoder_dtype = "float32" if name == "encoder_float32" else dtype
        set_dropout_masks(module, masks)
        attrs["window"], attrs["stride"] = window
        pipe._training_memo = CandidateMemo(limit=0) if name == "no_memo" else memo

    return apply


def measure(nlp: Any, examples: List[Any], variants: List[str], rounds: int) -> Dict[str, List[float]]:
    """Seconds per step of each variant: the variants without a cache interleaved, round by round; then each
    ``*_cache`` variant in a block of its own (a step of another variant replaces the weights, lr 0 or not, and
    a cache holds only for the frozen weights it was filled with: interleaved, it would be emptied each time)."""
    pipe = nlp.get_pipe(COMPONENT)
    optimizer = Adam(0.0)  # the weights stay the same: every variant does the same work
    setters = {name: variant_setter(nlp, name) for name in variants}
    seconds: Dict[str, List[float]] = {name: [] for name in variants}
    interleaved = [name for name in variants if not name.endswith("_cache") and not is_batch(name)]

    def step(name: str, eg: Any, timed: bool) -> None:
        setters[name]()
        start = time.perf_counter()
        pipe.update([eg], sgd=optimizer, losses={})
        if timed:
            seconds[name].append(time.perf_counter() - start)

    for r in range(rounds + 1):  # round 0 warms up (and fills the caches)
        for i, eg in enumerate(examples):
            shift = (r * len(examples) + i) % len(interleaved)  # each variant in turn first: no order bias
            for name in interleaved[shift:] + interleaved[:shift]:
                step(name, eg, timed=r > 0)
        if r:
            print(f"round {r}: " + ", ".join(f"{n} {statistics.median(seconds[n]) * 1000:.0f} ms" for n in interleaved), flush=True)
    for name in variants:
        if name.endswith("_cache"):
            cache = torch_module(nlp, COMPONENT).lower_cache
            cache.hits = cache.misses = 0
            for r in range(rounds + 1):
                for eg in examples:
                    step(name, eg, timed=r > 0)
            print(f"{name}: {statistics.median(seconds[name]) * 1000:.0f} ms; cache hits {cache.hits}, misses {cache.misses}", flush=True)
    for name in variants:
        if is_batch(name):
            seconds[name], seconds[f"{name}_default"] = measure_batched(pipe, setters["default"], examples,
                                                                       int(name[len("batch_"):]), rounds, optimizer)
            print(f"{name}: {statistics.median(seconds[name]) * 1000:.0f} ms per update", flush=True)
    setters["default"]()
    return seconds


def measure_batched(pipe: Any, set_default: Callable[[], None], examples: List[Any], size: int, rounds: int,
                    optimizer: Any) -> Tuple[List[float], List[float]]:
    """Seconds of each update of ``size`` documents, and of the default's one-document updates on the same groups
    (consecutive groups of ``size``; a last, smaller group is left out), the two in alternating order."""
    set_default()
    groups = [examples[i:i + size] for i in range(0, len(examples) - size + 1, size)]
    batched: List[float] = []
    singles: List[float] = []
    for r in range(rounds + 1):
        for i, group in enumerate(groups):
            runs = [(batched, [group]), (singles, [[eg] for eg in group])]
            for times, updates in runs if (r + i) % 2 == 0 else runs[::-1]:
                start = time.perf_counter()
                for update in updates:
                    pipe.update(update, sgd=optimizer, losses={})
                if r:
                    times.append(time.perf_counter() - start)
    return batched, singles


def corpus_overrides(config_path: str, gum: str, aida: str) -> Tuple[Dict[str, str], str]:
    """The overrides that point ``config_path``'s training corpus at ``gum`` (a config with ``paths.gum``) or at
    ``aida``'s ``train.spacy`` (one with ``paths.train``: AIDA+), and the corpus' name (``gum``, ``aida``)."""
    paths = util.load_config(config_path, interpolate=False)["paths"]
    if "gum" in paths:
        return {"paths.gum": gum}, "gum"
    if "train" in paths:
        return {"paths.train": str(Path(aida) / "train.spacy"), "paths.dev": str(Path(aida) / "dev.spacy")}, "aida"
    raise ValueError(f"{config_path}: no paths.gum or paths.train to point at a training corpus")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "joint_coref_linker.cfg"))
    parser.add_argument("--gum", default=str(SHARED_DATA / "gum"))
    parser.add_argument("--aida", default=str(ROOT / "corpus" / "aida"), help="AIDA+ .spacy files (convert-aida)")
    parser.add_argument("--kb", default=str(ROOT / "kb" / "eval"))
    parser.add_argument("--docs", type=int, default=2, help="training documents (the first ones)")
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds (after one warm-up round)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    parser.add_argument("--candidates", choices=("config", "hybrid"), default="config",
                        help="the config's generator (the alias table) or spacy-el.HybridCandidates.v1")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    variants = args.variants.split(",")
    if variants[0] != "default":
        variants = ["default"] + [v for v in variants if v != "default"]
    overrides, corpus_name = corpus_overrides(args.config, args.gum, args.aida)
    overrides["paths.kb"] = args.kb
    if args.candidates == "hybrid":
        overrides[f"components.{COMPONENT}.candidates.@misc"] = "spacy-el.HybridCandidates.v1"
    config = util.load_config(args.config, overrides=overrides, interpolate=False)
    nlp = init_nlp(config)
    corpus = util.resolve_dot_names(nlp.config.interpolate(), ["corpora.train"])[0]
    examples = list(corpus(nlp))[: args.docs]
    words = sum(len(eg.predicted) for eg in examples)
    seconds = measure(nlp, examples, variants, args.rounds)
    module = torch_module(nlp, COMPONENT)
    dtype = resolve_encoder_dtype(module.encoder_dtype, torch.device("cpu"))
    base = sum(seconds["default"])
    load = os.getloadavg()[0]
    config_name = Path(args.config).name
    note = (f"{config_name}, first {len(examples)} {corpus_name.upper() if corpus_name == 'aida' else 'GUM'} train docs "
            f"({words:,} words), {{per_step}} per step, {args.rounds} timed round(s) after a warm-up; learning rate 0; "
            f"{args.threads} torch threads; default encoder dtype {dtype} (native bfloat16: {cpu_has_native_bf16()}); "
            f"default dropout masks {module.dropout_masks}; load average {load:.1f} at the end")
    note += "; " + ("the config's alias candidates" if args.candidates == "config" else "hybrid candidates")
    prefix, command = COMPONENT, COMMAND
    if corpus_name == "aida":
        prefix, command = f"{prefix}_aida", f"{command} --config configs/{config_name}"
    if args.candidates == "hybrid":
        prefix, command = f"{prefix}_hybrid", f"{command} --candidates hybrid"
    dataset = f"{corpus_name}-train"
    rows: List[Row] = []
    for name in variants:
        per_step = name[len("batch_"):] if is_batch(name) else "one"
        rows.append(row(f"{prefix}_{name}", dataset, "ms_per_step", round(statistics.median(seconds[name]) * 1000),
                        note.format(per_step=per_step)))
        if is_batch(name):  # against the default's one-document updates of the same groups, timed beside it
            rows.append(row(f"{prefix}_{name}", dataset, "speedup",
                            round(sum(seconds[f"{name}_default"]) / sum(seconds[name]), 2),
                            f"{name[len('batch_'):]} documents per update; the default's time on the same documents / "
                            "the variant's"))
        else:
            rows.append(row(f"{prefix}_{name}", dataset, "speedup", round(base / sum(seconds[name]), 2),
                            "default's time / the variant's"))
    # A run on another corpus or generator keeps the other runs' rows.
    out = write_results(Path(args.out), command, merge_rerun(Path(args.out), rows, command))
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=False, notes=True))


if __name__ == "__main__":
    main()

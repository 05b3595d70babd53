"""joint_coref_linker training step profile: where a step's time goes, by part of the model, forward and backward
(issue 30: "profile a training step and remove the waste").

``torch.profiler`` records ``--rounds`` rounds of updates (one document per step, learning rate 0, so every
round does the same work) on the first ``--docs`` training documents of the config's corpus, after a warm-up
round. The parts are profiler scopes (``torch.profiler.record_function``) that this benchmark opens around the
module's calls, without changing the model's code:

* ``encoder``: the transformer over the wordpiece windows;
* ``token_vectors``: the wordpiece states pooled into token vectors (the rest of ``token_vectors``);
* ``span_pruning``: every enumerated span embedded and scored (no gradient), the best ``span_ratio`` kept;
* ``span_representations``: ``g`` of the kept spans;
* ``antecedent_ranking``: the coarse score ranking every earlier mention (``antecedent_pruning = "coarse"``);
* ``pair_scores``: ``FFNN_C`` over the antecedent pairs (eq. 4);
* ``mention_and_link_scores``: the rest of the scorer (mention scores, mention-entity scores, the edge matrix);
* ``loss``: the Matrix-Tree (Global) or per-mention loss;
* ``other``: ops outside these scopes (inputs to tensors, the loss mean);
* ``optimizer``: ``finish_update`` (Thinc's Adam on numpy views of the parameters, then the gradients zeroed),
  timed by the clock: numpy's work is not a torch op.

A backward op is given the part of the forward op it differentiates: autograd's sequence number links the two.
Each part's time is the sum of its ops' own CPU time (their wall time on the thread that runs them). The row
``dropout_masks`` counts the random masks of dropout once more, across the parts that draw them, and
``dropout_masks_bernoulli`` and ``dropout_masks_uniform`` split it by generator: torch's (``aten::bernoulli_``: every
``nn.Dropout``, and the dropout inside the encoder's ``scaled_dot_product_attention``) and the uniform draws of
``dropout_masks = "uniform"`` (``aten::uniform_``, :mod:`spacy_el.ml.dropout`). ``step`` is the wall clock of an
update under the profiler, which slows small ops most.

Rows per part: ``ms_per_step`` (forward + backward), ``forward_ms``, ``backward_ms`` and ``share`` (of the
step). Writes ``benchmarks/results/jcl_train_profile.json`` and its table in docs/training.md::

    python -m benchmarks.jcl_train_profile                        # GUM, configs/joint_coref_linker.cfg
    python -m benchmarks.jcl_train_profile --corpus litbank       # LitBank, configs/joint_coref_linker_coref.cfg

both with coarse-to-fine antecedents (``antecedent_pruning = "coarse"``), as the converged and pretrained models
train.
"""
import argparse
import contextlib
import functools
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Tuple

import torch
from spacy import util
from spacy.training.initialize import init_nlp
from thinc.api import Adam
from torch.profiler import ProfilerActivity, profile, record_function

import spacy_el  # noqa: F401  (registers the factories and readers)
import spacy_el.ml.joint_coref.modules as jcl_modules

from .common import SHARED_DATA, torch_module
from .results_io import RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "jcl_train_profile"
COMMAND = "python -m benchmarks.jcl_train_profile"
COMPONENT = "joint_coref_linker"
#: The scopes' names, in the order of a step (``optimizer`` is timed by the clock, ``other`` is what is left).
PARTS = ("encoder", "token_vectors", "span_pruning", "span_representations", "antecedent_ranking", "pair_scores",
         "mention_and_link_scores", "loss")
OTHER = "other"
#: Parts whose calls of other parts count as theirs: span pruning embeds every enumerated span.
ABSORBING = ("span_pruning",)
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
#: The draws of dropout masks, by the row that counts them: torch's (``nn.Dropout``, attention's ``dropout_p``) and
#: the uniform ones of ``dropout_masks = "uniform"`` (:mod:`spacy_el.ml.dropout`).
DROPOUT_OPS = {"aten::bernoulli_": "bernoulli", "aten::uniform_": "uniform"}
#: Per corpus: the config, its path overrides and the dataset name of the rows.
CORPORA = {
    "gum": ("joint_coref_linker.cfg", lambda data: {
        "paths.gum": str(data / "gum"), f"components.{COMPONENT}.model.antecedent_pruning": "coarse"}, "gum-train"),
    "litbank": ("joint_coref_linker_coref.cfg", lambda data: {
        "paths.corpus": str(data / "litbank" / "coref" / "conll"), "paths.splits": str(data / "litbank" / "splits.json"),
        f"components.{COMPONENT}.model.antecedent_pruning": "coarse",
        f"components.{COMPONENT}.scorer.keep_singletons": True}, "litbank-train"),
}


def attribute(events: Iterable[Any], parts: Iterable[str], absorbing: Iterable[str] = ()) -> Dict[Tuple[str, str], float]:
    """Microseconds of own CPU time per ``(part, "forward" | "backward")`` of the profiler's ``events``
    (``prof.events()``). A forward op belongs to its innermost enclosing scope named in ``parts``, or to an
    enclosing scope named in ``absorbing`` (the parts whose calls of other parts count as theirs); a backward op
    (any op under an ``autograd::engine::evaluate_function`` event) to the part of the forward op with the same
    sequence number. Ops in no part go to :data:`OTHER`."""
    parts, absorbing = set(parts), set(absorbing)
    events = list(events)

    def scope_of(event: Any) -> str:
        innermost = None
        while event is not None:
            if event.name in absorbing:
                return event.name
            if innermost is None and event.name in parts:
                innermost = event.name
            event = event.cpu_parent
        return innermost or OTHER

    def backward_root(event: Any) -> Any:
        while event is not None:
            if event.name.startswith(BACKWARD_PREFIX):
                return event
            event = event.cpu_parent
        return None

    forward_part: Dict[int, str] = {}
    for event in events:
        if event.sequence_nr >= 0 and backward_root(event) is None:
            forward_part.setdefault(event.sequence_nr, scope_of(event))
    times: Dict[Tuple[str, str], float] = defaultdict(float)
    for event in events:
        root = backward_root(event)
        if root is None:
            times[(scope_of(event), "forward")] += event.self_cpu_time_total
        else:
            times[(forward_part.get(root.sequence_nr, OTHER), "backward")] += event.self_cpu_time_total
    return dict(times)


@contextlib.contextmanager
def scoped(obj: Any, attribute_name: str, scope: str) -> Iterator[None]:
    """``obj.attribute_name`` (a method, a module or a function) called inside ``record_function(scope)`` for the
    duration; the original back after."""
    original = getattr(obj, attribute_name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with record_function(scope):
            return original(*args, **kwargs)

    own = attribute_name in vars(obj)  # an instance's own attribute (a module, a function), else its class's
    setattr(obj, attribute_name, wrapper)
    try:
        yield
    finally:
        if own:
            setattr(obj, attribute_name, original)
        else:
            delattr(obj, attribute_name)


def scopes(module: Any) -> contextlib.ExitStack:
    """Every part's scope opened around its call in ``module`` (the component's torch module)."""
    stack = contextlib.ExitStack()
    encoder = module.encoder
    stack.enter_context(scoped(encoder, "forward", "encoder"))
    stack.enter_context(scoped(module, "token_vectors", "token_vectors"))
    stack.enter_context(scoped(module, "_kept", "span_pruning"))
    stack.enter_context(scoped(module.span_embedder, "forward", "span_representations"))
    stack.enter_context(scoped(module.scorer, "coarse_antecedents", "antecedent_ranking"))
    for name in ("selected_pair_scores", "window_pair_scores", "pair_scores"):
        stack.enter_context(scoped(module.scorer, name, "pair_scores"))
    stack.enter_context(scoped(module.scorer, "forward", "mention_and_link_scores"))
    stack.enter_context(scoped(jcl_modules, "compute_loss", "loss"))
    return stack


def profile_steps(nlp: Any, examples: List[Any], rounds: int) -> Tuple[Dict[Tuple[str, str], float], float, float,
                                                                      Dict[str, float], int]:
    """``(part times in µs, optimizer seconds, step seconds, dropout-mask µs per generator, steps)`` over
    ``rounds`` profiled rounds of one update per example, after a warm-up round."""
    pipe = nlp.get_pipe(COMPONENT)
    optimizer = Adam(0.0)  # the weights stay the same: every round does the same work
    for eg in examples:
        pipe.update([eg], sgd=optimizer, losses={})
    optimizer_seconds = 0.0
    finish_update = pipe.finish_update

    def timed_finish_update(sgd: Any) -> None:
        nonlocal optimizer_seconds
        start = time.perf_counter()
        finish_update(sgd)
        optimizer_seconds += time.perf_counter() - start

    pipe.finish_update = timed_finish_update
    step_seconds = 0.0
    try:
        with scopes(torch_module(nlp, COMPONENT)), profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(rounds):
                for eg in examples:
                    start = time.perf_counter()
                    pipe.update([eg], sgd=optimizer, losses={})
                    step_seconds += time.perf_counter() - start
    finally:
        del pipe.finish_update
    events = prof.events()
    dropout = {generator: 0.0 for generator in DROPOUT_OPS.values()}
    for event in events:
        if event.name in DROPOUT_OPS:
            dropout[DROPOUT_OPS[event.name]] += event.self_cpu_time_total
    return attribute(events, PARTS, ABSORBING), optimizer_seconds, step_seconds, dropout, rounds * len(examples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="gum")
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--kb", default=str(ROOT / "kb" / "eval"))
    parser.add_argument("--docs", type=int, default=3, help="training documents (the first ones)")
    parser.add_argument("--rounds", type=int, default=1, help="profiled rounds (after one warm-up round)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config_name, paths, dataset = CORPORA[args.corpus]
    overrides = {**paths(Path(args.data)), "paths.kb": args.kb}
    config = util.load_config(ROOT / "configs" / config_name, overrides=overrides, interpolate=False)
    nlp = init_nlp(config)
    corpus = util.resolve_dot_names(nlp.config.interpolate(), ["corpora.train"])[0]
    examples = list(corpus(nlp))[: args.docs]
    times, optimizer_s, step_s, dropout_us, steps = profile_steps(nlp, examples, args.rounds)
    words = sum(len(eg.predicted) for eg in examples)
    note = (f"{config_name} with coarse antecedents, first {len(examples)} {args.corpus} train docs ({words:,} words), one per step, "
            f"{args.rounds} profiled round(s) after a warm-up; learning rate 0; {args.threads} torch threads; "
            f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{steps} steps, {step_s / steps * 1000:.0f} ms per step under the profiler")
    rows = part_rows(times, optimizer_s, step_s, dropout_us, steps, dataset, note)
    out = write_results(Path(args.out), COMMAND, merge_rerun(Path(args.out), rows, COMMAND))
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


def part_rows(times: Dict[Tuple[str, str], float], optimizer_s: float, step_s: float, dropout_us: Dict[str, float],
              steps: int, dataset: str, note: str) -> List[Row]:
    """The rows of one profile: per part (and the optimizer, the dropout masks and the step) ms per step and its
    share of the step; ``note`` (the setup) goes on the step's row."""
    step_ms = step_s / steps * 1000
    rows: List[Row] = []

    def add(part: str, forward_ms: float, backward_ms: float) -> None:
        total = forward_ms + backward_ms
        rows.extend([
            row(f"jcl_{part}", dataset, "ms_per_step", round(total, 1)),
            row(f"jcl_{part}", dataset, "forward_ms", round(forward_ms, 1)),
            row(f"jcl_{part}", dataset, "backward_ms", round(backward_ms, 1)),
            row(f"jcl_{part}", dataset, "share", round(total / step_ms, 3)),
        ])

    for part in PARTS + (OTHER,):
        add(part, times.get((part, "forward"), 0.0) / steps / 1000, times.get((part, "backward"), 0.0) / steps / 1000)
    rows.append(row("jcl_optimizer", dataset, "ms_per_step", round(optimizer_s / steps * 1000, 1),
                    "finish_update by the clock (Thinc's Adam on numpy views, gradients zeroed)"))
    rows.append(row("jcl_optimizer", dataset, "share", round(optimizer_s / step_s, 3)))
    masks_us = sum(dropout_us.values())
    rows.append(row("jcl_dropout_masks", dataset, "ms_per_step", round(masks_us / steps / 1000, 1),
                    "aten::bernoulli_ and aten::uniform_, inside the parts above"))
    rows.append(row("jcl_dropout_masks", dataset, "share", round(masks_us / 1000 / steps / step_ms, 3)))
    for generator, op in (("bernoulli", "aten::bernoulli_: torch's nn.Dropout and attention dropout"),
                          ("uniform", "aten::uniform_: dropout_masks = \"uniform\"")):
        us = dropout_us.get(generator, 0.0)
        rows.append(row(f"jcl_dropout_masks_{generator}", dataset, "ms_per_step", round(us / steps / 1000, 1), op))
        rows.append(row(f"jcl_dropout_masks_{generator}", dataset, "share", round(us / 1000 / steps / step_ms, 3)))
    rows.append(row("jcl_step", dataset, "ms_per_step", round(step_ms, 1), f"wall clock of an update under the profiler; {note}"))
    return rows


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True))


if __name__ == "__main__":
    main()

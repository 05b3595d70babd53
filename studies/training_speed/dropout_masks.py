"""Training speed of the dropout masks in the other torch components: ms per training step with torch's masks
(``dropout_masks = "bernoulli"``) against uniform draws (``"uniform"``, :mod:`spacy_el.ml.dropout`), in the same
run. ``joint_coref_linker``'s are measured by ``benchmarks.jcl_train_speed`` (variants ``dropout_*``).

Each component is built from its training config (``configs/``) with ``init_nlp`` on AIDA train and
``kb/eval``, and updated on the config's own batches of the first ``--docs`` training documents, the two mask
kinds in turn on the same batch (interleaved, in an order that alternates, so that a machine shared with other
work slows both alike). The learning rate is 0, so the weights, and with them the work of a step, stay the
same. A first round is not timed: it warms up. What the configs take from elsewhere is replaced:

* ``ner_constrained_linker``: its config sources spaCy's ``tok2vec`` and ``ner``, which are frozen and whose
  entities its training does not read (it trains on the gold mentions): the pipeline is the linker alone;
* ``entqa_reader`` (``configs/entqa_reader_joint.cfg``, the joint reader): the sourced, trained retriever is
  an untrained one built from its default config, which annotates the documents once before timing: the
  reader's candidates are then other entities, in the same numbers;
* ``ner_stack_lstm``: the annotating ``sentencizer`` runs once before timing.

Rows, per component on ``aida-train``: ``ms_per_step_bernoulli`` and ``ms_per_step_uniform`` (medians over batches
and rounds), and ``speedup``, torch's masks' total time over the uniform masks'. Writes ``benchmarks/results/dropout_masks.json``
and its table in docs/training.md.

    python -m benchmarks.dropout_masks --docs 16 --rounds 3
"""
import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Sequence, Tuple

import torch
from spacy import util
from spacy.language import Language
from spacy.training import Example
from spacy.training.initialize import init_nlp
from thinc.api import Adam, Config

import spacy_el  # noqa: F401  (registers the factories and readers)
from spacy_el.ml.dropout import DROPOUT_MASKS, set_dropout_masks

from .common import torch_module
from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "dropout_masks"
COMMAND = "python -m benchmarks.dropout_masks"


class Setup(NamedTuple):
    """How a component's training config is built here (module docstring)."""
    config: str  # file under configs/
    pipeline: Tuple[str, ...]  # the components kept, in order
    annotating: Tuple[str, ...] = ()  # run on the documents once, before timing
    untrained: Tuple[str, ...] = ()  # sourced components built from their factory's default instead


SETUPS: Dict[str, Setup] = {
    "ner_stack_lstm": Setup("ner_stack_lstm.cfg", ("sentencizer", "ner_stack_lstm"), annotating=("sentencizer",)),
    "ner_constrained_linker": Setup("ner_constrained_linker.cfg", ("ner_constrained_linker",)),
    "entity_retriever": Setup("entity_retriever.cfg", ("entity_retriever",)),
    "entqa_reader": Setup("entqa_reader_joint.cfg", ("entity_retriever", "entqa_reader"),
                          annotating=("entity_retriever",), untrained=("entity_retriever",)),
}


def training_config(component: str, kb: str, corpus: Path) -> Config:
    """The component's training config (:data:`SETUPS`), reading ``corpus``'s AIDA train and dev and ``kb``."""
    setup = SETUPS[component]
    path = ROOT / "configs" / setup.config
    overrides = {"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"), "paths.kb": kb}
    if "vectors" in util.load_config(path, interpolate=False)["paths"]:
        overrides["paths.vectors"] = str(ROOT / "corpus" / "glove50")  # vectors-glove
    config = util.load_config(path, overrides=overrides, interpolate=False)
    config["nlp"]["pipeline"] = list(setup.pipeline)
    for name in list(config["components"]):
        if name not in setup.pipeline:
            del config["components"][name]
    for name in setup.untrained:
        config["components"][name] = {"factory": name}
        config["initialize"]["components"][name] = {
            "kb_loader": {"@misc": "spacy-el.KBFromDisk.v1", "path": kb, "mmap": False, "verify": True}}
    training = config["training"]
    # init_nlp initialises no frozen component: an untrained one stays unfrozen (only the timed one is updated)
    training["frozen_components"] = [n for n in training["frozen_components"]
                                     if n in setup.pipeline and n not in setup.untrained]
    training["annotating_components"] = [n for n in training["annotating_components"] if n in setup.pipeline]
    return config


def training_batches(nlp: Language, component: str, docs: int) -> List[List[Example]]:
    """The config's batches of the first ``docs`` training examples, annotated by the setup's annotating
    components (as ``nlp.update`` would before the update of the component)."""
    config = nlp.config.interpolate()
    corpus, batcher = util.resolve_dot_names(config, ["corpora.train", "training.batcher"])
    examples = list(corpus(nlp))[:docs]
    for name in SETUPS[component].annotating:
        pipe = nlp.get_pipe(name)
        for eg in examples:
            eg.predicted = pipe(eg.predicted)
    return [list(batch) for batch in batcher(examples)]


def measure(nlp: Language, component: str, batches: List[List[Example]], rounds: int) -> Dict[str, List[float]]:
    """Seconds per update of each mask kind, interleaved batch by batch (round 0 warms up, untimed)."""
    pipe, module = nlp.get_pipe(component), torch_module(nlp, component)
    optimizer = Adam(0.0)  # the weights stay the same: both kinds do the same work
    seconds: Dict[str, List[float]] = {masks: [] for masks in DROPOUT_MASKS}
    for r in range(rounds + 1):
        for i, batch in enumerate(batches):
            order = DROPOUT_MASKS if (r * len(batches) + i) % 2 == 0 else DROPOUT_MASKS[::-1]
            for masks in order:
                set_dropout_masks(module, masks)
                start = time.perf_counter()
                pipe.update(batch, sgd=optimizer, losses={})
                if r:
                    seconds[masks].append(time.perf_counter() - start)
    return seconds


def component_rows(component: str, seconds: Dict[str, List[float]], note: str) -> List[Row]:
    """``ms_per_step_<masks>`` per mask kind and ``speedup``: torch's masks' total time over the uniform masks'."""
    rows = [row(component, "aida-train", f"ms_per_step_{masks}", round(statistics.median(seconds[masks]) * 1000), note)
            for masks in DROPOUT_MASKS]
    rows.append(row(component, "aida-train", "speedup", round(sum(seconds["bernoulli"]) / sum(seconds["uniform"]), 2),
                    note))
    return rows


def main(argv: Sequence[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--components", default=",".join(SETUPS), help="comma-separated, of: " + ", ".join(SETUPS))
    parser.add_argument("--corpus", default=str(ROOT / "corpus" / "aida"), help="AIDA .spacy files (convert-aida)")
    parser.add_argument("--kb", default=str(ROOT / "kb" / "eval"))
    parser.add_argument("--docs", type=int, default=16, help="AIDA train documents (the first ones)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (after one warm-up round)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args(argv)
    components = args.components.split(",")
    unknown = sorted(set(components) - set(SETUPS))
    if unknown:
        parser.error(f"not a component measured here: {', '.join(unknown)}")
    torch.set_num_threads(args.threads)
    rows: List[Row] = []
    for component in components:
        torch.manual_seed(0)
        nlp = init_nlp(training_config(component, args.kb, Path(args.corpus)))
        batches = training_batches(nlp, component, args.docs)
        seconds = measure(nlp, component, batches, args.rounds)
        words = sum(len(eg.predicted) for batch in batches for eg in batch)
        note = (f"configs/{SETUPS[component].config} (module docstring); first {args.docs} AIDA train docs ({words:,} "
                f"words) in the config's {len(batches)} batches, {args.rounds} timed round(s) after a warm-up; learning "
                f"rate 0; {args.threads} torch threads; load average {os.getloadavg()[0]:.1f} at the end")
        rows += component_rows(component, seconds, note)
        print(", ".join(f"{component} {masks} {statistics.median(s) * 1000:.0f} ms" for masks, s in seconds.items()), flush=True)
    out = write_results(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=True, notes=True))


if __name__ == "__main__":
    main()

"""Encoder autocast dtype: float32 against bfloat16 on this machine, and what ``encoder_dtype = "auto"`` picks.

bfloat16 autocast is fast only where the hardware computes bfloat16 (GPUs; CPUs with AVX512-BF16 or
AMX); elsewhere it is emulated. This measures, for each dtype, in the same run:

* ``encoder_wordpieces_per_s``: the packaged MiniLM on batches of 16 windows x 128 wordpieces (the
  ``joint_coref_linker`` defaults), ``infer`` (no gradients) and ``train`` (forward + backward);
* ``train_seconds_per_doc`` and ``words_per_s``: a ``joint_coref_linker`` built from
  ``configs/joint_coref_linker.cfg`` with the demo KB (``kb/demo``), updated on the bundled GUM
  documents one document per step, then predicting them with ``nlp.pipe``.

Best of ``--repeats`` timings after a warm-up; ``--threads`` torch threads. Writes
``benchmarks/results/encoder_dtype.json`` and its table in docs/reproducing.md between
``<!-- results:encoder_dtype -->`` markers.

    python -m spacy project run kb-demo && python -m spacy project run encoder-dtype projects/joint_coref_linker
"""
import argparse
import sys
from pathlib import Path
from typing import List

import torch
from spacy import util
from spacy.training import Example
from spacy.training.initialize import init_nlp
from thinc.api import Adam

import spacy_el  # noqa: F401  (registers the factories and readers)
from spacy_el.ml.autocast import cpu_has_native_bf16, encoder_autocast, resolve_encoder_dtype
from spacy_el.ml.torch_io import load_encoder

from .common import DTYPES, best_seconds, using_encoder_dtype
from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "encoder_dtype"
COMMAND = "python -m benchmarks.encoder_dtype"
COMPONENT = "joint_coref_linker"


def encoder_rows(repeats: int, batch: int, length: int) -> List[Row]:
    encoder = load_encoder("")
    ids = torch.randint(1000, 20000, (batch, length))
    cpu = torch.device("cpu")
    rows = []
    for dtype in DTYPES:
        def infer() -> None:
            with torch.no_grad(), encoder_autocast(cpu, dtype):
                encoder(input_ids=ids)

        def train() -> None:
            with encoder_autocast(cpu, dtype):
                hidden = encoder(input_ids=ids).last_hidden_state
            hidden.float().sum().backward()

        for mode, run in (("infer", infer), ("train", train)):
            seconds = best_seconds(run, repeats)
            rows.append(row(f"minilm_{dtype}", "random-wordpieces", "encoder_wordpieces_per_s", round(batch * length / seconds),
                            f"{mode}; batches of {batch} x {length} wordpieces; best of {repeats}"))
    return rows


def component_rows(repeats: int, kb: Path, gum: Path, n_docs: int) -> List[Row]:
    config = util.load_config(ROOT / "configs" / "joint_coref_linker.cfg",
                              overrides={"paths.gum": str(gum), "paths.kb": str(kb)}, interpolate=True)
    nlp = init_nlp(config)
    corpus = util.resolve_dot_names(config, ["corpora.train"])[0]
    docs = [eg.reference for eg in corpus(nlp)][:n_docs]
    optimizer = Adam(1e-4)
    words = sum(len(d) for d in docs)
    rows = []
    for dtype in DTYPES:
        def train() -> None:
            for doc in docs:
                nlp.update([Example(nlp.make_doc(doc.text), doc)], sgd=optimizer)

        def predict() -> None:
            list(nlp.pipe((d.text for d in docs), batch_size=8))

        with using_encoder_dtype(nlp, COMPONENT, dtype):
            train_seconds, predict_seconds = best_seconds(train, repeats), best_seconds(predict, repeats)
        note = f"the first {len(docs)} bundled GUM train documents ({words:,} words); demo KB; best of {repeats}"
        rows.append(row(f"joint_coref_linker_{dtype}", "demo-gum-train", "train_seconds_per_doc",
                        round(train_seconds / len(docs), 2), f"one document per update; {note}"))
        rows.append(row(f"joint_coref_linker_{dtype}", "demo-gum-train", "words_per_s",
                        round(words / predict_seconds), f"nlp.pipe, batch_size 8; {note}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default=str(ROOT / "kb" / "demo"))
    parser.add_argument("--gum", default=str(ROOT / "assets" / "corpus" / "gum"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--docs", type=int, default=4, help="bundled GUM train documents for the component rows")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    if not Path(args.kb).exists():
        sys.exit(f"No KB at {args.kb}: build it with `python -m spacy project run kb-demo`.")
    torch.set_num_threads(args.threads)
    auto = resolve_encoder_dtype("auto", torch.device("cpu"))
    rows = [row("auto", "this-cpu", "resolves_to_bfloat16", int(auto == "bfloat16"),
                f"native bfloat16 (AVX512-BF16 or AMX) reported: {cpu_has_native_bf16()}; {args.threads} threads")]
    rows += encoder_rows(args.repeats, batch=16, length=128)
    rows += component_rows(args.repeats, Path(args.kb), Path(args.gum), args.docs)
    out = write_results(Path(args.out), COMMAND, rows)
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Path = PAGES[NAME]) -> None:
    publish_table(page, NAME, results_to_markdown(results, pivot=False, notes=True))


if __name__ == "__main__":
    main()

"""``en_spacy_el_coref`` (the root project's ``pretrained`` workflow): its scores on GUM test, its
learning curve and its training minutes, scored as ``benchmarks/joint_coref_linker.py`` scores its GUM rows
(docs/pretrained.md).

    python -m benchmarks.pretrained [--model training/pretrained/coref/model-tuned]
"""
import argparse
from pathlib import Path
from typing import List, Optional, Sequence

import spacy
import torch
from spacy.language import Language

from spacy_el.training.resume import EVALUATIONS
from spacy_el.training.tune import TUNED_META

from .common import SHARED_DATA, curve_rows, fix_tie_breaks, read_corpus, words_per_s
from .joint_coref_linker import CURVE_METRICS, NAME as JCL, alias_hard_cases, predict, score_rows, training_steps
from .results_io import CURVE_STEP, RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown, suffix_table

NAME = "pretrained"
SYSTEM = "en_spacy_el_coref"
COMMAND = "python -m benchmarks.pretrained"


def evaluate(model: Path, data: Path, batch_size: int, threads: int) -> List[Row]:
    torch.set_num_threads(threads)
    nlp = spacy.load(model)
    gold = read_corpus("spacy-el.GumReader.v1", spacy.blank("en"), path=data / "gum", split="test")
    pipe = nlp.get_pipe(JCL)
    hard = alias_hard_cases(pipe.kb, gold, pipe.candidates.top_k)
    pred, seconds = predict(nlp, gold, batch_size)
    note = (f"trained on GUM train with kb/pretrained ({pipe.kb.n_entities:,} entities from open data), "
            f"{training_steps(nlp)}{tuned_note(nlp)}; predicted mentions")
    rows = score_rows(SYSTEM, "gum-test", gold, pred, note, hard)
    rows.append(row(SYSTEM, "gum-test", "words_per_s", round(words_per_s(gold, seconds)),
                    f"nlp.pipe, batch_size {batch_size}, {threads} torch threads"))
    return rows + curve_rows(model.parent / EVALUATIONS, SYSTEM, "gum-dev", CURVE_METRICS, dev_note(nlp),
                             train_dataset="gum-train")


def dev_note(nlp: Language) -> str:
    """What the learning curve's dev scores were measured on, where training left GUM dev's text-masked documents
    out (``skip_masked`` on the config's dev corpus); "" where it scored them all."""
    dev = nlp.config.get("corpora", {}).get("dev", {})
    return "GUM dev's documents with text (skip_masked: its text-masked ones left out)" if dev.get("skip_masked") else ""


def tuned_note(nlp: Language) -> str:
    """``", predict_max_antecedents 150 chosen on dev"`` for a pipeline saved by ``python -m spacy_el tune``."""
    tuned = nlp.meta.get(TUNED_META)
    return f", {tuned['setting']} {tuned['value']} chosen on dev" if tuned else ""


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "training" / "pretrained" / "coref" / "model-tuned")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / f"{NAME}.json")
    args = parser.parse_args(argv)
    if not args.model.exists():
        raise SystemExit(f"{args.model} does not exist: build it first (python -m spacy project run pretrained)")
    fix_tie_breaks()
    out = write_results(args.out, COMMAND, evaluate(args.model, args.data, args.batch_size, args.threads))
    print(f"wrote {out}")
    write_tables(out)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", page: Optional[Path] = PAGES[NAME]) -> None:
    scores = results_to_markdown(results, pivot=True, notes=False, select=lambda r: r["dataset"] == "gum-test")
    curve = suffix_table(results, CURVE_STEP, "step", (*CURVE_METRICS, "train_minutes"))
    publish_table(page, NAME, scores + "\n" + curve)


if __name__ == "__main__":
    main()

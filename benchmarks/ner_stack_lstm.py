"""ner_stack_lstm against its peers with the same word features, on AIDA/CoNLL dev and test (docs/ner_stack_lstm.md,
which describes the systems and metrics).

    python -m benchmarks.ner_stack_lstm [--variant hybrid]   # --variant: the joint model of <models>/joint_hybrid alone

``--variant NAME`` scores the joint model trained another way (``<models>/joint_<NAME>``) as
``ner_stack_lstm_<NAME>``. Every run merges its rows into the results file; the variants' studies are frozen in
``studies/ner_stack_lstm/``.
"""
import argparse
from pathlib import Path
from typing import Callable, List, Tuple

import spacy
import torch
from spacy.tokens import Doc

from spacy_el.kb import ElKnowledgeBase
from spacy_el.extensions import is_linked
from spacy_el.scoring import ner_scores

from .baselines import BATCH_SIZE, candidate_recall, el_rows, gold_entities, link_with_prior
from .common import AIDA_CORPUS, fix_tie_breaks, linked_ents, read_docs, timed_pipe, words_per_s
from .common import generator_recall as recall_of_generator
from .results_io import RESULTS_DIR, ROOT, Row, row, write_merged

COMMAND = "python -m spacy project run nsl-benchmark projects/ner_stack_lstm"
TRAINING = ROOT / "training"
ABLATIONS = {"ner_stack_lstm_no_sent_rep": "no_sent_rep", "ner_stack_lstm_no_ment_rep": "no_ment_rep", "ner_stack_lstm_no_nil": "no_nil"}
PIPE = "ner_stack_lstm"


def nil_accuracy(kb: ElKnowledgeBase, gold: List[Doc], pred: List[Doc]) -> float:
    """Share of exactly detected mentions whose NIL decision is right (gold NIL = NIL or not in the KB)."""
    right = total = 0
    for g, p in zip(gold, pred):
        gold_nil = {(e.start_char, e.end_char): (not is_linked(e.kb_id_) or e.kb_id_ not in kb) for e in g.ents}
        for ent in p.ents:
            key = (ent.start_char, ent.end_char)
            if key in gold_nil:
                total += 1
                right += (not is_linked(ent.kb_id_)) == gold_nil[key]
    return right / total if total else 0.0


def ner_row(system: str, dataset: str, gold: List[Doc], pred: List[Doc], notes: str) -> Row:
    scores = ner_scores([(gold_entities(g), gold_entities(p)) for g, p in zip(gold, pred)])
    return row(system, dataset, "ner_f", round(scores["ner_f"], 4), notes)


def generator_recall(nlp: spacy.language.Language, gold: List[Doc], k: int = 30) -> float:
    """Recall@k of the component's own generator on the gold linked mentions (as ``candidate_recall`` for
    the alias table)."""
    pipe = nlp.get_pipe(PIPE)
    spans = linked_ents(gold)
    return recall_of_generator(pipe.kb, pipe.candidates, spans, [span.kb_id_ for span in spans], k)


def joint_model_rows(system: str, nlp: spacy.language.Language, kb: ElKnowledgeBase, dataset: str, gold: List[Doc],
                     recall30: float, what: str = "") -> Tuple[List[Row], List[Doc], float]:
    """NER F1, the EL rows (``recall30`` in their notes) and the NIL accuracy of a joint model on ``gold``'s
    texts; RETURNS the rows, the predicted docs and the seconds they took."""
    docs, seconds = timed_pipe(nlp, [doc.text for doc in gold], BATCH_SIZE)
    rows = [ner_row(system, dataset, gold, docs, f"configs/ner_stack_lstm.cfg, joint{what}")]
    rows += el_rows(system, dataset, gold, docs, recall30, f"joint NER + EL{what}")
    rows.append(row(system, dataset, "nil_accuracy", round(nil_accuracy(kb, gold, docs), 4), "exactly detected mentions"))
    return rows, docs, seconds


def speed_row(system: str, dataset: str, docs: List[Doc], seconds: float, speed: str) -> Row:
    return row(system, dataset, "words_per_s", words_per_s(docs, seconds), speed + " (sentencizer + joint NER + EL)")


def variant_rows(args: argparse.Namespace, speed: str) -> List[Row]:
    """``--variant``'s rows: the joint model of ``<models>/joint_<variant>`` on AIDA dev and test, its own
    generator's recall@30 in the EL rows' notes, its speed on test."""
    path = args.models / f"joint_{args.variant}" / "model-best"
    if not path.exists():
        raise SystemExit(f"Nothing to measure: {path} not found")
    nlp = spacy.load(path)
    pipe = nlp.get_pipe(PIPE)
    system, rows = f"ner_stack_lstm_{args.variant}", []
    for split in ("dev", "test"):
        dataset = f"aida-{split}"
        gold = read_docs(args.corpus / f"{split}.spacy", nlp)[: args.limit or None]
        found, docs, seconds = joint_model_rows(system, nlp, pipe.kb, dataset, gold, generator_recall(nlp, gold),
                                                f", {pipe.candidates.name} candidates")
        rows += found + ([speed_row(system, dataset, docs, seconds, speed)] if split == "test" else [])
    return rows


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    load: Callable[[str], spacy.language.Language] = lambda name: spacy.load(TRAINING / name / "model-best")  # noqa: E731
    speed = f"nlp.pipe batch_size={BATCH_SIZE}, {args.threads} thread(s), CPU"
    if args.variant:
        return variant_rows(args, speed)
    joint = spacy.load(args.models / "joint" / "model-best")
    ner_only = spacy.load(args.models / "ner_only" / "model-best")
    el_only = spacy.load(args.models / "el_only" / "model-best")
    peer_ner = load("baselines/ner_glove")
    peer_el = load("baselines/entity_linker_glove")
    ablations = {}
    for system, folder in ABLATIONS.items():
        path = args.models / folder / "model-best"
        if path.exists():
            ablations[system] = spacy.load(path)
        else:
            print(f"  (skipped {system}: {path} not found)")
    kb: ElKnowledgeBase = joint.get_pipe("ner_stack_lstm").kb
    rows: List[Row] = []
    for split in ("dev", "test"):
        dataset = f"aida-{split}"
        gold = read_docs(args.corpus / f"{split}.spacy", joint)[: args.limit or None]
        texts = [doc.text for doc in gold]
        recall30 = candidate_recall(kb, gold)

        joint_rows, joint_docs, joint_seconds = joint_model_rows("ner_stack_lstm", joint, kb, dataset, gold, recall30)
        rows += joint_rows

        ner_only_docs, _ = timed_pipe(ner_only, texts, BATCH_SIZE)
        rows.append(ner_row("ner_stack_lstm_ner_only", dataset, gold, ner_only_docs, "tasks = ner"))

        el_only_docs, _ = timed_pipe(el_only, texts, BATCH_SIZE)
        rows += el_rows("ner_stack_lstm_el_only", dataset, gold, el_only_docs, recall30, "tasks = el, on the joint model's mentions")
        rows.append(row("ner_stack_lstm_el_only", dataset, "nil_accuracy", round(nil_accuracy(kb, gold, el_only_docs), 4), "exactly detected mentions"))

        for system, nlp in ablations.items():
            docs, _ = timed_pipe(nlp, texts, BATCH_SIZE)
            rows.append(ner_row(system, dataset, gold, docs, "ablation of the joint model"))
            rows += el_rows(system, dataset, gold, docs, recall30, "ablation of the joint model")


        prior_docs = [doc.copy() for doc in joint_docs]
        link_with_prior(kb, prior_docs)
        rows += el_rows("prior_only", dataset, gold, prior_docs, recall30, "top prior on the joint model's mentions")

        peer_ner_docs, peer_ner_seconds = timed_pipe(peer_ner, texts, BATCH_SIZE)
        rows.append(ner_row("spacy_ner", dataset, gold, peer_ner_docs, "configs/baselines/ner_glove.cfg (same word features)"))
        peer_el_docs, peer_el_seconds = timed_pipe(peer_el, texts, BATCH_SIZE)
        rows += el_rows("spacy_entity_linker", dataset, gold, peer_el_docs, recall30, "spacy_ner + entity_linker, same word features")
        if split == "test":
            rows.append(speed_row("ner_stack_lstm", dataset, joint_docs, joint_seconds, speed))
            rows.append(row("spacy_ner", dataset, "words_per_s", words_per_s(peer_ner_docs, peer_ner_seconds), speed))
            rows.append(row("spacy_entity_linker", dataset, "words_per_s", words_per_s(peer_el_docs, peer_el_seconds), speed + " (ner + sentencizer + entity_linker)"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=AIDA_CORPUS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", type=Path, default=TRAINING / "ner_stack_lstm",
                        help="the ner_stack_lstm models' folder (joint, ner_only, el_only, the ablations, joint_hybrid)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "ner_stack_lstm.json")
    parser.add_argument("--limit", type=int, default=0, help="docs per split (0 = all; for smoke tests only)")
    parser.add_argument("--variant", default=None, help="score only the joint model of <models>/joint_<variant>")
    args = parser.parse_args()
    fix_tie_breaks()
    command = COMMAND if not args.variant else f"python -m benchmarks.ner_stack_lstm --variant {args.variant}"
    write_merged(args.out, command, evaluate(args))


if __name__ == "__main__":
    main()

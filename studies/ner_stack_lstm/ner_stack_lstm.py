"""ner_stack_lstm (issue 4) against its peers with the same word features, on AIDA/CoNLL dev and test.

Systems (all trained on AIDA train, selected on dev; eval KB; CNN + character embedding + GloVe 6B 50d):

- ``ner_stack_lstm``: the joint model (configs/ner_stack_lstm.cfg): NER and end-to-end EL.
- ``ner_stack_lstm_ner_only``: the same model trained on the NER loss only (paper table 5).
- ``ner_stack_lstm_el_only``: trained on the EL + NIL losses only, linking the joint model's mentions
  (paper table 6: "the mentions linked by the individual system correspond to the ones detected by
  the multi-task approach NER").
- ``ner_stack_lstm_no_sent_rep``, ``_no_ment_rep``, ``_no_nil``: the joint model without the sentence
  representation, the mention representation or the NIL classifier (paper tables 7 and 8; skipped when
  not trained).
- ``ner_stack_lstm_hybrid``: the joint model trained and run on hybrid candidates (alias + the mention
  encoder's nearest entities, fused; issue 26; ``training/ner_stack_lstm/joint_hybrid``, skipped when not
  trained). Its EL rows' notes give the hybrid candidates' recall@30 on the same gold mentions.
- ``ner_stack_lstm_hybrid_evidence``: the same, with ``model.candidate_evidence`` (the generator's
  similarity among the candidate features and in the NIL classifier; ``training/ner_stack_lstm/joint_hybrid_evidence``,
  skipped when not trained).
- ``ner_stack_lstm_hybrid_held_out``: that model trained on held-out priors (``held_out_priors``;
  ``training/ner_stack_lstm/joint_hybrid_held_out``, skipped when not trained).
- ``ner_stack_lstm_hybrid_similarity``: the ``_hybrid_evidence`` model predicting with the generator's
  similarity added to its candidates' log-probabilities (``similarity_weight``), the weight of
  :data:`SIMILARITY_WEIGHTS` with the best AIDA dev EL micro F1 in the run (``el_micro_f_similarity_weight_<w>``
  rows on aida-dev).
- ``ner_stack_lstm_long``, ``ner_stack_lstm_hybrid_evidence_long``, ``ner_stack_lstm_hybrid_similarity_long``: the
  joint model and the ``_hybrid_evidence`` model trained 6,000 steps instead of 3,000 (``joint_long``,
  ``joint_hybrid_evidence_long``; skipped when not trained), the last with the similarity weight chosen on dev.
- ``prior_only``: the alias table's most probable candidate on the joint model's mentions.
- ``spacy_ner`` and ``spacy_entity_linker``: spaCy's ``ner`` and ``entity_linker`` with the same tok2vec
  settings (configs/baselines/ner_glove.cfg, entity_linker_glove.cfg).

Metrics: ``ner_f`` (CoNLL 4 types, exact span and label), ``el_micro_f`` / ``el_macro_f`` (InKB, strong
match, GERBIL micro/macro), ``nil_accuracy`` (on the predicted mentions that match a gold mention's
span: whether "NIL" was decided exactly when the gold entity is NIL or not in the KB), and
``words_per_s`` of ``nlp.pipe`` on the test texts (batch size and threads in the notes).

    python -m benchmarks.ner_stack_lstm
    python -m benchmarks.ner_stack_lstm --only ner_stack_lstm_hybrid   # just its rows, merged into the file

``--only`` measures the listed systems of :data:`MODELS` alone and merges their rows into the results file
(``results_io.merge_rerun``): the other rows stay.
"""
import argparse
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import spacy
import torch
from spacy.tokens import Doc

from spacy_el.kb import ElKnowledgeBase
from spacy_el.extensions import is_linked
from spacy_el.scoring import ner_scores

from .baselines import BATCH_SIZE, candidate_recall, el_rows, gold_entities, link_with_prior
from .common import AIDA_CORPUS, dev_sweep, fix_tie_breaks, linked_ents, read_docs, timed_pipe, words_per_s
from .common import generator_recall as recall_of_generator
from .results_io import RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

COMMAND = "python -m spacy project run nsl-benchmark projects/ner_stack_lstm"
TRAINING = ROOT / "training"
ABLATIONS = {"ner_stack_lstm_no_sent_rep": "no_sent_rep", "ner_stack_lstm_no_ment_rep": "no_ment_rep", "ner_stack_lstm_no_nil": "no_nil"}
#: The joint models with another candidate generator (skipped when not trained), by system.
#: The ``_long`` ones are trained 6,000 steps instead of 3,000 (``ner_stack_lstm_long`` on the alias table, as
#: the joint model).
GENERATOR_VARIANTS = {"ner_stack_lstm_hybrid": "joint_hybrid", "ner_stack_lstm_hybrid_evidence": "joint_hybrid_evidence",
                      "ner_stack_lstm_hybrid_held_out": "joint_hybrid_held_out",
                      "ner_stack_lstm_hybrid_similarity": "joint_hybrid_evidence",
                      "ner_stack_lstm_long": "joint_long",
                      "ner_stack_lstm_hybrid_evidence_long": "joint_hybrid_evidence_long",
                      "ner_stack_lstm_hybrid_similarity_long": "joint_hybrid_evidence_long"}
#: The variants that predict with ``similarity_weight``, and the weights their AIDA dev sweep tries.
SIMILARITY_VARIANTS = ("ner_stack_lstm_hybrid_similarity", "ner_stack_lstm_hybrid_similarity_long")
SIMILARITY_WEIGHTS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
#: The systems ``--only`` can pick (each with what it needs of the others).
MODELS = ("ner_stack_lstm", *GENERATOR_VARIANTS)
#: Variants that differ from another only in training (held-out priors, more steps: another model's architecture
#: and candidates): no speed row of their own.
UNTIMED = ("ner_stack_lstm_hybrid_held_out", "ner_stack_lstm_long", "ner_stack_lstm_hybrid_evidence_long",
           "ner_stack_lstm_hybrid_similarity_long")
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


def select_similarity_weights(variants: Dict[str, spacy.language.Language], dev: List[Doc]) -> List[Row]:
    """Sets each :data:`SIMILARITY_VARIANTS` model's ``similarity_weight`` to the weight of
    :data:`SIMILARITY_WEIGHTS` with the best EL micro F1 on ``dev`` (AIDA dev); RETURNS the sweep's rows."""
    rows: List[Row] = []
    texts = [doc.text for doc in dev]
    for system in SIMILARITY_VARIANTS:
        if system not in variants:
            continue
        nlp, pipe = variants[system], variants[system].get_pipe(PIPE)

        def el_micro_f(weight: float) -> float:
            pipe.configure(similarity_weight=weight)
            docs, _ = timed_pipe(nlp, texts, BATCH_SIZE)
            return next(r["value"] for r in el_rows(system, "aida-dev", dev, docs, 0.0, "") if r["metric"] == "el_micro_f")

        weight, sweep = dev_sweep(system, "el_micro_f", "similarity_weight", SIMILARITY_WEIGHTS, el_micro_f)
        pipe.configure(similarity_weight=weight)
        rows += sweep
    return rows


def speed_row(system: str, dataset: str, docs: List[Doc], seconds: float, speed: str) -> Row:
    return row(system, dataset, "words_per_s", words_per_s(docs, seconds), speed + " (sentencizer + joint NER + EL)")


def generator_variant_rows(system: str, nlp: spacy.language.Language, kb: ElKnowledgeBase,
                           dataset: str, gold: List[Doc], speed: str) -> List[Row]:
    """The rows of a joint model with another generator: the joint model's metrics (with its speed on
    AIDA test) and its generator's recall@30 in the EL rows' notes."""
    pipe = nlp.get_pipe(PIPE)
    what = f", {pipe.candidates.name} candidates"
    if pipe.settings.similarity_weight:
        what += f", similarity_weight {pipe.settings.similarity_weight:g} (chosen on AIDA dev)"
    rows, docs, seconds = joint_model_rows(system, nlp, kb, dataset, gold, generator_recall(nlp, gold), what)
    timed = dataset == "aida-test" and system not in UNTIMED
    return rows + ([speed_row(system, dataset, docs, seconds, speed)] if timed else [])


def generator_variants(models: Path, only: Optional[Sequence[str]]) -> Dict[str, spacy.language.Language]:
    """The trained :data:`GENERATOR_VARIANTS` under ``models`` of this run (``only``'s, else all), loaded;
    missing ones are said."""
    loaded = {}
    for system, folder in GENERATOR_VARIANTS.items():
        path = models / folder / "model-best"
        if only and system not in only:
            continue
        if path.exists():
            loaded[system] = spacy.load(path)
        else:
            print(f"  (skipped {system}: {path} not found)")
    return loaded


def evaluate_only(args: argparse.Namespace) -> List[Row]:
    """The rows of ``--only``'s systems: the joint model and/or its generator variants."""
    torch.set_num_threads(args.threads)
    variants = generator_variants(args.models, args.only)
    joint = spacy.load(args.models / "joint" / "model-best") if "ner_stack_lstm" in args.only else None
    if joint is None and not variants:
        raise SystemExit(f"Nothing to measure: no model of {', '.join(args.only)}")
    any_nlp = joint or next(iter(variants.values()))
    kb: ElKnowledgeBase = any_nlp.get_pipe(PIPE).kb
    speed = f"nlp.pipe batch_size={BATCH_SIZE}, {args.threads} thread(s), CPU"
    rows = select_similarity_weights(variants, read_docs(args.corpus / "dev.spacy", any_nlp)[: args.limit or None])
    for split in ("dev", "test"):
        dataset = f"aida-{split}"
        gold = read_docs(args.corpus / f"{split}.spacy", any_nlp)[: args.limit or None]
        if joint is not None:
            joint_rows, joint_docs, joint_seconds = joint_model_rows("ner_stack_lstm", joint, kb, dataset, gold, candidate_recall(kb, gold))
            rows += joint_rows
            if split == "test":
                rows.append(speed_row("ner_stack_lstm", dataset, joint_docs, joint_seconds, speed))
        for system, nlp in variants.items():
            rows += generator_variant_rows(system, nlp, kb, dataset, gold, speed)
    return rows


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    load: Callable[[str], spacy.language.Language] = lambda name: spacy.load(TRAINING / name / "model-best")  # noqa: E731
    joint = spacy.load(args.models / "joint" / "model-best")
    variants = generator_variants(args.models, None)
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
    speed = f"nlp.pipe batch_size={BATCH_SIZE}, {args.threads} thread(s), CPU"
    rows = select_similarity_weights(variants, read_docs(args.corpus / "dev.spacy", joint)[: args.limit or None])
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

        for system, nlp in variants.items():
            rows += generator_variant_rows(system, nlp, kb, dataset, gold, speed)

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
    parser.add_argument("--only", nargs="+", choices=MODELS, default=None,
                        help="measure only these systems and merge their rows into --out; the other rows stay")
    args = parser.parse_args()
    fix_tie_breaks()
    if args.only:
        command = "python -m benchmarks.ner_stack_lstm --only " + " ".join(args.only)
        write_results(args.out, command, merge_rerun(args.out, evaluate_only(args), command))
    else:
        write_results(args.out, COMMAND, evaluate(args))
    if args.out.resolve() == (RESULTS_DIR / "ner_stack_lstm.json").resolve():  # a trial run elsewhere leaves the docs alone
        write_tables(args.out)


@published_only
def write_tables(results: Path = RESULTS_DIR / "ner_stack_lstm.json", page: Path = PAGES["ner_stack_lstm"]) -> None:
    def swept(r: Row) -> bool:
        return "_similarity_weight_" in r["metric"]

    main = results_to_markdown(results, pivot=True, notes=False, select=lambda r: not swept(r))
    sweep = results_to_markdown(results, pivot=False, notes=False, select=swept)
    publish_table(page, "ner_stack_lstm", main + "\n\nThe AIDA dev sweep of `similarity_weight`:\n\n" + sweep)


if __name__ == "__main__":
    main()

"""The peers every spacy_el component is compared with, on AIDA dev and test with the evaluation KB.

    python -m benchmarks.baselines

``spacy_ner``, ``prior_only`` and ``spacy_entity_linker`` (with ``_hybrid`` candidates where the KB carries a
mention encoder, and ``_threshold``: the NIL threshold best on AIDA dev); the systems and metrics are described on
docs/results.md.
"""
import argparse
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span

from spacy_el.candidates import HybridCandidates
from spacy_el.candidates.dense import ATTACHMENT
from spacy_el.candidates.registry import hybrid_candidates, spacy_candidates, spacy_candidates_batch
from spacy_el.kb import ElKnowledgeBase
from spacy_el.extensions import is_linked
from spacy_el.scoring.candidates import alias_table_recall, linked_mentions
from spacy_el.scoring import ed_accuracy, el_scores, ner_scores

from .common import (AIDA_CORPUS, EL_BASELINE, MENTION_ENCODER, NER_BASELINE, dev_sweep, fix_tie_breaks, generator_recall,
                     linked_ents, read_docs, timed, timed_pipe, words_per_s)
from .results_io import RESULTS_DIR, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

COMMAND = "python -m spacy project run baselines projects/baselines"
BATCH_SIZE = 64
Link = Tuple[int, int, str]


def gold_links(doc: Doc) -> List[Link]:
    return [(e.start_char, e.end_char, e.kb_id_) for e in doc.ents]


def gold_entities(doc: Doc) -> List[Tuple[int, int, str]]:
    return [(e.start_char, e.end_char, e.label_) for e in doc.ents]


def predicted_links(doc: Doc) -> List[Link]:
    return [(e.start_char, e.end_char, e.kb_id_) for e in doc.ents if is_linked(e.kb_id_)]


def with_gold_mentions(nlp: Language, gold_docs: List[Doc], components: Iterable[str]) -> List[Doc]:
    """Re-tokenise each text, put the gold mention spans (no links) on it and run ``components``."""
    docs = []
    for gold in gold_docs:
        doc = nlp.make_doc(gold.text)
        spans = [doc.char_span(e.start_char, e.end_char, label=e.label_, alignment_mode="expand") for e in gold.ents]
        doc.ents = [s for s in spans if s is not None]
        for name in components:
            doc = nlp.get_pipe(name)(doc)
        docs.append(doc)
    return docs


def link_with_prior(kb: ElKnowledgeBase, docs: List[Doc]) -> None:
    """Link every entity to its most probable candidate (NIL without candidates)."""
    for doc in docs:
        linked = []
        for ent in doc.ents:
            hits = kb.lookup(ent.text, top_k=1)
            linked.append(Span(doc, ent.start, ent.end, ent.label_, kb_id=hits[0].entity_id if hits else "NIL"))
        # doc.ents must be reassigned: setting kb_id_ on a span of doc.ents does not reach the tokens.
        doc.ents = linked


def el_rows(system: str, dataset: str, gold: List[Doc], pred: List[Doc], recall30: float, notes: str) -> List[Row]:
    pairs = [(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)]
    scores = el_scores(pairs)
    note = f"{notes}; cand_recall_at_30={recall30:.3f}"
    return [row(system, dataset, m, round(scores[m], 4), note) for m in ("el_micro_f", "el_macro_f", "el_micro_p", "el_micro_r")]


def ed_row(system: str, dataset: str, gold: List[Doc], pred: List[Doc], recall30: float) -> Row:
    value = ed_accuracy([(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)])
    return row(system, dataset, "ed_accuracy", round(value, 4), f"gold mentions; cand_recall_at_30={recall30:.3f}")


def candidate_recall(kb: ElKnowledgeBase, gold: List[Doc]) -> float:
    return alias_table_recall(kb, list(linked_mentions(gold)), [30])["cand_recall_at_30"]


#: Mentions per ``get_candidates_batch`` call of the hybrid entity_linker: a whole AIDA document's at once, so
#: that the mention encoder reads each context window once.
HYBRID_BATCH = 1000


def with_hybrid_candidates(nlp: Language, encoder: Optional[Path] = None) -> HybridCandidates:
    """Make ``nlp``'s entity_linker take its candidates from the hybrid generator (its defaults: the alias
    table's top 30 and the mention encoder's nearest 30, fused by reciprocal rank, top 30), as the
    ``get_candidates`` / ``get_candidates_batch`` blocks of docs/candidates.md do in a config. encoder: a
    mention encoder folder (None: the one the KB carries). RETURNS the generator."""
    generator = hybrid_candidates(encoder=encoder)
    pipe = nlp.get_pipe("entity_linker")
    pipe.get_candidates = spacy_candidates(generator)
    pipe.get_candidates_batch = spacy_candidates_batch(generator)
    pipe.candidates_batch_size = HYBRID_BATCH
    return generator


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    ner_nlp = spacy.load(args.ner_model)
    el_nlp = spacy.load(args.el_model)
    kb: ElKnowledgeBase = el_nlp.get_pipe("entity_linker").kb
    hybrid_nlp, hybrid = None, None
    encoder = args.encoder if args.encoder.is_dir() else None
    if kb.attachment(ATTACHMENT) is not None or encoder is not None:
        hybrid_nlp = spacy.load(args.el_model)
        hybrid = with_hybrid_candidates(hybrid_nlp, encoder)
    else:
        print(f"Neither {args.encoder} nor the KB of {args.el_model} holds a mention encoder: "
              "no spacy_entity_linker_hybrid rows")
    speed_note = f"nlp.pipe batch_size={BATCH_SIZE}, {args.threads} thread(s), CPU"
    rows: List[Row] = []
    golds: Dict[str, List[Doc]] = {}
    recalls: Dict[Tuple[str, str], float] = {}  # (system, split) -> its candidates' recall@30
    for split in ("dev", "test"):
        dataset = f"aida-{split}"
        gold = read_docs(args.corpus / f"{split}.spacy", ner_nlp)
        texts = [doc.text for doc in gold]
        recall30 = candidate_recall(kb, gold)
        golds[split], recalls[("spacy_entity_linker", split)] = gold, recall30

        ner_docs, ner_seconds = timed_pipe(ner_nlp, texts, BATCH_SIZE)
        ner = ner_scores([(gold_entities(g), gold_entities(p)) for g, p in zip(gold, ner_docs)])
        rows.append(row("spacy_ner", dataset, "ner_f", round(ner["ner_f"], 4), "configs/baselines/ner.cfg"))

        _, link_seconds = timed(lambda: link_with_prior(kb, ner_docs))
        prior_seconds = ner_seconds + link_seconds
        rows += el_rows("prior_only", dataset, gold, ner_docs, recall30, "spacy_ner mentions + top prior")
        gold_mention_docs = with_gold_mentions(ner_nlp, gold, [])
        link_with_prior(kb, gold_mention_docs)
        rows.append(ed_row("prior_only", dataset, gold, gold_mention_docs, recall30))

        el_docs, el_seconds = timed_pipe(el_nlp, texts, BATCH_SIZE)
        rows += el_rows("spacy_entity_linker", dataset, gold, el_docs, recall30, "spacy_ner mentions + entity_linker")
        rows.append(ed_row("spacy_entity_linker", dataset, gold, with_gold_mentions(el_nlp, gold, ["sentencizer", "entity_linker"]), recall30))
        if hybrid_nlp is not None:
            # Timed first: the recall's generator call would leave these mentions' vectors in its cache.
            hybrid_docs, hybrid_seconds = timed_pipe(hybrid_nlp, texts, BATCH_SIZE)
            mentions = linked_ents(gold)
            hybrid_recall30 = generator_recall(hybrid_nlp.get_pipe("entity_linker").kb, hybrid, mentions,
                                               [span.kb_id_ for span in mentions], 30)
            recalls[("spacy_entity_linker_hybrid", split)] = hybrid_recall30
            rows += el_rows("spacy_entity_linker_hybrid", dataset, gold, hybrid_docs, hybrid_recall30,
                            "spacy_ner mentions + entity_linker on hybrid candidates")
            rows.append(ed_row("spacy_entity_linker_hybrid", dataset, gold,
                               with_gold_mentions(hybrid_nlp, gold, ["sentencizer", "entity_linker"]), hybrid_recall30))
        if split == "test":
            rows.append(row("spacy_ner", dataset, "words_per_s", words_per_s(ner_docs, ner_seconds), speed_note))
            rows.append(row("prior_only", dataset, "words_per_s", words_per_s(ner_docs, prior_seconds), speed_note + " (ner + lookup)"))
            rows.append(row("spacy_entity_linker", dataset, "words_per_s", words_per_s(el_docs, el_seconds), speed_note + " (ner + entity_linker)"))
            if hybrid_nlp is not None:
                rows.append(row("spacy_entity_linker_hybrid", dataset, "words_per_s", words_per_s(hybrid_docs, hybrid_seconds),
                                speed_note + " (ner + entity_linker on hybrid candidates)"))
    for system, nlp in (("spacy_entity_linker", el_nlp), ("spacy_entity_linker_hybrid", hybrid_nlp)):
        if nlp is not None:
            rows += threshold_rows(system, nlp, golds, recalls[(system, "test")])
    return rows


#: The entity_linker ``threshold`` values that the AIDA dev sweep tries (0: none, spaCy's default). Below it,
#: the best candidate's score (prior + similarity - prior x similarity) gives NIL instead of a link.
THRESHOLDS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8)


def threshold_rows(system: str, nlp: Language, golds: Dict[str, List[Doc]], recall30: float) -> List[Row]:
    """``<system>_threshold`` on AIDA test: the entity_linker of ``nlp`` with the :data:`THRESHOLDS` value whose
    end-to-end EL micro F1 is best on AIDA dev (the sweep's ``el_micro_f_threshold_<t>`` rows on ``aida-dev``).
    The pipeline's threshold is set back to none afterwards."""
    pipe = nlp.get_pipe("entity_linker")

    def el_micro_f(threshold: float) -> float:
        pipe.threshold = threshold or None
        docs = list(nlp.pipe([doc.text for doc in golds["dev"]], batch_size=BATCH_SIZE))
        return round(el_scores([(gold_links(g), predicted_links(p)) for g, p in zip(golds["dev"], docs)])["el_micro_f"], 4)

    name = f"{system}_threshold"
    print(f"aida-dev: {name} sweep")
    threshold, rows = dev_sweep(name, "el_micro_f", "threshold", THRESHOLDS, el_micro_f)
    pipe.threshold = threshold or None
    docs = list(nlp.pipe([doc.text for doc in golds["test"]], batch_size=BATCH_SIZE))
    pipe.threshold = None
    return rows + el_rows(name, "aida-test", golds["test"], docs, recall30,
                          f"spacy_ner mentions + entity_linker, threshold {threshold:g} (best on AIDA dev)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=AIDA_CORPUS)
    parser.add_argument("--ner-model", type=Path, default=NER_BASELINE)
    parser.add_argument("--el-model", type=Path, default=EL_BASELINE)
    parser.add_argument("--encoder", type=Path, default=MENTION_ENCODER,
                        help="the mention encoder of the spacy_entity_linker_hybrid rows, when the KB carries none")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "baselines.json")
    args = parser.parse_args()
    fix_tie_breaks()
    write_results(args.out, COMMAND, evaluate(args))
    write_tables(args.out)


@published_only
def write_tables(results: Path = RESULTS_DIR / "baselines.json", page: Path = PAGES["baselines"]) -> None:
    """The peers' table, then the AIDA dev sweep of the entity_linker's threshold when it has run."""
    table = results_to_markdown(results, pivot=True, notes=False, select=lambda r: "_threshold_" not in r["metric"])
    sweep = results_to_markdown(results, pivot=False, notes=False, select=lambda r: "_threshold_" in r["metric"])
    if len(sweep.strip().splitlines()) > 2:  # more than the header: the sweep has run
        table += "\n\nThe AIDA dev sweep of the entity_linker's `threshold` (0: none):\n\n" + sweep
    publish_table(page, "baselines", table)


if __name__ == "__main__":
    main()

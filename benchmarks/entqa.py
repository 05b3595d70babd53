"""EntQA: entity_retriever + entqa_reader against their peers, with the evaluation KB (docs/entqa.md).

    python -m benchmarks.entqa [--datasets aida-test msnbc]   # --datasets: only those test sets, merged into --out

On AIDA dev and test, MSNBC and ACE2004: the retriever's recall (``bm25`` and ``alias_table`` as peers), both reader
modes end to end (γ swept on AIDA dev, ``@gamma=`` rows, its best used everywhere), ``prior_only`` and
``spacy_entity_linker``; ``--ents-candidates alias hybrid`` adds ``<system>_ents_<generator>`` rows and ``speedup``.
The rows are described on the docs page; the window stride and the K trade-off are this module at commit b213347.
"""
import argparse
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from tqdm import tqdm

from spacy_el.algorithms.bm25 import BM25
from spacy_el.candidates import AliasCandidates, CandidateGenerator, DenseCandidates, HybridCandidates
from spacy_el.algorithms.entqa_decode import best_non_overlapping, merge_predictions
from spacy_el.algorithms.passages import char_span_to_token_span, topic_text
from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.encoder import entity_text
from spacy_el.extensions import is_linked
from spacy_el.scoring.candidates import alias_table_recall
from spacy_el.pipeline.entity_retriever import gold_mentions, retrieval_recall
from spacy_el.scoring import el_scores
from spacy_el.training.resume import EVALUATIONS  # a reader's learning curve, beside its model-best

from .baselines import gold_links, link_with_prior, predicted_links
from .common import (AIDA_CORPUS, EL_BASELINE, ELEVANT_SETS, MENTION_ENCODER, NER_BASELINE, SHARED_DATA, aida_and_elevant, curve_rows, fix_tie_breaks,
                     temporarily, timed_pipe, words_per_s)
from .results_io import CURVE_STEP, RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .tables import PAGES, published_only, results_to_markdown, suffix_table, update_readme_section

COMMAND = "python -m spacy project run entqa-benchmark projects/entqa"
KS = (10, 30, 100)
GAMMAS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5)  # the joint reader's best γ is lower
CURVE_DATASET = "aida-dev[:30]"  # the configs select model-best on the first 30 AIDA dev documents
READER = "entqa_reader"  # the pipe name of the reader in both pipelines
SYSTEMS = {"per_candidate": "entqa_reader", "joint": "entqa_joint"}  # row names by reader mode
BATCH_SIZE = 8  # nlp.pipe of the EntQA pipeline
PEER_BATCH_SIZE = 64  # nlp.pipe of the spaCy peers, as in benchmarks.baselines
Raw = List[Tuple[int, int, str, float]]


def in_kb_gold(doc: Doc, kb: ElKnowledgeBase) -> List[Tuple[int, int, str]]:
    return [(s, e, k) for s, e, k in gold_mentions(doc) if k in kb]


def mention_recall(gold: Sequence[Doc], pred: Sequence[Doc], kb: ElKnowledgeBase) -> Dict[str, float]:
    """Share of gold in-KB mentions whose entity is in the top K of a passage containing the mention."""
    hits = {k: 0 for k in KS}
    total = 0
    for g, p in zip(gold, pred):
        passages = p._.entqa_passages
        for start, end, kb_id in in_kb_gold(g, kb):
            total += 1
            covering = [ids for s, e, ids, _ in passages if s <= start and end <= e]
            for k in KS:
                hits[k] += any(kb_id in ids[:k] for ids in covering)
    return {f"mention_recall_at_{k}": hits[k] / max(total, 1) for k in KS}


def bm25_recall(index: BM25, kb: ElKnowledgeBase, gold: Sequence[Doc], pred: Sequence[Doc], topic: str) -> Dict[str, float]:
    """The retriever's passage-level recall with BM25 rankings over the same passages (text ⊕ topic)."""
    hits = {k: 0 for k in KS}
    total = 0
    ids = kb.entities.ids
    for g, p in tqdm(list(zip(gold, pred)), desc="bm25", leave=False):
        mentions = in_kb_gold(g, kb)
        query_topic = topic_text(g.text, topic)
        for start, end, _, _ in p._.entqa_passages:
            passage_gold = {k for s, e, k in mentions if start <= s and e <= end}
            if not passage_gold:
                continue
            total += len(passage_gold)
            ranked = [ids[r] for r, _ in index.search(f"{g.text[start:end]} {query_topic}", max(KS))]
            for k in KS:
                hits[k] += len(passage_gold & set(ranked[:k]))
    return {f"recall_at_{k}": hits[k] / max(total, 1) for k in KS}


def el_rows(system: str, dataset: str, gold: Sequence[Doc], pred: Sequence[Doc], notes: str, suffix: str = "") -> List[Row]:
    scores = el_scores([(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)])
    metrics = ("el_micro_f", "el_macro_f", "el_micro_p", "el_micro_r") if not suffix else ("el_micro_f",)
    return [row(system, dataset, m + suffix, round(scores[m], 4), notes) for m in metrics]


def links_at(doc: Doc, raw: Raw, gamma: float) -> List[Tuple[int, int, str]]:
    """Char-span links the reader writes to doc.ents for raw predictions at threshold γ."""
    by_tokens = []
    for s, e, kb_id, score in raw:
        if score > gamma:
            tokens = char_span_to_token_span(doc, s, e)
            if tokens is not None:
                by_tokens.append((tokens[0], tokens[1], kb_id, score))
    best = best_non_overlapping(merge_predictions(by_tokens))
    return [(doc[s:e].start_char, doc[s:e].end_char, k) for s, e, k, _ in best]


def system_of(nlp: Language) -> str:
    return SYSTEMS[nlp.get_pipe(READER).settings.reader_mode]


def gamma_sweep(nlp: Language, gold: Sequence[Doc], retrieved: Sequence[Doc], dataset: str) -> Tuple[List[Row], float, Dict[str, float]]:
    """P/R/F1 on ``gold`` for each γ in GAMMAS, from one reader pass over the retriever's ``retrieved`` docs
    (the links are exactly those the pipeline writes at that γ). RETURNS: the rows, the γ with the best
    micro F1 and its scores."""
    reader = nlp.get_pipe(READER)
    system = system_of(nlp)
    raws = [reader.raw_predictions(doc, min_span_score=min(GAMMAS) / 2) for doc in tqdm(retrieved, desc=f"gamma sweep {system}", leave=False)]
    rows = []
    best = (-1.0, GAMMAS[0], {})
    for gamma in GAMMAS:
        pairs = [(gold_links(g), [link for link in links_at(d, raw, gamma) if is_linked(link[2])])
                 for g, d, raw in zip(gold, retrieved, raws)]
        scores = el_scores(pairs)
        if scores["el_micro_f"] > best[0]:
            best = (scores["el_micro_f"], gamma, scores)
        for metric in ("el_micro_p", "el_micro_r", "el_micro_f"):
            rows.append(row(system, dataset, f"{metric}@gamma={gamma}", round(scores[metric], 4), f"gamma sweep, K = {reader.settings.entities_per_passage}"))
    return rows, best[1], best[2]


def reader_rows(nlp: Language, dataset: str, gold: Sequence[Doc], retrieved: Sequence[Doc], speed: str) -> List[Row]:
    """One EntQA pipeline (either reader mode) on one dataset: on AIDA dev the γ sweep (which sets the γ
    used everywhere after it), elsewhere ``nlp.pipe`` timed with its scores."""
    reader = nlp.get_pipe(READER)
    system = system_of(nlp)
    if dataset == "aida-dev":  # γ is chosen here, on dev, and used for every dataset
        rows, gamma, scores = gamma_sweep(nlp, gold, retrieved, dataset)
        reader.configure(min_span_score=gamma)
        note = reader_note(reader)
        return rows + [row(system, dataset, m, round(scores[m], 4), note) for m in ("el_micro_f", "el_macro_f", "el_micro_p", "el_micro_r")]
    texts = [d.text for d in gold]
    docs, seconds = timed_pipe(nlp, texts, BATCH_SIZE, progress=True)
    note = f"{speed}; retriever + reader, {reader_note(reader)}"
    return el_rows(system, dataset, gold, docs, reader_note(reader)) + [
        row(system, dataset, "docs_per_s", round(len(texts) / seconds, 2), note),
        row(system, dataset, "words_per_s", words_per_s(docs, seconds), note),
    ]


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    nlp = spacy.load(args.pipeline)
    retriever = nlp.get_pipe("entity_retriever")
    kb: ElKnowledgeBase = retriever.kb
    pipelines = [nlp]
    rows: List[Row] = curve_rows(args.pipeline.parent / EVALUATIONS, system_of(nlp), CURVE_DATASET, "el_micro_f", "configs/entqa_reader.cfg")
    if args.joint_pipeline.exists():
        pipelines.append(spacy.load(args.joint_pipeline))
        rows += curve_rows(args.joint_pipeline.parent / EVALUATIONS, system_of(pipelines[-1]), CURVE_DATASET, "el_micro_f",
                           "configs/entqa_reader_joint.cfg")
    else:
        print(f"{args.joint_pipeline} does not exist: no entqa_joint rows (train it first: configs/entqa_reader_joint.cfg)")
    ner_nlp = spacy.load(args.ner_model)
    el_nlp = spacy.load(args.el_model)
    datasets = aida_and_elevant(args.corpus, args.data, nlp, kb, args.limit)
    if args.datasets:  # a partial rerun; AIDA dev first, where γ and the stride are chosen
        datasets = {name: docs for name, docs in datasets.items() if name == "aida-dev" or name in args.datasets}
    generators = ents_generators(args.ents_candidates, args.encoder)
    speed = f"nlp.pipe, {args.threads} thread(s), CPU, bfloat16 encoders"
    bm25 = None
    for dataset, gold in datasets.items():
        print(f"{dataset}: {len(gold)} documents")
        texts = [d.text for d in gold]
        with nlp.select_pipes(enable=["entity_retriever"]):
            retrieved, retriever_seconds = timed_pipe(nlp, texts, BATCH_SIZE, progress=True)
        recall = retrieval_recall([Example(p, g) for p, g in zip(retrieved, gold)], KS, in_kb=kb.__contains__)
        for k in KS:
            rows.append(row("entity_retriever", dataset, f"recall_at_{k}", round(recall[f"retriever_recall_at_{k}"], 4), "passage level"))
        for metric, value in mention_recall(gold, retrieved, kb).items():
            rows.append(row("entity_retriever", dataset, metric, round(value, 4), "gold in-KB mentions"))
        mentions = [(g.text[s:e], k) for g in gold for s, e, k in in_kb_gold(g, kb)]
        for k, value in alias_table_recall(kb, mentions, KS).items():
            rows.append(row("alias_table", dataset, k.replace("cand_recall", "mention_recall"), round(value, 4), "given the gold mention text"))
        if dataset.startswith("aida"):
            if bm25 is None:
                store = kb.entities
                bm25 = BM25([entity_text(store.names[i], store.descriptions[i]) for i in tqdm(range(kb.n_entities), desc="bm25 index", leave=False)])
            for metric, value in bm25_recall(bm25, kb, gold, retrieved, retriever.model.attrs["topic"]).items():
                rows.append(row("bm25", dataset, metric, round(value, 4), "title + description, passage + topic query"))
        for pipeline in pipelines:  # the joint pipeline's retriever is the same (sourced) model: its passages are reused
            rows += reader_rows(pipeline, dataset, gold, retrieved, speed)
        rows.append(row("entity_retriever", dataset, "docs_per_s", round(len(texts) / retriever_seconds, 2), f"{speed}; retriever only"))
        ner_docs, ner_seconds = timed_pipe(ner_nlp, texts, PEER_BATCH_SIZE, progress=True)
        if generators:
            ner_mentions = [[(e.start_char, e.end_char, e.label_) for e in d.ents] for d in ner_docs]
            rows += ents_candidates_rows(pipelines, generators, dataset, gold, ner_mentions, ner_seconds, speed)
        link_with_prior(kb, ner_docs)
        rows += el_rows("prior_only", dataset, gold, ner_docs, "spacy_ner mentions + top prior")
        el_docs, _ = timed_pipe(el_nlp, texts, PEER_BATCH_SIZE, progress=True)
        rows += el_rows("spacy_entity_linker", dataset, gold, el_docs, "spacy_ner + entity_linker")
    return rows + speedup_rows(rows)


#: Candidates per mention that ``--ents-candidates`` merges into the passages' lists.
ENTS_TOP_K = 10


def ents_generators(names: Sequence[str], encoder: Path) -> Dict[str, CandidateGenerator]:
    """The generators of ``--ents-candidates`` by name (hybrid only when the mention encoder exists)."""
    generators: Dict[str, CandidateGenerator] = {}
    for name in names:
        if name == "alias":
            generators[name] = AliasCandidates(top_k=ENTS_TOP_K)
        elif not encoder.exists():
            print(f"{encoder} does not exist: no _ents_hybrid rows (train it: spacy project run train-mention-encoder)")
        else:
            generators[name] = HybridCandidates(AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=encoder),
                                                top_k=ENTS_TOP_K)
    return generators


def ents_candidates_rows(pipelines: Sequence[Language], generators: Dict[str, CandidateGenerator], dataset: str,
                         gold: Sequence[Doc], ner_mentions: Sequence[Sequence[Tuple[int, int, str]]], ner_seconds: float,
                         speed: str) -> List[Row]:
    """Each EntQA pipeline on docs that hold spaCy ner's mentions (``ner_mentions``: per doc ``(start_char,
    end_char, label)``, no links; ``ner_seconds``: what finding them took), its retriever merging each
    generator's candidates of them in turn. ``docs_per_s`` counts ner's time with the pipeline's."""
    rows: List[Row] = []
    for label, generator in generators.items():
        for pipeline in pipelines:
            retriever = pipeline.get_pipe("entity_retriever")
            system = f"{system_of(pipeline)}_ents_{label}"
            note = f"spacy_ner mentions' {label} candidates (top {ENTS_TOP_K}) merged into the passages"
            with temporarily(vars(retriever), "ents_candidates", generator):
                docs, seconds = timed_pipe(pipeline, with_mentions(pipeline, gold, ner_mentions), BATCH_SIZE, progress=True)
            if pipeline is pipelines[0]:  # the retriever is the same (sourced) model in every pipeline
                # the reader leaves the retriever's merged lists on the docs (doc._.entqa_passages)
                recall = retrieval_recall([Example(p, g) for p, g in zip(docs, gold)], KS, in_kb=retriever.kb.__contains__)
                rows += [row(f"entity_retriever_ents_{label}", dataset, f"recall_at_{k}", round(recall[f"retriever_recall_at_{k}"], 4),
                             f"passage level; {note}") for k in KS]
            rows += el_rows(system, dataset, gold, docs, f"{note}; {reader_note(pipeline.get_pipe(READER))}")
            rows.append(row(system, dataset, "docs_per_s", round(len(gold) / (ner_seconds + seconds), 2),
                            f"{speed}; spacy_ner + retriever + reader ({ner_seconds:.1f} s of ner counted; "
                            f"{len(gold) / seconds:.2f} docs/s without it)"))
    return rows


def with_mentions(nlp: Language, gold: Sequence[Doc], mentions: Sequence[Sequence[Tuple[int, int, str]]]) -> List[Doc]:
    """Fresh docs of the texts of ``gold`` with ``mentions`` (unlinked) as their entities."""
    docs = []
    for g, doc_mentions in zip(gold, mentions):
        doc = nlp.make_doc(g.text)
        spans = [doc.char_span(s, e, label=label, alignment_mode="expand") for s, e, label in doc_mentions]
        doc.ents = [span for span in spans if span is not None]
        docs.append(doc)
    return docs


def speedup_rows(rows: Sequence[Row]) -> List[Row]:
    """Per dataset, each joint pipeline's ``docs_per_s`` (the bare one's and each ``_ents_<generator>`` one's,
    which counts spaCy ner's time) over the bare per-candidate one's, all from this run."""
    speeds = {(r["system"], r["dataset"]): r["value"] for r in rows if r["metric"] == "docs_per_s"}
    joint, paper = SYSTEMS["joint"], SYSTEMS["per_candidate"]
    return [row(system, dataset, "speedup", round(value / speeds[(paper, dataset)], 1),
                f"{system} docs_per_s / {paper} docs_per_s, same run ({value} / {speeds[(paper, dataset)]})")
            for (system, dataset), value in speeds.items()
            if (system == joint or system.startswith(f"{joint}_ents_")) and speeds.get((paper, dataset))]


def reader_note(reader) -> str:
    s = reader.settings
    windows = f", windows {s.window_length}/{s.window_stride}" if s.reader_mode == "joint" else ""
    return f"K = {s.entities_per_passage}, P = {s.spans_per_entity}{windows}, gamma = {s.min_span_score} (best on aida-dev)"


#: The ``entqa_long`` table: rows of the long-document timing frozen in studies/entqa_long_documents/.
LONG_SUFFIX = "@tokens="
LONG_METRICS = ("seconds", "tokens_per_s", "spans")


MAIN_METRICS = ("recall_at_10", "recall_at_30", "recall_at_100", "mention_recall_at_100", "el_micro_f", "el_macro_f", "docs_per_s",
                "words_per_s", "speedup", "train_minutes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", type=Path, default=ROOT / "training" / "entqa" / "reader" / "model-best")
    parser.add_argument("--joint-pipeline", type=Path, default=ROOT / "training" / "entqa" / "reader_joint" / "model-best",
                        help="the joint-mode reader's pipeline (entqa_joint rows; left out when it does not exist)")
    parser.add_argument("--ner-model", type=Path, default=NER_BASELINE)
    parser.add_argument("--el-model", type=Path, default=EL_BASELINE)
    parser.add_argument("--corpus", type=Path, default=AIDA_CORPUS)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="documents per dataset (0 = all; for a quick check)")
    parser.add_argument("--ents-candidates", nargs="*", choices=("alias", "hybrid"), default=[],
                        help="also run each EntQA pipeline after spaCy ner with these generators' candidates of its mentions "
                             "merged into the passages (entity_retriever's ents_candidates)")
    parser.add_argument("--encoder", type=Path, default=MENTION_ENCODER,
                        help="the mention encoder of the hybrid generator")
    parser.add_argument("--datasets", nargs="+", choices=("aida-test", *(name for name, _ in ELEVANT_SETS)), default=None,
                        help="rerun only these test sets (AIDA dev always runs: γ is chosen there); "
                             "their rows replace the same rows in --out, the others are kept")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "entqa.json")
    args = parser.parse_args()
    fix_tie_breaks()
    rows = evaluate(args)
    if args.datasets:
        command = "python -m benchmarks.entqa --datasets " + " ".join(args.datasets)
        if args.ents_candidates:
            command += " --ents-candidates " + " ".join(args.ents_candidates)
        rows = merge_rerun(args.out, rows, command)
    write_results(args.out, COMMAND, rows)
    write_tables(args.out)


@published_only
def write_tables(results: Path = RESULTS_DIR / "entqa.json") -> None:
    """The EntQA tables from the results file (main, γ sweep, curve), then print them."""
    main_table = results_to_markdown(results, pivot=True, notes=False, select=lambda r: r["metric"] in MAIN_METRICS,
                                     column_order=MAIN_METRICS)
    sweep = suffix_table(results, "@gamma=", "γ", ("el_micro_p", "el_micro_r", "el_micro_f"))
    curve = suffix_table(results, CURVE_STEP, "step", ("el_micro_f", "train_minutes"))
    long_documents = suffix_table(results, LONG_SUFFIX, "tokens", LONG_METRICS)
    tables = (("entqa", main_table), ("entqa-gamma", sweep), ("entqa-curve", curve), ("entqa_long", long_documents))
    for name, table in tables:
        update_readme_section(PAGES[name], name, table)
    print("\n".join(table for _, table in tables))


if __name__ == "__main__":
    main()

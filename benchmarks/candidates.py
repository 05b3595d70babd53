"""Candidate recall and speed of the three generators: alias, dense and hybrid (issue 26).

Recall@k on gold mentions (their gold id among the first k candidates; gold entities missing from the
KB count as misses), for AIDA dev and test, GUM dev and test (all linked mentions, and names only:
the ``_names`` systems), MSNBC and ACE2004 (gold QIDs mapped to KB titles). ``dense_zeroshot`` is the
untrained mention encoder (the packaged MiniLM as it is): the trained encoder's gain over it is what
training bought. Speed: mentions/s of each generator called on the same batch of AIDA test mentions
(whole documents, one call), in this run, with 2 torch threads.

    python -m benchmarks.candidates --kb kb/eval --encoder training/mention_encoder/best

Writes benchmarks/results/candidates.json and regenerates the table in docs/candidates.md.
"""
import argparse
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import spacy
import torch
from spacy.tokens import Doc, Span

from spacy_el.candidates import AliasCandidates, DenseCandidates, HybridCandidates, MentionCandidates
from spacy_el.corpora import read_aida, read_gum
from spacy_el.corpora.qid_titles import elevant_title_docs, qid_title_map
from spacy_el.extensions import is_linked
from spacy_el.kb import ElKnowledgeBase
from spacy_el.ml.mention_encoder import MentionEncoder
from spacy_el.scoring.candidates import candidate_recall_at_k

from .common import ELEVANT_SETS, SHARED_DATA
from .results_io import RESULTS_DIR, ROOT, row, write_results
from .tables import PAGES, publish_table, results_to_markdown

COMMAND = "python -m spacy project run bench-candidates projects/candidates"
KS = (1, 10, 30, 100)
DEPTH = 100  # each list is read this deep, so that recall@100 is defined for every generator


def gold_spans(docs: Sequence[Doc], spans_key: str = "", names_only: bool = False) -> Tuple[List[Span], List[str]]:
    """The linked gold mentions of ``docs`` and their gold ids."""
    spans, golds = [], []
    for doc in docs:
        for span in doc.spans[spans_key] if spans_key else doc.ents:
            if is_linked(span.kb_id_) and (not names_only or any(c.isupper() for c in span.text)):
                spans.append(span)
                golds.append(span.kb_id_)
    return spans, golds


def datasets(data: Path, kb: ElKnowledgeBase, limit: int) -> Dict[str, Tuple[List[Span], List[str]]]:
    """``name -> (spans, gold ids)``; the GUM names-only sets are named ``gum-<split>:names``."""
    nlp = spacy.blank("en")
    aida = read_aida(data / "aida", splits=("dev", "test"))
    out: Dict[str, Tuple[List[Span], List[str]]] = {}
    for split in ("dev", "test"):
        out[f"aida-{split}"] = gold_spans(aida[split][:limit or None])
        gum = read_gum(data / "gum", split)[:limit or None]
        out[f"gum-{split}"] = gold_spans(gum, "mentions")
        out[f"gum-{split}:names"] = gold_spans(gum, "mentions", names_only=True)
    qids = qid_title_map(data)
    for name, file in ELEVANT_SETS:
        docs, _ = elevant_title_docs(data / "elevant" / file, nlp, qids, kb=kb)
        out[name] = gold_spans(docs[:limit or None])
    return out


def ranked_ids(kb: ElKnowledgeBase, lists: Sequence[MentionCandidates]) -> List[List[str]]:
    return [found.ids(kb) for found in lists]


def recall_rows(system: str, dataset: str, ranked: List[List[str]], golds: List[str], notes: str) -> List[Dict]:
    name, _, suffix = dataset.partition(":")
    system = f"{system}_{suffix}" if suffix else system
    scores = candidate_recall_at_k(ranked, golds, KS)
    return [row(system, name, metric, round(value, 4), notes) for metric, value in scores.items()] + [
        row(system, name, "mentions", len(golds), notes)
    ]


def generator_lists(
    kb: ElKnowledgeBase, spans: List[Span], alias: AliasCandidates, hybrids: Dict[str, HybridCandidates],
    encoders: Dict[str, DenseCandidates],
) -> Dict[str, List[MentionCandidates]]:
    """Each system's lists for ``spans``; every encoder reads each mention once (the dense and hybrid
    systems share its vectors)."""
    alias_lists = alias(kb, spans)
    lists = {"alias": alias_lists}
    for label, dense in encoders.items():
        vectors = dense.encode(kb, spans)
        scores, rows = dense.search(kb, vectors, DEPTH)
        lists[label] = [
            MentionCandidates.from_lists(r[r >= 0], np.zeros((r >= 0).sum()), -np.ones((r >= 0).sum()), s[r >= 0], s[r >= 0])
            for s, r in zip(scores, rows)
        ]
        if label == "dense":
            for name, hybrid in hybrids.items():
                fused_alias = hybrid.alias(kb, spans)
                lists[name] = hybrid.fuse(kb, fused_alias, vectors, hybrid.needs_dense(spans, fused_alias))
    return lists


def speed_rows(kb: ElKnowledgeBase, spans: List[Span], generators: Dict[str, object]) -> List[Dict]:
    """mentions/s of each generator on the same mentions, one call each, after a warm-up call."""
    rows = []
    for name, generator in generators.items():
        generator(kb, spans[:32])
        start = time.perf_counter()
        generator(kb, spans)
        seconds = time.perf_counter() - start
        notes = f"{len(spans)} AIDA test gold mentions in one call, {torch.get_num_threads()} torch threads"
        rows.append(row(name, "aida-test", "mentions_per_s", round(len(spans) / seconds, 1), notes))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, default=ROOT / "kb" / "eval")
    parser.add_argument("--encoder", type=Path, default=ROOT / "training" / "mention_encoder" / "best")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "candidates.json")
    parser.add_argument("--limit", type=int, default=0, help="first N documents per dataset (0: all; smoke runs)")
    parser.add_argument("--speed-mentions", type=int, default=2000)
    parser.add_argument("--no-zeroshot", action="store_true", help="skip the untrained encoder's rows")
    args = parser.parse_args()
    torch.set_num_threads(2)
    kb = ElKnowledgeBase.load(args.kb)
    alias = AliasCandidates(top_k=DEPTH)
    dense = DenseCandidates(top_k=DEPTH, encoder=args.encoder)
    hybrids = {
        "hybrid": HybridCandidates(AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=args.encoder), top_k=DEPTH),
        "hybrid_skip_confident": HybridCandidates(
            AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=args.encoder), top_k=DEPTH, skip_dense_above=0.9,
        ),
    }
    encoders = {"dense": dense}
    if not args.no_zeroshot:
        zeroshot_kb = ElKnowledgeBase.load(args.kb)  # its own KB object: the zero-shot encoder is attached to it
        zeroshot_dir = ROOT / "benchmarks" / "tmp" / "mention_encoder_zeroshot"  # git-ignored
        MentionEncoder.from_base(entity_encoder=kb.vectors_encoder).save(zeroshot_dir)
        encoders["dense_zeroshot"] = DenseCandidates(top_k=DEPTH, encoder=zeroshot_dir)
    rows: List[Dict] = []
    data = datasets(args.data, kb, args.limit)
    for dataset, (spans, golds) in data.items():
        print(f"{dataset}: {len(spans)} mentions")
        for label, lists in generator_lists(kb, spans, alias, hybrids, {"dense": dense}).items():
            rows += recall_rows(label, dataset, ranked_ids(kb, lists), golds, "gold mentions")
        if "dense_zeroshot" in encoders:
            zs = generator_lists(zeroshot_kb, spans, alias, {}, {"dense_zeroshot": encoders["dense_zeroshot"]})
            rows += recall_rows("dense_zeroshot", dataset, ranked_ids(kb, zs["dense_zeroshot"]), golds, "untrained MiniLM")
    spans = data["aida-test"][0][: args.speed_mentions]
    rows += speed_rows(kb, spans, {
        "alias": AliasCandidates(top_k=30), "dense": DenseCandidates(top_k=30, encoder=args.encoder),
        "hybrid": HybridCandidates(AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=args.encoder), top_k=30),
        "hybrid_skip_confident": HybridCandidates(
            AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=args.encoder), top_k=30, skip_dense_above=0.9,
        ),
    })
    write_results(args.out, COMMAND, rows)
    write_tables(args.out)


def write_tables(results: Path = RESULTS_DIR / "candidates.json", page: Path = PAGES["candidates"]) -> None:
    publish_table(page, "candidates", results_to_markdown(results, pivot=True, notes=False))


if __name__ == "__main__":
    main()

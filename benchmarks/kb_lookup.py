"""KB look-up speed (issue 70, section 3): the exact-alias fast path against spaCy's ``InMemoryLookupKB`` on the same
KB in the same run, and the batch look-up of the candidate generators.

    python -m benchmarks.kb_lookup                         # 1M synthetic entities: benchmarks/results/kb_lookup.json
    python -m benchmarks.kb_lookup --n-entities 100000     # a smaller KB: benchmarks/tmp/kb_lookup_100k.json

The KB is ``benchmarks.kb_scale``'s synthetic one, saved and loaded memory-mapped; every system is timed on the same
mentions in interleaved rounds (the best round counts). The systems and mentions are described on docs/kb_lookup.md;
a run's rows replace their earlier ones in the results file and leave the others (the before/after rows of
studies/kb_fast_lookup/).
"""
import argparse
import gc
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

from .kb_scale import build_synthetic_kb, log_rows, size_label
from .common import SHARED_DATA
from .results_io import RESULTS_DIR, ROOT, log, write_merged
from .results_io import row as result_row
from .tables import PAGES, published_only, results_to_markdown, update_readme_section

COMMAND = "python -m benchmarks.kb_lookup"
SYSTEM, PEER = "el_kb", "spacy InMemoryLookupKB"
Row = Dict[str, Any]


def row(system: str, dataset: str, metric: str, value: float, notes: str) -> Row:
    return result_row(system, dataset, metric, round(float(value), 2), notes)


def each(fn: Callable[[Any], Any], inputs: Sequence[Any]) -> Callable[[], None]:
    """A round calling ``fn`` on each input and dropping its result, as a pipeline drops a batch's candidates once
    scored: a round that kept every result alive would also time the collector's passes over them."""

    def round_() -> None:
        for item in inputs:
            fn(item)

    return round_


def best_rounds(fns: Dict[str, Callable[[], Any]], rounds: int) -> Dict[str, float]:
    """Seconds of the fastest of ``rounds`` calls of each function, the rounds interleaved over the functions."""
    for fn in fns.values():
        fn()  # warm-up: page faults of the mapped arrays, the fast path's hash table
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def lookup_rows(kb: Any, peer: Any, queries: Dict[str, List[str]], dataset: str, rounds: int, note: str) -> List[Row]:
    """µs per call of each single look-up, exact aliases and normalised forms."""
    exact = queries["exact"]
    fns = {
        "lookup": each(kb.lookup, exact),
        "matches": each(kb.matches, exact),
        "peer": each(peer.get_alias_candidates, exact),
    }
    seconds = {name: value / len(exact) * 1e6 for name, value in best_rounds(fns, rounds).items()}
    ratio = seconds["lookup"] / seconds["peer"]
    n_cands = float(np.mean([len(peer.get_alias_candidates(q)) for q in exact]))
    what = f"{len(exact):,} KB aliases drawn uniformly, {n_cands:.2f} candidates each on average; each result dropped as made; best of {rounds} rounds"
    rows = [
        row(SYSTEM, dataset, "lookup_us_exact", seconds["lookup"],
            f"kb.lookup (top_k None); {what}; {ratio:.2f}x spaCy's get_alias_candidates in the same rounds; {note}"),
        row(SYSTEM, dataset, "matches_us_exact", seconds["matches"], f"kb.matches (rows, no strings); {what}; {note}"),
        row(PEER, dataset, "lookup_us_exact", seconds["peer"], f"get_alias_candidates; {what}; {note}"),
    ]
    normalized = queries["normalized"]
    seconds = best_rounds({"lookup": each(kb.lookup, normalized)}, rounds)["lookup"] / len(normalized) * 1e6
    what = f"{len(normalized):,} upper-case or 'The ...' forms of KB aliases; best of {rounds} rounds; {note}"
    return rows + [row(SYSTEM, dataset, "lookup_us_normalized", seconds, f"kb.lookup (no fast path for this tier); {what}")]


def batch_rows(kb: Any, mentions: Dict[str, List[str]], dataset: str, batch_size: int, rounds: int, note: str) -> List[Row]:
    """mentions/s of the alias generator over batches of mentions (batch look-up)."""
    from spacy_el.candidates import AliasCandidates

    generator = AliasCandidates(top_k=30)
    rows = []
    for kind, texts in mentions.items():
        batches = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
        fns = {
            "batch": each(lambda batch: generator.lookup_texts(kb, batch), batches),
            "matches_batch": each(lambda batch: kb.matches_batch(batch, top_k=30), batches),
        }
        seconds = best_rounds(fns, rounds)
        what = f"each batch's result dropped before the next; best of {rounds} rounds; {note}"
        rows += [
            row("alias_generator", f"{dataset}:{kind}", "mentions_per_s", len(texts) / seconds["batch"],
                f"AliasCandidates(top_k=30) on {len(texts):,} mentions in batches of {batch_size:,} (kb.matches_batch); {what}"),
            row("kb_matches_batch", f"{dataset}:{kind}", "mentions_per_s", len(texts) / seconds["matches_batch"],
                f"kb.matches_batch(top_k=30) alone, same batches; {what}"),
        ]
    return rows


def hybrid_rows(data: Path, n_mentions: int, rounds: int, note: str) -> List[Row]:
    """mentions/s of the hybrid generator with every speed setting of docs/candidates.md (an encoder of MiniLM's
    first 3 layers with windows without overlap, an HNSW32 index, ``skip_dense_above = 0.9``), on GUM test's
    gold names against the demo KB (assets/kb, MiniLM vectors), and the alias generator alone, in the same rounds.
    The encoder is untrained: its speed is the trained one's (same layers, same windows);
    which mentions skip it depends on the alias table only."""
    import torch

    from spacy_el.candidates import AliasCandidates, DenseCandidates, HybridCandidates
    from spacy_el.candidates.mention_encoder import MentionEncoder
    from spacy_el.corpora import read_gum
    from spacy_el.extensions import is_linked
    from spacy_el.kb import KBBuilder
    from spacy_el.kb.build_steps import attach_dense_index, compute_entity_vectors
    from spacy_el.kb.encoder import encoder_fingerprint

    torch.set_num_threads(2)
    builder = KBBuilder()
    builder.read_entities_jsonl(ROOT / "assets" / "kb" / "entities.jsonl", progress=False)
    builder.read_aliases_jsonl(ROOT / "assets" / "kb" / "aliases.jsonl", progress=False)
    kb = builder.build()
    kb.set_vectors(compute_entity_vectors(kb, progress=False), encoder=encoder_fingerprint())
    attach_dense_index(kb, "HNSW32", ef_construction=200, ef_search=64)
    folder = ROOT / "benchmarks" / "tmp" / "kb_lookup_encoder"
    MentionEncoder.from_base(layers=3, window_tokens=32, window_stride=32, mentions_per_batch=1024,
                             windows_per_batch=32).save(folder)
    # Linked names (a capital letter), as AIDA's mentions are: candidates.py's gum-test:names.
    spans = [span for doc in read_gum(data / "gum", "test") for span in doc.spans["mentions"]
             if is_linked(span.kb_id_) and any(c.isupper() for c in span.text)]
    spans = spans[:n_mentions]
    dense = DenseCandidates(top_k=30, encoder=folder, cache_size=0)
    new = HybridCandidates(AliasCandidates(top_k=30), dense, top_k=30, skip_dense_above=0.9)
    alias_new = AliasCandidates(top_k=30)
    seconds = best_rounds({"hybrid": lambda: new(kb, spans), "alias": lambda: alias_new(kb, spans)}, rounds)
    skipped = len(spans) - len(new.needs_dense(spans, alias_new(kb, spans)))
    what = (f"{len(spans):,} GUM test gold names in one call against the demo KB ({kb.n_entities:,} entities); "
            f"{skipped:,} skip the encoder; best of {rounds} rounds, {torch.get_num_threads()} torch threads; {note}")
    dataset = "gum-test:names"
    return [
        row("hybrid_fast_skip_confident_hnsw", dataset, "mentions_per_s", len(spans) / seconds["hybrid"],
            f"batch look-up; untrained 3-layer MiniLM, windows of 32 without overlap, HNSW32 (ef_search 64); {what}"),
        row("alias_generator", dataset, "mentions_per_s", len(spans) / seconds["alias"], f"AliasCandidates(top_k=30); {what}"),
    ]


def queries_of(kb: Any, aliases: Sequence[str], n: int, rng: np.random.Generator) -> Dict[str, List[str]]:
    """Exact aliases, and upper-case / "The ..." forms that are no alias as written (kb_scale.lookup_queries')."""
    exact = [aliases[int(i)] for i in rng.integers(0, len(aliases), size=n)]
    normalized = [a.upper() if a.upper() != a else f"The {a}" for a in exact]
    return {"exact": exact, "normalized": [q for q in normalized if not kb.aliases.exact_rows(q)]}


def main() -> None:
    args = parse_args()
    n = args.n_entities
    dataset = f"synthetic-{size_label(n)}-kb"
    out = Path(args.out) if args.out else RESULTS_DIR / "kb_lookup.json" if n == 1_000_000 else ROOT / "benchmarks" / "tmp" / f"kb_lookup_{size_label(n)}.json"
    note = f"2 cores shared with other jobs (load average {os.getloadavg()[0]:.1f} at the start)"
    tmp = ROOT / "benchmarks" / "tmp" / "kb_lookup"
    shutil.rmtree(tmp, ignore_errors=True)
    parts = set(args.parts.split(","))
    rows: List[Row] = []
    if parts & {"lookup", "batch"}:
        rows += kb_part(args, n, dataset, note, tmp, parts)
    if "hybrid" in parts and args.hybrid_mentions:
        new_rows = hybrid_rows(Path(args.data), args.hybrid_mentions, min(args.rounds, 3), note)  # seconds a call
        log_rows(new_rows)
        rows += new_rows
    write_merged(out, COMMAND, rows)
    log(f"wrote {out}")
    if out == RESULTS_DIR / "kb_lookup.json":
        write_tables(out)


NAME = "kb_lookup"


@published_only
def write_tables(out: Path = RESULTS_DIR / f"{NAME}.json") -> None:
    """One line per system and dataset, one column per metric (the method of each row is on the page, and
    its notes are in the results file)."""
    update_readme_section(PAGES[NAME], NAME, results_to_markdown(out, pivot=True, notes=False))


def kb_part(args: argparse.Namespace, n: int, dataset: str, note: str, tmp: Path, parts: set) -> List[Row]:
    """The rows measured on the synthetic KB: single look-ups (``lookup``) and the batch generator (``batch``)."""
    from spacy.vocab import Vocab

    from spacy_el.kb import ElKnowledgeBase
    from spacy_el.kb.interop import to_in_memory_lookup_kb

    built, data, _, _ = build_synthetic_kb(n, args.aliases_per_entity, args.seed)
    built.to_disk(tmp / "kb")
    aliases = list(data.alias_rows)
    del built, data
    gc.collect()
    kb = ElKnowledgeBase.load(tmp / "kb", mmap=True, verify=False)
    started = time.perf_counter()
    kb.lookup(aliases[0])
    fast_s = time.perf_counter() - started
    rows = [row(SYSTEM, dataset, "fast_path_build_s", fast_s,
                f"the fast path's hash table over {kb.n_aliases:,} aliases, built at the first look-up after loading; {note}")]
    rng = np.random.default_rng(args.seed)
    queries = queries_of(kb, aliases, args.n_lookups, rng)
    if "lookup" in parts:
        log(f"fast path built in {fast_s:.2f} s; exporting to spaCy's InMemoryLookupKB")
        peer = to_in_memory_lookup_kb(kb, Vocab())
        rows += lookup_rows(kb, peer, queries, dataset, args.rounds, note)
        log_rows(rows)
        del peer
        gc.collect()
    else:
        rows = []
    exact = [aliases[int(i)] for i in rng.integers(0, len(aliases), size=args.n_mentions)]
    variants = queries_of(kb, aliases, args.n_mentions, rng)["normalized"]
    mixed = [variants[i % len(variants)] if i % 10 == 9 else text for i, text in enumerate(exact)]
    if "batch" in parts:
        new_rows = batch_rows(kb, {"exact": exact, "mixed": mixed}, dataset, args.batch_size, args.rounds, note)
        log_rows(new_rows)
        rows += new_rows
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-entities", type=int, default=1_000_000)
    parser.add_argument("--aliases-per-entity", type=float, default=3.3)
    parser.add_argument("--n-lookups", type=int, default=20_000, help="single look-ups per system and round")
    parser.add_argument("--n-mentions", type=int, default=100_000, help="mentions per batch-generator round")
    parser.add_argument("--batch-size", type=int, default=1000, help="mentions per generator call")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hybrid-mentions", type=int, default=2000,
                        help="GUM test mentions of the hybrid rows (0: no hybrid rows)")
    parser.add_argument("--data", default=str(SHARED_DATA), help="../shared/data (GUM for the hybrid rows)")
    parser.add_argument("--parts", default="lookup,batch,hybrid", help="what to measure (comma-separated)")
    parser.add_argument("--out", default=None)
    return parser.parse_args()


if __name__ == "__main__":
    main()

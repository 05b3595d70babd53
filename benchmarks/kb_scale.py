"""KB scale benchmark on a synthetic 1M-entity KB: the FAISS dense index and the alias table / entity store.

    python -m benchmarks.kb_scale                 # full run: 1M entities, ~3.3M aliases (< 20 min, 2 cores)
    python -m benchmarks.kb_scale --quick         # smoke check: 20k entities

The synthetic vectors and KB and what each row measures are described on docs/kb_scale.md. The full run writes
benchmarks/results/kb_scale.json and its tables; other sizes write benchmarks/tmp/kb_scale_<n>.json unless --out.
"""
import os

# On a shared 2-core machine, OpenMP threads that spin while waiting slowed FAISS training up to 3x
# when other processes competed for the cores; passive waiting is set before libgomp is loaded.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import gc  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Optional, Sequence, Tuple  # noqa: E402

import faiss  # noqa: E402
import numpy as np  # noqa: E402

from spacy_el.kb.dense_index import BLAS_THRESHOLD, DenseIndex  # noqa: E402

from .results_io import RESULTS_DIR, ROOT, log, write_results  # noqa: E402
from .results_io import row as result_row  # noqa: E402
from .tables import PAGES, published_only, results_to_markdown, update_readme_section  # noqa: E402

COMMAND = "python -m benchmarks.kb_scale"
DIM = 384
K = 100
BATCH_SIZES = (1, 2, 4, 16, 64, 1024)
Row = Dict[str, Any]


def size_label(n: int) -> str:
    return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


# -- synthetic vectors -----------------------------------------------------------------------------
class SyntheticVectors:
    """L2-normalised (n, dim) float32 vectors: a Zipf-weighted mixture of ``n_clusters`` Gaussians in a
    ``latent_dim`` space, projected to ``dim`` dims, plus isotropic noise: near neighbours are much closer
    than random pairs, as in sentence-embedding KBs, so ANN recall is meaningful."""

    def __init__(self, dim: int, seed: int, n_clusters: int = 2048, latent_dim: int = 64) -> None:
        rng = np.random.default_rng(seed)
        self.dim, self.latent_dim, self.spread, self.noise = dim, latent_dim, 0.6, 0.3
        self.centers = rng.standard_normal((n_clusters, latent_dim), dtype=np.float32)
        self.proj = (rng.standard_normal((latent_dim, dim), dtype=np.float32) / np.sqrt(latent_dim)).astype(np.float32)
        weights = 1.0 / np.arange(1, n_clusters + 1) ** 0.7
        self.weights = weights / weights.sum()

    def sample(self, n: int, seed: int, chunk: int = 100_000) -> np.ndarray:
        """RETURNS: float32 (n, dim), unit rows. Filled chunk by chunk to avoid full-size temporaries."""
        rng = np.random.default_rng(seed)
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            labels = rng.choice(len(self.centers), size=m, p=self.weights)
            z = self.centers[labels] + self.spread * rng.standard_normal((m, self.latent_dim), dtype=np.float32)
            x = z @ self.proj + self.noise * rng.standard_normal((m, self.dim), dtype=np.float32)
            out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
        return out


# -- FAISS part ------------------------------------------------------------------------------------
def time_batches(index: DenseIndex, queries: np.ndarray, batch: int) -> List[float]:
    """ms per query of each batch of ``queries`` (one warm-up batch first: page faults, thread start)."""
    index.search(queries[:batch], K)
    times = []
    for start in range(0, len(queries) - batch + 1, batch):
        t0 = time.perf_counter()
        index.search(queries[start : start + batch], K)
        times.append((time.perf_counter() - t0) * 1e3 / batch)
    return times


def search_rows(index: DenseIndex, system: str, queries: np.ndarray, truth: Optional[np.ndarray], dataset: str,
                note: str, slow: bool = False) -> List[Row]:
    """Latency per batch size (+ recall@100 when ``truth`` is given) as result rows; ms/query is the median over
    batches and two repeats."""
    rows = []
    for batch in [b for b in BATCH_SIZES if b <= len(queries)]:
        # Flat reads 1.5 GB per batch: fewer queries keep the run short; ANN indexes get all of them.
        n_q = batch if batch >= 1024 else (32 if batch == 1 else 128) if slow else len(queries)
        times = [t for _ in range(2) for t in time_batches(index, queries[: max(n_q, batch)], batch)]
        metric = "search_ms_per_query" if batch == 1 else f"search_ms_per_query_batch{batch}"
        rows.append(row(system, dataset, metric, statistics.median(times),
                        f"top-{K}, batch {batch}, blas_threshold={BLAS_THRESHOLD}, {note}"))
    if truth is not None:
        _, found = index.search(queries, K)
        recall = float(np.mean([len(np.intersect1d(a, b)) / truth.shape[1] for a, b in zip(found, truth)]))  # |found ∩ true| / k
        rows.append(row(system, dataset, f"recall_at_{K}", recall, f"vs exact Flat, {note}"))
    return rows


def row(system: str, dataset: str, metric: str, value: float, notes: str) -> Row:
    """A result row; floats rounded to 4 decimals (timings are not more precise than that)."""
    return result_row(system, dataset, metric, round(float(value), 4) if isinstance(value, float) else value, notes)


def build_index(
    factory: str, vectors: np.ndarray, max_train: int, tmp_dir: Path, system: str, dataset: str, **params: int
) -> Tuple[DenseIndex, List[Row]]:
    """Train + add, then save / mmap-load / compare. RETURNS: the in-memory index and its build rows."""
    index = DenseIndex(vectors.shape[1], factory, max_train=max_train, **params)
    t0 = time.perf_counter()
    if not index.is_trained:
        index.train(vectors)
    train_s = time.perf_counter() - t0
    index.add(vectors)
    build_s = time.perf_counter() - t0
    path = index.save(tmp_dir / f"{system}.faiss")
    n_bytes = path.stat().st_size
    t1 = time.perf_counter()
    loaded = DenseIndex.load(path, mmap=True)
    load_s = time.perf_counter() - t1
    probe = vectors[:8]
    if not np.array_equal(loaded.search(probe, 10)[1], index.search(probe, 10)[1]):
        raise RuntimeError(f"{system}: the mmap-loaded index gives different neighbours")
    del loaded
    path.unlink()
    n = len(vectors)
    train_note = f"train {train_s:.1f} s on {min(n, max_train):,} vectors + add" if train_s > 0.01 else "add only"
    log(f"{system}: build {build_s:.1f} s ({train_note}), {n_bytes / 1e6:.0f} MB, mmap load {load_s:.2f} s")
    return index, [
        row(system, dataset, "build_s", build_s, f"{factory}: {train_note}"),
        row(system, dataset, "index_bytes", int(n_bytes), f"{n_bytes / n:.0f} B/entity (file incl. metadata)"),
        row(system, dataset, "load_s", load_s, "DenseIndex.load(mmap=True), file in page cache"),
    ]


def run_faiss(n: int, n_queries: int, seed: int, tmp_dir: Path, threads: int) -> List[Row]:
    dataset = f"synthetic-{size_label(n)}-{DIM}d"
    note = f"{threads} threads"
    gen = SyntheticVectors(DIM, seed)
    t0 = time.perf_counter()
    xb = gen.sample(n, seed + 1)
    xq = gen.sample(n_queries, seed + 2)
    log(f"vectors {xb.shape} generated in {time.perf_counter() - t0:.1f} s")
    rows: List[Row] = []

    # Exact search: the ground truth.
    flat, build = build_index("Flat", xb, 0, tmp_dir, "faiss_flat", dataset)
    rows += build
    truth = flat.search(xq, K)[1]
    rows += search_rows(flat, "faiss_flat", xq, None, dataset, note, slow=True)
    log_rows(rows)
    del flat
    gc.collect()

    # HNSW: graph over full vectors; IVF-PQ: ~4 sqrt(n) lists (4096 at 1M), 48-byte codes, trained on a sample.
    # Each is searched with its default setting (the first) and two others.
    nlist = 2 ** int(round(np.log2(4 * np.sqrt(n))))
    for factory, base, max_train, param, suffix, values, label in (
        ("HNSW32", "faiss_hnsw32", 0, "ef_search", "ef", (128, 64, 256), "efSearch={}, efConstruction=40"),
        (f"IVF{nlist},PQ48", f"faiss_ivf{nlist}_pq48", min(n, max(160_000, 39 * nlist)), "nprobe", "nprobe",
         (32, 8, 128), "nprobe={}"),
    ):
        index, build = build_index(factory, xb, max_train, tmp_dir, base, dataset, **{param: values[0]})
        rows += build
        for value in values:
            index.set_search_params(**{param: value})
            system = base if value == values[0] else f"{base}_{suffix}{value}"
            new_rows = search_rows(index, system, xq, truth, dataset, f"{label.format(value)}, {note}")
            rows += new_rows
            log_rows(new_rows)
        del index
        gc.collect()
    return rows


def log_rows(rows: Sequence[Row]) -> None:
    for r in rows:
        log(f"  {r['system']:<32} {r['metric']:<32} {r['value']}")


# -- KB part ---------------------------------------------------------------------------------------
SYLLABLES = (
    "ka lo mi ren tor vel an dri es fa gor hul is jen kor lin mar nor os pel qui ras sen tal ur van wil "
    "xan yor zel bru cas del em fio gra hel ing jo kle mun nal ob pra rik sto tre ul vik wen yu zan"
).split()
ORG_WORDS = "Group Industries Records University FC Bank Press Airlines Institute Party Motors Studios".split()
LOC_WORDS = "River County Island Mountains Bay Valley Lake Province".split()
WORK_WORDS = "Album Song Film Novel Opera Game Series Poem".split()
ADJECTIVES = "American British French German Italian Spanish Dutch Swedish Polish Brazilian Japanese Indian".split()
NOUNS = {
    "PER": "footballer politician singer actor painter novelist physicist general cyclist bishop".split(),
    "ORG": "company band club party university newspaper airline broadcaster".split(),
    "LOC": "town river village island region mountain lake district".split(),
    "MISC": "film album novel song video-game opera television-series poem".split(),
}
TYPES = ("PER", "ORG", "LOC", "MISC")


class SyntheticKB:
    """Entities and aliases shaped like a Wikipedia-derived KB (sizes, ambiguity, string lengths; described on
    docs/kb_scale.md)."""

    def __init__(self, n: int, aliases_per_entity: float, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.rng = rng
        first = self._words(max(500, n // 300), 2, rng)
        surnames = self._words(max(2000, n // 5), 3, rng)
        places = self._words(max(1000, n // 20), 3, rng)
        self.types = rng.choice(4, size=n, p=[0.45, 0.25, 0.2, 0.1])
        self.ids = [f"Q{i + 1}" for i in range(n)]
        self.frequency = (1e6 / rng.permutation(np.arange(1, n + 1)) ** 1.1).astype(np.float64)
        self.names: List[str] = []
        self.descriptions: List[str] = []
        aliases: Dict[str, List[int]] = {}
        pick = rng.integers(0, 1 << 30, size=(n, 4))
        for i in range(n):
            t = TYPES[self.types[i]]
            a, b, c, d = (int(v) for v in pick[i])
            noun = NOUNS[t][a % len(NOUNS[t])]
            sur = surnames[b % len(surnames)]
            if t == "PER":
                given = first[c % len(first)]
                name, shared, short = f"{given} {sur}", sur, f"{given[0]}. {sur}"
            elif t == "ORG":
                word = ORG_WORDS[c % len(ORG_WORDS)]
                name, shared, short = f"{sur} {word}", f"{sur[0]}{word[0]}", f"{sur} {word[:3]}."
            elif t == "LOC":
                place = places[b % len(places)]
                name, shared, short = f"{place} {LOC_WORDS[c % len(LOC_WORDS)]}", place, None
            else:
                name, shared, short = f"{sur} {first[c % len(first)]} {WORK_WORDS[d % len(WORK_WORDS)]}", None, None
            self.names.append(name)
            self.descriptions.append(f"{ADJECTIVES[d % len(ADJECTIVES)]} {noun} (born {1800 + a % 220})")
            for alias in (name, f"{name} ({noun})", shared, short):
                if alias:
                    aliases.setdefault(alias, []).append(i)
        target = int(aliases_per_entity * n)
        while len(aliases) < target:  # nicknames: fresh two-word strings naming 1-3 entities
            k = target - len(aliases)
            words = self._words(k, 2, rng)
            owners = rng.integers(0, n, size=(k, 3))
            counts = rng.choice(3, size=k, p=[0.7, 0.2, 0.1]) + 1
            for j in range(k):
                alias = f"{words[j]} {surnames[int(owners[j, 1]) % len(surnames)]}"
                aliases.setdefault(alias, []).extend(int(r) for r in owners[j, : counts[j]])
        self.alias_rows = aliases

    @staticmethod
    def _words(n: int, syllables: int, rng: np.random.Generator) -> List[str]:
        parts = rng.integers(0, len(SYLLABLES), size=(n, syllables))
        return ["".join(SYLLABLES[p] for p in row).capitalize() for row in parts]

    def alias_args(self, alias: str, rows: List[int]) -> Tuple[str, List[str], List[float]]:
        """``KBBuilder.add_alias`` arguments: the 100 most frequent entities, priors summing to 1."""
        unique = sorted(set(rows), key=lambda r: -self.frequency[r])[:100]
        weights = self.frequency[unique] * self.rng.uniform(0.5, 1.5, size=len(unique))
        priors = (weights / weights.sum()).tolist()
        return alias, [self.ids[r] for r in unique], priors


def build_synthetic_kb(n: int, aliases_per_entity: float, seed: int) -> Tuple[Any, SyntheticKB, float, float]:
    """A :class:`SyntheticKB` of ``n`` entities built with ``KBBuilder.build(fuzzy=True)``.
    RETURNS: (the KB, its data, ingest seconds, build seconds)."""
    from spacy_el.kb import KBBuilder

    t0 = time.perf_counter()
    data = SyntheticKB(n, aliases_per_entity, seed)
    log(f"synthetic KB: {n:,} entities, {len(data.alias_rows):,} aliases in {time.perf_counter() - t0:.1f} s")
    builder = KBBuilder()
    t0 = time.perf_counter()
    for i in range(n):
        builder.add_entity(
            data.ids[i], name=data.names[i], description=data.descriptions[i],
            types=(TYPES[data.types[i]],), frequency=float(data.frequency[i]),
        )
    ingest_s = time.perf_counter() - t0
    items = list(data.alias_rows.items())
    for start in range(0, len(items), 100_000):  # arguments are prepared outside the timed loop
        chunk = [data.alias_args(alias, rows) for alias, rows in items[start : start + 100_000]]
        t0 = time.perf_counter()
        for alias, ids, priors in chunk:
            builder.add_alias(alias, ids, priors)
        ingest_s += time.perf_counter() - t0
    del items, chunk
    log(f"ingest (add_entity + add_alias) {ingest_s:.1f} s")
    t0 = time.perf_counter()
    kb = builder.build(fuzzy=True)
    build_s = time.perf_counter() - t0
    del builder
    gc.collect()
    log(f"KBBuilder.build(fuzzy=True) {build_s:.1f} s: {kb}")
    return kb, data, ingest_s, build_s


def run_kb(n: int, aliases_per_entity: float, seed: int, tmp_dir: Path) -> List[Row]:
    dataset = f"synthetic-{size_label(n)}-kb"
    kb, data, ingest_s, build_s = build_synthetic_kb(n, aliases_per_entity, seed)
    entity_bytes = sum(kb.entities.memory_usage().values())
    alias_usage = kb.aliases.memory_usage()
    alias_bytes = sum(alias_usage.values())
    n_cands = int(len(kb.aliases.cand_entities))
    fuzzy_bytes = sum(v for k, v in alias_usage.items() if "fuzzy" in k or "ngram" in k)
    rows = [
        row("el_kb", dataset, "ingest_s", ingest_s, f"{n:,} add_entity + {kb.n_aliases:,} add_alias calls"),
        row("el_kb", dataset, "build_s", build_s, "KBBuilder.build(fuzzy=True)"),
        row("el_kb", dataset, "bytes_per_entity", entity_bytes / kb.n_entities,
            f"entity store, no vectors; {entity_bytes / 1e6:.0f} MB"),
        row("el_kb", dataset, "bytes_per_alias", alias_bytes / kb.n_aliases,
            f"alias table incl. {n_cands / kb.n_aliases:.2f} candidates/alias and trigram index "
            f"({fuzzy_bytes / 1e6:.0f} of {alias_bytes / 1e6:.0f} MB)"),
    ]
    rows += kb_io_rows(kb, tmp_dir / "kb", dataset)
    rows += lookup_rows(kb, data, dataset)
    log_rows(rows)
    return rows


def kb_io_rows(kb: Any, path: Path, dataset: str) -> List[Row]:
    from spacy_el.kb import ElKnowledgeBase

    t0 = time.perf_counter()
    kb.to_disk(path)
    save_s = time.perf_counter() - t0
    disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    t0 = time.perf_counter()
    loaded = ElKnowledgeBase.load(path, mmap=True, verify=False)
    load_s = time.perf_counter() - t0
    assert loaded.n_aliases == kb.n_aliases
    del loaded
    shutil.rmtree(path, ignore_errors=True)
    return [
        row("el_kb", dataset, "disk_bytes", int(disk), f"to_disk took {save_s:.1f} s (incl. SHA-256)"),
        row("el_kb", dataset, "load_s", load_s, "ElKnowledgeBase.load(mmap=True, verify=False)"),
    ]


def lookup_queries(kb: Any, data: SyntheticKB, n: int, rng: np.random.Generator) -> Dict[str, List[str]]:
    """Mentions that hit each lookup tier: stored aliases, case/article variants, one-letter typos of
    names, and random letter strings (unknown: the fuzzy tier runs and finds nothing)."""
    from spacy_el.kb import normalize_alias

    aliases = list(data.alias_rows)
    exact = [aliases[i] for i in rng.integers(0, len(aliases), size=n)]
    normalized = [a.upper() if a.upper() != a else f"The {a}" for a in exact]
    normalized = [q for q in normalized if not kb.aliases.exact_rows(q)]
    fuzzy = []
    while len(fuzzy) < n:
        name = data.names[int(rng.integers(0, len(data.names)))]
        pos = int(rng.integers(2, len(name) - 2))
        if not name[pos].isalpha():
            continue
        typo = name[:pos] + ("x" if name[pos] != "x" else "q") + name[pos + 1 :]
        if not kb.aliases.normalized_rows(normalize_alias(typo)):
            fuzzy.append(typo)
    letters = np.array(list("bcdfghjklmnpqrstvwxz"))
    unknown = ["".join(rng.choice(letters, size=6)) + " " + "".join(rng.choice(letters, size=7)) for _ in range(n)]
    return {"exact": exact, "normalized": normalized, "fuzzy": fuzzy, "unknown": unknown}


def lookup_rows(
    kb: Any, data: SyntheticKB, dataset: str, n: int = 5000, top_k: int = 30, budget_s: float = 20.0
) -> List[Row]:
    """Per-call ``kb.lookup`` latency by tier: up to ``n`` queries or ``budget_s`` seconds per tier."""
    rng = np.random.default_rng(1)
    rows = []
    for tier, queries in lookup_queries(kb, data, n, rng).items():
        for q in queries[:50]:  # warm-up
            kb.lookup(q, top_k=top_k)
        times: List[float] = []
        tiers, n_hits = [], []
        deadline = time.perf_counter() + budget_s
        for q in queries:
            if time.perf_counter() > deadline:
                break
            t0 = time.perf_counter_ns()
            hits = kb.lookup(q, top_k=top_k)
            times.append((time.perf_counter_ns() - t0) / 1e3)
            tiers.append(hits[0].match if hits else "none")
            n_hits.append(len(hits))
        expected = "none" if tier == "unknown" else tier
        share = sum(t == expected for t in tiers) / len(tiers)
        outcome = "found nothing" if tier == "unknown" else f"answered by the {tier} tier"
        p95 = float(np.percentile(times, 95))
        rows.append(row(
            "el_kb", dataset, f"lookup_us_{tier}", statistics.median(times),
            f"median of {len(times):,} kb.lookup(top_k={top_k}); mean {statistics.fmean(times):.0f}, "
            f"p95 {p95:.0f} us; {share:.0%} {outcome}; {statistics.fmean(n_hits):.1f} candidates on average",
        ))
    return rows


def main() -> None:
    args = parse_args()
    n = 20_000 if args.quick else args.n_entities
    n_queries = min(args.n_queries, 256) if args.quick else args.n_queries
    full_run = n == 1_000_000 and args.out is None and not (args.skip_kb or args.skip_faiss)
    smoke_out = ROOT / "benchmarks" / "tmp" / f"kb_scale_{size_label(n)}.json"
    out = Path(args.out) if args.out else RESULTS_DIR / "kb_scale.json" if full_run else smoke_out
    tmp_dir = ROOT / "benchmarks" / "tmp" / "kb_scale"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    if args.threads:
        faiss.omp_set_num_threads(args.threads)  # explicit request only; the default leaves FAISS alone
    threads = faiss.omp_get_max_threads()
    log(f"n_entities={n:,} queries={n_queries} faiss threads={threads} load={os.getloadavg()}")
    t_start = time.perf_counter()
    rows: List[Row] = []
    if not args.skip_kb:
        rows += run_kb(n, args.aliases_per_entity, args.seed, tmp_dir)
        gc.collect()
    if not args.skip_faiss:
        rows += run_faiss(n, n_queries, args.seed, tmp_dir, threads)
    shutil.rmtree(tmp_dir, ignore_errors=True)
    write_results(out, COMMAND, rows)
    log(f"done in {(time.perf_counter() - t_start) / 60:.1f} min; wrote {out}")
    write_tables(out)  # published only when out is the published results file


@published_only
def write_tables(out: Path = RESULTS_DIR / "kb_scale.json") -> None:
    """The docs tables from the JSON (two pivot tables: dense index, KB; then every row)."""
    dense = results_to_markdown(out, pivot=True, notes=False, select=lambda r: r["system"].startswith("faiss"))
    kb = results_to_markdown(out, pivot=True, notes=False, select=lambda r: not r["system"].startswith("faiss"))
    updated = update_readme_section(PAGES["kb_scale"], "kb_scale", f"{dense}\n{kb}")
    log(f"{'updated' if updated else 'no kb_scale markers in'} {PAGES['kb_scale']}")
    update_readme_section(PAGES["kb_scale_details"], "kb_scale_details", results_to_markdown(out, pivot=False, notes=True))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-entities", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="20k entities, 256 queries (smoke check)")
    parser.add_argument("--n-queries", type=int, default=1024)
    parser.add_argument("--aliases-per-entity", type=float, default=3.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="FAISS OpenMP threads (0: FAISS's default)")
    parser.add_argument("--skip-kb", action="store_true")
    parser.add_argument("--skip-faiss", action="store_true")
    parser.add_argument("--out", default=None, help="results JSON (default: see module docstring)")
    return parser.parse_args()


if __name__ == "__main__":
    main()

"""Candidate recall and speed of the three generators: alias, dense and hybrid (docs/candidates.md, which describes
the systems and datasets).

    python -m benchmarks.candidates --kb kb/eval --encoder training/mention_encoder/best \
        --variant fast=training/mention_encoder_fast/best

``--variant NAME=FOLDER`` adds another encoder's ``dense_NAME``, ``hybrid_NAME`` and
``hybrid_NAME_skip_confident_hnsw`` systems; ``_hnsw`` systems search an HNSW32 index of the KB's vectors.
"""
import argparse
import dataclasses
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import spacy
import torch
from spacy.tokens import Doc, Span

from spacy_el.candidates import AliasCandidates, DenseCandidates, HybridCandidates, MentionCandidates
from spacy_el.candidates.held_out import held_out_of
from spacy_el.corpora import read_aida, read_gum
from spacy_el.corpora.qid_titles import elevant_title_docs, qid_title_map
from spacy_el.extensions import is_linked
from spacy_el.kb import ElKnowledgeBase
from spacy_el.kb.dense_index import DenseIndex
from spacy_el.candidates.mention_encoder import MentionEncoder
from spacy_el.scoring.candidates import candidate_recall_at_k

from .common import ELEVANT_SETS, MENTION_ENCODER, SHARED_DATA, timed
from .results_io import RESULTS_DIR, ROOT, row, write_results

COMMAND = "python -m spacy project run bench-candidates projects/candidates"
KS = (1, 10, 30, 100)
DEPTH = 100  # each list is read this deep, so that recall@100 is defined for every generator
TMP = ROOT / "benchmarks" / "tmp"  # git-ignored
SKIP_PRIOR = 0.9  # skip_dense_above of the _skip_confident systems
# The HNSW graph's candidate-list size while building: FAISS's default of 40 builds faster, 200 a finer graph,
# whose search agrees more often with the exact one.
HNSW_EF_CONSTRUCTION = 200
# Its candidate-list size while searching (--hnsw-ef-search): against DenseIndex's default of 128, 64 kept
# hybrid_fast_skip_confident_hnsw's AIDA test recall@30 (0.934) and lost 0.004 on GUM test (0.556 against 0.560;
# the results at 9945b87 were measured with 128), in less time.
HNSW_EF_SEARCH = 64


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


def held_out_rows(data: Path, kb: ElKnowledgeBase, limit: int) -> List[Dict]:
    """Alias recall on AIDA train's gold mentions with in-sample and with held-out priors (module docstring)."""
    train = read_aida(data / "aida", splits=("train",))["train"][:limit or None]
    spans, golds = gold_spans(train)
    alias = AliasCandidates(top_k=DEPTH)
    in_sample = alias(kb, spans)
    held_out = alias(kb, spans, held_out=held_out_of(kb, spans))
    return (recall_rows("alias", "aida-train", ranked_ids(kb, in_sample), golds, "priors counting every training mention")
            + recall_rows("alias_held_out", "aida-train", ranked_ids(kb, held_out), golds,
                          "each document's own mentions taken out of the priors"))


def ranked_ids(kb: ElKnowledgeBase, lists: Sequence[MentionCandidates]) -> List[List[str]]:
    return [found.ids(kb) for found in lists]


def recall_rows(system: str, dataset: str, ranked: List[List[str]], golds: List[str], notes: str) -> List[Dict]:
    name, _, suffix = dataset.partition(":")
    system = f"{system}_{suffix}" if suffix else system
    scores = candidate_recall_at_k(ranked, golds, KS)
    return [row(system, name, metric, round(value, 4), notes) for metric, value in scores.items()] + [
        row(system, name, "mentions", len(golds), notes)
    ]


class EncoderSetup(NamedTuple):
    """One mention encoder under test: its KB objects (which carry it) and its generators by system name."""
    kb: ElKnowledgeBase
    dense: DenseCandidates
    hybrids: Dict[str, HybridCandidates]  # system name -> hybrid over this encoder
    hnsw_kb: Optional[ElKnowledgeBase]  # the KB with the approximate index, for the ``_hnsw`` systems

    def kb_of(self, system: str) -> ElKnowledgeBase:
        return self.hnsw_kb if system.endswith("_hnsw") else self.kb


def encoder_with_batching(folder: Path, label: str, mentions_per_batch: int, windows_per_batch: int) -> Path:
    """A copy of the encoder at ``folder`` with the given batching, saved under benchmarks/tmp/ (git-ignored):
    batching is a runtime choice, and every encoder of one run is timed with the same one."""
    encoder = MentionEncoder.load(folder)
    encoder.settings = dataclasses.replace(
        encoder.settings, mentions_per_batch=mentions_per_batch, windows_per_batch=windows_per_batch,
    )
    out = TMP / f"mention_encoder_{label}"
    encoder.save(out)
    return out


def encoder_setup(kb_dir: Path, encoder: Path, suffix: str, hnsw: Optional[DenseIndex]) -> EncoderSetup:
    """The dense generator over ``encoder`` and its hybrids, each on a KB object of its own: for the default encoder
    (suffix "") ``hybrid``, ``hybrid_skip_confident`` and, with ``hnsw``, ``hybrid_hnsw``; for a ``--variant`` one
    ``hybrid{suffix}`` and, with ``hnsw``, ``hybrid{suffix}_skip_confident_hnsw``, its fastest setting. ``_hnsw``
    systems search a KB object of their own that holds the ``hnsw`` index."""
    kb = ElKnowledgeBase.load(kb_dir)  # its own objects: each KB object carries one mention encoder
    hnsw_kb = None
    if hnsw is not None:
        hnsw_kb = ElKnowledgeBase.load(kb_dir)
        hnsw_kb.set_dense_index(hnsw)  # one index, built once, shared by every encoder's HNSW KB
    dense = DenseCandidates(top_k=DEPTH, encoder=encoder)
    dense.prepare(kb)

    def hybrid(skip: Optional[float] = None) -> HybridCandidates:
        return HybridCandidates(AliasCandidates(top_k=30), DenseCandidates(top_k=30, encoder=encoder), top_k=DEPTH,
                                skip_dense_above=skip)

    hybrids = {f"hybrid{suffix}": hybrid()}
    if not suffix:
        hybrids["hybrid_skip_confident"] = hybrid(SKIP_PRIOR)
    if hnsw is not None:
        hybrids[f"hybrid{suffix}_skip_confident_hnsw" if suffix else "hybrid_hnsw"] = hybrid(SKIP_PRIOR) if suffix else hybrid()
    return EncoderSetup(kb, dense, hybrids, hnsw_kb)


def named_folder(text: str) -> Tuple[str, Path]:
    """``NAME=FOLDER`` of ``--variant``."""
    name, sep, folder = text.partition("=")
    if not sep or not name.isidentifier() or not folder:
        raise argparse.ArgumentTypeError(f"expected NAME=FOLDER (NAME a word, e.g. fast=training/mention_encoder_fast/best), got {text!r}")
    return name, Path(folder)


def generator_lists(
    spans: List[Span], alias: AliasCandidates, encoders: Dict[str, EncoderSetup],
) -> Dict[str, List[MentionCandidates]]:
    """Each system's lists for ``spans``; every encoder reads each mention once (its dense and hybrid
    systems share its vectors; ``_hnsw`` systems search the HNSW index with the same vectors)."""
    lists = {"alias": alias(next(iter(encoders.values())).kb, spans)}
    for label, setup in encoders.items():
        vectors = setup.dense.encode(setup.kb, spans)
        scores, rows = setup.dense.search(setup.kb, vectors, DEPTH)
        lists[label] = [
            MentionCandidates.from_lists(r[r >= 0], np.zeros((r >= 0).sum()), -np.ones((r >= 0).sum()), s[r >= 0], s[r >= 0])
            for s, r in zip(scores, rows)
        ]
        for name, hybrid in setup.hybrids.items():
            kb = setup.kb_of(name)
            fused_alias = hybrid.alias(kb, spans)
            lists[name] = hybrid.fuse(kb, fused_alias, vectors, hybrid.needs_dense(spans, fused_alias))
    return lists


#: Timed calls per generator; the fastest counts (the others absorb the machine's noise).
ROUNDS = 3


def speed_rows(spans: List[Span], generators: Dict[str, Tuple[ElKnowledgeBase, object]]) -> List[Dict]:
    """mentions/s of each generator on the same mentions: the fastest of ``ROUNDS`` calls, after a warm-up
    call. The rounds go over every generator in turn, so that a slow spell of the machine falls on one call
    of several generators rather than on every call of one."""
    for kb, generator in generators.values():
        generator(kb, spans[:32])
    seconds = {name: float("inf") for name in generators}
    for _ in range(ROUNDS):
        for name, (kb, generator) in generators.items():
            seconds[name] = min(seconds[name], timed(lambda: generator(kb, spans))[1])
    notes = f"{len(spans)} AIDA test gold mentions in one call, best of {ROUNDS} rounds, {torch.get_num_threads()} torch threads"
    return [row(name, "aida-test", "mentions_per_s", round(len(spans) / value, 1), notes) for name, value in seconds.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, default=ROOT / "kb" / "eval")
    parser.add_argument("--encoder", type=Path, default=MENTION_ENCODER)
    parser.add_argument("--variant", type=named_folder, action="append", default=[], metavar="NAME=FOLDER",
                        help="another mention encoder (fewer layers, windows without overlap, ...): the _NAME systems")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "candidates.json")
    parser.add_argument("--limit", type=int, default=0, help="first N documents per dataset (0: all; smoke runs)")
    parser.add_argument("--speed-mentions", type=int, default=2000)
    parser.add_argument("--hnsw", default="HNSW32", help="FAISS factory of the approximate index (the _hnsw systems); '' for none")
    parser.add_argument("--hnsw-ef-construction", type=int, default=HNSW_EF_CONSTRUCTION,
                        help="its candidate-list size while building")
    parser.add_argument("--hnsw-ef-search", type=int, default=HNSW_EF_SEARCH,
                        help="its candidate-list size while searching (DenseIndex's default: 128)")
    parser.add_argument("--no-zeroshot", action="store_true", help="skip the untrained encoder's rows")
    args = parser.parse_args()
    torch.set_num_threads(2)
    kb = ElKnowledgeBase.load(args.kb)
    hnsw: Optional[DenseIndex] = None
    rows: List[Dict] = []
    if args.hnsw:
        hnsw, build_row = approximate_index(kb, args.hnsw, args.hnsw_ef_construction, args.hnsw_ef_search)
        rows.append(build_row)
    batching = {"mentions_per_batch": 1024, "windows_per_batch": 32}
    encoders = {"dense": encoder_setup(args.kb, encoder_with_batching(args.encoder, "default", **batching), "", hnsw)}
    for name, folder in args.variant:
        encoders[f"dense_{name}"] = encoder_setup(args.kb, encoder_with_batching(folder, name, **batching), f"_{name}", hnsw)
    if not args.no_zeroshot:
        zeroshot_dir = TMP / "mention_encoder_zeroshot"
        MentionEncoder.from_base(entity_encoder=kb.vectors_encoder, **batching).save(zeroshot_dir)
        encoders["dense_zeroshot"] = EncoderSetup(ElKnowledgeBase.load(args.kb), DenseCandidates(top_k=DEPTH, encoder=zeroshot_dir), {}, None)
    alias = AliasCandidates(top_k=DEPTH)
    data = datasets(args.data, kb, args.limit)
    for dataset, (spans, golds) in data.items():
        print(f"{dataset}: {len(spans)} mentions")
        for label, lists in generator_lists(spans, alias, encoders).items():
            notes = "untrained MiniLM" if label == "dense_zeroshot" else "gold mentions"
            rows += recall_rows(label, dataset, ranked_ids(kb, lists), golds, notes)
    spans = data["aida-test"][0][: args.speed_mentions]
    generators = timed_generators(kb, {label: s for label, s in encoders.items() if label != "dense_zeroshot"})
    rows += speed_rows(spans, generators)
    rows += held_out_rows(args.data, kb, args.limit)
    write_results(args.out, COMMAND, rows)


def approximate_index(kb: ElKnowledgeBase, factory: str, ef_construction: int, ef_search: int) -> Tuple[DenseIndex, Dict]:
    """An index of ``factory`` over the KB's vectors, built in memory, and the row of its build time."""
    index = DenseIndex(kb.entities.vector_dim, factory=factory, ef_construction=ef_construction, ef_search=ef_search)
    _, seconds = timed(lambda: index.add(np.ascontiguousarray(kb.entities.vectors, dtype=np.float32)))
    return index, row(factory.lower(), "eval-kb", "index_build_s", round(seconds, 1),
                      f"{kb.n_entities} entity vectors, ef_construction {ef_construction}, ef_search {ef_search}, "
                      f"{torch.get_num_threads()} threads")


def timed_generators(kb: ElKnowledgeBase, encoders: Dict[str, EncoderSetup]) -> Dict[str, Tuple[ElKnowledgeBase, object]]:
    """system -> (KB, generator as a linker calls it) for the speed rows: the alias table, then every encoder's
    dense and hybrid systems."""
    generators: Dict[str, Tuple[ElKnowledgeBase, object]] = {"alias": (kb, AliasCandidates(top_k=30))}
    for label, setup in encoders.items():
        generators[label] = (setup.kb, speed_dense(setup.dense))
        for name, hybrid in setup.hybrids.items():
            # ``hybrid`` as a linker uses it: top 30, and its encoder as :func:`speed_dense` gives it
            generators[name] = (setup.kb_of(name), HybridCandidates(AliasCandidates(top_k=30), speed_dense(hybrid.dense),
                                                                    top_k=30, skip_dense_above=hybrid.skip_dense_above))
    return generators


def speed_dense(dense: DenseCandidates) -> DenseCandidates:
    """``dense``'s encoder as a linker uses it: top 30, no cache (each call reads its mentions)."""
    return DenseCandidates(top_k=30, encoder=dense.encoder_path, cache_size=0)


if __name__ == "__main__":
    main()

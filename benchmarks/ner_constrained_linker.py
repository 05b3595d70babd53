"""NER4EL ablation: the ner_constrained_linker variants beside ``prior_only`` and spaCy's entity_linker, on the
evaluation KB and alias-table candidates (top 30); the systems are on docs/ner_constrained_linker.md.

    python -m benchmarks.ner_constrained_linker [--variant hybrid]   # --variant: <models>/all_hybrid alone

``--variant NAME`` scores ``ner4el_all`` trained another way (``<models>/all_<NAME>``) as ``ner4el_all_<NAME>``, with
the dev sweep's soft-decoding weight; runs merge their rows into the results file. The ``ner4el_all_bf16`` rows are
this module at 40bafb1 (studies/training_speed/); the variants' studies are in ``studies/ner_constrained_linker/``.
"""
import argparse
import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span

from spacy_el.extensions import is_linked
from spacy_el.scoring import ed_accuracy, el_scores
from spacy_el.scoring.candidates import candidate_recall_at_k

from .baselines import gold_links, link_with_prior, predicted_links, with_gold_mentions
from .common import AIDA_CORPUS, EL_BASELINE, SHARED_DATA, aida_and_elevant, fix_tie_breaks, timed
from .results_io import RESULTS_DIR, ROOT, Row, row, write_merged

COMMAND = "python -m spacy project run ner4el-benchmark projects/ner_constrained_linker"
BATCH_SIZE = 64
PIPE = "ner_constrained_linker"
# Wikidata classes in ELEVANT label types -> CoNLL types, checked in this order: a country is both a
# geographic entity and an organisation in Wikidata, and LOC in CoNLL.
ELEVANT_TYPES = (("Q215627", "PER"), ("Q5", "PER"), ("Q27096213", "LOC"), ("Q43229", "ORG"))


def coarse_label(elevant_type: str) -> str:
    classes = set(elevant_type.split("|"))
    return next((label for qid, label in ELEVANT_TYPES if qid in classes), "MISC")


def relabel_coarse(docs: List[Doc]) -> List[Doc]:
    for doc in docs:
        doc.ents = [Span(doc, e.start, e.end, coarse_label(e.label_), kb_id=e.kb_id_) for e in doc.ents]
    return docs


def ed(gold: List[Doc], pred: List[Doc]) -> float:
    return round(ed_accuracy([(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)]), 4)


# Inference settings every variant starts from (a trained pipeline's own cfg may differ); the variants
# below change only their own switches.
#: Every setting a variant may change, at its default: configure() starts each variant from these, so that a setting
#: of one variant (e.g. another's similarity_weight on a shared model) never carries over to the next.
INFERENCE_DEFAULTS = {"candidates_per_mention": 30, "type_aware_selection": False, "decoding": "none", "min_type_prob": 0.2,
                      "soft_weight": 1.0, "mention_type_source": "label", "min_link_prob": None, "similarity_weight": 0.0}


def configure(nlp: Language, **cfg) -> None:
    nlp.get_pipe(PIPE).configure(**{**INFERENCE_DEFAULTS, **cfg})


Variant = Tuple[str, str, Dict]
#: The ablation: (system, model folder, inference settings).
VARIANTS: List[Variant] = [
    ("ner4el_baseline", "baseline", {}),
    ("ner4el_types_repr", "types_repr", {}),
    ("ner4el_selection", "selection", {"type_aware_selection": True}),
    ("ner4el_negatives", "negatives", {}),
    ("ner4el_decoding", "baseline", {"decoding": "soft"}),
    ("ner4el_decoding_hard", "baseline", {"decoding": "hard"}),
    ("ner4el_all", "all", {"type_aware_selection": True, "decoding": "soft"}),
]
ALL = VARIANTS[-1][2]


def variant_rows(
    system: str, nlp: Language, cfg: Dict, data: Dict[str, List[Doc]], note: str,
    recall: Optional[Dict[str, float]] = None,
) -> List[Row]:
    """ED accuracy on each dataset; ``recall``: per dataset, the candidate recall@30 to state in the note."""
    configure(nlp, **cfg)
    rows = []
    for dataset, gold in data.items():
        pred = with_gold_mentions(nlp, gold, [PIPE])
        extra = f"; cand_recall_at_30={recall[dataset]:.3f}" if recall and dataset in recall else ""
        rows.append(row(system, dataset, "ed_accuracy", ed(gold, pred), f"gold mentions; {note}{extra}"))
    return rows


SOFT_WEIGHTS = (0.25, 0.5, 1.0, 2.0)


def select_soft_weight(nlp: Language, dev: List[Doc]) -> Tuple[float, List[Row]]:
    """The soft-decoding weight with the best AIDA dev accuracy on the baseline model (paper: tuned on dev)."""
    rows, best = [], (-1.0, SOFT_WEIGHTS[0])
    for weight in SOFT_WEIGHTS:
        configure(nlp, decoding="soft", soft_weight=weight)
        accuracy = ed(dev, with_gold_mentions(nlp, dev, [PIPE]))
        rows.append(row("ner4el_decoding", "aida-dev", f"ed_accuracy_soft_weight_{weight}", accuracy, "dev sweep, baseline model"))
        best = max(best, (accuracy, weight), key=lambda pair: pair[0])
    configure(nlp)
    return best[1], rows


def end_to_end_row(system: str, nlp: Language, gold: List[Doc], note: str) -> Row:
    pred = list(nlp.pipe([d.text for d in gold], batch_size=BATCH_SIZE))
    scores = el_scores([(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)])
    return row(system, "aida-test", "el_micro_f", round(scores["el_micro_f"], 4), f"spacy_ner mentions; {note}")


def selected_recall(nlp: Language, gold: List[Doc], ks: Sequence[int], selection: bool) -> Dict[int, float]:
    """Recall@k of the lists the linker scores: its generator's candidates of the gold linked mentions cut
    to ``k`` (``selection``: compatible types first), for each k of ``ks``."""
    pipe = nlp.get_pipe(PIPE)
    spans = [e for doc in gold for e in doc.ents if is_linked(e.kb_id_)]
    generated = pipe.candidates(pipe.kb, spans)
    ids = pipe.kb.entities.ids
    recall = {}
    for k in ks:
        configure(nlp, candidates_per_mention=k, type_aware_selection=selection)
        ranked = [[ids[int(r)] for r in pipe.selector.select(found, pipe.inventory.mention_label(span.label_)).rows]
                  for span, found in zip(spans, generated)]
        recall[k] = candidate_recall_at_k(ranked, [span.kb_id_ for span in spans], [k])[f"cand_recall_at_{k}"]
    configure(nlp)
    return recall


def recall_rows(nlp: Language, gold: List[Doc], generator: str = "alias") -> List[Row]:
    """Candidate recall of the linker's lists on AIDA test, without and with type-aware selection (rows
    ``alias_table_top_k`` and ``type_aware_selection``, or for another ``generator`` ``<generator>_top_k`` and
    ``<generator>_type_aware_selection``)."""
    rows = []
    systems = ("alias_table_top_k", "type_aware_selection") if generator == "alias" else (
        f"{generator}_top_k", f"{generator}_type_aware_selection")
    for selection, system in zip((False, True), systems):
        for k, recall in selected_recall(nlp, gold, (1, 10, 30), selection).items():
            rows.append(row(system, "aida-test", f"cand_recall_at_{k}", round(recall, 4), "gold mentions, CoNLL types"))
    return rows


def entity_typing_row(nlp: Language, held_out: float = 0.1, seed: int = 0) -> Row:
    """Accuracy (most probable type) of the entity-typing classifier on held-out KB-typed entities."""
    import numpy as np

    from spacy_el.kb.type_inventory import known_type_mass
    from spacy_el.ml.ner_constrained_linker.entity_typing import train_type_classifier

    pipe = nlp.get_pipe(PIPE)
    mass = known_type_mass(pipe.kb, pipe.inventory)
    known_rows = np.flatnonzero(mass.sum(axis=1) > 0)
    rng = np.random.default_rng(seed)
    test_rows = rng.choice(known_rows, size=int(held_out * len(known_rows)), replace=False)
    train = np.zeros(pipe.kb.n_entities, dtype=bool)
    train[known_rows] = True
    train[test_rows] = False
    targets = mass[train] / mass[train].sum(axis=1, keepdims=True)
    predicted = train_type_classifier(np.asarray(pipe.kb.entities.vectors), train, targets, epochs=200, seed=seed, progress=False)
    predicted_rows = np.flatnonzero(~train)
    position = {row: i for i, row in enumerate(predicted_rows.tolist())}
    hits = [np.argmax(predicted[position[r]]) == np.argmax(mass[r]) for r in test_rows.tolist()]
    note = f"{len(test_rows)} held-out entities with KB types ({held_out:.0%}); {pipe.inventory.name} inventory"
    return row("entity_typing_classifier", "eval-kb", "type_accuracy", round(float(np.mean(hits)), 4), note)


def speed_row(system: str, nlp: Language, gold: List[Doc], threads: int) -> Row:
    docs = with_gold_mentions(nlp, gold, [])
    n_mentions = sum(len(d.ents) for d in docs)
    pipe = nlp.get_pipe(PIPE)
    _, seconds = timed(lambda: list(pipe.pipe(docs, batch_size=BATCH_SIZE)))
    return row(system, "aida-test", "mentions_per_s", round(n_mentions / seconds), f"component.pipe batch_size={BATCH_SIZE} docs, {threads} thread(s), CPU, gold mentions")


def peer_rows(args: argparse.Namespace, data: Dict[str, List[Doc]], kb) -> List[Row]:
    rows = []
    el_nlp = spacy.load(args.el_model)
    for dataset, gold in data.items():
        prior_docs = with_gold_mentions(el_nlp, gold, [])
        link_with_prior(kb, prior_docs)
        rows.append(row("prior_only", dataset, "ed_accuracy", ed(gold, prior_docs), "gold mentions; top prior"))
        el_docs = with_gold_mentions(el_nlp, gold, ["sentencizer", "entity_linker"])
        rows.append(row("spacy_entity_linker", dataset, "ed_accuracy", ed(gold, el_docs), "gold mentions; configs/baselines/entity_linker.cfg"))
    rows.append(end_to_end_row("spacy_entity_linker", el_nlp, data["aida-test"], "configs/baselines/entity_linker.cfg"))
    return rows


def recorded_soft_weight(results: Path) -> Optional[float]:
    """The soft-decoding weight an earlier full run chose: the best of its dev sweep rows (None without them)."""
    if not results.exists():
        return None
    sweep = [(r["value"], float(r["metric"].rsplit("_", 1)[1])) for r in json.loads(results.read_text(encoding="utf8"))["rows"]
             if r["system"] == "ner4el_decoding" and r["dataset"] == "aida-dev" and r["metric"].startswith("ed_accuracy_soft_weight_")]
    return max(sweep, key=lambda pair: pair[0])[1] if sweep else None


def evaluate(args: argparse.Namespace) -> List[Row]:
    """The ablation, the peers and ner4el_all's end-to-end F1, speed and recall; with ``--variant``, that one model."""
    torch.set_num_threads(args.threads)
    models: Dict[str, Language] = {}

    def model(name: str) -> Language:
        if name not in models:
            models[name] = spacy.load(args.models / name / "model-best")
        return models[name]

    if args.variant:
        return variant_rows_of(args, model(f"all_{args.variant}"))
    kb = model("baseline").get_pipe(PIPE).kb
    data = aida_and_elevant(args.corpus, args.data, model("baseline"), kb, args.limit, elevant=relabel_coarse)
    soft_weight, rows = select_soft_weight(model("baseline"), data["aida-dev"])
    for system, name, cfg in VARIANTS:
        cfg = {**cfg, "soft_weight": soft_weight} if cfg.get("decoding") == "soft" else cfg
        rows += variant_rows(system, model(name), cfg, data, f"training/ner4el/{name}" + (f" + {cfg}" if cfg else ""))
    all_cfg = {**ALL, "soft_weight": soft_weight}
    for system, name, cfg in (("ner4el_all", "all", all_cfg), ("ner4el_baseline", "baseline", {})):
        configure(model(name), **cfg)
        rows.append(end_to_end_row(system, model(name), data["aida-test"], f"training/ner4el/{name}"))
    configure(model("baseline"))
    rows += recall_rows(model("baseline"), data["aida-test"])
    rows.append(entity_typing_row(model("baseline")))
    configure(model("all"), **all_cfg)
    rows.append(speed_row("ner4el_all", model("all"), data["aida-test"], args.threads))
    return rows + peer_rows(args, data, kb)


def variant_rows_of(args: argparse.Namespace, nlp: Language) -> List[Row]:
    """``--variant``'s rows: ner4el_all's settings (the soft weight of the results file's dev sweep) on a model
    trained another way, with its own candidates' recall after type-aware selection."""
    soft_weight = recorded_soft_weight(args.out)
    if soft_weight is None:
        raise SystemExit(f"{args.out} has no dev sweep of the soft-decoding weight: run the benchmark without --variant first")
    pipe = nlp.get_pipe(PIPE)
    data = aida_and_elevant(args.corpus, args.data, nlp, pipe.kb, args.limit, elevant=relabel_coarse)
    system, folder, cfg = f"ner4el_all_{args.variant}", f"training/ner4el/all_{args.variant}", {**ALL, "soft_weight": soft_weight}
    configure(nlp, **cfg)
    recall = {dataset: selected_recall(nlp, gold, (30,), True)[30] for dataset, gold in data.items()}
    note = f"{folder} + {cfg}; {pipe.candidates.name} candidates, recall after type-aware selection"
    rows = variant_rows(system, nlp, cfg, data, note, recall)
    configure(nlp, **cfg)
    rows.append(end_to_end_row(system, nlp, data["aida-test"], folder))
    rows.append(speed_row(system, nlp, data["aida-test"], args.threads))
    return rows + recall_rows(nlp, data["aida-test"], args.variant)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--corpus", type=Path, default=AIDA_CORPUS)
    parser.add_argument("--models", type=Path, default=ROOT / "training" / "ner4el")
    parser.add_argument("--el-model", type=Path, default=EL_BASELINE)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="docs per dataset (0 = all; for smoke tests only)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "ner_constrained_linker.json")
    parser.add_argument("--variant", default=None, help="score only ner4el_all trained another way: <models>/all_<variant>")
    args = parser.parse_args()
    fix_tie_breaks()
    command = COMMAND if not args.variant else f"python -m benchmarks.ner_constrained_linker --variant {args.variant}"
    write_merged(args.out, command, evaluate(args))


if __name__ == "__main__":
    main()

"""joint_coref_linker against its peers on the same test sets, in one run (docs/joint_coref_linker.md).

    python -m benchmarks.joint_coref_linker --data ../shared/data [--variant converged] [--datasets gum-test]

Models: ``<models>/<corpus>/<system>/model-best`` (``--models``, by default ``training/jcl``), or with ``--variant
NAME`` ``<models>/<corpus>-<NAME, - for _>/<system>/model-best`` and rows ``<system>_<NAME>``; a model that is
missing, or whose resumable training has not finished, is skipped with a message. GUM and AIDA+ test: Standalone,
the joint models and, on Global's mentions, the re-linking peers; OntoGUM and LitBank test: the coreference
resolvers per refinement. The systems and metrics are described on the docs page. A run's rows replace the earlier
rows of the same system, test set and metric in ``--out``.
"""
import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span

from spacy_el.candidates import AliasCandidates
from spacy_el.corpora.masked import is_text_masked
from spacy_el.corpora.stats import share_wider_than
from spacy_el.extensions import NIL, cluster_keys, is_linked
from spacy_el.scoring.candidates import has_own_candidate
from spacy_el.scoring.cluster_accuracy import cluster_accuracy_counts
from spacy_el.scoring.cluster_el import cluster_el_scores
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.coref_protocol import NO_SINGLETONS_METRIC, keeps_singletons
from spacy_el.scoring.hard_cases import HardCase, count_hard_cases, find_hard_cases
from spacy_el.scoring.scorers import cluster_groups, doc_clusters, doc_linked_clusters
from spacy_el.scoring.standalone import set_mention_links, standalone
from spacy_el.training.checkpoint import CHECKPOINTS
from spacy_el.training.resume import EVALUATIONS, FINISHED

from .common import (AIDA_CORPUS, EL_BASELINE, SHARED_DATA, best_evaluation, first, fix_tie_breaks, read_corpus,
                     read_evaluations, timed_pipe)
from .results_io import RESULTS_DIR, ROOT, Row, row, write_merged

NAME = "joint_coref_linker"
JOINT = ("local", "global", "global_ee", "global_ee_mean")
REFINEMENTS = ("none", "antecedent_averaging", "entity_equalization", "entity_equalization_mean")
DATASETS = ("gum-test", "aida-test", "ontogum-test", "litbank-test")
#: The dev scores of a learning curve (``pretrained`` reads its run's).
CURVE_METRICS = ("coref_avg_f", "elh_f")
#: The suffix of a metric scored on the documents that have their text (:func:`unmasked_rows`).
UNMASKED = "_unmasked"
Offsets = Tuple[int, int]
Hard = Sequence[Sequence[HardCase]]


# -- data and models ------------------------------------------------------------------------------
def read_split(data: Path, corpus: str, split: str, nlp: Language) -> Optional[List[Doc]]:
    """The ``split`` of ``corpus`` (``gum``, ``ontogum``, ``litbank``, ``aida``: AIDA+ from ``corpus/aida``) under
    ``data``; None where it is not on disk."""
    if corpus == "gum" and (data / "gum").exists():
        return read_corpus("spacy-el.GumReader.v1", nlp, path=data / "gum", split=split)
    if corpus == "ontogum" and (data / "gum").exists():
        return read_corpus("spacy-el.CorefConllReader.v1", nlp, path=data / "gum/coref/ontogum/conll", split=split,
                           splits_path=data / "gum" / "splits.md")
    if corpus == "litbank" and (data / "litbank").exists():
        return read_corpus("spacy-el.CorefConllReader.v1", nlp, path=data / "litbank/coref/conll", split=split,
                           splits_path=data / "litbank/splits.json")
    if corpus == "aida" and (AIDA_CORPUS / f"{split}.spacy").exists():
        return read_corpus("spacy-el.AidaPlusReader.v1", nlp, path=AIDA_CORPUS / f"{split}.spacy")
    return None


def load_datasets(args: argparse.Namespace, nlp: Language) -> Dict[str, List[Doc]]:
    """The test sets on disk (those of ``--datasets`` only, when given), each cut at ``--limit`` documents."""
    found: Dict[str, List[Doc]] = {}
    for corpus in ("gum", "ontogum", "litbank", "aida"):
        name = f"{corpus}-test"
        if not args.datasets or name in args.datasets:  # read only the test sets asked for
            docs = read_split(Path(args.data), corpus, "test", nlp)
            if docs is not None:
                found[name] = docs
    return first(found, args.limit)


def model_path(args: argparse.Namespace, corpus: str, system: str) -> Optional[Path]:
    """``model-best`` of ``system`` trained on ``corpus`` (in the ``--variant`` folder, when given); None, said on
    stdout, when it is missing or its training has not finished."""
    variant = getattr(args, "variant", None)
    run = Path(args.models) / (f"{corpus}-{variant.replace('_', '-')}" if variant else corpus) / system
    if (run / CHECKPOINTS).is_dir() and not (run / CHECKPOINTS / FINISHED).exists():  # model-best: the best so far
        print(f"  (skipped: the training in {run} has not finished; rerun its command to go on)")
        return None
    if (run / "model-best").exists():
        return run / "model-best"
    print(f"  (skipped: {run / 'model-best'} not found)")
    return None


def suffix(args: argparse.Namespace) -> str:
    """The rows' system-name suffix: ``_<variant>``, or nothing."""
    variant = getattr(args, "variant", None)
    return f"_{variant}" if variant else ""


def predict(nlp: Language, gold: Sequence[Doc], batch_size: int) -> Tuple[List[Doc], float]:
    """``nlp`` on the texts of ``gold``: the docs and the seconds it took."""
    return timed_pipe(nlp, [g.text for g in gold], batch_size)


def span_width_of(nlp: Language) -> int:
    """The ``max_span_width`` of ``nlp``'s joint_coref_linker model."""
    return int(nlp.get_pipe(NAME).model.attrs["max_span_width"])


def training_steps(nlp: Language) -> str:
    """A model's training for the rows' notes: ``"3,820 steps"`` from its config, and for a ``spacy_el train`` run
    (``evaluations.json`` beside ``model-best``) ``"1,337 of 2,865 steps (best on dev at step 955; 81.5 min)"``."""
    max_steps = nlp.config["training"]["max_steps"]
    evaluations = Path(nlp.path).parent / EVALUATIONS if nlp.path is not None else None
    best = best_evaluation(evaluations) if evaluations is not None else None
    if best is None:
        return f"{max_steps:,} steps"
    curve = read_evaluations(evaluations)
    last, minutes = curve[-1]["step"], curve[-1]["seconds"] / 60
    steps = f"{max_steps:,} steps" if not max_steps or last >= max_steps else f"{last:,} of {max_steps:,} steps"
    return f"{steps} (best on dev at step {best['step']:,}; {minutes:.1f} min)"


# -- the peers ------------------------------------------------------------------------------------
def relink(docs: List[Doc], link: Callable[[Doc, List[Span]], Dict[Offsets, str]]) -> List[Doc]:
    """Copies of ``docs`` in which every mention linked to a KB entity gets the link ``link`` gives it on its own;
    NIL mentions stay NIL (the peers take the model's mentions, clusters and NIL decisions)."""
    result = []
    for doc in docs:
        copy = doc.copy()
        linked = [s for k in cluster_keys(copy) for s in copy.spans[k] if is_linked(s.kb_id_)]
        links = link(copy, linked)
        set_mention_links(copy, lambda s: links.get((s.start, s.end), NIL) if is_linked(s.kb_id_) else s.kb_id_)
        result.append(copy)
    return result


def prior_links(kb) -> Callable[[Doc, List[Span]], Dict[Offsets, str]]:
    """Each mention's most probable candidate in the component's own alias-table tiers."""
    def link(doc: Doc, mentions: List[Span]) -> Dict[Offsets, str]:
        out = {}
        for span in mentions:
            hits = kb.lookup(span.text, top_k=1, fuzzy=False)
            out[(span.start, span.end)] = hits[0].entity_id if hits else NIL
        return out

    return link


def layers(mentions: List[Span]) -> List[List[Span]]:
    """Greedy partition of ``mentions`` into lists of non-overlapping spans (for doc.ents)."""
    result: List[List[Span]] = []
    for span in sorted(mentions, key=lambda s: (s.start, -s.end)):
        for layer in result:
            if layer[-1].end <= span.start:
                layer.append(span)
                break
        else:
            result.append([span])
    return result


def spacy_el_links(el_nlp: Language) -> Callable[[Doc, List[Span]], Dict[Offsets, str]]:
    """spaCy's ``entity_linker`` on the mentions, a layer of non-overlapping ones at a time, after the pipeline's
    other components but its NER; RETURNS: each mention's link by token offsets."""
    names = [n for n in el_nlp.pipe_names if n not in ("ner", "entity_linker")]

    def link(doc: Doc, mentions: List[Span]) -> Dict[Offsets, str]:
        # doc's own tokens, so that the mentions' token offsets hold whatever el_nlp's tokenizer does
        work = Doc(el_nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
        for name in names:
            work = el_nlp.get_pipe(name)(work)
        out = {}
        for layer in layers(mentions):
            work.ents = [Span(work, s.start, s.end, label="ENT") for s in layer]
            work = el_nlp.get_pipe("entity_linker")(work)
            out.update({(e.start, e.end): e.kb_id_ or NIL for e in work.ents})
        return out

    return link


# -- scoring --------------------------------------------------------------------------------------
def alias_hard_cases(kb, gold: Sequence[Doc], top_k: Optional[int]) -> List[List[HardCase]]:
    """The hard cases of ``gold`` for the ``top_k`` exact alias matches of each mention, as the paper's (and the
    component's default) candidates are."""
    def has_candidate(index: int, mentions: Sequence[Offsets], kb_id: str) -> List[bool]:
        return has_own_candidate(kb, [gold[index].char_span(*m).text for m in mentions], kb_id, top_k)

    return find_hard_cases([doc_linked_clusters(g) for g in gold], has_candidate)


def score_rows(system: str, dataset: str, gold: List[Doc], pred: List[Doc], note: str, hard: Optional[Hard] = None,
               keep_singletons: bool = True, max_span_width: Optional[int] = None) -> List[Row]:
    """Coreference rows; with ``hard`` (the test set's hard cases), also the EL rows; with the model's
    ``max_span_width``, also ``coref_mention_reachable``; where documents are text-masked, :func:`unmasked_rows`."""
    pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
    linked = None if hard is None else [(doc_linked_clusters(g), doc_linked_clusters(p)) for g, p in zip(gold, pred)]
    coref = coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")
    rows = [row(system, dataset, m, round(coref[m], 4), note)
            for m in ("coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_mention_r")]
    rows += unmasked_rows(system, dataset, [is_text_masked(g) for g in gold], pairs, linked, note, keep_singletons)
    if max_span_width is not None:
        rows.append(row(system, dataset, "coref_mention_reachable", reachable_share(gold, max_span_width, keep_singletons),
                        f"{note}; gold mentions no wider than max_span_width {max_span_width}"))
    if linked is None:
        return rows
    el = cluster_el_scores(linked)
    rows += [row(system, dataset, m, round(el[m], 4), note) for m in ("elm_f", "elh_f")]
    for group, (right, n) in cluster_accuracy_counts(linked).items():
        rows.append(row(system, dataset, f"cluster_accuracy_{group}", round(right / max(n, 1), 4), f"{note}; {n} gold clusters"))
    counts = count_hard_cases(hard, [p for _, p in linked])
    for metric, count in (("accuracy", "correct"), ("found", "found"), ("with_mate", "with_mate")):
        rows.append(row(system, dataset, f"hard_case_{metric}", round(counts[count] / max(counts["total"], 1), 4),
                        f"{note}; {counts['total']} mentions"))
    return rows


def unmasked_rows(system: str, dataset: str, masked: Sequence[bool], pairs: Sequence[Tuple[Any, Any]],
                  linked: Optional[Sequence[Tuple[Any, Any]]], note: str, keep_singletons: bool) -> List[Row]:
    """``coref_avg_f_unmasked`` (and, with the ``linked`` cluster pairs, ``elh_f_unmasked``): the scores over the
    documents that have their text, the text-masked ones (``masked``: GUM's Reddit documents) left out on both
    sides; none where no document is masked. What a model predicts on underscores is arbitrary."""
    if not any(masked):
        return []
    keep = [not m for m in masked]
    subset = f"{note}; the {sum(keep)} documents with text, the {len(keep) - sum(keep)} text-masked ones left out"
    coref = coref_scores([p for p, k in zip(pairs, keep) if k], keep_singletons=keep_singletons, on_overlap="first")
    rows = [row(system, dataset, f"coref_avg_f{UNMASKED}", round(coref["coref_avg_f"], 4), subset)]
    if linked is not None:
        el = cluster_el_scores([p for p, k in zip(linked, keep) if k])
        rows.append(row(system, dataset, f"elh_f{UNMASKED}", round(el["elh_f"], 4), subset))
    return rows


def reachable_share(gold: List[Doc], max_span_width: int, keep_singletons: bool = True) -> float:
    """The share of the gold mentions that ``coref_mention_r`` counts (singletons only with ``keep_singletons``)
    at most ``max_span_width`` tokens wide: a span-enumerating model's ceiling on that recall."""
    widths = Counter(len(span) for doc in gold for group in cluster_groups(doc) if keep_singletons or len(group) > 1
                     for span in group)
    return round(1.0 - share_wider_than(widths, max_span_width), 4) if widths else 0.0


def coref_only_rows(name: str, dataset: str, gold: List[Doc], pred: List[Doc], note: str, max_span_width: int) -> List[Row]:
    """A coreference resolver's rows, singletons counted as the test set's protocol says, and where they are
    counted also the average without them (:data:`NO_SINGLETONS_METRIC`)."""
    singletons = keeps_singletons(dataset)
    protocol = "singletons counted on both sides" if singletons else "singletons left out on both sides"
    rows = score_rows(name, dataset, gold, pred, f"{note}; {protocol}", keep_singletons=singletons,
                      max_span_width=max_span_width)
    if singletons:
        pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
        average = coref_scores(pairs, keep_singletons=False, on_overlap="first")["coref_avg_f"]
        rows.append(row(name, dataset, NO_SINGLETONS_METRIC, round(average, 4), f"{note}; singletons left out on both sides"))
    return rows


def resolver_rows(path: Path, name: str, dataset: str, gold: List[Doc], trained: str, batch_size: int) -> List[Row]:
    """:func:`coref_only_rows` of the mode-coref pipeline at ``path``; the note gives its training and score bound."""
    nlp = spacy.load(path)
    bound = nlp.config["components"][NAME]["model"].get("score_bound")
    pred, _ = predict(nlp, gold, batch_size)
    note = f"mode coref, {trained}, {training_steps(nlp)}; score_bound {bound}"
    return coref_only_rows(name, dataset, gold, pred, note, span_width_of(nlp))


# -- the benchmark --------------------------------------------------------------------------------
def joint_rows(args: argparse.Namespace, corpus: str, dataset: str, gold: List[Doc]) -> List[Row]:
    """Standalone, the joint models and, on Global's predictions, the peers (module docstring)."""
    end, trained = suffix(args), f"trained on {corpus}"
    loaded: Dict[str, Language] = {}
    for system in (*JOINT, "coref", "link"):
        print(f"{dataset}: {system}{end}")
        path = model_path(args, corpus, system)
        if path is not None:
            loaded[system] = spacy.load(path)
    if not loaded:
        return []
    pipe = next(iter(loaded.values())).get_pipe(NAME)  # the models of a folder share their KB and candidates
    kb, generator = pipe.kb, pipe.candidates
    hard = alias_hard_cases(kb, gold, generator.top_k)
    recall = "" if isinstance(generator, AliasCandidates) else f"; {generator.name} candidates"
    preds = {system: predict(nlp, gold, args.batch_size)[0] for system, nlp in loaded.items()}
    rows: List[Row] = []
    if "coref" in preds and "link" in preds:
        coref = loaded["coref"]
        rows += score_rows(f"standalone{end}", dataset, gold, standalone(preds["coref"], preds["link"]),
                           f"{trained}, {training_steps(coref)}; predicted mentions{recall}", hard,
                           max_span_width=span_width_of(coref))
    for system in JOINT:
        if system in preds:
            nlp = loaded[system]
            rows += score_rows(f"{system}{end}", dataset, gold, preds[system],
                               f"{trained}, {training_steps(nlp)}; predicted mentions{recall}", hard,
                               max_span_width=span_width_of(nlp))
    if "global" in preds:
        note = f"{trained}; predicted mentions: Global's mentions, clusters and NIL decisions; each linked mention re-linked on its own"
        rows += score_rows(f"prior_only{end}", dataset, gold, relink(preds["global"], prior_links(kb)), note, hard)
        if EL_BASELINE.exists():
            linked = relink(preds["global"], spacy_el_links(spacy.load(EL_BASELINE)))
            rows += score_rows(f"spacy_entity_linker{end}", dataset, gold, linked, f"{note}; trained on AIDA", hard)
    return rows


def refinement_rows(args: argparse.Namespace, corpus: str, dataset: str, gold: List[Doc]) -> List[Row]:
    """``coref_<refinement>`` rows of the corpus's coreference resolvers."""
    rows: List[Row] = []
    for refinement in REFINEMENTS:
        name = f"coref_{refinement}{suffix(args)}"
        print(f"{dataset}: {name}")
        path = model_path(args, corpus, refinement)
        if path is not None:
            rows += resolver_rows(path, name, dataset, gold, f"trained on {corpus} train", args.batch_size)
    return rows


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    data = load_datasets(args, spacy.blank("en"))
    rows: List[Row] = []
    for dataset in (d for d in DATASETS if d in data):
        corpus = dataset.split("-")[0]
        scorer = joint_rows if corpus in ("gum", "aida") else refinement_rows
        rows += scorer(args, corpus, dataset, data[dataset])
    return rows


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--models", default=str(ROOT / "training" / "jcl"))
    parser.add_argument("--variant", default=None,
                        help="score the models of <models>/<corpus>-<variant>/ (rows <system>_<variant>), e.g. converged")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=None, help="only these test sets")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--limit", type=int, default=0, help="first N documents of each test set (smoke runs)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    args = parser.parse_args(argv)
    fix_tie_breaks()
    command = "python -m benchmarks.joint_coref_linker" + "".join(
        f" --{flag} {' '.join(value) if isinstance(value, list) else value}"
        for flag, value in (("variant", args.variant), ("datasets", args.datasets)) if value)
    print(f"wrote {write_merged(Path(args.out), command, evaluate(args))}")


if __name__ == "__main__":
    main()

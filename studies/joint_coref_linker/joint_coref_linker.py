"""joint_coref_linker benchmark (issue 6): Standalone / Local / Global / Global + Entity Equalization.

Writes ``benchmarks/results/joint_coref_linker.json`` and the table of docs/joint_coref_linker.md between
``<!-- results:joint_coref_linker -->`` markers. Run through ``python -m spacy project run jcl-benchmark
projects/joint_coref_linker`` after the ``train-jcl-*`` steps; models that are missing are skipped with a message.

Systems and what is measured
----------------------------
* ``standalone``: the Standalone coreference model (mode ``coref``, eqs. (2)-(4)) gives the clusters and
  the Standalone EL model (mode ``link``, eq. (6)) links every mention on its own, as in the paper; a
  cluster whose mentions got different links counts as wrongly linked for ELh. Link-model mentions
  outside every coreference cluster are added as singletons.
* ``local``, ``global``, ``global_ee``, ``global_ee_mean``: the joint models (``global_ee``: Global with
  ``refinement = "entity_equalization"``, the paper's sum over the soft cluster; ``global_ee_mean``: with
  ``"entity_equalization_mean"``, the soft cluster's mean, which keeps ``a_i`` at the scale of ``g``).
* Peers, on the Global model's predictions (same mentions, same clusters, same NIL decisions), each
  mention that Global links disambiguated again on its own: ``prior_only`` (most probable alias-table
  candidate) and ``spacy_entity_linker`` (the baselines' spaCy ``entity_linker``, trained on AIDA, run on
  non-overlapping layers of the mentions). They isolate what the joint decoding adds to the choice
  of entity; neither has a NIL model of its own to decide which GUM mentions are linkable.
* Variants: models trained with another setting (:data:`VARIANTS`, e.g.
  ``training/jcl/gum-candidate-dropout/<system>`` or ``training/jcl/gum-long/<system>``) add
  ``<system>_<variant>`` rows (``standalone_<variant>`` where the folder has the ``coref`` and ``link``
  models), and a variant's own seeds (``training/jcl/gum-long-seed<N>/``) ``<system>_<variant>_seed<N>``
  and ``<system>_<variant>_seed_mean`` rows. ``--variants`` scores only the listed variants' models (their rows
  are merged into the results file). The ``hybrid`` variant (``training/jcl/aida-hybrid/global``, issue 26)
  runs on hybrid candidates: its notes give their recall, and ``<system>_hybrid_own_cases`` rows count the
  hard cases that its own lists define (the ``<system>_hybrid`` rows count the alias table's, as every
  other row does), and ``<system>_hybrid_similarity`` rows on AIDA test the model predicting with the
  ``similarity_weight`` best on AIDA dev (the sweep's ``elh_f_similarity_weight_<w>`` rows on ``aida-dev``).
* Learning curves: a variant folder's model trained by ``python -m spacy_el train`` (its ``evaluations.json``, e.g.
  ``training/jcl/gum-converged/global`` from ``train-jcl-gum-converged``) also gives ``coref_avg_f@step=N``,
  ``elh_f@step=N`` and ``train_minutes@step=N`` rows on ``<corpus>-dev`` and ``train_minutes`` on
  ``<corpus>-train``; its score rows' notes give the step of its ``model-best`` and its minutes.
* Coreference-only rows ``coref_<refinement>`` on OntoGUM and LitBank test.
* Seeds: models trained with another seed (``training/jcl/<corpus>-seed<N>/<system>``, and
  ``training/jcl/<corpus>-<variant folder>-seed<N>/<system>`` for a variant, for the joint systems and the
  refinements alike) add ``<system>_seed<N>`` rows and, once two seeds or more have the system,
  ``<system>_seed_mean`` rows (coreference average F1; for the joint systems also ELm, ELh and the
  accuracies on multi-mention clusters and hard cases, where the paper's Global and Local differ). A partial
  rerun (``--datasets``, ``--variants``) makes the means with the seeds' rows that the results file already
  holds, so that seeds trained in different sessions make a mean though a checkout keeps no models. A seed's
  Standalone pair may be split across sessions too: each half's predictions are recorded when its model is
  scored (``benchmarks/records/standalone_halves/``, :mod:`.standalone_halves`) and read back once it is gone.

Metrics: ``coref_{muc,b3,ceafe,avg}_f`` (singletons kept on GUM, AIDA+ and LitBank, which annotate them and
whose literature counts them; left out on both sides on OntoGUM, as in CoNLL-2012 evaluation; LitBank's
rows also give ``coref_avg_f_no_singletons``, the average without them, comparable with the LitBank rows
measured before this protocol, whose notes say "singletons left out"), ``elm_f``, ``elh_f``,
``cluster_accuracy_singleton`` / ``cluster_accuracy_multi`` (paper Table 3: the share of gold InKB
clusters of one / several mentions predicted exactly, with their link), ``hard_case_accuracy`` (paper
Table 4: gold mentions whose own top-k candidates lack the gold entity while another mention of their
gold cluster has it; correct when predicted with that span and the gold link) with, over the same
mentions, ``hard_case_found`` (predicted as a mention) and ``hard_case_with_mate`` (predicted in one
cluster with a mention whose candidates have the gold entity), ``words_per_s`` and the peak memory of
one 20k-token document.
"""
import argparse
import json
import multiprocessing
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span

import spacy_el  # noqa: F401  (registers the readers and factories)
from spacy_el.candidates import AliasCandidates
from spacy_el.corpora.masked import is_text_masked
from spacy_el.corpora.stats import share_wider_than
from spacy_el.extensions import NIL, cluster_keys, get_clusters, is_linked, set_clusters
from spacy_el.scoring.candidates import has_own_candidate
from spacy_el.scoring.cluster_el import cluster_el_scores
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.scorers import cluster_groups, doc_clusters, doc_linked_clusters
from spacy_el.training.checkpoint import CHECKPOINTS
from spacy_el.training.resume import EVALUATIONS, FINISHED

from .common import (AIDA_CORPUS, DTYPES, EL_BASELINE, SHARED_DATA, best_evaluation, curve_rows, dev_sweep, first,
                     fix_tie_breaks, proc_status_mb, process_peak_mb, read_corpus, read_evaluations, reset_peak_rss,
                     set_mention_links, timed, timed_pipe, using_encoder_dtype, words_per_s)
from .common import generator_recall as recall_of_generator
from .results_io import CURVE_STEP, RESULTS_DIR, ROOT, Row, merge_rerun, row, write_results
from .standalone_halves import HALVES_DIR, Half, half_path, read_half, write_half
from .tables import (PAGES, format_value, markdown_table, publish_table, published_only, results_to_markdown,
                     suffix_table)

NAME = "joint_coref_linker"
JOINT = ("local", "global", "global_ee", "global_ee_mean")
REFINEMENTS = ("none", "antecedent_averaging", "entity_equalization", "entity_equalization_mean")
DATASETS = ("gum-test", "aida-test", "ontogum-test", "litbank-test")
Offsets = Tuple[int, int]


# -- data ---------------------------------------------------------------------------------------
def read_split(data: Path, corpus: str, split: str, nlp: Language) -> Optional[List[Doc]]:
    """The ``split`` (``test``, ``dev``) of ``corpus`` (``gum``, ``ontogum``, ``litbank``, ``aida``) under ``data``
    (AIDA+ from the converted ``corpus/aida``); None where it is not on disk."""
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


def unfinished(run: Path) -> bool:
    """Whether ``run`` is a resumable training (``python -m spacy_el train``) that has not finished: checkpoints,
    but no ``finished.json``."""
    return (run / CHECKPOINTS).is_dir() and not (run / CHECKPOINTS / FINISHED).exists()


def model_path(args: argparse.Namespace, folder: str, system: str, report_missing: bool = True) -> Optional[Path]:
    """``<models>/<folder>/<system>/model-best``, or None (said on stdout with ``report_missing``) when it
    does not exist. A resumable training that has not finished (checkpoints but no ``finished.json``) gives None
    too, always said: its ``model-best`` is only the best so far, and rows of it would read as the trained
    model's."""
    run = Path(args.models) / folder / system
    path = run / "model-best"
    if unfinished(run):
        print(f"  (skipped: the training in {run} has not finished; rerun its command to go on)")
        return None
    if path.exists():
        return path
    if report_missing:
        print(f"  (skipped: {path} not found)")
    return None


# -- running ------------------------------------------------------------------------------------
def predict(nlp: Language, gold: Sequence[Doc], batch_size: int) -> Tuple[List[Doc], float]:
    """``nlp`` on the texts of ``gold``: the docs and the seconds it took."""
    return timed_pipe(nlp, [g.text for g in gold], batch_size)


def relink(docs: List[Doc], link: Callable[[Doc, List[Span]], Dict[Offsets, str]]) -> List[Doc]:
    """Copies of ``docs`` in which every mention linked to a KB entity gets the link ``link`` gives it
    on its own; NIL mentions stay NIL (the peers take the model's mentions, clusters and NIL decisions)."""
    result = []
    for doc in docs:
        copy = doc.copy()
        linked = [s for k in cluster_keys(copy) for s in copy.spans[k] if is_linked(s.kb_id_)]
        links = link(copy, linked)
        set_mention_links(copy, lambda s: links.get((s.start, s.end), NIL) if is_linked(s.kb_id_) else s.kb_id_)
        result.append(copy)
    return result


def prior_links(kb) -> Callable[[Doc, List[Span]], Dict[Offsets, str]]:
    def link(doc: Doc, mentions: List[Span]) -> Dict[Offsets, str]:
        out = {}
        for span in mentions:
            hits = kb.lookup(span.text, top_k=1, fuzzy=False)  # the component's own alias-table tiers
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
    """spaCy's ``entity_linker`` on ``mentions``, a layer of non-overlapping ones at a time, after the
    pipeline's other components but its NER; RETURNS: each mention's link by token offsets."""
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


def standalone(coref_docs: List[Doc], link_docs: List[Doc]) -> List[Doc]:
    """Coref-model clusters, each mention with the link model's own link (module docstring)."""
    result = []
    for coref_doc, link_doc in zip(coref_docs, link_docs):
        links = {(s.start, s.end): s.kb_id_ for key in cluster_keys(link_doc) for s in link_doc.spans[key]}
        copy = coref_doc.copy()
        clusters = get_clusters(copy)
        covered = {m for cluster in clusters for m in cluster}
        clusters += [[m] for m, kb_id in links.items() if m not in covered and is_linked(kb_id)]
        set_clusters(copy, clusters)
        set_mention_links(copy, lambda s: links.get((s.start, s.end), NIL))
        result.append(copy)
    return result


# -- metrics ------------------------------------------------------------------------------------
def cluster_accuracy(gold: Sequence[Doc], pred: Sequence[Doc]) -> Dict[str, Tuple[int, int]]:
    """Paper Table 3: (correct, total) gold InKB clusters of one ("singleton") and several ("multi") mentions."""
    counts = {"singleton": [0, 0], "multi": [0, 0]}
    for g, p in zip(gold, pred):
        predicted = set()
        for cluster in doc_linked_clusters(p):
            ids = {kb for _, kb in cluster if kb}
            if len(ids) == 1:
                predicted.add((frozenset(m for m, _ in cluster), ids.pop()))
        for cluster in doc_linked_clusters(g):
            ids = {kb for _, kb in cluster if kb}
            if len(ids) != 1:
                continue
            kb_id = next(iter(ids))
            if not is_linked(kb_id):
                continue
            group = "singleton" if len(cluster) == 1 else "multi"
            counts[group][1] += 1
            counts[group][0] += (frozenset(m for m, _ in cluster), kb_id) in predicted
    return {k: (v[0], v[1]) for k, v in counts.items()}


@dataclass(frozen=True)
class HardCase:
    """A gold mention whose own top-k candidates lack its gold entity while a cluster mate's have it."""

    mention: Offsets
    kb_id: str
    mates: FrozenSet[Offsets]  # the mentions of its gold cluster whose own candidates have the entity


def find_hard_cases(kb, gold: Sequence[Doc], top_k: Optional[int], generator: Optional[Callable] = None) -> List[List[HardCase]]:
    """Paper Table 4's mentions, per document of ``gold`` (found once per dataset: they depend on the
    gold clusters and the candidates only, not on the system). A mention's own candidates are its
    ``top_k`` exact alias matches, as the paper's (and ``joint_coref_linker``'s default) are; with
    ``generator`` (a candidate generator, e.g. a model's hybrid one), the first ``top_k`` of its list."""
    found: List[List[HardCase]] = []
    for g in gold:
        linked = []
        for cluster in doc_linked_clusters(g):
            ids = {kb_id for _, kb_id in cluster if kb_id}
            if len(cluster) >= 2 and len(ids) == 1 and is_linked(next(iter(ids))):
                linked.append(([m for m, _ in cluster], next(iter(ids))))
        if generator is None:
            has = [dict(zip(mentions, has_own_candidate(kb, [g.char_span(*m).text for m in mentions], kb_id, top_k)))
                   for mentions, kb_id in linked]
        else:  # one call for the document's mentions
            flat = [g.char_span(*m) for mentions, _ in linked for m in mentions]
            lists = iter(generator(kb, flat) if flat else [])
            has = [{m: kb_id in next(lists).ids(kb)[:top_k] for m in mentions} for mentions, kb_id in linked]
        cases = []
        for (mentions, kb_id), own in zip(linked, has):
            mates = frozenset(m for m in mentions if own[m])
            if mates:
                cases += [HardCase(m, kb_id, mates) for m in mentions if not own[m]]
        found.append(cases)
    return found


def generator_recall(kb, gold: Sequence[Doc], generator: Callable, k: int) -> float:
    """Recall@k of ``generator`` on the gold linked mentions of ``gold`` (those of ``doc_linked_clusters``)."""
    mentions = [(g.char_span(*m), kb_id) for g in gold for cluster in doc_linked_clusters(g) for m, kb_id in cluster
                if is_linked(kb_id)]
    return recall_of_generator(kb, generator, [span for span, _ in mentions], [kb_id for _, kb_id in mentions], k)


def count_hard_cases(cases: Sequence[Sequence[HardCase]], pred: Sequence[Doc]) -> Dict[str, int]:
    """Counts, over the ``total`` hard-case mentions (``cases``, per document of ``pred``), the ones
    predicted as a mention (``found``), predicted in one cluster with a mate (``with_mate``: only then
    can a joint decoding pass the mate's link on), and predicted with the gold link (``correct``)."""
    counts = {"total": 0, "found": 0, "with_mate": 0, "correct": 0}
    for doc_cases, p in zip(cases, pred):
        predicted = doc_linked_clusters(p)
        link_of = {m: kb_id for cluster in predicted for m, kb_id in cluster}
        cluster_of = {m: i for i, cluster in enumerate(predicted) for m, _ in cluster}
        for case in doc_cases:
            mate_clusters = {cluster_of[m] for m in case.mates if m in cluster_of}
            counts["total"] += 1
            counts["found"] += case.mention in cluster_of
            counts["with_mate"] += cluster_of.get(case.mention, -1) in mate_clusters
            counts["correct"] += link_of.get(case.mention) == case.kb_id
    return counts


def score_rows(system: str, dataset: str, gold: List[Doc], pred: List[Doc], note: str,
               hard: Optional[Sequence[Sequence[HardCase]]] = None, keep_singletons: bool = True,
               max_span_width: Optional[int] = None) -> List[Row]:
    """Coreference rows; with ``hard`` (the dataset's Table 4 cases), also the EL rows; with the model's
    ``max_span_width``, also ``coref_mention_reachable`` (:func:`reachable_share`); where some documents are
    text-masked, also :func:`unmasked_rows`."""
    pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
    linked = None if hard is None else [(doc_linked_clusters(g), doc_linked_clusters(p)) for g, p in zip(gold, pred)]
    coref = coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")
    metrics = ("coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_mention_r")  # + mention detection recall
    rows = [row(system, dataset, m, round(coref[m], 4), note) for m in metrics]
    rows += unmasked_rows(system, dataset, [is_text_masked(g) for g in gold], pairs, linked, note, keep_singletons)
    if max_span_width is not None:
        rows.append(row(system, dataset, "coref_mention_reachable", reachable_share(gold, max_span_width, keep_singletons),
                        f"{note}; gold mentions no wider than max_span_width {max_span_width}"))
    if linked is None:
        return rows
    el = cluster_el_scores(linked)
    rows += [row(system, dataset, m, round(el[m], 4), note) for m in ("elm_f", "elh_f")]
    for group, (right, n) in cluster_accuracy(gold, pred).items():
        rows.append(row(system, dataset, f"cluster_accuracy_{group}", round(right / max(n, 1), 4), f"{note}; {n} gold clusters"))
    return rows + hard_case_rows(system, dataset, pred, hard, note)


#: The suffix of a metric scored on the documents that have their text (:func:`unmasked_rows`).
UNMASKED = "_unmasked"


def unmasked_rows(system: str, dataset: str, masked: Sequence[bool], pairs: Sequence[Tuple[Any, Any]],
                  linked: Optional[Sequence[Tuple[Any, Any]]], note: str, keep_singletons: bool) -> List[Row]:
    """``coref_avg_f_unmasked`` (and, given the joint model's ``linked`` cluster pairs, ``elh_f_unmasked``): the
    scores of :func:`score_rows`'s gold/predicted ``pairs`` over the documents that have their text, the
    text-masked ones (``masked``: GUM's Reddit documents, :mod:`spacy_el.corpora.masked`) left out on both sides;
    none where no document is masked. What a model predicts on underscores is arbitrary, and GUM's masked
    documents are long enough to sway the scores over all of them."""
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


def swept_joint_rows(args: argparse.Namespace, nlp: Language, name: str, dataset: str, gold: List[Doc], note: str,
                     hard: Sequence[Sequence[HardCase]]) -> List[Row]:
    """A joint model's dev sweep of ``predict_max_antecedents`` (:func:`antecedent_sweep`) and its test rows
    ``<name>_predict_antecedents`` with the value chosen; the model is left with its own setting."""
    pipe = nlp.get_pipe(NAME)
    own = pipe.settings.predict_max_antecedents
    k, sweep = antecedent_sweep(args, nlp, name, dataset.split("-")[0], dataset, joint=True)
    if k is None:
        return []
    pred, _ = predict(nlp, gold, args.batch_size)
    pipe.configure(predict_max_antecedents=own)
    return sweep + score_rows(f"{name}{SWEPT}", dataset, gold, pred, f"{note}; predict_max_antecedents {k} (best on dev)",
                              hard, max_span_width=span_width_of(nlp))


def reachable_share(gold: List[Doc], max_span_width: int, keep_singletons: bool = True) -> float:
    """The share of the gold mentions that ``coref_mention_r`` counts (singletons only with ``keep_singletons``)
    that are at most ``max_span_width`` tokens wide: a span-enumerating model's ceiling on that recall."""
    widths = Counter(len(span) for doc in gold for group in cluster_groups(doc) if keep_singletons or len(group) > 1
                     for span in group)
    return round(1.0 - share_wider_than(widths, max_span_width), 4) if widths else 0.0


def span_width_of(nlp: Language) -> int:
    """The ``max_span_width`` of ``nlp``'s joint_coref_linker model."""
    return int(nlp.get_pipe(NAME).model.attrs["max_span_width"])


def hard_case_rows(system: str, dataset: str, pred: List[Doc], hard: Sequence[Sequence[HardCase]], note: str) -> List[Row]:
    """``hard_case_{accuracy,found,with_mate}`` of ``pred`` on the cases ``hard``."""
    counts = count_hard_cases(hard, pred)
    rows = []
    for metric, count in (("accuracy", "correct"), ("found", "found"), ("with_mate", "with_mate")):
        share = round(counts[count] / max(counts["total"], 1), 4)
        rows.append(row(system, dataset, f"hard_case_{metric}", share, f"{note}; {counts['total']} mentions"))
    return rows


# -- the benchmark ------------------------------------------------------------------------------
def joint_rows(args: argparse.Namespace, corpus: str, dataset: str, gold: List[Doc]) -> List[Row]:
    """The rows of the corpus's models (``<models>/<corpus>/``, with the peers) and then of each of its
    :data:`VARIANTS` folders, each set with its seeds."""
    only = getattr(args, "variants", None)
    rows = [] if only else model_set_rows(args, corpus, "", f"trained on {corpus}", dataset, gold, peers=True)
    for variant, folder, setting in variant_folders(args.models, corpus, only):
        rows += model_set_rows(args, folder, f"_{variant}", f"trained on {corpus} with {setting}", dataset, gold,
                               peers=False)
        systems = {system: f"{system}_{variant}" for system in JOINT}
        rows += learning_curve_rows(args, folder, systems, corpus, CURVE_METRICS)
        rows += seed_minutes_rows(args, folder, systems, corpus)
    return rows


#: The dev scores of a learning curve (``<metric>@step=N`` rows).
CURVE_METRICS = ("coref_avg_f", "elh_f")


def learning_curve_rows(args: argparse.Namespace, folder: str, systems: Dict[str, str], corpus: str,
                        metrics: Sequence[str]) -> List[Row]:
    """The learning curves of the models in ``<models>/<folder>/`` trained by ``python -m spacy_el train`` (their
    ``evaluations.json``): for each model folder of ``systems`` (model folder -> system name), rows of its
    ``<corpus>-dev`` scores and minutes at each evaluation and its ``train_minutes`` on ``<corpus>-train``. An
    unfinished training gives none (:func:`unfinished`): its minutes would read as the whole training's."""
    rows: List[Row] = []
    for model, system in systems.items():
        run = Path(args.models) / folder / model
        if (run / EVALUATIONS).exists() and not unfinished(run):
            rows += curve_rows(run / EVALUATIONS, system, f"{corpus}-dev", metrics, train_dataset=f"{corpus}-train")
    return rows


def seed_minutes_rows(args: argparse.Namespace, folder: str, systems: Dict[str, str], corpus: str) -> List[Row]:
    """The ``train_minutes`` row (on ``<corpus>-train``) of each model in the seed folders ``<folder>-seed<N>/``,
    named ``<system>_seed<N>``: every model's training minutes are in the results, while the learning curves stay
    seed 0's (:func:`learning_curve_rows`, whose rules for an unfinished training hold here too)."""
    rows: List[Row] = []
    for seed_folder, seed in seed_folders(args.models, folder)[1:]:
        seed_systems = {model: seeded(system, seed) for model, system in systems.items()}
        rows += [r for r in learning_curve_rows(args, seed_folder, seed_systems, corpus, ())
                 if r["metric"] == "train_minutes"]
    return rows


def model_set_rows(args: argparse.Namespace, folder: str, suffix: str, trained: str, dataset: str,
                   gold: List[Doc], peers: bool) -> List[Row]:
    """Rows for the models of ``<models>/<folder>/``: ``standalone<suffix>`` (from its ``coref`` and ``link``
    halves, :func:`score_standalone`: a half whose model is gone is read from its record), ``<system><suffix>``
    for each of :data:`JOINT`, with ``peers`` the peers re-linking Global's mentions, and the seed rows of any
    ``<models>/<folder>-seed<N>/``. The seed-0 folder reports the models it lacks; the others hold only some
    systems, so theirs go unmentioned. The hard cases come from the KB and generator of the first model found
    (the seeds and halves share them)."""
    report = not suffix
    loaded: Dict[str, Language] = {}
    for system in JOINT:
        print(f"{dataset}: {system}{suffix}")
        path = model_path(args, folder, system, report_missing=report)
        if path is not None:
            loaded[system] = spacy.load(path)
    reference = next(iter(loaded.values()), None) or first_model(args, folder)
    if reference is None:  # no model in this folder or its seeds (a checkout keeps results, not models)
        return []
    kb = reference.get_pipe(NAME).kb
    generator = reference.get_pipe(NAME).candidates
    hard = find_hard_cases(kb, gold, generator.top_k)
    # Models on another generator than the alias table: its recall in the notes, and the hard cases its
    # own lists define too (<system>_own_cases), since they make the gold reachable for other mentions.
    own_hard, recall_note = None, ""
    if not isinstance(generator, AliasCandidates):
        own_hard = find_hard_cases(kb, gold, generator.top_k, generator)
        k = generator.top_k or 100  # a generator that keeps all its candidates: recall@100
        recall_note = f"; {generator.name} candidates, cand_recall_at_{k}={generator_recall(kb, gold, generator, k):.3f}"
    rows: List[Row] = []
    standalone_rows = score_standalone(args, folder, f"standalone{suffix}", dataset, gold, trained, hard, recall_note)
    if standalone_rows is None and report:
        print(f"  (no standalone{suffix} rows: its coref and link halves are not both trained or recorded)")
    rows += standalone_rows or []
    preds = {system: predict(nlp, gold, args.batch_size)[0] for system, nlp in loaded.items()}
    for system, pred in preds.items():
        note = f"{trained}, {training_steps(loaded[system])}; predicted mentions{recall_note}"
        rows += score_rows(f"{system}{suffix}", dataset, gold, pred, note, hard,
                           max_span_width=span_width_of(loaded[system]))
        if getattr(args, "sweep_antecedents", False):
            rows += swept_joint_rows(args, loaded[system], f"{system}{suffix}", dataset, gold, note, hard)
        if own_hard is not None:
            rows += hard_case_rows(f"{system}{suffix}_own_cases", dataset, pred, own_hard,
                                   f"{note}; the cases of its own {generator.name} top {generator.top_k}")
        if own_hard is not None and dataset == "aida-test":
            rows += similarity_rows(args, loaded[system], f"{system}{suffix}", gold, pred, note, hard)
    if peers and "global" in preds:
        rows += peer_rows(dataset, gold, preds["global"], kb, f"{trained}; predicted mentions", hard)
    return rows + joint_seed_rows(args, folder, suffix, trained, dataset, gold, hard)


#: The ``similarity_weight`` values that the AIDA dev sweep of a model on another generator tries; 0 (off) too,
#: so that a weight is chosen only where it beats the model without it on dev (ties: the smaller weight).
SIMILARITY_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def similarity_rows(args: argparse.Namespace, nlp: Language, system: str, gold: List[Doc], pred: List[Doc],
                    note: str, hard: Sequence[Sequence[HardCase]]) -> List[Row]:
    """``<system>_similarity`` on AIDA test: the model predicting with the ``similarity_weight`` of
    :data:`SIMILARITY_WEIGHTS` whose ELh is best on AIDA dev (``elh_f_similarity_weight_<w>`` rows on
    ``aida-dev``); none without the AIDA dev corpus. ``pred``: the model's test predictions with its own weight,
    reused when the sweep chooses that weight. The model's own weight is set back afterwards."""
    dev_path = AIDA_CORPUS / "dev.spacy"
    if not dev_path.exists():
        print(f"{dev_path} does not exist: no {system}_similarity rows")
        return []
    dev = read_corpus("spacy-el.AidaPlusReader.v1", nlp, path=dev_path)[: args.limit or None]
    pipe = nlp.get_pipe(NAME)
    own_weight = pipe.settings.similarity_weight
    name = f"{system}_similarity"

    def elh_f(weight: float) -> float:
        pipe.configure(similarity_weight=weight)
        pred, _ = predict(nlp, dev, args.batch_size)
        scores = cluster_el_scores([(doc_linked_clusters(g), doc_linked_clusters(p)) for g, p in zip(dev, pred)])
        return round(scores["elh_f"], 4)

    print(f"aida-dev: {name} sweep")
    weight, rows = dev_sweep(name, "elh_f", "similarity_weight", SIMILARITY_WEIGHTS, elh_f)
    if weight != own_weight:
        pipe.configure(similarity_weight=weight)
        pred, _ = predict(nlp, gold, args.batch_size)
    pipe.configure(similarity_weight=own_weight)
    return rows + score_rows(name, "aida-test", gold, pred, f"{note}; similarity_weight {weight:g} (best on AIDA dev)", hard)


#: ``predict_max_antecedents`` values tried on dev by ``--sweep-antecedents`` (the configs train with 50).
ANTECEDENT_SWEEP = (50, 100, 150, 250)
#: The suffix of the rows of a model predicting with the ``predict_max_antecedents`` best on dev.
SWEPT = "_predict_antecedents"


def dev_docs(args: argparse.Namespace, corpus: str) -> List[Doc]:
    """The dev split of ``corpus`` (:func:`read_split`), its first ``--limit`` documents; empty where it is not on
    disk. Read once per run: every model of a sweep is scored on the same documents (prediction reads their
    texts and leaves them as they are)."""
    return list(_dev_split(str(args.data), corpus, args.limit or 0))


@lru_cache(maxsize=None)
def _dev_split(data: str, corpus: str, limit: int) -> Tuple[Doc, ...]:
    return tuple((read_split(Path(data), corpus, "dev", spacy.blank("en")) or [])[: limit or None])


def antecedent_sweep(args: argparse.Namespace, nlp: Language, name: str, corpus: str, dataset: str,
                     joint: bool) -> Tuple[Optional[int], List[Row]]:
    """``predict_max_antecedents`` chosen on ``corpus``'s dev split from :data:`ANTECEDENT_SWEEP`
    (:func:`prediction_sweep`). RETURNS ``(value, dev rows)``; ``(None, [])`` without a dev split."""
    k, rows = prediction_sweep(args, nlp, name, corpus, dataset, joint, "predict_max_antecedents", ANTECEDENT_SWEEP)
    return (None if k is None else int(k)), rows


def prediction_sweep(args: argparse.Namespace, nlp: Language, name: str, corpus: str, dataset: str, joint: bool,
                     setting: str, values: Sequence[float]) -> Tuple[Optional[float], List[Row]]:
    """The component ``setting`` chosen on ``corpus``'s dev split from ``values`` (cheapest first), by the score
    the model was selected by in training: coreference average F1 (singletons as ``dataset``'s rows count them),
    and for a joint model its mean with ELh (the component's score weights). Leaves ``nlp`` predicting with it.
    RETURNS ``(value, dev rows)``; ``(None, [])`` without a dev split."""
    dev = dev_docs(args, corpus)
    if not dev:
        print(f"no {corpus} dev split: no {setting} chosen for {name}")
        return None, []
    pipe = nlp.get_pipe(NAME)
    keep_singletons = scores_singletons(dataset)

    def score(value: float) -> float:
        pipe.configure(**{setting: value})
        return selection_score(dev, predict(nlp, dev, args.batch_size)[0], keep_singletons, joint)

    print(f"{corpus}-dev: {name} sweep of {setting}")
    value, rows = dev_sweep(name, selection_metric(joint), setting, values, score, dataset=f"{corpus}-dev")
    pipe.configure(**{setting: value})
    return value, rows


def selection_metric(joint: bool) -> str:
    """The name of :func:`selection_score`'s metric."""
    return "coref_elh_mean" if joint else "coref_avg_f"


def selection_score(gold: Sequence[Doc], pred: Sequence[Doc], keep_singletons: bool, joint: bool) -> float:
    """The score a model was selected by in training, to 4 places: coreference average F1 (with or without the
    singletons), and for a joint model its mean with ELh (the component's score weights)."""
    pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
    coref = coref_scores(pairs, keep_singletons=keep_singletons, on_overlap="first")["coref_avg_f"]
    if not joint:
        return round(coref, 4)
    elh = cluster_el_scores([(doc_linked_clusters(g), doc_linked_clusters(p)) for g, p in zip(gold, pred)])["elh_f"]
    return round((coref + elh) / 2, 4)


def peer_rows(dataset: str, gold: List[Doc], global_pred: List[Doc], kb, note: str,
              hard: Sequence[Sequence[HardCase]]) -> List[Row]:
    """``prior_only`` and ``spacy_entity_linker``: Global's mentions, clusters and NIL decisions, each linked
    mention re-linked on its own."""
    peer_note = f"{note}: Global's mentions, clusters and NIL decisions; each linked mention re-linked on its own"
    rows = score_rows("prior_only", dataset, gold, relink(global_pred, prior_links(kb)), peer_note, hard)
    if EL_BASELINE.exists():
        linked = relink(global_pred, spacy_el_links(spacy.load(EL_BASELINE)))
        rows += score_rows("spacy_entity_linker", dataset, gold, linked, f"{peer_note}; trained on AIDA", hard)
    return rows


def training_steps(nlp: Language) -> str:
    """The ``[training] max_steps`` a model was trained with, from its own config, and, for a run of
    ``python -m spacy_el train`` (its ``evaluations.json`` beside ``model-best``), the step of ``model-best``
    and the run's minutes: ``"3,820 steps (best on dev at step 2,674; 81.5 min)"``; a run that stopped
    before ``max_steps`` (patience, ``--max-minutes``, an interruption) says where, by its last evaluation:
    ``"1,337 of 2,865 steps (...)"``. Where the evaluations record them, the minutes say what they were
    measured under (:func:`training_conditions`)."""
    max_steps = nlp.config["training"]["max_steps"]
    evaluations = Path(nlp.path).parent / EVALUATIONS if nlp.path is not None else None
    best = best_evaluation(evaluations) if evaluations is not None else None
    if best is None:
        return f"{max_steps:,} steps"
    curve = read_evaluations(evaluations)
    last, minutes = curve[-1]["step"], curve[-1]["seconds"] / 60
    steps = f"{max_steps:,} steps" if not max_steps or last >= max_steps else f"{last:,} of {max_steps:,} steps"
    conditions = training_conditions(curve)
    return f"{steps} (best on dev at step {best['step']:,}; {minutes:.1f} min{'; ' + conditions if conditions else ''})"


def training_conditions(curve: Sequence[Dict[str, Any]]) -> str:
    """What a run's minutes were measured under, from the evaluations that record it (``spacy_el.training.resume``
    records ``torch_threads`` and ``load_average`` at each): ``"1 torch thread, load average 2.1 to 2.4 at the
    evaluations"`` (a load above the torch threads: the cores were shared with other jobs); "" where none
    records them (runs before they were recorded)."""
    threads = sorted({e["torch_threads"] for e in curve if e.get("torch_threads") is not None})
    loads = [e["load_average"] for e in curve if e.get("load_average") is not None]
    if not threads:
        return ""
    text = f"{'/'.join(map(str, threads))} torch thread{'s' if threads != [1] else ''}"
    if loads:
        low, high = f"{min(loads):.1f}", f"{max(loads):.1f}"
        text += f", load average {low if low == high else f'{low} to {high}'} at the evaluations"
    return text


def score_model(args: argparse.Namespace, folder: str, system: str, name: str, dataset: str, gold: List[Doc],
                trained: str, hard: Sequence[Sequence[HardCase]]) -> Optional[List[Row]]:
    """Rows named ``name`` for the joint model ``<models>/<folder>/<system>``; None when it is missing."""
    print(f"{dataset}: {name}")
    path = model_path(args, folder, system, report_missing=False)
    if path is None:
        return None
    nlp = spacy.load(path)
    pred, _ = predict(nlp, gold, args.batch_size)
    return score_rows(name, dataset, gold, pred, f"{trained}, {training_steps(nlp)}; predicted mentions", hard,
                      max_span_width=span_width_of(nlp))


def score_standalone(args: argparse.Namespace, folder: str, name: str, dataset: str, gold: List[Doc], trained: str,
                     hard: Sequence[Sequence[HardCase]], recall_note: str = "") -> Optional[List[Row]]:
    """Rows named ``name`` for Standalone from ``<models>/<folder>/coref`` and ``.../link`` (:func:`standalone`);
    None while either half is missing. A half whose model is there is predicted with and recorded
    (:mod:`.standalone_halves`, not on a ``--limit`` run); a half whose model is gone is read from its record, so
    that the two may be trained in different sessions. ``recall_note`` ends the rows' note (the generator's
    recall, where it is not the alias table)."""
    print(f"{dataset}: {name}")
    halves: Dict[str, Half] = {}
    for mode in ("coref", "link"):
        half = standalone_half(args, folder, mode, dataset, gold)
        if half is not None:
            halves[mode] = half
    if len(halves) < 2:
        if halves:
            print(f"  (no {name} rows yet: only its {next(iter(halves))} half is trained)")
        return None
    coref = halves["coref"]
    pred = standalone(coref.docs, halves["link"].docs)
    return score_rows(name, dataset, gold, pred, f"{trained}, {coref.note}; predicted mentions{recall_note}", hard,
                      max_span_width=coref.max_span_width)


def standalone_half(args: argparse.Namespace, folder: str, mode: str, dataset: str, gold: List[Doc]) -> Optional[Half]:
    """The ``mode`` half of the Standalone pair of ``<models>/<folder>/``: its model's predictions, recorded
    (unless ``--limit``), or where the model is gone its record; None where neither is there."""
    path = half_path(getattr(args, "halves", HALVES_DIR), folder, mode, dataset)
    model = model_path(args, folder, mode, report_missing=False)
    if model is None:
        recorded = read_half(path, gold, spacy.blank("en"))
        if recorded is not None:
            print(f"  ({mode}: the predictions recorded in {path})")
        return recorded
    nlp = spacy.load(model)
    half = Half(predict(nlp, gold, args.batch_size)[0], training_steps(nlp), span_width_of(nlp))
    if not getattr(args, "limit", 0):
        write_half(path, gold, half)
    return half


def first_model(args: argparse.Namespace, folder: str) -> Optional[Language]:
    """The first model of ``<models>/<folder>/`` and then of its seed folders ``<folder>-seed<N>/`` (seeds in
    order; in each, :data:`JOINT`, then coref and link), loaded; None where none has one."""
    for seed_folder, _ in seed_folders(args.models, folder):
        for system in (*JOINT, "coref", "link"):
            path = model_path(args, seed_folder, system, report_missing=False)
            if path is not None:
                return spacy.load(path)
    return None


def joint_seed_rows(args: argparse.Namespace, folder: str, suffix: str, trained: str, dataset: str, gold: List[Doc],
                    hard: Sequence[Sequence[HardCase]]) -> List[Row]:
    """``<system><suffix>_seed<N>`` rows for Standalone and the joint models of any ``<models>/<folder>-seed<N>/``
    (their means over the seeds come from :func:`seed_means_across_runs`)."""
    rows: List[Row] = []
    for system in ("standalone", *JOINT):
        name = f"{system}{suffix}"
        for seed_folder, seed in seed_folders(args.models, folder)[1:]:
            note = f"{trained}, seed {seed}"
            if system == "standalone":
                scored_rows = score_standalone(args, seed_folder, seeded(name, seed), dataset, gold, note, hard)
            else:
                scored_rows = score_model(args, seed_folder, system, seeded(name, seed), dataset, gold, note, hard)
            rows += scored_rows or []
    return rows


#: Models trained with another setting: ``<models>/<corpus>-<suffix>/<system>`` gives the rows
#: ``<system>_<variant>``, for the variant's name, its folder suffix and what it changes (each row's
#: note also gives the model's own training steps).
VARIANTS = (
    ("candidate_dropout", "candidate-dropout", "gold_candidate_dropout 0.2"),
    ("long", "long", "longer training"),
    ("hybrid", "hybrid", "hybrid candidates (alias + dense, reciprocal-rank fusion)"),
    ("converged", "converged", "training to a dev plateau (resumable, one evaluation per epoch)"),
    ("converged_hybrid", "converged-hybrid", "training to a dev plateau on hybrid candidates (alias + dense, "
     "reciprocal-rank fusion)"),
    ("converged_hybrid_batch4", "converged-hybrid-batch4", "training to a dev plateau on hybrid candidates, 4 "
     "documents per update (the same epochs in a quarter of the updates)"),
    ("converged_width16", "converged-width16", "training to a dev plateau with max_span_width 16"),
    ("converged_antecedents150", "converged-antecedents150", "training to a dev plateau with max_antecedents 150"),
    ("converged_coarse", "converged-coarse", "training to a dev plateau with coarse-to-fine antecedents "
     "(antecedent_pruning coarse)"),
    ("converged_coarse_antecedents100", "converged-coarse-antecedents100", "training to a dev plateau with "
     "coarse-to-fine antecedents (antecedent_pruning coarse) and max_antecedents 100"),
    ("converged_coarse_width16", "converged-coarse-width16", "training to a dev plateau with coarse-to-fine "
     "antecedents (antecedent_pruning coarse) and max_span_width 16"),
    ("converged_coarse_frozen3", "converged-coarse-frozen3", "training to a dev plateau with coarse-to-fine "
     "antecedents (antecedent_pruning coarse), the encoder's embeddings and lowest 3 layers frozen and their "
     "outputs cached (frozen_encoder_layers 3, encoder_cache_mb 2048)"),
    ("converged_coarse_averaging", "converged-coarse-averaging", "training to a dev plateau with coarse-to-fine "
     "antecedents (antecedent_pruning coarse) and antecedent averaging (refinement antecedent_averaging)"),
    ("converged_coarse_mention_loss3", "converged-coarse-mention-loss3", "training to a dev plateau with "
     "coarse-to-fine antecedents (antecedent_pruning coarse) and mention_loss_weight 3"),
    *((f"converged_coarse_window{size}", f"converged-coarse-window{size}", "training to a dev plateau with "
       f"coarse-to-fine antecedents (antecedent_pruning coarse) and encoder windows of {size} wordpieces, "
       f"{size // 2} apart") for size in (256, 512)),
)


def variant_folders(models: str, corpus: str, only: Optional[Sequence[str]] = None) -> List[Tuple[str, str, str]]:
    """``(variant, folder, setting)`` for each of :data:`VARIANTS` (``only``'s, when given) whose folder
    ``<corpus>-<suffix>`` exists under ``models``, or a seed folder of it (``<corpus>-<suffix>-seed<N>``: seed 0's
    models may be gone while a later seed's are there)."""
    return [(variant, f"{corpus}-{suffix}", setting) for variant, suffix, setting in VARIANTS
            if (not only or variant in only)
            and any((Path(models) / seed_folder).is_dir() for seed_folder, _ in seed_folders(models, f"{corpus}-{suffix}"))]


def refinement_rows(args: argparse.Namespace, corpus: str, dataset: str, gold: List[Doc]) -> List[Row]:
    """:func:`refinement_set_rows` of the corpus's own models (``<models>/<corpus>/``: rows ``coref_<refinement>``)
    and of each of its :data:`VARIANTS` folders (rows ``coref_<refinement>_<variant>``, with the seed-0 models'
    learning curves); with ``--variants``, only those of the listed variants."""
    only = getattr(args, "variants", None)
    rows = [] if only else refinement_set_rows(args, corpus, "", f"trained on {corpus} train", dataset, gold,
                                               report_missing=True)
    for variant, folder, setting in variant_folders(args.models, corpus, only):
        rows += refinement_set_rows(args, folder, f"_{variant}", f"trained on {corpus} train with {setting}", dataset,
                                    gold)
        systems = {r: f"coref_{r}_{variant}" for r in REFINEMENTS}
        rows += learning_curve_rows(args, folder, systems, corpus, ("coref_avg_f",))
        rows += seed_minutes_rows(args, folder, systems, corpus)
    return rows


def refinement_set_rows(args: argparse.Namespace, folder: str, suffix: str, trained: str, dataset: str,
                        gold: List[Doc], report_missing: bool = False) -> List[Row]:
    """``coref_<refinement><suffix>`` rows for the mode-coref models in ``<models>/<folder>/`` (seed 0) and
    ``..._seed<N>`` rows for those of any ``<models>/<folder>-seed<N>/`` (their means over the seeds come from
    :func:`seed_means_across_runs`). With ``report_missing``, a missing seed-0 model is reported."""
    rows: List[Row] = []
    for refinement in REFINEMENTS:
        system = f"coref_{refinement}{suffix}"
        for seed_folder, seed in seed_folders(args.models, folder):
            note = f"{trained}, seed {seed}" if seed else trained
            rows += score_refinement(args, seed_folder, refinement, seeded(system, seed), dataset, gold, note,
                                     report_missing=report_missing and not seed) or []
    return rows


#: The coreference-only test sets scored with singletons on both sides, as their literature scores them: LitBank
#: annotates every entity mention, and the LitBank paper (Bamman et al. 2020) and fast-coref
#: (``litbank.yaml``: ``cluster_threshold: 1``) count the singletons. OntoGUM, like CoNLL-2012, annotates none,
#: so its rows leave them out on both sides.
SINGLETONS_SCORED = frozenset({"litbank-test"})
#: The coreference-only test sets (the Entity-Equalization comparison); the others (GUM, AIDA+) are the joint
#: models', which annotate singletons and are scored with them.
COREF_ONLY_DATASETS = frozenset({"ontogum-test", "litbank-test"})
#: The CoNLL-2012-style average (singletons left out on both sides) that a :data:`SINGLETONS_SCORED` test set's
#: rows add, so that they compare with the rows measured before the protocol changed.
NO_SINGLETONS_METRIC = "coref_avg_f_no_singletons"


def scores_singletons(dataset: str) -> bool:
    """Whether this benchmark counts singletons on both sides on ``dataset``: on the joint test sets always, on
    the coreference-only ones as :data:`SINGLETONS_SCORED` says."""
    return dataset not in COREF_ONLY_DATASETS or dataset in SINGLETONS_SCORED


def score_refinement(args: argparse.Namespace, folder: str, refinement: str, name: str, dataset: str,
                     gold: List[Doc], trained: str, report_missing: bool = False) -> Optional[List[Row]]:
    """Coreference rows named ``name`` for the mode-coref model ``<models>/<folder>/<refinement>``, singletons
    counted as :data:`SINGLETONS_SCORED` says (and then also :data:`NO_SINGLETONS_METRIC`); None when the
    model is missing. The note also gives the model's training steps and ``score_bound``."""
    print(f"{dataset}: {name}")
    path = model_path(args, folder, refinement, report_missing)
    if path is None:
        return None
    nlp = spacy.load(path)
    bound = nlp.config["components"]["joint_coref_linker"]["model"].get("score_bound")
    pred, _ = predict(nlp, gold, args.batch_size)
    note = f"mode coref, {trained}, {training_steps(nlp)}; score_bound {bound}"
    rows = coref_only_rows(name, dataset, gold, pred, note, span_width_of(nlp))
    if getattr(args, "sweep_antecedents", False):
        k, sweep = antecedent_sweep(args, nlp, name, dataset.split("-")[0], dataset, joint=False)
        if k is not None:
            pred, _ = predict(nlp, gold, args.batch_size)
            rows += sweep + coref_only_rows(f"{name}{SWEPT}", dataset, gold, pred,
                                            f"{note}; predict_max_antecedents {k} (best on dev)", span_width_of(nlp))
    return rows


def coref_only_rows(name: str, dataset: str, gold: List[Doc], pred: List[Doc], note: str, max_span_width: int) -> List[Row]:
    """A coreference resolver's rows on ``dataset``, singletons counted as :data:`SINGLETONS_SCORED` says, and
    then also :data:`NO_SINGLETONS_METRIC`; each note says which protocol it follows."""
    singletons = scores_singletons(dataset)
    protocol = "singletons counted on both sides" if singletons else "singletons left out on both sides"
    rows = score_rows(name, dataset, gold, pred, f"{note}; {protocol}", keep_singletons=singletons,
                      max_span_width=max_span_width)
    if singletons:
        pairs = [(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)]
        average = coref_scores(pairs, keep_singletons=False, on_overlap="first")["coref_avg_f"]
        rows.append(row(name, dataset, NO_SINGLETONS_METRIC, round(average, 4), f"{note}; singletons left out on both sides"))
    return rows


# -- seeds --------------------------------------------------------------------------------------
#: The metrics that a joint system's ``_seed_mean`` rows average over the seeds.
SEED_MEAN_METRICS = ("coref_avg_f", "elm_f", "elh_f", "cluster_accuracy_multi", "hard_case_accuracy")


def seed_folders(models: str, corpus: str) -> List[Tuple[str, int]]:
    """``(folder, seed)`` of a corpus's model folders under ``models``: ``<corpus>`` is seed 0 (the
    configs' default), each ``<corpus>-seed<N>`` seed ``N``; in seed order."""
    others = [re.fullmatch(rf"{re.escape(corpus)}-seed(\d+)", d.name) for d in Path(models).glob(f"{corpus}-seed*")]
    return [(corpus, 0)] + sorted(((m.group(0), int(m.group(1))) for m in others if m), key=lambda s: s[1])


def seeded(system: str, seed: int) -> str:
    """The results-file name of ``system`` trained with ``seed`` (seed 0 keeps the plain name)."""
    return system + (f"_seed{seed}" if seed else "")


#: The results-file suffix of a system's mean over its seeds: ``<system>_seed_mean`` (:func:`seed_mean_rows`).
SEED_MEAN = "_seed_mean"


def seed_mean_rows(system: str, dataset: str, scored: Dict[int, List[Row]], seeds: Sequence[int],
                   metrics: Sequence[str]) -> List[Row]:
    """``<system>_seed_mean`` rows: each of ``metrics`` averaged over ``seeds`` (``scored[seed]``: that
    seed's rows). None unless there are several seeds and every one of them was scored: a mean over
    some of the seeds would read as the mean over all."""
    if len(seeds) < 2 or any(seed not in scored for seed in seeds):
        return []
    rows = []
    for metric in metrics:
        values = [r["value"] for seed in seeds for r in scored[seed] if r["metric"] == metric]
        if len(values) == len(seeds):
            rows.append(row(f"{system}{SEED_MEAN}", dataset, metric, round(sum(values) / len(values), 4),
                            f"mean over seeds {', '.join(map(str, seeds))}"))
    return rows


#: A seed's results-file name: ``<system>_seed<N>`` (seed 0 keeps the bare ``<system>``, :func:`seeded`).
SEED_NAME = re.compile(r"(?P<system>.+)_seed(?P<seed>\d+)")


def seed_means_across_runs(new_rows: Sequence[Row], earlier: Optional[Path] = None,
                           metrics: Sequence[str] = SEED_MEAN_METRICS,
                           required_seeds: Optional[Sequence[int]] = None) -> List[Row]:
    """``<system>_seed_mean`` rows (:func:`seed_mean_rows`) for each system and test set of which ``new_rows`` hold
    a seed's rows, over the seeds that have rows: each seed's from ``new_rows``, else from the results file
    ``earlier``. So seeds trained in different sessions still make a mean once the results hold them all, even
    where a checkout has lost the models (the rows stay, the models do not). ``required_seeds``: no mean unless
    every one of them has rows; otherwise any two seeds or more. The seeds' rows are the models' own: a
    ``<system>_seed1_predict_antecedents`` row is no seed of ``<system>_predict_antecedents``."""
    def seed_of(r: Row) -> Tuple[str, int]:
        match = SEED_NAME.fullmatch(r["system"])
        return (match["system"], int(match["seed"])) if match else (r["system"], 0)

    fresh = {(r["system"], r["dataset"], r["metric"]) for r in new_rows}
    older = json.loads(earlier.read_text(encoding="utf8"))["rows"] if earlier is not None and earlier.exists() else []
    rows = [r for r in older if (r["system"], r["dataset"], r["metric"]) not in fresh] + list(new_rows)
    by_seed: Dict[Tuple[str, str], Dict[int, List[Row]]] = {}  # (system, test set) -> seed -> its rows
    for r in rows:
        if not r["system"].endswith(SEED_MEAN):
            system, seed = seed_of(r)
            by_seed.setdefault((system, r["dataset"]), {}).setdefault(seed, []).append(r)
    means: List[Row] = []
    for system, dataset in sorted({(seed_of(r)[0], r["dataset"]) for r in new_rows}):
        scored = by_seed.get((system, dataset), {})  # one seed alone makes no mean (seed_mean_rows)
        means += seed_mean_rows(system, dataset, scored, required_seeds or sorted(scored), metrics)
    return means


def long_doc_run(model: str, text: str, threads: int, settings: Optional[Dict[str, Any]] = None) -> Tuple[float, float, float, bool]:
    """Run ``model`` on one long ``text`` in *this* process: ``(seconds, RSS MB after loading, peak RSS MB
    while the document runs, whether that peak is the document's alone)``. :func:`speed_rows` calls this
    in a fresh process, so that the benchmark's other models do not count. Even so the process peak
    would hide the document's: loading has a transient peak of its own, and a child started by fork +
    exec inherits the parent's high-water mark. So the peak is reset after loading where Linux allows
    it; elsewhere it is the process peak, as the row's note then says. ``settings``: the component's, set
    after loading (``configure``)."""
    torch.set_num_threads(threads)
    nlp = spacy.load(model)
    nlp.get_pipe(NAME).configure(**(settings or {}))
    loaded = proc_status_mb("VmRSS") or process_peak_mb()
    own_peak = reset_peak_rss()
    _, seconds = timed(lambda: nlp(text))
    peak = proc_status_mb("VmHWM") if own_peak else process_peak_mb()
    return seconds, loaded, peak, own_peak


def speed_rows(args: argparse.Namespace, gold: List[Doc]) -> List[Row]:
    path = model_path(args, "gum", "global")
    if path is None:
        return []
    nlp = spacy.load(path)
    rows = []
    predict(nlp, gold[:2], args.batch_size)  # warm-up
    for dtype in DTYPES:
        with using_encoder_dtype(nlp, NAME, dtype):
            docs, seconds = predict(nlp, gold, args.batch_size)
        rows.append(row("global", "gum-test", "words_per_s", words_per_s(docs, seconds),
                        f"encoder {dtype}; batch_size {args.batch_size}; {torch.get_num_threads()} threads"))
    # One long document: the test texts joined until 20,000 tokens.
    text, n = [], 0
    for g in gold:
        if n >= args.long_tokens:
            break
        text.append(g.text)
        n += len(g)
    long_doc = nlp.make_doc("\n\n".join(text))[: args.long_tokens].as_doc()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seconds, loaded, peak, own_peak = pool.apply(long_doc_run, (str(path), long_doc.text, args.threads))
    what = "peak RSS while it runs" if own_peak else "process peak RSS, loading included"
    rows.append(row("global", "gum-test", "long_doc_peak_rss_mb", round(peak),
                    f"one {len(long_doc):,}-token document; {what}, in a fresh process holding {loaded:.0f} MB "
                    "after loading the model"))
    rows.append(row("global", "gum-test", "long_doc_seconds", round(seconds, 1), f"one {len(long_doc):,}-token document"))
    return rows


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    data = load_datasets(args, spacy.blank("en"))
    rows: List[Row] = []
    for corpus, dataset in (("gum", "gum-test"), ("aida", "aida-test")):
        if dataset in data:
            rows += joint_rows(args, corpus, dataset, data[dataset])
    for corpus, dataset in (("ontogum", "ontogum-test"), ("litbank", "litbank-test")):
        if dataset in data:
            rows += refinement_rows(args, corpus, dataset, data[dataset])
    if "gum-test" in data and not args.no_speed and not getattr(args, "variants", None):
        rows += speed_rows(args, data["gum-test"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--models", default=str(ROOT / "training" / "jcl"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--long-tokens", type=int, default=20000)
    parser.add_argument("--limit", type=int, default=0, help="first N documents of each test set (smoke runs)")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed and long-document rows")
    parser.add_argument("--sweep-antecedents", action="store_true",
                        help="also choose each model's predict_max_antecedents on its dev split (rows <system>"
                             f"{SWEPT}, and the dev sweep's)")
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=None,
                        help="evaluate only these test sets (and only the systems whose models exist); their rows replace "
                             "those of the same system, test set and metric in --out, the others are kept; every row then "
                             "says when it was measured")
    parser.add_argument("--variants", nargs="+", choices=[v for v, _, _ in VARIANTS], default=None,
                        help="evaluate only the models of these variants (e.g. hybrid: training/jcl/<corpus>-hybrid/); "
                             "their rows are merged into --out as with --datasets")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--halves", default=str(HALVES_DIR),
                        help="where the predictions of each half of a seed's Standalone pair are recorded, and read "
                             "back once its model is gone (benchmarks/standalone_halves.py)")
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    fix_tie_breaks()
    rows = evaluate(args)
    partial = bool(args.datasets or args.variants)
    # The means over the seeds: with a partial rerun, also over the seeds whose rows an earlier run left in --out
    rows += seed_means_across_runs(rows, Path(args.out) if partial else None)
    if partial:  # a partial rerun: its rows replace those of the same system, test set and metric
        rows = merge_rerun(Path(args.out), rows, "python -m benchmarks.joint_coref_linker" + "".join(
            f" --{name} " + " ".join(values) for name, values in (("datasets", args.datasets), ("variants", args.variants)) if values))
    out = write_results(Path(args.out), "python -m spacy project run jcl-benchmark projects/joint_coref_linker", rows)
    print(f"wrote {out}")
    write_tables(out, Path(args.readme))


def is_converged(r: Row) -> bool:
    """Whether the row is a model trained to a dev plateau (issue 30's rows: ``converged`` in the system name)."""
    return "converged" in r["system"]


class SeedColumn(NamedTuple):
    """A column of :func:`seed_table`: ``metric`` of each seed's row (``swept``: of its row with the antecedents
    chosen on dev, :data:`SWEPT`), or with ``mean`` of the ``_seed_mean`` row (the swept rows have no mean)."""
    header: str
    metric: str
    mean: bool = False
    swept: bool = False


#: A value that a comparison lacks so far: its model is not trained or not scored yet.
NOT_YET = "–"


def seed_table(results: Path, label: str, systems: Sequence[Tuple[str, str]], dataset: str,
               columns: Sequence[SeedColumn], seeds: Sequence[int] = (0, 1)) -> str:
    """A comparison over seeds on ``dataset``: one line per ``(name, system)`` of ``systems`` (the first column,
    headed ``label``, gives the name), one cell per column: the seeds' values in seed order joined by " / ", or
    the mean. :data:`NOT_YET` stands for a row the results lack, so the table also says which runs of the
    comparison are still to do."""
    values = {(r["system"], r["metric"]): r["value"] for r in json.loads(results.read_text(encoding="utf8"))["rows"]
              if r["dataset"] == dataset}

    def cell(system: str, column: SeedColumn) -> str:
        names = ([system + SEED_MEAN] if column.mean else
                 [seeded(system, seed) + (SWEPT if column.swept else "") for seed in seeds])
        return " / ".join(format_value(values[name, column.metric]) if (name, column.metric) in values else NOT_YET
                          for name in names)

    return markdown_table([label, *(column.header for column in columns)],
                          [[name, *(cell(system, column) for column in columns)] for name, system in systems])


#: The two comparisons over seeds at convergence (issue 30): the refinements of the coarse-to-fine LitBank
#: resolver, and the joint models against Standalone on GUM (nearest window). Each is ``(marker, label,
#: systems, test set, columns)``.
SEED_COMPARISONS = (
    ("refinement_seeds", "refinement", [(r, f"coref_{r}_converged_coarse") for r in REFINEMENTS], "litbank-test",
     (SeedColumn("coref avg F1, seeds 0 / 1", "coref_avg_f"), SeedColumn("mean", "coref_avg_f", mean=True),
      SeedColumn("antecedents chosen on dev", "coref_avg_f", swept=True),
      SeedColumn("no singletons", "coref_avg_f_no_singletons"))),
    ("mode_seeds", "system", [(s, f"{s}_converged") for s in ("standalone", "local", "global")], "gum-test",
     (SeedColumn("coref avg F1, seeds 0 / 1", "coref_avg_f"), SeedColumn("mean", "coref_avg_f", mean=True),
      SeedColumn("ELh, seeds 0 / 1", "elh_f"), SeedColumn("mean", "elh_f", mean=True),
      SeedColumn("hard cases, seeds 0 / 1", "hard_case_accuracy"))),
)


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Path = PAGES[NAME]) -> None:
    """The docs page's section: joint EL + coreference, the hard cases (paper Table 4), the refinement
    comparison, speed and memory."""
    speed_metrics = ("words_per_s", "long_doc_peak_rss_mb", "long_doc_seconds")

    def joint(converged: bool) -> str:
        return results_to_markdown(results, pivot=True, notes=False, select=lambda r: is_converged(r) == converged
                                   and r["dataset"] in ("gum-test", "aida-test") and r["metric"] not in speed_metrics
                                   and not r["metric"].startswith("hard_case_"))

    def refinement(converged: bool) -> str:  # test scores only: the learning curves have their own table
        return results_to_markdown(results, pivot=True, notes=False, select=lambda r: is_converged(r) == converged
                                   and r["system"].startswith("coref_") and r["dataset"].endswith("-test")
                                   and "@" not in r["metric"])

    hard = results_to_markdown(results, pivot=True, notes=False, select=lambda r: r["metric"].startswith("hard_case_"))
    speed = results_to_markdown(results, pivot=False, notes=True, select=lambda r: r["metric"] in speed_metrics)
    parts = ["Models trained to a dev plateau (`converged` in their names), the joint models and then the "
             "coreference resolvers:", joint(True), refinement(True),
             "Shorter trainings (the configs' step counts, 100 to 1,000 steps), which the readings below compare:",
             joint(False), refinement(False), "The hard cases (paper Table 4) of every model:", hard, speed]
    sweep = results_to_markdown(results, pivot=False, notes=False, select=lambda r: "_similarity_weight_" in r["metric"])
    if len(sweep.strip().splitlines()) > 2:  # more than the header: the sweep has run
        parts += ["The AIDA dev sweep of `similarity_weight`:", sweep]
    antecedents = results_to_markdown(results, pivot=False, notes=False,
                                      select=lambda r: "_predict_max_antecedents_" in r["metric"])
    if len(antecedents.strip().splitlines()) > 2:
        parts += ["The dev sweeps of `predict_max_antecedents` (`--sweep-antecedents`; rows `<system>_predict_antecedents` "
                  "predict with the best):", antecedents]
    table = "\n\n".join(parts)
    publish_table(readme, NAME, table)
    curve = suffix_table(results, CURVE_STEP, "step", (*CURVE_METRICS, "train_minutes"))
    publish_table(readme, f"{NAME}_curve", curve)
    for marker, label, systems, dataset, columns in SEED_COMPARISONS:
        publish_table(readme, f"{NAME}_{marker}", seed_table(results, label, systems, dataset, columns))


if __name__ == "__main__":
    main()

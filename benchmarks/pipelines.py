"""The three composed pipelines of configs/pipelines, end to end on AIDA test (docs/pipelines.md, which describes
the pipelines, their peers and the metrics). Run as ``python -m spacy project run all projects/pipelines``.
"""
import argparse
from pathlib import Path
from typing import List, Optional, Sequence

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc

from spacy_el.scoring import el_scores, ner_scores
from spacy_el.scoring.cluster_el import cluster_el_scores
from spacy_el.scoring.coref import coref_scores
from spacy_el.scoring.scorers import doc_clusters, doc_linked_clusters

from .baselines import gold_entities, gold_links, link_with_prior, predicted_links
from .common import AIDA_CORPUS, EL_BASELINE, fix_tie_breaks, read_corpus, timed, timed_pipe, words_per_s
from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

NAME = "pipelines"
DATASET = "aida-test"
JCL = "joint_coref_linker"
BATCH_SIZE = 8


def quality_rows(system: str, gold: Sequence[Doc], pred: Sequence[Doc], note: str, *, typed: bool, clusters: bool) -> List[Row]:
    rows: List[Row] = []
    if typed:
        ner = ner_scores([(gold_entities(g), [(e.start_char, e.end_char, e.label_) for e in p.ents]) for g, p in zip(gold, pred)])
        rows.append(row(system, DATASET, "ner_f", round(ner["ner_f"], 4), note))
    el = el_scores([(gold_links(g), predicted_links(p)) for g, p in zip(gold, pred)])
    rows += [row(system, DATASET, m, round(el[m], 4), note) for m in ("el_micro_f", "el_macro_f")]
    if clusters:
        coref = coref_scores([(doc_clusters(g), doc_clusters(p)) for g, p in zip(gold, pred)], keep_singletons=True, on_overlap="first")
        elh = cluster_el_scores([(doc_linked_clusters(g), doc_linked_clusters(p)) for g, p in zip(gold, pred)])
        rows += [row(system, DATASET, "coref_avg_f", round(coref["coref_avg_f"], 4), note),
                 row(system, DATASET, "elh_f", round(elh["elh_f"], 4), note)]
    return rows


def load(path: Path) -> Language:
    if not path.exists():
        raise SystemExit(f"{path} not found: run `python -m spacy project run assemble-pipelines projects/pipelines` first.")
    return spacy.load(path)


def recipe_a(args: argparse.Namespace, gold: Sequence[Doc], texts: List[str], speed_note: str) -> List[Row]:
    rows: List[Row] = []
    nlp = load(Path(args.models) / "ner_ner4el")
    pred, seconds = timed_pipe(nlp, texts, BATCH_SIZE)
    system = "ner+ner_constrained_linker"
    rows += quality_rows(system, gold, pred, "configs/pipelines/ner_ner4el.cfg", typed=True, clusters=False)
    rows.append(row(system, DATASET, "words_per_s", words_per_s(pred, seconds), speed_note))
    el_nlp = load(Path(args.el_baseline))
    pred, seconds = timed_pipe(el_nlp, texts, BATCH_SIZE)
    system = "ner+spacy_entity_linker"
    rows += quality_rows(system, gold, pred, "configs/baselines/entity_linker.cfg (peer)", typed=True, clusters=False)
    rows.append(row(system, DATASET, "words_per_s", words_per_s(pred, seconds), speed_note))
    with nlp.select_pipes(enable=["tok2vec", "ner"]):
        pred = list(nlp.pipe(texts, batch_size=BATCH_SIZE))
    link_with_prior(nlp.get_pipe("ner_constrained_linker").kb, pred)
    rows += quality_rows("ner+prior_only", gold, pred, "the same ner mentions, most probable candidate (peer)", typed=True, clusters=False)
    return rows


def recipe_with_jcl(args: argparse.Namespace, gold: Sequence[Doc], texts: List[str], directory: str, upstream_name: str,
                    typed: bool, speed_note: str) -> List[Row]:
    """Recipes (b) and (c): the upstream alone, composed, and composed with the model's cluster links."""
    nlp = load(Path(args.models) / directory)
    config = f"configs/pipelines/{directory}.cfg"
    with nlp.select_pipes(disable=[JCL]):
        upstream, upstream_seconds = timed_pipe(nlp, texts, BATCH_SIZE)
    rows = quality_rows(upstream_name, gold, upstream, f"{config} without {JCL} (peer)", typed=typed, clusters=False)
    rows.append(row(upstream_name, DATASET, "words_per_s", words_per_s(upstream, upstream_seconds), speed_note))
    jcl = nlp.get_pipe(JCL)
    for cluster_link, suffix in (("upstream", ""), ("model", " (model links)")):
        jcl.configure(cluster_link=cluster_link)
        composed, seconds = timed(lambda: list(jcl.pipe([d.copy() for d in upstream], batch_size=BATCH_SIZE)))
        system = f"{upstream_name}+{JCL}{suffix}"
        rows += quality_rows(system, gold, composed, f"{config}, cluster_link={cluster_link}", typed=typed, clusters=True)
        if cluster_link == "upstream":
            rows.append(row(system, DATASET, "words_per_s", words_per_s(composed, upstream_seconds + seconds),
                            f"{speed_note}; upstream + {JCL} times"))
    return rows


def evaluate(args: argparse.Namespace) -> List[Row]:
    torch.set_num_threads(args.threads)
    gold_path = AIDA_CORPUS / "test.spacy"
    if not gold_path.exists():
        raise SystemExit(f"{gold_path} not found: run `python -m spacy project run convert-aida` first.")
    gold = read_corpus("spacy-el.AidaPlusReader.v1", spacy.blank("en"), path=gold_path)
    gold = gold[: args.limit] if args.limit else gold
    texts = [g.text for g in gold]
    speed_note = f"nlp.pipe batch_size={BATCH_SIZE}, {args.threads} thread(s), CPU"
    rows: List[Row] = []
    for recipe in args.recipes:
        print(f"recipe {recipe}")
        if recipe == "a":
            rows += recipe_a(args, gold, texts, speed_note)
        elif recipe == "b":
            rows += recipe_with_jcl(args, gold, texts, "nsl_jcl", "ner_stack_lstm", True, speed_note)
        else:
            rows += recipe_with_jcl(args, gold, texts, "entqa_jcl", "entqa", False, speed_note)
    return rows


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Optional[Path] = PAGES[NAME]) -> None:
    publish_table(readme, NAME, results_to_markdown(results, pivot=True, notes=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=str(ROOT / "training" / "pipelines"))
    parser.add_argument("--el-baseline", default=str(EL_BASELINE))
    parser.add_argument("--recipes", nargs="+", default=["a", "b", "c"], choices=["a", "b", "c"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="first N test documents (smoke runs)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
    args = parser.parse_args()
    fix_tie_breaks()
    out = write_results(Path(args.out), "python -m spacy project run pipelines-benchmark projects/pipelines", evaluate(args))
    print(f"wrote {out}")
    write_tables(out, args.readme)


if __name__ == "__main__":
    main()

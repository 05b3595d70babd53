"""Size and candidate recall@k of the evaluation KB's alias table on AIDA and GUM dev/test gold mentions.

    python -m benchmarks.eval_kb --kb kb/eval --data ../shared/data --open-kb kb/open

Also the paper's Table 4 cases per AIDA split and, with ``--open-kb``, the open-data KB that ``package`` ships
(``--open-only``: only that one, merged into the file). What each row means is on docs/reproducing.md, whose table
it regenerates from benchmarks/results/eval_kb.json.
"""
import argparse
from pathlib import Path
from typing import Dict, List, Tuple

from spacy.tokens import Doc

from spacy_el.corpora import read_aida, read_gum
from spacy_el.kb import ElKnowledgeBase
from spacy_el.scoring.candidates import alias_table_recall, linked_mentions, mate_only_mentions
from spacy_el.pipeline.joint_coref_linker import DEFAULT_CANDIDATES as JCL_DEFAULT_CANDIDATES

from .common import SHARED_DATA
from .results_io import RESULTS_DIR, ROOT, row, write_merged, write_results
from .tables import PAGES, publish_table, published_only, results_to_markdown

COMMAND = "python -m spacy project run eval-kb projects/kb"
KS = (1, 10, 30, 100)
JCL_TOP_K = JCL_DEFAULT_CANDIDATES["top_k"]  # the candidates joint_coref_linker scores (16, as the configs)


def recall_rows(kb: ElKnowledgeBase, dataset: str, mentions: List[Tuple[str, str]], system: str, notes: str) -> List[Dict]:
    scores = alias_table_recall(kb, mentions, KS)
    in_kb = sum(1 for _, kb_id in mentions if kb_id in kb) / max(len(mentions), 1)
    rows = [row(system, dataset, metric, round(value, 4), notes) for metric, value in scores.items()]
    rows.append(row(system, dataset, "gold_in_kb", round(in_kb, 4), notes))
    rows.append(row(system, dataset, "mentions", len(mentions), notes))
    return rows


def table4_rows(kb: ElKnowledgeBase, dataset: str, docs: List[Doc]) -> List[Dict]:
    """The paper's Table 4 cases for ``joint_coref_linker``'s candidates (module docstring)."""
    counts = mate_only_mentions(kb, docs, JCL_TOP_K)
    notes = f"share of the {counts['in_linked_clusters']:,} mentions of linked clusters of two or more"
    share = counts["mate_only"] / max(counts["in_linked_clusters"], 1)
    system = f"alias_table_top{JCL_TOP_K}_exact"
    return [row(system, dataset, "table4_mentions", counts["mate_only"], notes),
            row(system, dataset, "table4_share", round(share, 4), notes)]


OPEN_NOTES = "aliases from titles, GUM train and DWIE priors only (what `package` ships)"


def open_kb_rows(kb: ElKnowledgeBase, aida: Dict[str, List[Doc]], data: Path) -> List[Dict]:
    """The open-data KB's size and its recall on the same gold mentions (module docstring)."""
    rows = [row("eval_kb_open", "eval-kb", "aliases", kb.n_aliases, ", ".join(kb.alias_sources or ["unknown sources"]))]
    for split in ("dev", "test"):
        rows += recall_rows(kb, f"aida-{split}", list(linked_mentions(aida[split])), "alias_table_open", OPEN_NOTES)
        gum = read_gum(data / "gum", split)
        rows += recall_rows(kb, f"gum-{split}", list(linked_mentions(gum, "mentions", names_only=True)),
                            "alias_table_open_names", OPEN_NOTES)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, default=ROOT / "kb" / "eval")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "eval_kb.json")
    parser.add_argument("--open-kb", type=Path, default=None, help="also measure this open-data KB (kb/open)")
    parser.add_argument("--open-only", action="store_true", help="measure only --open-kb; merge its rows into --out")
    args = parser.parse_args()
    if args.open_only:
        if args.open_kb is None:
            parser.error("--open-only needs --open-kb")
        aida = read_aida(args.data / "aida", splits=("dev", "test"))
        rows = open_kb_rows(ElKnowledgeBase.load(args.open_kb), aida, args.data)
        write_merged(args.out, COMMAND, rows)
        write_tables(args.out)
        return
    kb = ElKnowledgeBase.load(args.kb)
    rows = [
        row("eval_kb", "eval-kb", "entities", kb.n_entities, "PPRforNED titles + Wikipedia summaries + GUM + DWIE titles"),
        row("eval_kb", "eval-kb", "aliases", kb.n_aliases, "titles, AIDA + GUM train mentions, PPRforNED train lists, DWIE priors"),
    ]
    aida = read_aida(args.data / "aida", splits=("train", "dev", "test"))
    system = "alias_table"
    for split in ("dev", "test"):
        rows += recall_rows(kb, f"aida-{split}", list(linked_mentions(aida[split])), system, "InKB gold mentions")
        gum = read_gum(args.data / "gum", split)
        rows += recall_rows(kb, f"gum-{split}", list(linked_mentions(gum, "mentions")), system, "all linked mentions, pronouns included")
        rows += recall_rows(
            kb, f"gum-{split}", list(linked_mentions(gum, "mentions", names_only=True)), f"{system}_names",
            "linked mentions with an upper-case letter (names)",
        )
    for split in ("train", "dev", "test"):
        rows += table4_rows(kb, f"aida-{split}", aida[split])
    if args.open_kb is not None:
        rows += open_kb_rows(ElKnowledgeBase.load(args.open_kb), aida, args.data)
    write_results(args.out, COMMAND, rows)
    write_tables(args.out)


@published_only
def write_tables(results: Path = RESULTS_DIR / "eval_kb.json", page: Path = PAGES["eval_kb"]) -> None:
    publish_table(page, "eval_kb", results_to_markdown(results, pivot=True, notes=True))


if __name__ == "__main__":
    main()

"""``python -m spacy_el convert CORPUS INPUT OUTPUT_DIR``: corpus files -> ``.spacy`` DocBins."""

from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app


class CorpusFormat(str, Enum):
    aida = "aida"
    aida_tsv = "aida-tsv"
    elevant = "elevant"
    gum = "gum"
    gum_conll = "gum-conll"
    ontogum = "ontogum"
    litbank = "litbank"
    litbank_entities = "litbank-entities"
    gap = "gap"


@app.command("convert")
def convert_cli(
    corpus: CorpusFormat = typer.Argument(
        ..., help="Corpus format (see the list above)", case_sensitive=False
    ),
    input_path: Path = typer.Argument(..., help="Input file or directory (depends on CORPUS)", exists=True),
    output_dir: Path = typer.Argument(..., help="Directory to write <part>.spacy files to", file_okay=False),
    splits_path: Optional[Path] = typer.Option(
        None,
        "--splits",
        "-s",
        help="Splits file (GUM splits.md / LitBank splits.json); found near INPUT by default",
        exists=True,
        dir_okay=False,
    ),
    wiki_map_path: Optional[Path] = typer.Option(
        None,
        "--wiki-map",
        "-w",
        help="GUM coref/wiki_map.tab for span._.qid; found near INPUT by default",
        exists=True,
        dir_okay=False,
    ),
    conll_dir: Optional[Path] = typer.Option(
        None,
        "--conll-dir",
        "-c",
        help="aida-tsv only: directory with the CoNLL-2003 files for NER labels",
        exists=True,
        file_okay=False,
    ),
    lang: str = typer.Option(
        "en", "--lang", "-l", help="Language of the blank tokenizer for raw-text corpora (elevant, gap)"
    ),
    n_docs: int = typer.Option(
        0, "--n-docs", "-n", help="Keep at most this many documents per output file (0: all)"
    ),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars"),
) -> None:
    """Convert a corpus to .spacy files (DocBins with user data), one per split.

    \b
    CORPUS and INPUT:
      aida              dir with train.txt, valid.txt, test.txt and
                        AIDA-YAGO2-annotations.tsv
      aida-tsv          AIDA-YAGO2-dataset.tsv (label ENT unless --conll-dir)
      elevant           benchmark .jsonl file or a directory of them
      gum               GUM root, a dir of .tsv files or of split subdirs
      gum-conll         GUM root or coref/gum/conll
      ontogum           GUM root or coref/ontogum/conll
      litbank           LitBank root or coref/conll
      litbank-entities  LitBank root or entities/tsv
      gap               GAP .tsv file, or a dir with
                        gap-{development,validation,test}.tsv

    Gold links are in ent.kb_id_ ("NIL" for NIL mentions), coreference clusters in
    doc.spans["coref_clusters_<n>"] and doc._.coref_clusters (see spacy_el.corpora).
    """
    import spacy

    from ..corpora import corpus_stats
    from ..corpora.convert import convert_corpus, write_docbin

    nlp = spacy.blank(lang) if corpus in (CorpusFormat.elevant, CorpusFormat.gap) else None
    try:
        parts = convert_corpus(
            corpus.value,
            input_path,
            splits_path=splits_path,
            wiki_map_path=wiki_map_path,
            conll_dir=conll_dir,
            nlp=nlp,
            limit=n_docs,
            show_progress=show_progress,
        )
    except (ValueError, FileNotFoundError) as err:
        msg.fail(Errors.E744.format(input_path=input_path, corpus=corpus.value), str(err), exits=1)
    rows = []
    for name, docs in parts.items():
        # Replaced like spaCy's own convert does, so a project step can rerun; said aloud, never silent.
        replaced = (output_dir / f"{name}.spacy").exists()
        path = write_docbin(docs, output_dir / f"{name}.spacy")
        stats = corpus_stats(docs)
        rows.append(
            (
                path.name,
                stats["docs"],
                stats["tokens"],
                stats["ents"],
                stats["ents_linked"],
                stats["ents_nil"],
                stats["mentions"],
                stats["clusters"],
            )
        )
        msg.good(f"{'Replaced' if replaced else 'Wrote'} {path} ({stats['docs']} docs)")
    header = ("file", "docs", "tokens", "ents", "linked", "NIL", "mentions", "clusters")
    msg.table(rows, header=header, divider=True)

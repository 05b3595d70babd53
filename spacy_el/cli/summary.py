"""``python -m spacy_el summary``: one compact table of the scores in several metrics files."""
from pathlib import Path
from typing import List, Optional

import srsly
import typer
from wasabi import msg

from ..errors import Errors
from ._app import app

# The headline metrics, in the order they are shown; a file shows those it has (coreference: the CoNLL
# metrics MUC, B3 and CEAF-e, and their average).
HEADLINE = ("ner_f", "el_micro_f", "ed_accuracy", "coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "elm_f",
            "elh_f")


def summary_rows(paths: List[Path]) -> List[List[str]]:
    """One row per metrics file (its name without ``.json``, then each headline metric or "")."""
    rows = []
    for path in paths:
        scores = srsly.read_json(path)
        if not isinstance(scores, dict):
            raise ValueError(Errors.E709.format(path=path))
        rows.append([path.stem] + [f"{scores[m]:.3f}" if isinstance(scores.get(m), (int, float)) else "" for m in HEADLINE])
    return rows


@app.command("summary")
def summary_cli(
    metrics: List[Path] = typer.Argument(..., help="Metrics files written by `python -m spacy_el evaluate --output`", exists=True, dir_okay=False),
    html: Optional[Path] = typer.Option(None, "--html", help="An HTML visualisation to point to"),
) -> None:
    """Print the headline scores of several metrics files as one table."""
    try:
        rows = summary_rows(metrics)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.table(rows, header=["scores"] + list(HEADLINE), divider=True)
    if html is not None:
        msg.info(f"Visualisation: {html.resolve()}")

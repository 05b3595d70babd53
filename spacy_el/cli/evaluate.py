"""``python -m spacy_el evaluate``: score a pipeline with spacy_el's metrics.

``spacy evaluate`` prints only a fixed set of spaCy's own keys; this command runs the pipeline on a
``.spacy`` corpus and prints every metric of the chosen spacy_el scorers (EL, NER, coreference,
cluster-level EL), and writes them as JSON if asked.
"""
from pathlib import Path
from typing import Dict, List, Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app, load_pipeline_for_corpus

SCORERS = ("el", "ner", "coref", "cluster-el")


def run_scorers(examples: List, names: List[str]) -> Dict[str, float]:
    from ..scoring import scorers

    makers = {
        "el": scorers.make_el_scorer,
        "ner": scorers.make_ner_scorer,
        "coref": scorers.make_coref_scorer,
        "cluster-el": scorers.make_cluster_el_scorer,
    }
    results: Dict[str, float] = {}
    for name in names:
        results.update(makers[name]()(examples))
    return results


@app.command("evaluate")
def evaluate_cli(
    model: str = typer.Argument(..., help="Pipeline package name or path"),
    data_path: Path = typer.Argument(..., help=".spacy file with gold annotation", exists=True, dir_okay=False),
    scorer: Optional[List[str]] = typer.Option(None, "--scorer", "-s", help=f"Scorers to run (repeatable): {', '.join(SCORERS)}; default all"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the scores to this JSON file"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for CPU"),
    gold_preproc: bool = typer.Option(False, "--gold-preproc", "-G", help="Use the gold tokenisation"),
    skip_masked: bool = typer.Option(False, "--skip-masked", help="Leave out the text-masked documents (GUM's Reddit documents: underscores for words)"),
) -> None:
    """Run a pipeline on a .spacy corpus and print spacy_el's metrics."""
    from ..kb.files import write_json
    from ..training.gold_corpus import gold_corpus

    names = list(scorer or SCORERS)
    unknown = [n for n in names if n not in SCORERS]
    if unknown:
        msg.fail(Errors.E021.format(what="scorer", name=unknown[0], known=", ".join(SCORERS)), exits=1)
    nlp = load_pipeline_for_corpus(model, data_path, gpu_id)
    try:
        corpus = gold_corpus(data_path, nlp, gold_preproc=gold_preproc, skip_masked=skip_masked)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    examples = list(corpus(nlp))
    predicted = nlp.pipe(eg.predicted for eg in examples)
    for eg, doc in zip(examples, predicted):
        eg.predicted = doc
    scores = run_scorers(examples, names)
    rows = [(key, f"{value:.4f}") for key, value in scores.items() if isinstance(value, float)]
    msg.table(rows, header=("metric", "value"), divider=True)
    if output is not None:
        write_json(output, scores)
        msg.good(f"Saved scores to {output}")

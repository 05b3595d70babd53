"""``python -m spacy_el tune MODEL DEV OUTPUT --setting NAME --values V1,V2,...``: choose a prediction setting of
a trained pipeline on a dev corpus and save the pipeline with it (:mod:`spacy_el.training.tune`)."""
from pathlib import Path
from typing import Any, List

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app, load_pipeline_for_corpus


def parse_values(text: str) -> List[Any]:
    """``"50,100,150"`` -> ``[50, 100, 150]``: each value read as JSON where it is JSON (numbers, ``true``),
    as a string otherwise. The standard library's ``json`` reads ``0.3`` as 0.3 (srsly's: 0.30000000000000004)."""
    import json

    values: List[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise typer.BadParameter(Errors.E740.format(text=text), param_hint="--values")
        try:
            values.append(json.loads(part))
        except ValueError:
            values.append(part)
    return values


@app.command("tune")
def tune_cli(
    model: str = typer.Argument(..., help="Pipeline package name or path"),
    dev_path: Path = typer.Argument(..., help=".spacy file with gold annotation (a dev split, not the test set)", exists=True, dir_okay=False),
    output: Path = typer.Argument(..., help="Folder to save the pipeline with the chosen value to"),
    setting: str = typer.Option(..., "--setting", help="The component setting to choose, e.g. predict_max_antecedents"),
    values: str = typer.Option(..., "--values", help="Comma-separated values to try, e.g. 50,100,150,250"),
    component: str = typer.Option("joint_coref_linker", "--component", help="The component whose setting it is"),
    min_gain: float = typer.Option(0.0, "--min-gain", min=0.0, help="Give --values cheapest first: a later value is kept only when its dev score beats the one kept so far by more than this (0: the best)"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for CPU"),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT if it exists"),
    skip_masked: bool = typer.Option(False, "--skip-masked", help="Leave out the text-masked documents (GUM's Reddit documents: underscores for words)"),
) -> None:
    """Choose a prediction setting of a trained pipeline on a dev corpus, by the weighted score training selected
    the model by (training.score_weights), and save the pipeline with it; what was tried is recorded in its meta.
    With --min-gain, a costlier value (later in --values) must beat the one kept by more than that to be kept."""
    from ..training.gold_corpus import gold_corpus
    from ..training.tune import TUNED_META, save_pipeline, tune_setting

    tried = parse_values(values)
    if output.exists() and not force:
        msg.fail(Errors.E715.format(output=output), exits=1)
    nlp = load_pipeline_for_corpus(model, dev_path, gpu_id)
    try:
        dev_corpus = gold_corpus(dev_path, nlp, skip_masked=skip_masked)
        tuned = tune_setting(nlp, dev_corpus, component, setting, tried, min_gain=min_gain,
                             on_value=lambda value, score: msg.info(f"{setting} = {value}: {score:.4f}"))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.table([(str(v), f"{s:.4f}", "<- kept" if v == tuned.value else "") for v, s in tuned.scores],
              header=(setting, "dev score", ""), divider=True)
    nlp.meta[TUNED_META] = tuned.meta(str(dev_path))
    save_pipeline(nlp, output, force=force)
    msg.good(f"Saved the pipeline with {component}.{setting} = {tuned.value} to {output}")

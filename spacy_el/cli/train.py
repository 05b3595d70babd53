"""``python -m spacy_el train CONFIG --output DIR [--resume] [--checkpoint-every N] [overrides...]``:
``spacy train`` with checkpoints, so that a long training can span several runs
(:mod:`spacy_el.training.resume`)."""
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ._app import app


@app.command("train", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def train_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Training config (as for spacy train)", exists=True, dir_okay=False),
    output: Path = typer.Option(..., "--output", "-o", help="Output directory: model-last, model-best, checkpoints/"),
    resume: bool = typer.Option(False, "--resume", help="Continue from the newest intact checkpoint in OUTPUT (start afresh when there is none)"),
    checkpoint_every: Optional[int] = typer.Option(None, "--checkpoint-every", min=0, help="Steps between checkpoints: a multiple of training.eval_frequency (default: eval_frequency; 0: none)"),
    keep: int = typer.Option(2, "--keep-checkpoints", min=1, help="Checkpoints kept"),
    max_minutes: Optional[float] = typer.Option(None, "--max-minutes", min=0, help="Stop at the first checkpoint after this many minutes (resumable: rerun with --resume to go on)"),
    code_path: Optional[Path] = typer.Option(None, "--code", "-c", help="Python file with registered functions to import"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for CPU"),
) -> None:
    """Train a pipeline as spacy train does, with checkpoints (weights, optimizer state, RNG states, position in
    the corpus, best score) every N steps in OUTPUT/checkpoints. Rerun the same command with --resume after an
    interruption: training continues exactly as if it had not stopped. Config overrides as for spacy train
    (--training.max_steps 2000)."""
    from spacy.cli._util import import_code, parse_config_overrides

    from ..training import train

    overrides = parse_config_overrides(ctx.args)
    import_code(code_path)
    _, path = train(config_path, output, resume=resume, checkpoint_every=checkpoint_every, keep=keep, overrides=overrides,
                    use_gpu=gpu_id, max_minutes=max_minutes)
    msg.good(f"Done: {path}")

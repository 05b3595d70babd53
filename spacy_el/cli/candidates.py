"""``python -m spacy_el candidates train-encoder``: train the dense candidate generator's mention encoder."""
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import candidates_app


@candidates_app.command("train-encoder")
def train_encoder_cli(
    kb_dir: Path = typer.Argument(..., help="KB directory with entity vectors and a dense index", exists=True, file_okay=False),
    data: Path = typer.Argument(..., help="The shared data folder (reads aida/ and gum/ training splits)", exists=True, file_okay=False),
    output: Path = typer.Argument(..., help="Folder for the encoder: best/ (the one to use) and state/ (to resume)"),
    base_model: Optional[str] = typer.Option(None, "--base-model", help="Hugging Face hub name or local model folder (default: packaged MiniLM)"),
    epochs: int = typer.Option(3, "--epochs", help="Passes over the training mentions"),
    batch_size: int = typer.Option(32, "--batch-size", help="Mentions per step"),
    hard_negatives: int = typer.Option(8, "--hard-negatives", help="Negatives mined from the index per mention"),
    lr: float = typer.Option(2e-5, "--lr", help="Transformer learning rate"),
    dev_limit: int = typer.Option(2000, "--dev-limit", help="Dev mentions scored after each epoch (0: all)"),
    max_steps: int = typer.Option(0, "--max-steps", help="Stop after this many steps (0: no limit; smoke runs)"),
    layers: Optional[int] = typer.Option(None, "--layers", help="Keep the base model's first N layers (default: all); cost is about proportional"),
    window_tokens: int = typer.Option(32, "--window-tokens", help="spaCy tokens per context window"),
    window_stride: Optional[int] = typer.Option(None, "--window-stride", help="Tokens between window starts (default: half a window; the window: no overlap, each token read once)"),
    resume: bool = typer.Option(False, "--resume", help="Continue from output/state"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Train the mention encoder on AIDA train and GUM train (names) against the KB's fixed entity vectors,
    with in-batch and mined hard negatives; dev recall@k on AIDA dev + GUM dev after each epoch."""
    import random

    from ..kb import ElKnowledgeBase
    from ..candidates.mention_encoder.runtime import MentionEncoder
    from ..candidates.mention_encoder.training import TrainingSettings, train_mention_encoder
    from ..recipes.mention_examples import split_examples

    kb = ElKnowledgeBase.load(kb_dir)
    if kb.entities.vectors is None or kb.dense_index is None:
        raise ValueError(Errors.E706.format(kb_dir=kb_dir))
    train = [ex for examples in split_examples(data, kb, "train").values() for ex in examples]
    dev = [ex for examples in split_examples(data, kb, "dev").values() for ex in examples]
    if dev_limit and len(dev) > dev_limit:
        dev = random.Random(seed).sample(dev, dev_limit)
    msg.info(f"{len(train):,} training mentions, {len(dev):,} dev mentions")
    encoder = MentionEncoder.from_base(
        base_model or "", entity_encoder=kb.vectors_encoder, layers=layers, window_tokens=window_tokens,
        window_stride=window_stride,
    )
    settings = TrainingSettings(epochs=epochs, batch_size=batch_size, hard_negatives=hard_negatives, lr=lr,
                                seed=seed, max_steps=max_steps)
    curve = train_mention_encoder(encoder, kb.entities.vectors, kb.dense_index, train, dev, output, settings,
                                  resume=resume, log=msg.text)
    msg.good(f"Best encoder in {output / 'best'}; curve: {curve}")


@candidates_app.command("attach-encoder")
def attach_encoder_cli(
    kb_dir: Path = typer.Argument(..., help="KB directory", exists=True, file_okay=False),
    encoder: Path = typer.Argument(..., help="Mention encoder folder (e.g. training/mention_encoder/best)", exists=True, file_okay=False),
) -> None:
    """Make the KB carry the mention encoder, so that dense and hybrid candidates work wherever the KB goes
    (every pipeline that holds the KB holds the encoder too). Refuses a KB whose vectors another encoder made."""
    from ..candidates.dense import attach_mention_encoder
    from ..kb import ElKnowledgeBase

    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    attach_mention_encoder(kb, encoder)
    kb.to_disk(kb_dir)
    msg.good(f"{kb_dir} now carries the mention encoder {encoder}")

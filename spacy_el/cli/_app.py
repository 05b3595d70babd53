"""The typer application behind ``python -m spacy_el``, in spaCy's CLI style."""
from pathlib import Path
from typing import Any

import click
import typer
from typer.core import TyperGroup
from wasabi import msg

from ..errors import is_spacy_el_message

# Errors that spacy_el raises on purpose for bad input (a bad file, a missing directory, an invalid
# option value): their message already says what to fix, so the CLI prints it instead of a traceback.
EXPECTED_ERRORS = (ValueError, OSError, ImportError)


def is_expected_error(err: BaseException) -> bool:
    """Whether ``err`` is one of spacy_el's own input errors (its message starts with "[spacy_el E123]")."""
    return isinstance(err, EXPECTED_ERRORS) and is_spacy_el_message(str(err))


class SpacyElGroup(TyperGroup):
    """Every command runs inside the top group's ``invoke``, so one handler covers them all. Other
    exceptions (bugs) keep their traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EXPECTED_ERRORS as err:
            if not is_expected_error(err):
                raise
            msg.fail(" ".join(str(err).split()))  # one line, whatever the message's own line breaks
            raise typer.Exit(code=1) from err


def load_pipeline_for_corpus(model: str, corpus_path: Path, gpu_id: int) -> Any:
    """The pipeline ``model`` (on GPU ``gpu_id`` when >= 0) for scoring on the ``.spacy`` corpus at ``corpus_path``;
    a corpus of no document (which would score 0.0 everywhere) fails the command before the pipeline is loaded."""
    import spacy

    from ..pipeline.configure import load_pipeline
    from ..training.gold_corpus import check_docbin

    try:
        check_docbin(corpus_path)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    return load_pipeline(model)


# Help texts are plain text: with rich markup on, "[initialize] vectors" and "pip install 'spacy_el[ray]'" lose
# their brackets, read as style tags.
PLAIN_HELP = None
app = typer.Typer(
    name="spacy_el",
    help="spacy_el: entity linking, NER and coreference components for spaCy.",
    no_args_is_help=True,
    add_completion=False,
    cls=SpacyElGroup,
    rich_markup_mode=PLAIN_HELP,
)
kb_app = typer.Typer(help="Build, inspect and query a spacy_el knowledge base.", no_args_is_help=True,
                     rich_markup_mode=PLAIN_HELP)
app.add_typer(kb_app, name="kb")
candidates_app = typer.Typer(help="Candidate generation: train the dense mention encoder.", no_args_is_help=True,
                             rich_markup_mode=PLAIN_HELP)
app.add_typer(candidates_app, name="candidates")

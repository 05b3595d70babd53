"""The typer application behind ``python -m spacy_el``, in spaCy's CLI style."""
import typer

app = typer.Typer(
    name="spacy_el",
    help="spacy_el: entity linking, NER and coreference components for spaCy.",
    no_args_is_help=True,
    add_completion=False,
)
kb_app = typer.Typer(help="Build, inspect and query a spacy_el knowledge base.", no_args_is_help=True)
app.add_typer(kb_app, name="kb")

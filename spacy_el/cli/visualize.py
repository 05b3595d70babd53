"""``python -m spacy_el visualize``: run a pipeline and draw its links and clusters with displaCy."""
from pathlib import Path
from typing import List

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app


def read_texts(path: Path, nlp) -> List[str]:
    """Documents of ``path``: the docs of a ``.spacy`` file, else one per non-empty line of a text file."""
    if path.suffix == ".spacy":
        from spacy.tokens import DocBin

        return [doc.text for doc in DocBin().from_disk(path).get_docs(nlp.vocab)]
    return [line.strip() for line in path.read_text(encoding="utf8").splitlines() if line.strip()]


@app.command("visualize")
def visualize_cli(
    model: str = typer.Argument(..., help="Pipeline package name or path"),
    input_path: Path = typer.Argument(..., help="A .spacy file, or a text file with one document per line", exists=True, dir_okay=False),
    output: Path = typer.Argument(..., help="The standalone HTML file to write"),
    limit: int = typer.Option(0, "--limit", "-n", help="Draw only the first N documents (0: all)"),
    kb_url_template: str = typer.Option("https://en.wikipedia.org/wiki/{}", "--kb-url-template", help="Link target of a KB id ({} = the id)"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1 for CPU"),
) -> None:
    """Run a pipeline on documents and write its entity links and coreference clusters as HTML."""
    import spacy

    from ..pipeline.configure import load_pipeline
    from ..visualize import save_html

    if "{}" not in kb_url_template:
        msg.fail(Errors.E741.format(template=kb_url_template), exits=1)
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    nlp = load_pipeline(model)
    texts = read_texts(input_path, nlp)
    if limit:
        texts = texts[:limit]
    if not texts:
        msg.fail(Errors.E742.format(input_path=input_path), exits=1)
    docs = list(nlp.pipe(texts))
    replaced = output.exists()  # replaced as a project step reruns it; said aloud, never silent
    path = save_html(docs, output, kb_url_template=kb_url_template)
    msg.good(f"{'Replaced' if replaced else 'Wrote'} {path} with {len(docs)} document(s)")

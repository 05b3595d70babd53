"""``python -m spacy_el package``: ``spacy package`` for a pipeline whose data may be distributed.

On a copy of the pipeline it swaps in an open-data alias table (``--aliases-from``), prunes the string
store, refuses KBs whose alias sources may not be distributed (data rule 1), writes what data the package
holds and its licences into meta.json, then runs ``spacy package`` (see ``spacy_el.package.distribute``).
"""
import tempfile
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import app


@app.command("package")
def package_cli(
    pipeline_dir: Path = typer.Argument(..., help="Trained pipeline directory", exists=True, file_okay=False),
    output_dir: Path = typer.Argument(..., help="Directory to write the package to (spacy package's output_dir)", exists=True, file_okay=False),
    aliases_from: Optional[Path] = typer.Option(
        None, "--aliases-from", "-a", exists=True, file_okay=False,
        help="An open-data KB (kb build-eval --alias-sources titles,gum,dwie --entities-from kb/eval) whose aliases "
        "replace those of every KB the pipeline carries",
    ),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="Package name (spacy package --name)"),
    version: Optional[str] = typer.Option(None, "--version", "-v", help="Package version (spacy package --version)"),
    build: str = typer.Option("sdist", "--build", "-b", help="sdist, wheel, 'sdist,wheel' or none"),
    staged_dir: Optional[Path] = typer.Option(
        None, "--staged-dir", help="Keep the pipeline as packaged in this new directory (default: a temporary one)",
    ),
    trained_on: Optional[str] = typer.Option(
        None, "--trained-on",
        help="Comma-separated corpora the models were trained on (gum, ontogum, litbank, aida), listed with their "
        "licences in the package's meta",
    ),
    i_know_the_licences: bool = typer.Option(
        False, "--i-know-the-licences",
        help="Package even when a KB records alias sources that are unknown or not known to be redistributable",
    ),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing package directory"),
) -> None:
    """Package a pipeline for distribution: open-data aliases, no training strings, licences in its meta."""
    import srsly
    from spacy.cli.package import package

    from ..kb import ElKnowledgeBase
    from ..kb.files import write_json
    from ..recipes.data_sources import TRAINING_CORPORA, check_sources
    from ..package.distribute import (
        check_redistributable, package_meta, prune_strings, recorded_sources, stage_pipeline, swap_aliases,
    )

    builds = {b for b in build.split(",") if b}
    if not builds <= {"sdist", "wheel", "none"}:
        raise ValueError(Errors.E702.format(build=build))
    corpora = [name for name in (trained_on or "").split(",") if name]
    corpora = list(check_sources(corpora, TRAINING_CORPORA, "training corpora")) if corpora else []
    with tempfile.TemporaryDirectory(dir=output_dir, prefix=".staging-") as tmp:
        staged = stage_pipeline(pipeline_dir, staged_dir if staged_dir is not None else Path(tmp) / "pipeline")
        if aliases_from is not None:
            open_kb = ElKnowledgeBase.load(aliases_from, mmap=False)
            for kb_dir, info in swap_aliases(staged, open_kb).items():
                msg.good(f"{kb_dir}: aliases of {aliases_from} ({','.join(open_kb.alias_sources)}): {info}")
        accepted = check_redistributable(staged, i_know_the_licences)
        for problem in accepted:
            msg.warn(f"Packaged on your word (--i-know-the-licences): {problem}")
        before, after = prune_strings(staged)
        msg.good(f"String store pruned from {before} to {after} strings; predictions unchanged")
        meta_path = staged / "meta.json"
        meta = package_meta(srsly.read_json(meta_path), recorded_sources(staged, "alias_sources"),
                            entity_sources=recorded_sources(staged, "entity_sources"), trained_on=corpora)
        write_json(meta_path, meta)
        package(
            staged, output_dir, name=name, version=version, create_sdist="sdist" in builds,
            create_wheel="wheel" in builds, force=force, silent=False,
        )


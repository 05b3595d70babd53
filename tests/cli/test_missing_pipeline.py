"""Every command that loads a pipeline names a missing one in one line, spaCy style, instead of a traceback."""
import re

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

import spacy_el.cli  # noqa: F401  (registers every command)
from spacy_el.cli._app import app

runner = CliRunner()


@pytest.mark.parametrize("command", [
    ["evaluate", "{pipeline}", "{corpus}"],
    ["tune", "{pipeline}", "{corpus}", "{out}", "--setting", "min_singleton_prob", "--values", "0.5"],
    ["visualize", "{pipeline}", "{corpus}", "{out}.html"],
], ids=lambda command: command[0])
def test_a_missing_pipeline_is_named_with_what_to_give(tmp_path, command):
    corpus = tmp_path / "dev.spacy"
    DocBin(docs=[spacy.blank("en")("Ada wrote.")]).to_disk(corpus)
    paths = {"pipeline": tmp_path / "no_such_pipeline", "corpus": corpus, "out": tmp_path / "out"}
    result = runner.invoke(app, [part.format(**paths) for part in command])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # a clean exit, not an uncaught error
    text = " ".join(result.output.split())
    assert re.search(rf"\[spacy_el E831\] Cannot load the pipeline '{re.escape(str(paths['pipeline']))}'", text)
    assert "Give a pipeline folder" in text

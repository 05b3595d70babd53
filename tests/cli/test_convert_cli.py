"""``python -m spacy_el convert`` on the toy fixtures: files written, DocBins read back unchanged."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

import spacy_el.cli.convert  # noqa: F401  (registers the command)
from spacy_el.cli._app import app
from spacy_el.corpora import doc_annotations
from spacy_el.corpora.convert import convert_corpus

FIXTURES = Path(__file__).parents[1] / "fixtures" / "corpora"
runner = CliRunner()

CASES = [
    ("aida", FIXTURES / "aida", [], ["train", "dev", "test"]),
    (
        "aida-tsv",
        FIXTURES / "aida" / "AIDA-YAGO2-dataset.tsv",
        ["--conll-dir", str(FIXTURES / "aida")],
        ["train", "dev", "test"],
    ),
    ("elevant", FIXTURES / "elevant", [], ["toy"]),
    ("gum", FIXTURES / "gum", [], ["train", "dev", "test"]),
    ("gum-conll", FIXTURES / "gum", [], ["train", "dev", "test"]),
    ("ontogum", FIXTURES / "gum", [], ["train", "dev", "test"]),
    ("litbank", FIXTURES / "litbank", [], ["train", "dev", "test"]),
    ("litbank-entities", FIXTURES / "litbank", [], ["train", "dev", "test"]),
    ("gap", FIXTURES / "gap" / "gap-toy.tsv", [], ["gap-toy"]),
]


def test_convert_help():
    result = runner.invoke(app, ["convert", "--help"])
    assert result.exit_code == 0, result.output
    assert "litbank-entities" in result.output


@pytest.mark.parametrize("corpus,input_path,options,parts", CASES, ids=[c[0] for c in CASES])
def test_convert_round_trip(tmp_path, corpus, input_path, options, parts):
    result = runner.invoke(
        app, ["convert", corpus, str(input_path), str(tmp_path), "--no-progress", *options]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.stem for p in tmp_path.glob("*.spacy")) == sorted(parts)
    nlp = spacy.blank("en")
    kwargs = {"conll_dir": FIXTURES / "aida"} if corpus == "aida-tsv" else {}
    expected = convert_corpus(corpus, input_path, nlp=nlp, **kwargs)
    for part in parts:
        loaded = list(DocBin().from_disk(tmp_path / f"{part}.spacy").get_docs(nlp.vocab))
        assert [doc_annotations(d) for d in loaded] == [doc_annotations(d) for d in expected[part]]


def test_convert_n_docs(tmp_path):
    result = runner.invoke(
        app, ["convert", "gap", str(FIXTURES / "gap" / "gap-toy.tsv"), str(tmp_path), "-n", "1"]
    )
    assert result.exit_code == 0, result.output
    assert len(DocBin().from_disk(tmp_path / "gap-toy.spacy")) == 1
    assert "Wrote" in result.output and "Replaced" not in result.output


def test_convert_says_when_it_replaces_a_file(tmp_path):
    command = ["convert", "gap", str(FIXTURES / "gap" / "gap-toy.tsv"), str(tmp_path), "-n", "1"]
    runner.invoke(app, command)
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "Replaced" in result.output and "Wrote" not in result.output


def test_convert_reports_bad_input(tmp_path):
    result = runner.invoke(app, ["convert", "aida", str(FIXTURES / "gum"), str(tmp_path), "--no-progress"])
    assert result.exit_code == 1
    assert "E744" in result.output and "E605" in result.output
    result = runner.invoke(app, ["convert", "nonsense", str(FIXTURES / "gum"), str(tmp_path)])
    assert result.exit_code != 0

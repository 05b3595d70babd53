"""`python -m spacy_el kb ...`: expected errors print one "[spacy_el Ennn]" line and exit 1; a folder that is
not a KB is not overwritten without --force; --top-k must be >= 1."""
import re

import pytest
from typer.testing import CliRunner

from spacy_el.cli import app
from spacy_el.kb import ElKnowledgeBase

runner = CliRunner()


def build(*args):
    return runner.invoke(app, ["kb", "build", *map(str, args)])


def assert_one_line_error(result, *fragments):
    """One "[spacy_el Ennn]" message (wasabi wraps it to the terminal width, like spaCy's CLI) and exit 1."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert len(re.findall(r"\[spacy_el E\d{3}\]", result.output)) == 1, result.output
    squashed = "".join(result.output.split())  # wrapping may split a long path anywhere
    for fragment in fragments:
        assert "".join(fragment.split()) in squashed, result.output


def test_build_refuses_a_folder_that_is_not_a_kb(tmp_path, jsonl_files):
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"format": "my-model"}')
    assert_one_line_error(build(*jsonl_files, out), "E203")
    assert (out / "manifest.json").read_text() == '{"format": "my-model"}'
    result = build(*jsonl_files, out, "--force")
    assert result.exit_code == 0, result.output
    assert ElKnowledgeBase.load(out).n_entities == 2
    # Now it is a KB: rebuilding it needs no --force.
    assert build(*jsonl_files, out).exit_code == 0


def test_build_errors_are_one_line(tmp_path, jsonl_files):
    entities, aliases = jsonl_files
    entities.write_bytes(entities.read_bytes() + b'{"id": "Caf\xe9"}\n')
    assert_one_line_error(build(entities, aliases, tmp_path / "kb"), "E145", "entities.jsonl:3")
    entities.write_text('{"id": "Q1", "name": 5}\n')
    assert_one_line_error(build(entities, aliases, tmp_path / "kb"), "E137", "entities.jsonl:1", "'Q1'", "'name'")
    entities.write_text("")
    assert_one_line_error(build(entities, aliases, tmp_path / "kb"), "E136", "entities.jsonl")
    assert not (tmp_path / "kb").exists()


def test_build_refuses_a_kb_without_aliases(tmp_path, jsonl_files):
    entities, aliases = jsonl_files
    aliases.write_text("")
    assert_one_line_error(build(entities, aliases, tmp_path / "kb"), "E710")
    assert build(entities, aliases, tmp_path / "kb", "--title-aliases").exit_code == 0


def test_build_with_missing_encoder_dir(tmp_path, jsonl_files):
    missing = tmp_path / "no_encoder"
    result = build(*jsonl_files, tmp_path / "kb", "--vectors", "compute", "--encoder", missing)
    assert_one_line_error(result, "E255", str(missing))


def test_kb_errors_in_other_commands_are_one_line(tmp_path):
    (tmp_path / "notakb").mkdir()
    assert_one_line_error(runner.invoke(app, ["kb", "info", str(tmp_path / "notakb")]), "E207", "manifest.json")


@pytest.mark.parametrize("top_k", ["0", "-1"])
def test_lookup_refuses_non_positive_top_k(tmp_path, jsonl_files, top_k):
    assert build(*jsonl_files, tmp_path / "kb").exit_code == 0
    result = runner.invoke(app, ["kb", "lookup", "Ada", "--kb", str(tmp_path / "kb"), "--top-k", top_k])
    assert result.exit_code != 0
    assert "No candidates" not in result.output
    assert "top-k" in result.output.lower() or "top_k" in result.output.lower()


def test_unexpected_errors_still_raise(tmp_path, jsonl_files, monkeypatch):
    from spacy_el.kb import builder

    def boom(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(builder.KBBuilder, "from_jsonl", boom)
    result = build(*jsonl_files, tmp_path / "kb")
    assert isinstance(result.exception, RuntimeError)


def test_build_eval_refuses_unknown_or_clashing_entity_sources(tmp_path, jsonl_files):
    build_eval = lambda *args: runner.invoke(app, ["kb", "build-eval", str(tmp_path), str(tmp_path / "out"), *map(str, args)])
    assert_one_line_error(build_eval("--entity-sources", "summaries,wikidata"), "E603", "['wikidata']")
    assert build(*jsonl_files, tmp_path / "kb").exit_code == 0
    result = build_eval("--entity-sources", "summaries,gum", "--alias-sources", "titles", "--entities-from", tmp_path / "kb")
    assert_one_line_error(result, "E712")
    assert not (tmp_path / "out").exists()

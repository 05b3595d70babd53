import json

import pytest
from typer.testing import CliRunner

import spacy_el.cli  # noqa: F401  (registers every command)
from spacy_el.cli._app import app
from spacy_el.kb import ElKnowledgeBase

runner = CliRunner()


def _commands(typer_app, prefix=()):
    import typer.main

    group = typer.main.get_command(typer_app)
    stack = [(prefix, group)]
    while stack:
        path, command = stack.pop()
        yield path
        for name, sub in getattr(command, "commands", {}).items():
            stack.append((path + (name,), sub))


@pytest.mark.parametrize("path", list(_commands(app)), ids=lambda p: " ".join(p) or "root")
def test_every_command_has_help(path):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


@pytest.mark.parametrize("path, text", [(("vectors",), "[initialize] vectors"), (("annotate",), "spacy_el[ray]")])
def test_help_keeps_square_brackets(path, text):
    # plain help, as spaCy's CLI: rich markup would read "[ray]" as a style tag and drop it
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0 and text in " ".join(result.output.split())


def test_kb_build_info_lookup(tmp_path, jsonl_files):
    out = tmp_path / "kb"
    result = runner.invoke(app, ["kb", "build", *map(str, jsonl_files), str(out), "--title-aliases"])
    assert result.exit_code == 0, result.output
    kb = ElKnowledgeBase.load(out)
    assert kb.n_entities == 2 and kb.n_aliases == 2  # "Ada" plus the title "Ada Lovelace"
    result = runner.invoke(app, ["kb", "info", str(out)])
    assert result.exit_code == 0 and "entities" in result.output
    result = runner.invoke(app, ["kb", "lookup", "ada", "--kb", str(out)])
    assert result.exit_code == 0
    assert result.output.index("Ada_Lovelace") < result.output.index("Ada_(language)")
    assert "normalized" in result.output
    result = runner.invoke(app, ["kb", "lookup", "Nobody", "--kb", str(out)])
    assert result.exit_code == 0 and "No candidates" in result.output


def test_kb_build_with_vectors_file_and_index(tmp_path, jsonl_files):
    import numpy as np

    vectors = tmp_path / "vectors.npy"
    np.save(vectors, np.eye(2, 8, dtype=np.float32))
    out = tmp_path / "kb"
    result = runner.invoke(app, ["kb", "build", *map(str, jsonl_files), str(out), "--vectors", str(vectors), "--index", "Flat"])
    assert result.exit_code == 0, result.output
    kb = ElKnowledgeBase.load(out)
    assert kb.entity_vector_length == 8
    assert kb.search_dense(np.eye(1, 8, dtype=np.float32), k=1) == [[("Ada_Lovelace", 1.0)]]


def test_kb_build_computes_vectors_in_resumable_chunks(tmp_path, jsonl_files, tiny_encoder):
    from spacy_el.kb.encoder import encoder_fingerprint

    out = tmp_path / "kb"
    args = ["kb", "build", *map(str, jsonl_files), str(out), "--title-aliases", "--vectors", "compute", "--encoder", tiny_encoder]
    other = tmp_path / "other"  # the work folder of another encoding (chunks of 2 rows) is refused
    other.mkdir()
    (other / "meta.json").write_text(json.dumps({"format": "spacy_el.vector_chunks", "version": 1, "n": 2, "chunk_size": 2}))
    result = runner.invoke(app, [*args, "--vectors-chunk-size", "1", "--vectors-work-dir", str(other)])
    assert result.exit_code == 1 and "belongs to another encoding" in " ".join(result.output.split())
    assert not out.exists()
    result = runner.invoke(app, [*args, "--vectors-chunk-size", "1"])
    assert result.exit_code == 0, result.output
    assert "kb.vectors-work" in result.output
    assert not (tmp_path / "kb.vectors-work").exists(), "the work folder goes once the KB is saved"
    kb = ElKnowledgeBase.load(out)
    assert kb.entity_vector_length == 32 and kb.vectors_encoder == encoder_fingerprint(tiny_encoder)


@pytest.mark.parametrize("command", ["build", "build-eval", "from-dumps"])
def test_kb_builds_take_the_resumable_vector_options(command):
    result = runner.invoke(app, ["kb", command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--vectors-work-dir" in result.output and "--vectors-chunk-size" in result.output


def test_kb_build_rejects_wrong_vector_shape(tmp_path, jsonl_files):
    import numpy as np

    vectors = tmp_path / "vectors.npy"
    np.save(vectors, np.zeros((3, 8), dtype=np.float32))
    result = runner.invoke(app, ["kb", "build", *map(str, jsonl_files), str(tmp_path / "kb"), "--vectors", str(vectors)])
    assert result.exit_code == 1  # an expected error: one "[spacy_el E148]" message, no traceback
    assert "[spacy_el E148]" in " ".join(result.output.split())


def test_kb_build_reports_bad_jsonl(tmp_path, jsonl_files):
    entities, aliases = jsonl_files
    aliases.write_text('{"alias": "Ada", "candidates": [["Nobody", 0.5]]}')
    result = runner.invoke(app, ["kb", "build", str(entities), str(aliases), str(tmp_path / "kb")])
    assert result.exit_code == 1 and "Nobody" in result.output


def test_evaluate_prints_spacy_el_metrics(tmp_path):
    """A pipeline with a rule-based linker, scored against gold links and entities."""
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "PER", "pattern": "Ada", "id": "Ada_Lovelace"}])

    @spacy.Language.component("copy_ent_id_to_kb_id")
    def copy_ids(doc):
        # doc.ents must be reassigned: setting kb_id_ on a span of doc.ents does not reach the tokens.
        doc.ents = [spacy.tokens.Span(doc, e.start, e.end, e.label_, kb_id=e.ent_id_) for e in doc.ents]
        return doc

    nlp.add_pipe("copy_ent_id_to_kb_id")
    nlp.to_disk(tmp_path / "model")
    gold = nlp.make_doc("Ada met Bob .")
    gold.ents = [gold.char_span(0, 3, "PER", kb_id="Ada_Lovelace"), gold.char_span(8, 11, "PER", kb_id="Bob_Smith")]
    DocBin(docs=[gold]).to_disk(tmp_path / "gold.spacy")
    out = tmp_path / "scores.json"
    result = runner.invoke(app, ["evaluate", str(tmp_path / "model"), str(tmp_path / "gold.spacy"), "-s", "el", "-s", "ner", "-o", str(out)])
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text())
    assert scores["el_micro_p"] == 1.0 and scores["el_micro_r"] == 0.5
    assert scores["ner_p"] == 1.0 and scores["ner_r"] == 0.5
    assert "el_micro_f" in result.output
    bad = runner.invoke(app, ["evaluate", str(tmp_path / "model"), str(tmp_path / "gold.spacy"), "-s", "nope"])
    assert bad.exit_code == 1
    # A text-masked document (underscores for words) where the ruler finds nothing: --skip-masked leaves it out.
    masked = nlp.make_doc("___ ___ ___ _")
    masked.ents = [masked.char_span(0, 3, "PER", kb_id="Ada_Lovelace")]
    DocBin(docs=[gold, masked]).to_disk(tmp_path / "with_masked.spacy")
    for flags, recall in (([], 1 / 3), (["--skip-masked"], 0.5)):
        args = ["evaluate", str(tmp_path / "model"), str(tmp_path / "with_masked.spacy"), "-s", "el", "-o", str(out)]
        assert runner.invoke(app, args + flags).exit_code == 0
        assert json.loads(out.read_text())["el_micro_r"] == pytest.approx(recall)
    DocBin(docs=[masked]).to_disk(tmp_path / "masked_only.spacy")
    empty = runner.invoke(app, ["evaluate", str(tmp_path / "model"), str(tmp_path / "masked_only.spacy"), "--skip-masked"])
    assert empty.exit_code == 1 and "E743" in empty.output


def test_summary_prints_one_row_per_metrics_file(tmp_path):
    (tmp_path / "linker.json").write_text(json.dumps({"el_micro_f": 0.5, "ner_f": 0.25, "other": 1.0}))
    (tmp_path / "coref.json").write_text(json.dumps({"coref_avg_f": 0.125}))
    result = runner.invoke(app, ["summary", str(tmp_path / "linker.json"), str(tmp_path / "coref.json"), "--html", "out.html"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("linker") and "0.250" in line and "0.500" in line for line in lines)
    assert any(line.startswith("coref") and "0.125" in line for line in lines)
    assert "out.html" in result.output and "other" not in result.output
    (tmp_path / "list.json").write_text("[1, 2]")
    bad = runner.invoke(app, ["summary", str(tmp_path / "list.json")])
    assert bad.exit_code == 1 and "a metrics file" in " ".join(bad.output.split())


def test_kb_index_replaces_the_dense_index_and_keeps_the_rest(tmp_path, jsonl_files):
    import numpy as np

    vectors = tmp_path / "vectors.npy"
    np.save(vectors, np.eye(2, 8, dtype=np.float32))
    out = tmp_path / "kb"
    assert runner.invoke(app, ["kb", "build", *map(str, jsonl_files), str(out), "--vectors", str(vectors), "--index", "Flat"]).exit_code == 0
    result = runner.invoke(app, ["kb", "index", str(out), "--index", "HNSW32", "--ef-construction", "64", "--ef-search", "32"])
    assert result.exit_code == 0, result.output
    kb = ElKnowledgeBase.load(out)
    assert kb.dense_index.factory == "HNSW32" and kb.dense_index.meta()["ef_construction"] == 64
    assert kb.dense_index.search_params["ef_search"] == 32
    assert kb.n_aliases == 1
    assert kb.search_dense(np.eye(1, 8, dtype=np.float32), k=1) == [[("Ada_Lovelace", 1.0)]]


def test_kb_index_needs_vectors(tmp_path, jsonl_files):
    out = tmp_path / "kb"
    assert runner.invoke(app, ["kb", "build", *map(str, jsonl_files), str(out)]).exit_code == 0
    result = runner.invoke(app, ["kb", "index", str(out), "--index", "HNSW32"])
    assert result.exit_code == 1 and "hasnoentityvectors" in "".join(result.output.split())  # wasabi wraps lines

"""``spacy_el.annotate`` (local engine) and ``python -m spacy_el annotate``: every input and output format,
error records, clear errors, and exactly-once output across crashes and ``--resume``."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_el.annotate import annotate, read_output
from spacy_el.cli import app
from spacy_el.extensions import get_clusters

from .components import FAIL_MARKER, build_pipeline
from .conftest import TEXTS, Crash, write_inputs

REPO_ROOT = Path(__file__).parents[2]
runner = CliRunner()
IDS = {
    "text": [str(i) for i in range(1, len(TEXTS) + 1)],
    "jsonl": [f"d{i}" for i in range(len(TEXTS))],
    "parquet": [f"d{i}" for i in range(len(TEXTS))],
    "dir": [f"doc{i:02d}.txt" for i in range(len(TEXTS))],
}


def strip_ids(records):
    return [{k: v for k, v in r.items() if k not in ("id", "source", "year")} for r in records]


@pytest.mark.parametrize("output_format", ["jsonl", "parquet"])
@pytest.mark.parametrize("input_format", ["text", "jsonl", "parquet", "dir"])
def test_every_input_and_output_format(nlp, inputs, tmp_path, input_format, output_format):
    out = tmp_path / "out"
    summary = annotate(nlp, inputs[input_format], out, output_format=output_format, chunk_size=3, batch_size=2,
                       progress=False)
    assert (summary.read, summary.written, summary.failed, summary.parts) == (7, 7, 0, 3)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"] + [
        f"part-0000{i}.{output_format}" for i in range(3)
    ]
    records, errors = read_output(out)
    assert errors == []
    assert [r["id"] for r in records] == IDS[input_format]
    if input_format in ("jsonl", "parquet"):
        assert [(r["source"], r["year"]) for r in records] == [(f"src{i % 2}", 2000 + i) for i in range(7)]
    reference, _ = read_output(_reference_output(nlp, tmp_path))
    assert strip_ids(records) == strip_ids(reference)


def _reference_output(nlp, tmp_path):
    out = tmp_path / "reference"
    if not out.exists():
        annotate(nlp, write_inputs(tmp_path / "ref_in", TEXTS)["text"], out, progress=False)
    return out


def test_record_contents(nlp, inputs, tmp_path):
    annotate(nlp, inputs["jsonl"], tmp_path / "out", top_candidates=2, progress=False)
    records, _ = read_output(tmp_path / "out")
    first = records[0]
    assert first["entities"][0] == {
        "start_char": 0, "end_char": 10, "text": "Ada Mercer", "label": "PER", "kb_id": "Ada_Mercer", "qid": "Q1",
        "link_score": 0.75, "nil_prob": 0.1,
        "candidates": [{"kb_id": "Ada_Mercer", "score": 0.75}, {"kb_id": "Other", "score": 0.25}],
    }
    assert first["clusters"] == []
    lumen = records[1]["entities"][0]
    assert (lumen["text"], lumen["kb_id"], lumen["qid"], lumen["candidates"]) == ("Lumen", "NIL", None, [])
    assert records[1]["clusters"] == [{"kb_id": "Orvik", "mentions": [[16, 21], [24, 29]]}]
    assert records[3]["clusters"] == [{"kb_id": "Ada_Mercer", "mentions": [[0, 10], [15, 25]]}]


def test_pipeline_without_coreference_writes_empty_clusters(inputs, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "LOC", "pattern": "Orvik"}])
    annotate(nlp, inputs["text"], tmp_path / "out", progress=False)
    records, _ = read_output(tmp_path / "out")
    assert all(r["clusters"] == [] for r in records)
    assert records[0]["entities"][0]["kb_id"] == "" and records[0]["entities"][0]["candidates"] is None


def test_parquet_to_parquet_keeps_the_carried_types(nlp, inputs, tmp_path):
    import pyarrow.parquet as pq

    annotate(nlp, inputs["parquet"], tmp_path / "out.parquet", chunk_size=4, progress=False)
    schema = pq.read_schema(tmp_path / "out.parquet" / "part-00000.parquet")
    assert schema.names == ["id", "source", "year", "entities", "clusters"]
    assert str(schema.field("year").type) == "int64"


def test_docbin_output(nlp, inputs, tmp_path):
    summary = annotate(nlp, inputs["jsonl"], tmp_path / "out", docbin=True, chunk_size=5, progress=False)
    assert summary.parts == 2
    docs = []
    for part in ("part-00000.spacy", "part-00001.spacy"):
        docs.extend(DocBin().from_disk(tmp_path / "out" / part).get_docs(nlp.vocab))
    assert [d._.doc_id for d in docs] == IDS["jsonl"]
    assert [d.text for d in docs] == TEXTS
    assert [e.kb_id_ for e in docs[0].ents] == ["Ada_Mercer", "Orvik"]
    assert list(docs[0].ents[0]._.candidate_scores[0]) == ["Ada_Mercer", 0.75]
    assert get_clusters(docs[3]) == [[(0, 2), (3, 5)]]


def test_ids_default_to_line_numbers_with_blank_lines(nlp, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "Orvik"}\n\n{"text": "Lumen", "id": 7}\n{"text": "Ada Mercer"}\n', encoding="utf8")
    annotate(nlp, src, tmp_path / "out", progress=False)
    assert [r["id"] for r in read_output(tmp_path / "out")[0]] == ["1", "7", "4"]


# -- errors of single documents -------------------------------------------------------------------
def test_failing_documents_go_to_the_error_log(failing_nlp, failing_inputs, tmp_path):
    out = tmp_path / "out"
    summary = annotate(failing_nlp, failing_inputs["jsonl"], out, batch_size=4, chunk_size=5, progress=False)
    assert (summary.read, summary.written, summary.failed) == (7, 5, 2)
    records, errors = read_output(out)
    assert [r["id"] for r in records] == ["d0", "d1", "d3", "d4", "d6"]
    assert [e["id"] for e in errors] == ["d2", "d5"]
    assert all(FAIL_MARKER in e["error"] and e["error"].startswith("ValueError") for e in errors)


def test_bad_records_go_to_the_error_log(nlp, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_bytes(
        b'{"id": "a", "text": "Orvik"}\n{"id": "b", "text": null}\nnot json\n[1, 2]\n{"id": "e"}\n'
        b'{"id": "f", "text": "\\ud800"}\n{"id": "g", "text": "Lumen"}\n'
    )
    summary = annotate(nlp, src, tmp_path / "out", progress=False)
    records, errors = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == ["a", "g"] and summary.failed == 5
    assert [e["id"] for e in errors] == ["b", "3", "4", "e", "f"]
    assert "expected a string" in errors[0]["error"] and "invalid JSON" in errors[1]["error"]
    assert f"{src}:5: the record has no text field 'text'" in errors[3]["error"]


def test_bad_utf8_line_in_a_text_file(nlp, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"Orvik\n\xff\xfe bad\nLumen\n")
    annotate(nlp, src, tmp_path / "out", progress=False)
    records, errors = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == ["1", "3"] and [e["id"] for e in errors] == ["2"]
    assert "not valid UTF-8" in errors[0]["error"]


# -- clear errors ---------------------------------------------------------------------------------
def _cli(*args):
    return runner.invoke(app, ["annotate", *map(str, args), "--no-progress"])


def _one_line_error(result, *parts):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert re.search(r"\[spacy_el [EW]\d{3}\] ", text), result.output
    for part in parts:
        assert part in text, result.output


def test_cli_help():
    result = runner.invoke(app, ["annotate", "--help"])
    assert result.exit_code == 0 and "--resume" in result.output and "--chunk-size" in result.output


def test_missing_pipeline(inputs, tmp_path):
    _one_line_error(_cli(tmp_path / "no_such_pipeline", inputs["text"], tmp_path / "out"), "Cannot load the pipeline")


def test_unreadable_input(pipeline_dir, tmp_path):
    _one_line_error(_cli(pipeline_dir, tmp_path / "missing.txt", tmp_path / "out"), "E521", "missing.txt")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    _one_line_error(_cli(pipeline_dir, bad, tmp_path / "out2"), "E529", "bad.parquet")
    _one_line_error(_cli(pipeline_dir, tmp_path / "x.csv", tmp_path / "out3"), "E521", "x.csv")


def test_bad_field_name(pipeline_dir, inputs, tmp_path):
    _one_line_error(_cli(pipeline_dir, inputs["jsonl"], tmp_path / "a", "--text-field", "body"),
                    "E525", f"{inputs['jsonl']}:1", "'body'")
    _one_line_error(_cli(pipeline_dir, inputs["parquet"], tmp_path / "b", "--text-field", "body"),
                    "E528", "corpus.parquet", "'body'")


def test_missing_pyarrow_is_a_clear_error(nlp, inputs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match="E527"):
        annotate(nlp, inputs["parquet"], tmp_path / "out", progress=False)


def test_existing_output_needs_resume_or_overwrite(pipeline_dir, nlp, inputs, tmp_path):
    out = tmp_path / "out"
    annotate(nlp, inputs["text"], out, progress=False)
    _one_line_error(_cli(pipeline_dir, inputs["text"], out), "E513")
    result = _cli(pipeline_dir, inputs["jsonl"], out, "--overwrite", "--chunk-size", "2")
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_output(out)[0]] == IDS["jsonl"]
    assert not (out / "part-00004.jsonl").exists()
    _one_line_error(_cli(pipeline_dir, inputs["text"], out, "--resume"), "Cannot resume", "input")


def test_cli_exit_code_and_summary(failing_pipeline_dir, failing_inputs, tmp_path):
    result = _cli(failing_pipeline_dir, failing_inputs["text"], tmp_path / "a")
    assert result.exit_code == 1 and "2 document(s) failed" in result.output
    assert "errors.jsonl" in result.output
    result = _cli(failing_pipeline_dir, failing_inputs["text"], tmp_path / "b", "--allow-errors")
    assert result.exit_code == 0, result.output
    assert [line.split()[-1] for line in result.output.splitlines() if line.split()[:1] in (["read"], ["written"], ["failed"])] == ["7", "5", "2"]


# -- multiprocessing --------------------------------------------------------------------------------
def test_n_process_gives_the_same_output(failing_nlp, failing_inputs, tmp_path):
    annotate(failing_nlp, failing_inputs["jsonl"], tmp_path / "one", chunk_size=4, batch_size=2, progress=False)
    annotate(failing_nlp, failing_inputs["jsonl"], tmp_path / "two", chunk_size=4, batch_size=2, n_process=2,
             progress=False)
    assert read_output(tmp_path / "one") == read_output(tmp_path / "two")


# -- crashes and --resume ---------------------------------------------------------------------------
def _check_exactly_once(out, texts):
    records, errors = read_output(out)
    expected_ok = [str(i + 1) for i, t in enumerate(texts) if FAIL_MARKER not in t]
    expected_err = [str(i + 1) for i, t in enumerate(texts) if FAIL_MARKER in t]
    assert [r["id"] for r in records] == expected_ok
    assert [e["id"] for e in errors] == expected_err
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["docs_read"], manifest["docs_written"], manifest["docs_failed"]) == (
        len(texts), len(expected_ok), len(expected_err))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


CRASH_TEXTS = [f"Orvik number {i} ." if i % 4 != 2 else f"{FAIL_MARKER} {i}" for i in range(11)]


@pytest.mark.hostile("what holds")
@pytest.mark.parametrize("crash_at", range(1, 16))
def test_resume_after_a_crash_at_any_fsync(failing_nlp, tmp_path, monkeypatch, crash_at):
    """Crash at the n-th fsync of the commit protocol (before or after each rename and append), then
    resume: every document is in the output or the error log exactly once."""
    src = write_inputs(tmp_path / "in", CRASH_TEXTS)["text"]
    out = tmp_path / "out"
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] == crash_at:
            raise Crash()
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(Crash):
        annotate(failing_nlp, src, out, chunk_size=3, batch_size=2, progress=False)
    monkeypatch.setattr(os, "fsync", real_fsync)
    summary = annotate(failing_nlp, src, out, chunk_size=3, batch_size=2, resume=True, progress=False)
    assert summary.read == len(CRASH_TEXTS)
    _check_exactly_once(out, CRASH_TEXTS)


@pytest.mark.hostile("what holds")
def test_resume_after_a_crash_between_chunks(failing_nlp, tmp_path):
    src = write_inputs(tmp_path / "in", CRASH_TEXTS)["jsonl"]
    out = tmp_path / "out"

    def stop_after_two(state):
        if state["parts"] == 2:
            raise Crash()

    with pytest.raises(Crash):
        annotate(failing_nlp, src, out, chunk_size=3, progress=False, on_commit=stop_after_two)
    summary = annotate(failing_nlp, src, out, chunk_size=3, resume=True, progress=False)
    assert summary.resumed_from == 6 and summary.read == 11
    records, errors = read_output(out)
    assert [r["id"] for r in records] + [e["id"] for e in errors] == sorted(
        (f"d{i}" for i in range(11)), key=lambda d: (FAIL_MARKER in CRASH_TEXTS[int(d[1:])], int(d[1:])))


KILL_SCRIPT = """
import os, sys
from tests.annotate.components import SLEEP_VARIABLE, build_pipeline
from spacy_el.annotate import annotate

os.environ[SLEEP_VARIABLE] = "0.02"
annotate(build_pipeline(fail=True, slow=True), sys.argv[1], sys.argv[2], chunk_size=3, batch_size=2, resume=True,
         progress=False, n_process=int(sys.argv[3]))
"""


def _children(pid: int) -> List[int]:
    """The child processes of ``pid`` (Linux's /proc), or [] where it cannot tell."""
    found: List[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.hostile("what holds")
@pytest.mark.parametrize("n_process", [1, 2])
def test_resume_after_sigkill(tmp_path, n_process):
    texts = [f"Ada Mercer {i} Orvik" if i % 7 != 3 else f"{FAIL_MARKER} {i}" for i in range(120)]
    src = write_inputs(tmp_path / "in", texts)["text"]
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(src), str(out), str(n_process)], cwd=REPO_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    workers: List[int] = []
    try:
        while time.time() < deadline and proc.poll() is None:
            manifest = out / "manifest.json"
            if manifest.exists() and json.loads(manifest.read_text())["docs_read"] >= 9:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        workers = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        proc.stderr.close()
    if n_process > 1 and sys.platform.startswith("linux"):  # the workers die with the driver
        assert len(workers) >= n_process
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in workers)
    committed = json.loads((out / "manifest.json").read_text())["docs_read"]
    assert 9 <= committed < len(texts)
    summary = annotate(build_pipeline(fail=True, slow=True), src, out, chunk_size=3, batch_size=2, resume=True,
                       progress=False)  # the same pipeline (resume refuses another), without the sleep
    assert summary.resumed_from == committed
    _check_exactly_once(out, texts)


# -- the progress bar's total and the torch threads of --n-process --------------------------------
@pytest.mark.parametrize("input_format", ["text", "jsonl", "parquet", "dir"])
def test_reader_totals_and_skip(inputs, input_format):
    from spacy_el.annotate import open_reader

    reader = open_reader(inputs[input_format])
    assert reader.total() == len(TEXTS)
    assert [d.id for d in reader.docs(skip=4)] == IDS[input_format][4:]  # Parquet: skips a whole row group


def test_the_process_pool_runs_torch_with_one_thread_and_restores_it():
    torch = pytest.importorskip("torch")
    from spacy_el.annotate.process_pool import one_torch_thread

    before = torch.get_num_threads()
    with one_torch_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


# -- --engine ray without Ray, and engine options (tests/annotate/test_ray_engine.py runs Ray itself) ------
def test_ray_engine_without_ray_is_a_clear_error(nlp, inputs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match="E534"):
        annotate(nlp, inputs["text"], tmp_path / "out", engine="ray", progress=False)
    assert not (tmp_path / "out").exists()


def test_engine_options_are_checked(nlp, inputs, tmp_path):
    for options, message in (({"engine": "spark"}, "E515"), ({"actors": 2}, "E517.*--actors"),
                             ({"address": "auto"}, "E517.*--address"), ({"engine": "ray", "n_process": 2}, "E518")):
        with pytest.raises(ValueError, match=message):
            annotate(nlp, inputs["text"], tmp_path / "out", progress=False, **options)

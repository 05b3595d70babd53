"""What ``annotate`` does with an OUTPUT it does not fully own (issue 71): one run at a time (the folder's lock),
only its own output resumed or overwritten, never written through a planted symlink, the pipeline checked on
``--resume``, documents that no output can hold sent to the error log, and every failure to create or write
OUTPUT a one-line coded error."""
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

import pytest

from spacy_el.annotate import annotate, read_output
from spacy_el.kb.files import LOCK_NAME, lock_dir

from . import components
from .components import DIE_MARKER, build_pipeline
from .conftest import TEXTS, Crash, stop_after, write_inputs
from .test_annotate import REPO_ROOT, KILL_SCRIPT, _check_exactly_once, _cli, _one_line_error


def _snapshot(folder: Path) -> Dict[str, bytes]:
    """Every file below ``folder`` with its bytes (a symlink's target path, not what it points to)."""
    return {str(p.relative_to(folder)): (os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
            for p in folder.rglob("*") if p.name != LOCK_NAME and (p.is_symlink() or p.is_file())}


# -- defect 1: two runs on one OUTPUT --------------------------------------------------------------------
@pytest.mark.hostile("data loss")
@pytest.mark.parametrize("mode", ["resume", "overwrite"])
def test_a_run_on_an_output_another_run_holds_fails_at_once(nlp, inputs, tmp_path, mode):
    out = tmp_path / "out"
    with pytest.raises(Crash):
        annotate(nlp, inputs["jsonl"], out, chunk_size=3, progress=False, on_commit=stop_after(1))
    before = _snapshot(out)
    with lock_dir(out):  # the other run
        with pytest.raises(BlockingIOError, match="E263"):
            annotate(nlp, inputs["jsonl"], out, chunk_size=3, progress=False, **{mode: True})
    assert _snapshot(out) == before


@pytest.mark.hostile("data loss")
def test_two_runs_at_once_on_one_output_leave_it_whole(failing_pipeline_dir, tmp_path):
    """A run (a process of its own) is going; a second one on the same OUTPUT stops at once with one line, and
    the first ends with every document exactly once."""
    texts = [f"Ada Mercer {i} Orvik" if i % 7 != 3 else f"{components.FAIL_MARKER} {i}" for i in range(100)]
    src = write_inputs(tmp_path / "in", texts)["text"]
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(src), str(out), "1"], cwd=REPO_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and not (out / "manifest.json").exists():
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        _one_line_error(_cli(failing_pipeline_dir, src, out, "--resume", "--chunk-size", "3", "--batch-size", "2"),
                        "E263")
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    _check_exactly_once(out, texts)


# -- defects 2 and 3: only annotate's own output is resumed or overwritten -----------------------------
def _foreign(out: Path, kind: str) -> None:
    if kind == "kb":  # a saved KB: its own manifest.json
        from ..conftest import build_toy_kb

        build_toy_kb().to_disk(out)
    else:  # a user's folder that happens to hold annotate's names
        out.mkdir()
        (out / "errors.jsonl").write_bytes(b'{"id": "mine", "note": "keep"}\n')
        (out / "part-00000.jsonl").write_bytes(b'{"id": "mine"}\n')
        (out / "notes.txt").write_bytes(b"my notes\n")


@pytest.mark.hostile("data loss")
@pytest.mark.parametrize("mode,kind,code", [("resume", "user", "E536"), ("overwrite", "user", "E537"),
                                            ("overwrite", "kb", "E537")])
def test_resume_and_overwrite_refuse_a_folder_annotate_did_not_make(nlp, inputs, tmp_path, kind, mode, code):
    out = tmp_path / "out"
    _foreign(out, kind)
    before = _snapshot(out)
    with pytest.raises(ValueError, match=code):
        annotate(nlp, inputs["text"], out, progress=False, **{mode: True})
    assert _snapshot(out) == before  # every file below it, byte for byte


def test_overwrite_replaces_only_what_annotate_made_and_resume_starts_an_empty_folder(nlp, inputs, tmp_path):
    out = tmp_path / "out"
    annotate(nlp, inputs["text"], out, chunk_size=2, progress=False)
    (out / "notes.txt").write_bytes(b"my notes\n")
    annotate(nlp, inputs["jsonl"], out, chunk_size=5, overwrite=True, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt", "part-00000.jsonl",
                                                     "part-00001.jsonl"]
    assert [r["id"] for r in read_output(out)[0]] == [f"d{i}" for i in range(len(TEXTS))]
    summary = annotate(nlp, inputs["text"], tmp_path / "new", resume=True, progress=False)
    assert summary.resumed_from == 0 and summary.written == len(TEXTS)


@pytest.mark.hostile("unclear errors")
@pytest.mark.parametrize("edit", [{"docs_read": None}, {"parts": -1}, {"errors_bytes": "12"}, {"settings": []}])
def test_resume_refuses_a_manifest_edited_by_hand_in_one_line(pipeline_dir, nlp, inputs, tmp_path, edit):
    out = tmp_path / "out"
    annotate(str(pipeline_dir), inputs["text"], out, chunk_size=3, progress=False)
    manifest = {**json.loads((out / "manifest.json").read_text()), **edit}
    (out / "manifest.json").write_text(json.dumps({k: v for k, v in manifest.items() if v is not None}))
    _one_line_error(_cli(pipeline_dir, inputs["text"], out, "--resume", "--chunk-size", "3"), "E511")


# -- defect 4: a planted errors.jsonl symlink ------------------------------------------------------------
@pytest.mark.hostile("writing outside the folder")
@pytest.mark.parametrize("victim_size", ["same", "longer"])
def test_resume_refuses_an_errors_log_planted_as_a_symlink(failing_pipeline_dir, failing_nlp, failing_inputs,
                                                           tmp_path, victim_size):
    out = tmp_path / "out"
    with pytest.raises(Crash):
        annotate(failing_nlp, failing_inputs["text"], out, chunk_size=3, progress=False, on_commit=stop_after(1))
    log = out / "errors.jsonl"
    victim = tmp_path / "victim.jsonl"
    content = log.read_bytes() + (b"outside the folder\n" if victim_size == "longer" else b"")
    victim.write_bytes(content)
    log.unlink()
    log.symlink_to(victim)
    _one_line_error(_cli(failing_pipeline_dir, failing_inputs["text"], out, "--resume", "--chunk-size", "3"),
                    "E262", "errors.jsonl")
    assert victim.read_bytes() == content and log.is_symlink()


# -- defect 7: ids, texts and fields that are not valid Unicode ------------------------------------------
@pytest.mark.hostile("crashes that block a run")
@pytest.mark.parametrize("output_format", ["jsonl", "parquet", "docbin"])
def test_an_id_or_field_with_a_lone_surrogate_becomes_an_error_record(nlp, tmp_path, output_format):
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"id": "a\\ud800", "text": "Orvik"}\n{"id": "b", "text": "Lumen", "note": ["x\\udc00"]}\n'
                    b'{"id": "c", "text": "Orvik \\ud800"}\n{"id": "d", "text": "Orvik", "note": ["y"]}\n')
    out = tmp_path / "out"
    options = {"docbin": True} if output_format == "docbin" else {"output_format": output_format}
    summary = annotate(nlp, src, out, progress=False, **options)
    annotate(nlp, src, out, progress=False, resume=True, **options)  # and a resume goes on as well
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text(encoding="utf8").splitlines()]
    failed = ["a\\ud800", "c"] if output_format == "docbin" else ["a\\ud800", "b", "c"]  # DocBins carry no fields
    assert [e["id"] for e in errors] == failed and summary.failed == len(failed)
    assert "E538" in errors[0]["error"]
    if output_format != "docbin":
        assert "note" in errors[1]["error"]
        assert [r["id"] for r in read_output(out)[0]] == ["d"]


@pytest.mark.hostile("crashes that block a run")
def test_a_file_name_that_is_not_utf8_becomes_an_error_record(nlp, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    try:
        (docs / os.fsdecode(b"b\xff.txt")).write_text("Orvik", encoding="utf8")
    except (OSError, UnicodeError):
        pytest.skip("this filesystem refuses a file name that is not UTF-8")
    (docs / "a.txt").write_text("Lumen", encoding="utf8")
    annotate(nlp, docs, tmp_path / "out", progress=False)
    records, errors = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == ["a.txt"] and [e["id"] for e in errors] == ["b\\udcff.txt"]


# -- defect 8: Parquet output from records whose carried field changes type ------------------------------
@pytest.mark.hostile("crashes that block a run")
def test_parquet_output_sends_a_document_whose_field_has_another_type_to_the_error_log(nlp, tmp_path):
    src = tmp_path / "in.jsonl"
    rows = [{"id": "d0", "text": "Orvik", "year": 2000, "score": 1}, {"id": "d1", "text": "Lumen", "year": "2001"},
            {"id": "d2", "text": "Orvik", "year": 2002, "score": 0.5}, {"id": "d3", "text": "Orvik", "year": None}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    out = tmp_path / "out.parquet"
    summary = annotate(nlp, src, out, progress=False)
    records, errors = read_output(out)
    assert [r["id"] for r in records] == ["d0", "d2", "d3"] and [e["id"] for e in errors] == ["d1"]
    assert [r["score"] for r in records] == [1.0, 0.5, None]  # int and float: a float column holds both
    assert "E539" in errors[0]["error"] and "'year'" in errors[0]["error"] and summary.failed == 1
    annotate(nlp, src, out, progress=False, resume=True)


# -- defect 15: the pipeline of a resumed run ------------------------------------------------------------
@pytest.mark.hostile("silent wrong results")
def test_resume_refuses_another_pipeline(pipeline_dir, failing_pipeline_dir, tmp_path):
    src = write_inputs(tmp_path / "in", TEXTS)["text"]
    out = tmp_path / "out"
    with pytest.raises(Crash):
        annotate(str(pipeline_dir), src, out, chunk_size=3, progress=False, on_commit=stop_after(1))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["settings"]["pipeline"]["path"] == str(pipeline_dir.resolve())
    _one_line_error(_cli(failing_pipeline_dir, src, out, "--resume", "--chunk-size", "3"), "E510", "pipeline")
    with pytest.raises(ValueError, match="E510.*pipeline"):  # a loaded pipeline with other components
        annotate(build_pipeline(fail=True), src, out, chunk_size=3, progress=False, resume=True)
    summary = annotate(str(pipeline_dir), src, out, chunk_size=3, progress=False, resume=True)
    assert summary.resumed_from == 3 and summary.read == len(TEXTS)


# -- defect 20: a killed worker, whenever the driver notices -------------------------------------------
@pytest.mark.hostile("unclear errors")
def test_a_dead_worker_is_the_one_line_message_at_every_call(tmp_path):
    from spacy_el.annotate.process_pool import ProcessPool

    dying = build_pipeline()
    dying.add_pipe("annotate_test_die")
    with ProcessPool(dying, 2, 1, 5) as pool:
        ticket = pool.submit([f"{DIE_MARKER} 1", "Orvik"])
        with pytest.raises(OSError, match=r"^\[spacy_el E532\]"):
            pool.collect(ticket, lambda: None)
        with pytest.raises(OSError, match=r"^\[spacy_el E532\]"):  # the next chunk's submit finds it broken
            pool.submit(["Orvik", "Lumen"])


@pytest.mark.hostile("unclear errors")
def test_a_dead_worker_is_one_line_on_the_command_line(tmp_path, monkeypatch):
    """Chunks of one document: the driver submits the next chunk before it commits the one before, and the
    worker of that one dies meanwhile; each commit lingers, so that the driver notices at that submit (as a
    slow disk would make it). The documented line, which says to --resume, never a traceback."""
    from spacy_el.annotate.writers import OutputDir

    texts = ["Orvik", f"{DIE_MARKER} 1", "Lumen", "Orvik", "Lumen"]
    src = write_inputs(tmp_path / "in", texts)["text"]
    dying = build_pipeline()
    dying.add_pipe("annotate_test_die")
    dying.to_disk(tmp_path / "dying")
    commit = OutputDir.commit

    def slow_commit(self, *args, **kwargs):
        commit(self, *args, **kwargs)
        time.sleep(1.0)

    monkeypatch.setattr(OutputDir, "commit", slow_commit)
    _one_line_error(_cli(tmp_path / "dying", src, tmp_path / "out", "--n-process", "2", "--chunk-size", "1",
                         "--batch-size", "1"), "E532", "--resume")


# -- defect 21: an OUTPUT that cannot be created or written ----------------------------------------------
def _uncreatable(tmp_path: Path, case: str) -> Path:
    if case == "dangling symlink":
        (tmp_path / "out").symlink_to(tmp_path / "nowhere" / "out")
        return tmp_path / "out"
    if case == "under a file":
        (tmp_path / "file").write_text("x")
        return tmp_path / "file" / "out"
    if case == "name too long":
        return tmp_path / ("x" * 300) / "out"
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux's /proc")
    return Path("/proc/self/no_such_folder/out")


@pytest.mark.hostile("unclear errors")
@pytest.mark.parametrize("case", ["dangling symlink", "under a file", "name too long", "no such place"])
def test_an_output_that_cannot_be_created_is_a_one_line_error(pipeline_dir, inputs, tmp_path, case):
    out = _uncreatable(tmp_path, case)
    _one_line_error(_cli(pipeline_dir, inputs["text"], out), "E540", str(out))


@pytest.mark.hostile("unclear errors")
def test_a_full_disk_is_a_one_line_error_and_resume_goes_on(failing_pipeline_dir, failing_nlp, tmp_path,
                                                             monkeypatch):
    texts = [f"Orvik number {i} ." if i % 4 != 2 else f"{components.FAIL_MARKER} {i}" for i in range(11)]
    src = write_inputs(tmp_path / "in", texts)["text"]
    out = tmp_path / "out"
    real_fsync, calls = os.fsync, {"n": 0}

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] >= 9:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    _one_line_error(_cli(failing_pipeline_dir, src, out, "--chunk-size", "3"), "E541", "--resume")
    monkeypatch.setattr(os, "fsync", real_fsync)
    annotate(str(failing_pipeline_dir), src, out, chunk_size=3, resume=True, progress=False)
    _check_exactly_once(out, texts)

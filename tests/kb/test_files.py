"""spacy_el.kb.files, the one way spacy_el writes a file or a folder: the target is replaced whole or not at
all, nothing is written through a symlink, and no temporary file stays behind a write that ends."""
import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from spacy_el.errors import message_code
from spacy_el.kb.files import (
    LOCK_NAME, append_bytes, lock_dir, moved_aside, new_dir, remove_temps, sha256_file, temp_target, truncate, write_bytes, write_json,
    write_path, write_stream, write_text,
)

from ..conftest import REPO_ROOT

OLD = b"old content\n"


def _save_npy(tmp: Path) -> None:
    np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(2, 3))[:] = 1.0  # as kb.vector_chunks does


# Every way to write one file, each writing new content to ``target``.
WRITERS = {
    "write_bytes": lambda target: write_bytes(target, b"new"),
    "write_text": lambda target: write_text(target, "new é"),
    "write_json": lambda target: write_json(target, {"new": 1}),
    "write_stream": lambda target: write_stream(target, lambda f: f.write("new\n"), text=True),
    "write_path": lambda target: write_path(target, _save_npy),
}


def _names(folder: Path):
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
def test_a_write_replaces_the_file_whole_and_keeps_its_mode(tmp_path, write):
    target = tmp_path / "out"
    target.write_bytes(OLD)
    target.chmod(0o640)
    write(target)
    assert target.read_bytes() != OLD and _names(tmp_path) == ["out"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
def test_a_new_file_gets_the_umask_permissions_not_private_ones(tmp_path, write):
    umask = os.umask(0)
    os.umask(umask)
    write(tmp_path / "out")
    assert oct((tmp_path / "out").stat().st_mode & 0o777) == oct(0o666 & ~umask)


class Crash(BaseException):
    """Stands for a kill or a full disk in the middle of a write: nothing catches it."""


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
@pytest.mark.parametrize("fail", ["fsync", "replace"])
def test_an_interrupted_write_leaves_the_old_file_whole_and_no_temporary_file(tmp_path, monkeypatch, write, fail):
    target = tmp_path / "out"
    target.write_bytes(OLD)

    def crash(*args):
        raise Crash()

    monkeypatch.setattr(os, fail, crash)
    with pytest.raises(Crash):
        write(target)
    monkeypatch.undo()
    assert target.read_bytes() == OLD and _names(tmp_path) == ["out"]


@pytest.mark.hostile("what holds")
def test_a_killed_writer_leaves_the_old_file_whole_and_remove_temps_clears_what_it_left(tmp_path):
    target = tmp_path / "out"
    target.write_bytes(OLD)
    script = """
        import os, sys
        from spacy_el.kb.files import write_stream

        def write(f):
            f.write(b"half")
            f.flush()
            os._exit(9)

        write_stream(sys.argv[1], write)
    """
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(target)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True)
    assert result.returncode == 9, result.stderr
    assert target.read_bytes() == OLD
    left = [p for p in tmp_path.iterdir() if p != target]
    assert [temp_target(p.name) for p in left] == ["out"]
    assert remove_temps(tmp_path) == left and _names(tmp_path) == ["out"]


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
def test_a_symlink_at_the_target_is_replaced_not_written_through(tmp_path, write):
    victim = tmp_path / "victim"
    victim.write_bytes(OLD)
    target = tmp_path / "out"
    target.symlink_to(victim)
    write(target)
    assert victim.read_bytes() == OLD and not target.is_symlink() and target.read_bytes() != OLD


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
def test_a_symlink_at_a_predictable_temporary_name_is_not_followed(tmp_path, monkeypatch, write):
    """Planted at the first name the writer draws (and a dangling one, which O_CREAT alone would create the
    file through, at the second): both are passed over and the write goes on under a third."""
    victim = tmp_path / "victim"
    victim.write_bytes(OLD)
    target = tmp_path / "out"
    draws = iter(["0" * 16, "1" * 16])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(draws, "2" * 16))
    (tmp_path / f".out.{'0' * 16}.tmp").symlink_to(victim)
    (tmp_path / f".out.{'1' * 16}.tmp").symlink_to(tmp_path / "elsewhere")
    write(target)
    assert victim.read_bytes() == OLD and not (tmp_path / "elsewhere").exists()
    assert target.is_file() and not target.is_symlink()


def test_write_json_round_trips_floats_and_keeps_text(tmp_path):
    data = {"x": 0.1 + 0.2, "big": 2**70, "name": "Zürich"}
    write_json(tmp_path / "a.json", data, indent=None)
    text = (tmp_path / "a.json").read_text(encoding="utf8")
    assert json.loads(text) == data and "Zürich" in text and text.endswith("}\n")


def test_append_bytes_appends_and_truncate_cuts_back(tmp_path):
    log = tmp_path / "log.jsonl"
    append_bytes(log, b"a\n")
    append_bytes(log, b"b\n")
    assert log.read_bytes() == b"a\nb\n"
    truncate(log, 2)
    assert log.read_bytes() == b"a\n"


@pytest.mark.parametrize("change", [lambda p: append_bytes(p, b"x"), lambda p: truncate(p, 0)],
                         ids=["append", "truncate"])
def test_a_log_that_is_a_symlink_is_refused(tmp_path, change):
    victim = tmp_path / "victim"
    victim.write_bytes(OLD)
    log = tmp_path / "errors.jsonl"
    log.symlink_to(victim)
    with pytest.raises(OSError) as err:
        change(log)
    assert message_code(str(err.value.strerror)) == "E262"
    assert victim.read_bytes() == OLD


def _folder(path: Path, content: bytes) -> Path:
    path.mkdir()
    (path / "sub").mkdir()
    (path / "sub" / "file").write_bytes(content)
    return path


def test_new_dir_swaps_the_folder_in_whole(tmp_path):
    target = _folder(tmp_path / "pipeline", OLD)
    with new_dir(target) as tmp:
        assert tmp.parent == tmp_path and temp_target(tmp.name) == "pipeline" and not any(tmp.iterdir())
        (tmp / "new").write_bytes(b"new")
        assert (target / "sub" / "file").read_bytes() == OLD  # the old folder stays until the block ends
    assert _names(target) == ["new"] and _names(tmp_path) == ["pipeline"]


def test_a_failure_while_writing_a_folder_leaves_the_old_one(tmp_path):
    target = _folder(tmp_path / "pipeline", OLD)
    with pytest.raises(ValueError):
        with new_dir(target) as tmp:
            (tmp / "half").write_bytes(b"x")
            raise ValueError("the pipeline does not load")
    assert (target / "sub" / "file").read_bytes() == OLD and _names(tmp_path) == ["pipeline"]


def test_a_symlink_at_a_folder_target_is_replaced_not_followed(tmp_path):
    victim = _folder(tmp_path / "victim", OLD)
    target = tmp_path / "pipeline"
    target.symlink_to(victim, target_is_directory=True)
    with new_dir(target) as tmp:
        (tmp / "new").write_bytes(b"new")
    assert not target.is_symlink() and _names(target) == ["new"]
    assert (victim / "sub" / "file").read_bytes() == OLD


def test_remove_temps_keeps_an_old_folder_that_is_the_only_copy_and_moved_aside_finds_it(tmp_path):
    """A kill between the two renames of a folder swap leaves the old folder aside and no target: it stays.
    Beside a target, a moved-aside folder is garbage, as is every temporary file."""
    aside = _folder(tmp_path / f".pipeline.{'a' * 16}.old", OLD)
    _folder(tmp_path / f".model.{'b' * 16}.old", OLD)
    _folder(tmp_path / "model", OLD)
    (tmp_path / f".model.{'c' * 16}.tmp").write_bytes(b"half")
    (tmp_path / ".model.tmp").write_bytes(b"not ours")
    removed = remove_temps(tmp_path)
    assert sorted(p.name for p in removed) == [f".model.{'b' * 16}.old", f".model.{'c' * 16}.tmp"]
    assert aside.is_dir() and (tmp_path / ".model.tmp").exists()
    assert moved_aside(tmp_path / "pipeline") == aside and moved_aside(tmp_path / "model") is None


def test_sha256_file_is_the_sha256_of_the_content(tmp_path):
    import hashlib

    data = os.urandom(10_000)
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


# -- lock_dir: one run at a time in a folder it owns ------------------------------------------------------
@pytest.mark.hostile("data loss")
def test_a_second_holder_of_a_folder_lock_fails_at_once(tmp_path):
    with lock_dir(tmp_path) as lock:
        assert lock == tmp_path / LOCK_NAME and lock.read_text() == str(os.getpid())
        with pytest.raises(BlockingIOError) as err:
            with lock_dir(tmp_path):
                pass
        assert message_code(str(err.value)) == "E263" and str(os.getpid()) in str(err.value)
    assert _names(tmp_path) == []  # released and cleared when the block ends
    with lock_dir(tmp_path):  # and free again
        pass


LOCK_HOLDER = """
    import sys, time
    from spacy_el.kb.files import lock_dir

    with lock_dir(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(60)
"""


@pytest.mark.hostile("crashes that block a run")
def test_the_lock_of_a_killed_process_does_not_block_and_a_live_one_does(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LOCK_HOLDER), str(tmp_path)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"locked\n"
        with pytest.raises(BlockingIOError, match="E263"):
            with lock_dir(tmp_path):
                pass
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert _names(tmp_path) == [LOCK_NAME]  # a kill -9 leaves the file, not the lock
    with lock_dir(tmp_path) as lock:
        assert lock.read_text() == str(os.getpid())


FORKING_HOLDER = """
    import os, signal, sys, time
    from spacy_el.kb.files import lock_dir

    with lock_dir(sys.argv[1]):
        ready, started = os.pipe()
        child = os.fork()
        if child == 0:  # a worker, which outlives its driver; os.fork has run the after-fork hooks when it returns
            os.write(started, b"1")
            time.sleep(60)
            os._exit(0)
        os.read(ready, 1)  # the worker is running: the driver is killed only after its fork completed
        print(child, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # the driver is killed: nothing is cleaned up
"""


@pytest.mark.hostile("crashes that block a run")
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_worker_forked_while_the_lock_is_held_does_not_keep_it_after_a_kill(tmp_path):
    """A worker forked by the run (annotate's --n-process) that outlives a killed driver must not keep the
    folder locked: a flock belongs to the open file, which a forked child would share."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FORKING_HOLDER), str(tmp_path)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, stdout=subprocess.PIPE)
    child = int(proc.stdout.readline())  # (the child keeps the pipe open: no reading to its end)
    proc.wait()
    proc.stdout.close()
    try:
        assert _names(tmp_path) == [LOCK_NAME]
        with lock_dir(tmp_path) as lock:
            assert lock.read_text() == str(os.getpid())
    finally:
        os.kill(child, signal.SIGKILL)


@pytest.mark.hostile("writing outside the folder")
def test_a_symlink_planted_at_the_lock_file_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(OLD)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / LOCK_NAME).symlink_to(victim)
    with pytest.raises(OSError) as err:
        with lock_dir(folder):
            pass
    assert message_code(str(err.value)) == "E262" and victim.read_bytes() == OLD

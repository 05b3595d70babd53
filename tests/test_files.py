"""spacy_el.files.write_atomic: the target is replaced whole or not at all."""
import os

import pytest

from spacy_el.files import write_atomic


def test_write_atomic_replaces_the_file_whole(tmp_path):
    target = tmp_path / "out.json"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    write_atomic(target, b"old")

    def failing_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]

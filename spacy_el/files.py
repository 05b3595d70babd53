"""Writing a file so that an interrupted write leaves the old one whole: a temporary file beside the target,
fsynced and renamed onto it (the rename is atomic on POSIX filesystems), then the folder fsynced."""
import os
from pathlib import Path

from .kb.serialization import atomic_write

__all__ = ["fsync_dir", "write_atomic"]


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (where the OS allows opening a directory)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, fsync it and rename it onto ``target``, then fsync the
    folder; a failed write removes the temporary file and leaves ``target`` as it was."""
    atomic_write(target, lambda f: f.write(data))
    fsync_dir(target.parent)

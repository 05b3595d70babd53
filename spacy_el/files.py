"""Writing a file so that an interrupted write leaves the old one whole: a temporary file beside the target,
fsynced and renamed onto it (the rename is atomic on POSIX filesystems), then the folder fsynced."""
import os
from pathlib import Path

from .kb.serialization import create_temp_file

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
    """Write ``data`` to a temporary file beside ``target``, fsync it and rename it onto ``target``; a failed write
    removes the temporary file and leaves ``target`` as it was."""
    tmp, fd = create_temp_file(target.parent, target.name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)

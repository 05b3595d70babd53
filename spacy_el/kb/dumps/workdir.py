"""The build folder of one ``kb from-dumps`` run, in a work root where the next run finds what a killed
one left behind.

A run makes one folder ``spacy-el-kb-build-XXXXXXXX`` in the work root (``--work-dir``; by default, in the
command, ``OUTPUT.from-dumps-work`` beside the output) and holds an exclusive ``flock`` on the file
``.lock`` inside it for as long as the folder is in use: the run files and spools of the passes, then the
KB's ``.npy`` files, which the returned KB maps until it is saved and collected. The kernel releases the
lock when the process dies, SIGKILL included, so every run first removes the build folders whose lock
nobody holds: the leftovers of killed runs (at the full scale, each is several GB). A folder whose run is
alive is left alone.

Creating a folder and taking its lock, and scanning for leftovers, both happen under a lock on the root's
``.spacy-el-kb-build.lock``, so a scan never sees a folder whose lock is not taken yet.
"""
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional

from ..errors import KBErrors
from .errors import DumpFormatError

try:  # POSIX; elsewhere no folder is ever taken for a leftover (nothing is removed)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

PREFIX = "spacy-el-kb-build-"
LOCK_FILE = ".lock"
ROOT_LOCK = ".spacy-el-kb-build.lock"


def _try_lock(fd: int) -> bool:
    """Take an exclusive flock on ``fd`` without waiting; False when another open file holds it."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def _root_locked(root: Path) -> Iterator[None]:
    """The root's lock, held while a folder is created or leftovers are looked for (short)."""
    fd = os.open(root / ROOT_LOCK, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _is_leftover(folder: Path) -> bool:
    """A build folder whose lock no process holds (or that has no lock file: a kill before it was taken
    cannot happen under the root lock, so it is a folder of an older version)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return folder.is_dir() and not folder.is_symlink()
    except OSError:  # another user's folder, a symlink: not ours to judge
        return False
    try:
        return _try_lock(fd)
    finally:
        os.close(fd)  # closing releases the lock just taken


def remove_leftovers(root: Path) -> List[Path]:
    """Remove the build folders in ``root`` that no live run holds. RETURNS: the folders removed."""
    removed: List[Path] = []
    if not root.is_dir():
        return removed
    with _root_locked(root):
        for folder in sorted(root.glob(PREFIX + "*")):
            if not folder.is_symlink() and folder.is_dir() and _is_leftover(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


class BuildFolder:
    """A build folder, locked from ``create`` to ``release``: ``scratch`` (removed once the KB is
    assembled) and ``arrays`` (the KB's ``.npy`` files)."""

    def __init__(self, path: Path, lock_fd: int) -> None:
        self.path = path
        self._lock_fd: Optional[int] = lock_fd
        self.scratch = path / "scratch"
        self.arrays = path / "arrays"
        self.scratch.mkdir()
        self.arrays.mkdir()

    @classmethod
    def create(cls, root: Path) -> "BuildFolder":
        """Remove the leftovers in ``root`` (made if missing), then make and lock a new build folder."""
        try:
            root.mkdir(parents=True, exist_ok=True)
            remove_leftovers(root)
            with _root_locked(root):
                path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))
                fd = os.open(path / LOCK_FILE, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o600)
                _try_lock(fd)
            return cls(path, fd)
        except OSError as err:
            raise DumpFormatError(KBErrors.E328.format(path=root, err=err)) from err

    def remove_scratch(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def release(self) -> None:
        """Remove the folder, then let its lock go (in this order: a scan never finds it unlocked)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def remove_root_if_empty(root: Path) -> None:
    """Remove a work root that holds nothing but its lock file (what a finished run leaves)."""
    try:
        if {p.name for p in root.iterdir()} <= {ROOT_LOCK}:
            (root / ROOT_LOCK).unlink(missing_ok=True)
            root.rmdir()
    except OSError:
        pass  # in use by another run, or gone already

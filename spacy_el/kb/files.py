"""spacy_el's one way to write a file or a folder: an interruption leaves the old version whole, and nothing is
written through a symbolic link. (It lives in the leaf ``kb/`` because the KB needs it; every room imports it.)

A file is written to a new temporary name in its target's folder, fsynced, and renamed onto the target
(``os.replace``: atomic on POSIX filesystems), then the folder is fsynced so that the rename survives a power
cut. A failed write removes its temporary file and leaves the target as it was.

* The temporary name is random, ``.<name>.<16 hex digits>.tmp`` (:func:`temp_target` reads it back), and is
  created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``): a file or symlink planted at that name is never
  opened, another name is drawn. It takes the permissions of the file it replaces, or else the usual umask
  ones (``tempfile.mkstemp`` would make it private): whoever could read the old file can read the new one.
* A symlink at the target is replaced by the rename, never written through; the folder the target is in is
  the caller's choice and is followed.
* A process that reads or memory-maps the old file keeps its content: the old inode lives on after the rename.

What is here:

* :func:`write_bytes`, :func:`write_text`, :func:`write_json`: a whole file from memory;
* :func:`write_stream`: a file produced piece by piece through ``write(file)`` (``np.save``);
* :func:`write_path`: a file made by a library that wants a path (a FAISS index, a memory-mapped array);
* :func:`new_dir`: a folder written under a temporary name, then swapped in for the old one
  (:func:`replace_dir`), as a pipeline or a checkpoint is saved;
* :func:`append_bytes`, :func:`truncate`: a log grown and cut back, fsynced, never through a symlink;
* :func:`create_temp_file`, :func:`fsync_file`, :func:`fsync_dir`: the pieces, for a writer that commits several
  files at once (the KB renames its manifest last); :func:`remove_temps` clears what a killed writer left, and
  :func:`moved_aside` finds the old folder a kill in the middle of a swap left as the only copy;
* :func:`sha256_file`: the checksum every manifest records;
* :func:`lock_dir`: the exclusive lock of a folder that a run owns (``annotate``'s OUTPUT), held for the whole
  run: a second run fails at once (E263). It is an OS lock (``flock``) on the file ``.spacy_el.lock`` in the
  folder, so the OS releases it when its process dies, ``kill -9`` included: a stale lock never blocks a rerun.
  A process forked while it is held (a worker) does not hold it.
"""
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from .errors import KBErrors

__all__ = [
    "LOCK_NAME", "append_bytes", "create_temp_dir", "create_temp_file", "fsync_dir", "fsync_file", "lock_dir",
    "moved_aside", "new_dir", "remove_temps", "replace_dir", "sha256_file", "temp_target", "truncate", "write_bytes", "write_json", "write_path",
    "write_stream", "write_text",
]

PathLike = Union[str, Path]
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows, where creating a symlink needs privileges anyway
_BINARY = getattr(os, "O_BINARY", 0)
LOCK_NAME = ".spacy_el.lock"
_TEMP = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{16}\.(?P<kind>tmp|old)$")


def sha256_file(path: PathLike) -> str:
    """The SHA-256 of the file at ``path`` (hex), read in blocks of 4 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _temp_name(name: str, kind: str = "tmp") -> str:
    return f".{name}.{secrets.token_hex(8)}.{kind}"


def temp_target(file_name: str) -> Optional[str]:
    """The name whose temporary file (or moved-aside old folder) ``file_name`` is, or None when it is neither:
    ``temp_target(".manifest.json.0123456789abcdef.tmp") == "manifest.json"``."""
    match = _TEMP.match(file_name)
    return match.group("name") if match else None


def _no_symlink(path: Path, err: OSError) -> OSError:
    """``err`` from opening ``path`` with O_NOFOLLOW, as a coded error when a symlink stood there."""
    # Linux says ELOOP; FreeBSD says EMLINK (and NetBSD EFTYPE), which other causes share.
    if err.errno == errno.ELOOP or (err.errno in (errno.EMLINK, getattr(errno, "EFTYPE", -1)) and path.is_symlink()):
        return OSError(err.errno, KBErrors.E262.format(path=path))
    return err


def create_temp_file(directory: PathLike, name: str) -> Tuple[Path, int]:
    """Create a new, empty file with a random temporary name for ``name`` in ``directory`` (module docstring),
    with the permissions of the regular file ``name`` it is to replace, if there is one.
    RETURNS: (its path, a file descriptor open for writing)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
    while True:
        tmp = Path(directory) / _temp_name(name)
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        old = os.lstat(Path(directory) / name)
    except OSError:
        return tmp, fd
    if stat.S_ISREG(old.st_mode) and hasattr(os, "fchmod"):
        try:
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        except OSError:  # a filesystem without permissions
            pass
    return tmp, fd


def create_temp_dir(directory: PathLike, name: str) -> Path:
    """Create a new, empty folder with a random temporary name for ``name`` in ``directory``; ``mkdir`` fails on
    anything already there, a symlink included, and another name is drawn. RETURNS: its path."""
    while True:
        tmp = Path(directory) / _temp_name(name)
        try:
            tmp.mkdir()
            return tmp
        except FileExistsError:
            continue


def fsync_dir(path: PathLike) -> None:
    """Make the renames and new names in the folder ``path`` durable (where the OS allows opening a folder)."""
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


def fsync_file(path: PathLike) -> None:
    """Make the content of the file at ``path`` durable (a symlink there is not followed)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _commit(tmp: Path, target: Path) -> None:
    os.replace(tmp, target)
    fsync_dir(target.parent)


def write_stream(target: PathLike, write: Callable[[IO[Any]], Any], *, text: bool = False) -> None:
    """Call ``write(file)`` on a new temporary file beside ``target`` (text mode, UTF-8 and ``\\n`` line ends,
    when ``text``), fsync it and rename it onto ``target``."""
    target = Path(target)
    tmp, fd = create_temp_file(target.parent, target.name)
    try:
        with os.fdopen(fd, "w", encoding="utf8", newline="\n") if text else os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        _commit(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(target: PathLike, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically (module docstring)."""
    write_stream(target, lambda f: f.write(data))


def write_text(target: PathLike, text: str) -> None:
    """Write ``text`` to ``target`` atomically, as UTF-8."""
    write_bytes(target, text.encode("utf8"))


def write_json(target: PathLike, data: Any, *, indent: Optional[int] = 2, **dumps: Any) -> None:
    """Write ``data`` as JSON to ``target`` atomically, with a final newline: the standard library's
    ``json.dumps`` (floats round-trip exactly, integers of any size are kept), non-ASCII text kept as it is
    unless ``ensure_ascii=True``."""
    dumps.setdefault("ensure_ascii", False)
    write_text(target, json.dumps(data, indent=indent, **dumps) + "\n")


def write_path(target: PathLike, write: Callable[[Path], Any]) -> None:
    """Call ``write(path)`` with the path of a new, empty temporary file beside ``target`` (for a library that
    writes to a path by name: FAISS, ``np.lib.format.open_memmap``), then fsync it and rename it onto ``target``."""
    target = Path(target)
    tmp, fd = create_temp_file(target.parent, target.name)
    os.close(fd)
    try:
        write(tmp)
        fsync_file(tmp)
        _commit(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def append_bytes(path: PathLike, data: bytes) -> None:
    """Append ``data`` to the file at ``path`` (created if missing) and fsync it; a symlink there is refused
    (OSError E262), never appended through."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _BINARY, 0o666)
    except OSError as err:
        raise _no_symlink(path, err) from err
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def truncate(path: PathLike, size: int) -> None:
    """Cut the file at ``path`` back to ``size`` bytes and fsync it; a symlink there is refused (OSError E262)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | _NOFOLLOW | _BINARY)
    except OSError as err:
        raise _no_symlink(path, err) from err
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Remove a file, a symlink (not what it points to) or a folder tree."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    """fsync every file below ``root`` (symlinks are not followed), then every folder, deepest first."""
    folders = []
    for folder, _, files in os.walk(root):
        folders.append(folder)
        for name in files:
            if not os.path.islink(os.path.join(folder, name)):
                fsync_file(Path(folder, name))
    for folder in reversed(folders):
        fsync_dir(folder)


def replace_dir(new: PathLike, target: PathLike) -> None:
    """Put the folder ``new`` (in ``target``'s folder) at ``target``, after fsyncing every file in it. An old
    ``target`` (folder, file or symlink: a symlink is moved, never followed) is first renamed aside to
    ``.<name>.<hex>.old`` and removed once ``new`` is in place; between the two renames ``target`` is missing,
    so a reader sees the old folder, none, or the new one, never a mix."""
    new, target = Path(new), Path(target)
    _fsync_tree(new)
    old = None
    if os.path.lexists(target):
        old = target.parent / _temp_name(target.name, "old")
        os.replace(target, old)
    os.replace(new, target)
    fsync_dir(target.parent)
    if old is not None:
        _remove(old)


@contextmanager
def new_dir(target: PathLike) -> Iterator[Path]:
    """A new, empty folder beside ``target`` to write into; when the block ends without an error it replaces
    ``target`` (:func:`replace_dir`), and on an error it is removed and ``target`` stays as it was."""
    target = Path(target)
    tmp = create_temp_dir(target.parent, target.name)
    try:
        yield tmp
        replace_dir(tmp, target)
    finally:
        if os.path.lexists(tmp):
            _remove(tmp)


def moved_aside(target: PathLike) -> Optional[Path]:
    """The old folder that a swap into ``target`` renamed aside (:func:`replace_dir`), when a kill between its two
    renames left it there and ``target`` missing: then the only complete copy (the newest, if several). None when
    ``target`` exists or there is none."""
    target = Path(target)
    if os.path.lexists(target):
        return None
    found = [p for p in target.parent.glob(".*.old") if temp_target(p.name) == target.name and p.is_dir()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def remove_temps(directory: PathLike, names: Optional[Iterable[str]] = None) -> List[Path]:
    """Remove what a killed writer left in ``directory``: temporary files and folders (of ``names`` only, when
    given), and folders renamed aside whose target is back in place (one whose target is missing is the only
    copy left, and stays). RETURNS: what was removed."""
    directory = Path(directory)
    wanted = None if names is None else set(names)
    removed = []
    for path in sorted(directory.iterdir()):
        match = _TEMP.match(path.name)
        if match is None or (wanted is not None and match.group("name") not in wanted):
            continue
        if match.group("kind") == "old" and not os.path.lexists(directory / match.group("name")):
            continue
        _remove(path)
        removed.append(path)
    return removed


# The lock files this process holds: fd -> the holder's pid. A forked child (a worker process) closes its
# copies at once: a flock belongs to the open file, which the child would otherwise share, so a worker that
# outlived its driver would keep the folder locked.
_HELD: Dict[int, int] = {}


def _forget_inherited_locks() -> None:
    for fd in list(_HELD):
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited_locks)


def _try_lock(fd: int) -> bool:
    """Take the exclusive OS lock on the open file ``fd`` without waiting; False when another holds it."""
    try:
        import fcntl
    except ImportError:  # Windows: a byte-range lock, also released when the process dies
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except (BlockingIOError, PermissionError):
        return False


def _holder(path: Path) -> str:
    """The process id the holder of the lock file at ``path`` wrote in it, or "unknown"."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError:
        return "unknown"
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return text if text.isdigit() else "unknown"


@contextmanager
def lock_dir(directory: PathLike) -> Iterator[Path]:
    """Hold the exclusive lock of the existing folder ``directory`` for the block (module docstring): another
    holder, in this process or another, makes it raise ``BlockingIOError`` (E263) at once, never wait. A symlink
    planted at the lock file is refused (E262), never opened. The lock file holds the holder's process id (for
    the message) and is removed when the block ends; one a killed process left is taken over. YIELDS: its path."""
    path = Path(directory) / LOCK_NAME
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _BINARY, 0o666)
        except OSError as err:
            coded = _no_symlink(path, err)
            raise (OSError(coded.strerror) if coded is not err else err) from err
        if not _try_lock(fd):
            os.close(fd)
            raise BlockingIOError(KBErrors.E263.format(path=directory, holder=_holder(path), lock=path))
        # The holder before us may have removed the file between our open and our lock: then we hold the lock of
        # a name no longer there, and a third run could take a new file's. Lock the file that is there.
        try:
            same = os.path.samestat(os.fstat(fd), os.lstat(path))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)
    _HELD[fd] = os.getpid()
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        yield path
    finally:
        if _HELD.pop(fd, None) == os.getpid():  # not in a forked child, which closed its copy already
            try:
                path.unlink()  # while we still hold it, so that no one takes the lock of a file about to go
            except OSError:
                pass
            os.close(fd)

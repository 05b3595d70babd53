"""Data-only KB serialisation: ``.npy`` arrays (never pickled) plus a JSON manifest with SHA-256 checksums.

Directory layout::

    manifest.json           format, counts, settings, type inventory, and {file: {sha256, bytes}}
    arrays/<name>.npy       one array per file, loaded with allow_pickle=False (memory-mapped if asked)
    <extra files>           e.g. the FAISS index, checksummed like the arrays

Loading verifies every listed file (present, size, and SHA-256 unless ``verify=False``) before it is
parsed, so a truncated or tampered directory fails with a ``KBFormatError`` that names the file.

Writing never changes a file in place: each file is written under a fresh temporary name in its folder,
fsynced, and renamed over the old one, the manifest last (``files.py``). A process that memory-maps the
old KB (or the KB being saved, onto its own folder) keeps reading the old files, whose inodes stay alive
after the rename; a symlink planted in the folder is replaced, never written through. A folder that holds
something other than a spacy_el KB is not written into without ``force``.

An array that ``map_built_npy`` mapped from a finished ``.npy`` file is written by copying that file,
never read through its map (mapped pages that are read count in the process's resident set).
"""
import hashlib
import io
import json
import os
import shutil
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import srsly

from .errors import KBErrors
from .files import create_temp_file, fsync_dir, fsync_file, sha256_file

FORMAT_NAME = "spacy_el.kb"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARRAY_DIR = "arrays"


class KBFormatError(ValueError):
    """A KB file is missing, truncated, tampered with or inconsistent."""


# id(array) -> (a weak reference to the array, the .npy file it maps); see ``map_built_npy``.
_BUILT_FILES: Dict[int, Tuple["weakref.ReferenceType[np.ndarray]", Path]] = {}


def map_built_npy(path: Path) -> np.ndarray:
    """Memory-map (read-only) the ``.npy`` file at ``path``, a finished file in a folder that only its
    builder writes to (a private build folder, as ``kb.dumps`` makes) and that is never changed afterwards.

    ``write_kb_dir`` writes the returned array by copying the file instead of reading the array: a KB
    built straight to files can then be saved without ever holding its arrays in this process.
    """
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    key = id(array)
    _BUILT_FILES[key] = (weakref.ref(array, lambda _, key=key: _BUILT_FILES.pop(key, None)), Path(path))
    return array


def _built_file(array: np.ndarray) -> Optional[Path]:
    """The file ``map_built_npy`` mapped ``array`` from, when it still holds exactly the bytes ``np.save``
    would write for the array (same header, same size); else None."""
    entry = _BUILT_FILES.get(id(array))
    if entry is None or entry[0]() is not array:
        return None
    path = entry[1]
    header = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    except ValueError:  # a header too long for format 1.0: np.save writes another version
        return None
    expected = header.getvalue()
    try:
        with path.open("rb") as f:
            if f.read(len(expected)) != expected or os.fstat(f.fileno()).st_size != len(expected) + array.nbytes:
                return None
    except OSError:
        return None
    return path


def _write_array(f: Any, array: np.ndarray) -> None:
    source = _built_file(array)
    if source is None:
        np.save(f, np.ascontiguousarray(array), allow_pickle=False)
        return
    with source.open("rb") as src:
        shutil.copyfileobj(src, f, 1 << 20)


def _kb_manifest(path: Path) -> Optional[Dict[str, Any]]:
    """The manifest at ``path`` if it is a spacy_el KB manifest (of any format version: an old KB may be
    rebuilt), else None."""
    try:
        manifest = json.loads(path.read_text(encoding="utf8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == FORMAT_NAME else None


def check_kb_target(path: Path, force: bool = False) -> None:
    """Refuse to write a KB to ``path`` when that could destroy something else.

    Fine: a missing or empty directory, or one that holds a spacy_el KB (it is replaced). Refused: a
    path that is not a directory, a non-empty directory without a spacy_el manifest (unless ``force``),
    and a KB whose ``arrays/`` folder is a symbolic link (always: the arrays would land wherever it points).
    """
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise ValueError(KBErrors.E201.format(path=path))
    if path.exists() and not path.is_dir():
        raise ValueError(KBErrors.E202.format(path=path))
    if path.is_dir() and any(path.iterdir()) and not force and _kb_manifest(path / MANIFEST) is None:
        raise ValueError(KBErrors.E203.format(path=path, manifest=MANIFEST))
    array_dir = path / ARRAY_DIR
    if array_dir.is_symlink():
        raise ValueError(KBErrors.E204.format(array_dir=array_dir, arrays=ARRAY_DIR))
    if array_dir.exists() and not array_dir.is_dir():
        raise ValueError(KBErrors.E205.format(path=path, array_dir=array_dir))


def _old_kb_files(path: Path) -> List[str]:
    """The files the KB currently in ``path`` lists, for removal once the new KB is in place."""
    manifest = _kb_manifest(path / MANIFEST)
    if manifest is None:
        return []
    files = manifest.get("files")
    return [rel for rel in files if isinstance(rel, str)] if isinstance(files, dict) else []


def write_kb_dir(
    path: Path,
    manifest: Dict[str, Any],
    arrays: Dict[str, np.ndarray],
    extra_writers: Dict[str, Callable[[Path], Any]],
    *,
    force: bool = False,
) -> None:
    """Write arrays, and extra files through their writers (called with a temporary path in the
    target's folder, so a large FAISS index goes straight to disk), under ``path``, then a manifest
    that checksums them all. See the module docstring for why every file is renamed into place, and
    ``check_kb_target`` for the folders that are refused (``force`` allows a non-empty non-KB folder).
    """
    path = Path(path)
    check_kb_target(path, force=force)
    path.mkdir(parents=True, exist_ok=True)
    (path / ARRAY_DIR).mkdir(exist_ok=True)
    old_files = _old_kb_files(path)
    written: Dict[str, Path] = {}  # relative name -> temporary file, renamed once all are written
    try:
        for name, array in arrays.items():
            rel = f"{ARRAY_DIR}/{name}.npy"
            tmp, fd = create_temp_file(path / ARRAY_DIR, f"{name}.npy")
            written[rel] = tmp
            with os.fdopen(fd, "wb") as f:
                _write_array(f, array)
        for rel, write in extra_writers.items():
            target = path / rel
            tmp, fd = create_temp_file(target.parent, target.name)
            written[rel] = tmp
            os.close(fd)
            write(tmp)
        files = {rel: {"sha256": sha256_file(tmp), "bytes": tmp.stat().st_size} for rel, tmp in written.items()}
        full = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **manifest, "files": files}
        tmp, fd = create_temp_file(path, MANIFEST)
        written[MANIFEST] = tmp
        with os.fdopen(fd, "w", encoding="utf8") as f:
            f.write(json.dumps(full, indent=2, ensure_ascii=False))
        for tmp in written.values():
            fsync_file(tmp)
        # The manifest goes last: until it is replaced, the folder's old manifest does not match the new
        # arrays, so a reader gets a checksum error, never a silent mix of two KBs.
        for rel, tmp in written.items():
            os.replace(tmp, path / rel)
    except BaseException:
        for tmp in written.values():
            tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path / ARRAY_DIR)
    fsync_dir(path)
    _remove_stale(path, [rel for rel in old_files if rel not in written])


def _remove_stale(path: Path, rels: List[str]) -> None:
    """Remove files of the previous KB that the new one does not have (e.g. the fuzzy index, when the
    new KB is built without it). Only names directly in the KB folder or its real ``arrays/`` folder
    are touched, so an unsafe name in an old manifest cannot reach outside."""
    for rel in rels:
        parts = Path(rel).parts
        if rel.startswith("/") or ".." in parts or not (len(parts) == 1 or (len(parts) == 2 and parts[0] == ARRAY_DIR)):
            continue
        target = path / rel
        if target.is_file() or target.is_symlink():
            target.unlink()


def read_manifest(path: Path) -> Dict[str, Any]:
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise KBFormatError(KBErrors.E206.format(path=path))
    if not manifest_path.is_file():
        raise KBFormatError(KBErrors.E207.format(manifest_path=manifest_path))
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise KBFormatError(KBErrors.E214.format(manifest_path=manifest_path, err=err)) from err
    _check_manifest(manifest, str(manifest_path))
    return manifest


def check_format_header(document: Any, name: str, version: int, what: str, where: str) -> None:
    """Refuse ``document`` (parsed JSON) unless it is a dict whose ``format`` is ``name`` and whose
    ``format_version`` is ``version``: the KB manifest's header, and that of the data files a KB carries."""
    if not isinstance(document, dict) or document.get("format") != name:
        raise KBFormatError(KBErrors.E208.format(where=where, what=what, name=name))
    if document.get("format_version") != version:
        raise KBFormatError(
            KBErrors.E209.format(where=where, format_version=document.get("format_version"), version=version)
        )


def _check_manifest(manifest: Any, where: str) -> None:
    check_format_header(manifest, FORMAT_NAME, FORMAT_VERSION, "a spacy_el KB", where)
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise KBFormatError(KBErrors.E210.format(where=where))
    for rel in files:
        # Refuse paths that would escape the KB directory.
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
            raise KBFormatError(KBErrors.E215.format(where=where, rel=rel))


def read_kb_dir(
    path: Path, *, mmap: bool = False, verify: bool = True
) -> Tuple[Dict[str, Any], Dict[str, np.ndarray], Dict[str, Path]]:
    """Verify and load a KB directory.

    RETURNS: (manifest, arrays by name, paths of the extra files by relative name).
    """
    manifest = read_manifest(path)
    arrays: Dict[str, np.ndarray] = {}
    extra: Dict[str, Path] = {}
    for rel, info in manifest["files"].items():
        file_path = path / rel
        if not file_path.is_file():
            raise KBFormatError(KBErrors.E216.format(file_path=file_path))
        size = file_path.stat().st_size
        if size != info.get("bytes"):
            raise KBFormatError(KBErrors.E217.format(file_path=file_path, size=size, bytes=info.get("bytes")))
        if verify and sha256_file(file_path) != info.get("sha256"):
            raise KBFormatError(KBErrors.E218.format(file_path=file_path))
        if rel.startswith(f"{ARRAY_DIR}/") and rel.endswith(".npy"):
            name = rel[len(ARRAY_DIR) + 1 : -len(".npy")]
            arrays[name] = _load_npy(file_path, mmap=mmap)
            # The value scan runs with the checksums: they already read every byte of every file, and
            # the float arrays (vectors, frequencies, priors, type probabilities) are a part of those
            # bytes, so it at most doubles the cost of reading them. verify=False (large trusted KBs,
            # memory-mapped for a fast start) skips both, since the scan would page in every vector.
            if verify:
                _check_finite(arrays[name], name, f"KB file {file_path}")
        else:
            extra[rel] = file_path
    return manifest, arrays, extra


def _load_npy(source: Any, *, mmap: bool, name: Optional[str] = None) -> np.ndarray:
    try:
        array = np.load(source, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as err:
        raise KBFormatError(KBErrors.E219.format(name=name or source, err=err)) from err
    if array.dtype.hasobject:
        raise KBFormatError(KBErrors.E211.format(name=name or source))
    # A plain ndarray view of the mapped file: np.memmap's Python-level indexing costs a multiple of an
    # ndarray's for the single-element reads a look-up makes (offsets, one id), and the view keeps the map.
    return np.asarray(array)


def is_memory_mapped(array: Any) -> bool:
    """Whether ``array`` reads a memory-mapped file (an ``np.memmap`` or a view of one, as loaded KB arrays
    are), rather than holding a copy."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
    return False


def _check_finite(array: np.ndarray, name: str, where: str) -> None:
    """Refuse a float array holding NaN or inf: a NaN vector or prior silently gives NaN scores."""
    if array.dtype.kind not in "fc":
        return
    flat = np.ravel(array, order="K")  # a view for the contiguous arrays every KB holds
    step = 1 << 22  # scan in blocks: np.isfinite on a whole vector matrix would allocate its size again
    for start in range(0, flat.size, step):
        if not np.isfinite(flat[start : start + step]).all():
            raise KBFormatError(KBErrors.E220.format(where=where, name=name))


def kb_to_bytes(manifest: Dict[str, Any], arrays: Dict[str, np.ndarray], extra_files: Dict[str, bytes]) -> bytes:
    packed_arrays = {}
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
        packed_arrays[name] = buffer.getvalue()
    digest = {k: hashlib.sha256(v).hexdigest() for k, v in {**packed_arrays, **extra_files}.items()}
    full = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **manifest, "files": digest}
    return srsly.msgpack_dumps({"manifest": full, "arrays": packed_arrays, "extra": extra_files})


def kb_from_bytes(data: bytes) -> Tuple[Dict[str, Any], Dict[str, np.ndarray], Dict[str, bytes]]:
    try:
        msg = srsly.msgpack_loads(data)
    except Exception as err:  # msgpack raises several unrelated exception types on garbage
        raise KBFormatError(KBErrors.E221.format(err_type=type(err).__name__)) from err
    if not isinstance(msg, dict) or not {"manifest", "arrays", "extra"} <= set(msg):
        raise KBFormatError(KBErrors.E212)
    manifest = msg["manifest"]
    _check_manifest(manifest, "the KB bytes' manifest")
    blobs = {**msg["arrays"], **msg["extra"]}
    if set(blobs) != set(manifest["files"]):
        raise KBFormatError(KBErrors.E213)
    for name, blob in blobs.items():
        if not isinstance(blob, bytes) or hashlib.sha256(blob).hexdigest() != manifest["files"][name]:
            raise KBFormatError(KBErrors.E222.format(name=name))
    arrays = {name: _load_npy(io.BytesIO(blob), mmap=False, name=name) for name, blob in msg["arrays"].items()}
    for name, array in arrays.items():  # bytes are always checksummed, so always scanned (see read_kb_dir)
        _check_finite(array, name, "the KB bytes")
    return manifest, arrays, dict(msg["extra"])

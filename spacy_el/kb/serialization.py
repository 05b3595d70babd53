"""Data-only KB serialisation: ``.npy`` arrays (never pickled) plus a JSON manifest with SHA-256 checksums.

Directory layout::

    manifest.json           format, counts, settings, type inventory, and {file: {sha256, bytes}}
    arrays/<name>.npy       one array per file, loaded with allow_pickle=False (memory-mapped if asked)
    <extra files>           e.g. the FAISS index, checksummed like the arrays

Loading verifies every listed file (present, size, and SHA-256 unless ``verify=False``) before it is
parsed, so a truncated or tampered directory fails with a ``KBFormatError`` that names the file.
"""
import hashlib
import io
import json
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import srsly

FORMAT_NAME = "spacy_el.kb"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARRAY_DIR = "arrays"


class KBFormatError(ValueError):
    """A KB file is missing, truncated, tampered with or inconsistent."""


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def write_kb_dir(
    path: Path,
    manifest: Dict[str, Any],
    arrays: Dict[str, np.ndarray],
    extra_writers: Dict[str, Callable[[Path], Any]],
) -> None:
    """Write arrays, and extra files through their writers (called with the target path, so a large
    FAISS index goes straight to disk), under ``path``, then a manifest that checksums them all."""
    path.mkdir(parents=True, exist_ok=True)
    (path / ARRAY_DIR).mkdir(exist_ok=True)
    files: Dict[str, Dict[str, Any]] = {}
    for name, array in arrays.items():
        rel = f"{ARRAY_DIR}/{name}.npy"
        np.save(path / rel, np.ascontiguousarray(array), allow_pickle=False)
        files[rel] = {}
    for rel, write in extra_writers.items():
        write(path / rel)
        files[rel] = {}
    for rel in files:
        files[rel] = {"sha256": _sha256_file(path / rel), "bytes": (path / rel).stat().st_size}
    full = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **manifest, "files": files}
    (path / MANIFEST).write_text(json.dumps(full, indent=2, ensure_ascii=False), encoding="utf8")


def read_manifest(path: Path) -> Dict[str, Any]:
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise KBFormatError(f"[spacy_el] KB directory not found: {path}")
    if not manifest_path.is_file():
        raise KBFormatError(f"[spacy_el] {manifest_path} is missing: this is not a spacy_el KB directory.")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise KBFormatError(f"[spacy_el] {manifest_path} is not valid JSON ({err}).") from err
    _check_manifest(manifest, str(manifest_path))
    return manifest


def _check_manifest(manifest: Any, where: str) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise KBFormatError(f"[spacy_el] {where} does not describe a spacy_el KB (format != {FORMAT_NAME!r}).")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise KBFormatError(
            f"[spacy_el] {where} has format_version {manifest.get('format_version')!r}; "
            f"this version of spacy_el reads version {FORMAT_VERSION}. Rebuild the KB."
        )
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise KBFormatError(f"[spacy_el] {where} has no 'files' table.")
    for rel in files:
        # Refuse paths that would escape the KB directory.
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
            raise KBFormatError(f"[spacy_el] {where} lists an unsafe file path: {rel!r}")


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
            raise KBFormatError(f"[spacy_el] KB file {file_path} is missing.")
        size = file_path.stat().st_size
        if size != info.get("bytes"):
            raise KBFormatError(
                f"[spacy_el] KB file {file_path} has {size} bytes, the manifest says {info.get('bytes')}: "
                "it is truncated or was modified."
            )
        if verify and _sha256_file(file_path) != info.get("sha256"):
            raise KBFormatError(f"[spacy_el] KB file {file_path} does not match its SHA-256 checksum: it was modified.")
        if rel.startswith(f"{ARRAY_DIR}/") and rel.endswith(".npy"):
            name = rel[len(ARRAY_DIR) + 1 : -len(".npy")]
            arrays[name] = _load_npy(file_path, mmap=mmap)
        else:
            extra[rel] = file_path
    return manifest, arrays, extra


def _load_npy(source: Any, *, mmap: bool, name: Optional[str] = None) -> np.ndarray:
    try:
        array = np.load(source, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as err:
        raise KBFormatError(f"[spacy_el] KB array {name or source} cannot be read as .npy data ({err}).") from err
    if array.dtype.hasobject:
        raise KBFormatError(f"[spacy_el] KB array {name or source} has an object dtype, which is not allowed.")
    return array


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
        raise KBFormatError(f"[spacy_el] KB bytes are not a valid msgpack message ({type(err).__name__}).") from err
    if not isinstance(msg, dict) or not {"manifest", "arrays", "extra"} <= set(msg):
        raise KBFormatError("[spacy_el] KB bytes lack the manifest/arrays/extra sections.")
    manifest = msg["manifest"]
    _check_manifest(manifest, "the KB bytes' manifest")
    blobs = {**msg["arrays"], **msg["extra"]}
    if set(blobs) != set(manifest["files"]):
        raise KBFormatError("[spacy_el] KB bytes hold different sections than their manifest lists.")
    for name, blob in blobs.items():
        if not isinstance(blob, bytes) or hashlib.sha256(blob).hexdigest() != manifest["files"][name]:
            raise KBFormatError(f"[spacy_el] KB bytes section {name!r} does not match its checksum.")
    arrays = {name: _load_npy(io.BytesIO(blob), mmap=False, name=name) for name, blob in msg["arrays"].items()}
    return manifest, arrays, dict(msg["extra"])

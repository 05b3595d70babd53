"""Resumable entity-vector encoding: fixed row ranges encoded into chunk files of a work folder.

Encoding the vectors of millions of entities takes hours on a CPU, so ``encode_in_chunks`` writes rows
``[k * chunk_size, (k + 1) * chunk_size)`` to ``chunk-{k:05d}.npy`` in the work folder, each written to a
temporary name and renamed when complete. ``meta.json`` (written first) records what the chunks depend on:
the number of rows, the vector width, the chunk size, the encoder's fingerprint
(``encoder.encoder_fingerprint``), its ``max_length`` and the SHA-256 of the texts. A second run with the
same folder checks them (a mismatch is refused: the chunks would mix two runs), skips the finished chunks
and encodes the rest; a chunk is encoded the same way whether or not the run was interrupted, so the
result is the same. The chunks are then stitched into ``vectors.npy`` (memory-mapped, one chunk in memory
at a time), which is returned memory-mapped.

What is not checked: the batch size and the device (CPU or GPU). Changing them between an interrupted run
and its continuation changes the last bits of the later chunks' floats, not their meaning.
"""
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from .errors import KBErrors
from .files import temp_target, write_json, write_path, write_stream

__all__ = ["encode_in_chunks", "remove_work_dir", "texts_sha256", "chunk_file", "DEFAULT_CHUNK_SIZE", "META_FILE", "VECTORS_FILE"]

DEFAULT_CHUNK_SIZE = 50_000
META_FILE = "meta.json"
VECTORS_FILE = "vectors.npy"
WORK_FORMAT = "spacy_el.vector_chunks"
WORK_VERSION = 1
# The fields of meta.json a continued run must agree with (the others are for information).
CHECKED = ("n", "dim", "chunk_size", "encoder", "max_length", "texts_sha256")

TextsOf = Callable[[int, int], Sequence[str]]  # texts_of(start, end) -> the texts of rows start..end-1


def chunk_file(work_dir: Path, k: int) -> Path:
    return Path(work_dir) / f"chunk-{k:05d}.npy"


def texts_sha256(texts_of: TextsOf, n: int, block: int = DEFAULT_CHUNK_SIZE) -> str:
    """SHA-256 of the ``n`` texts in order (each length-prefixed), read ``block`` at a time."""
    digest = hashlib.sha256()
    for start in range(0, n, block):
        for text in texts_of(start, min(n, start + block)):
            data = text.encode("utf8")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
    return digest.hexdigest()


def _describe(field: str, value: Any) -> str:
    if field == "encoder" and isinstance(value, dict):
        return f"{value.get('name')} (sha256 {str(value.get('sha256'))[:12]}...)"
    if field == "texts_sha256":
        return f"{str(value)[:12]}..."
    return repr(value)


def _check_or_write_meta(work_dir: Path, meta: Dict[str, Any]) -> None:
    """Start a new work folder, or check that an existing one was made by the same run."""
    meta_path = work_dir / META_FILE
    if not meta_path.is_file():
        if work_dir.is_dir() and any(p for p in work_dir.iterdir() if not p.name.startswith(".")):
            raise ValueError(KBErrors.E249.format(work_dir=work_dir, meta_file=META_FILE))
        work_dir.mkdir(parents=True, exist_ok=True)
        write_json(meta_path, meta)
        return
    try:
        old = json.loads(meta_path.read_text(encoding="utf8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ValueError(KBErrors.E250.format(meta_path=meta_path, err=err)) from err
    if not isinstance(old, dict) or old.get("format") != WORK_FORMAT:
        raise ValueError(KBErrors.E245.format(meta_path=meta_path))
    if old.get("version") != WORK_VERSION:
        raise ValueError(KBErrors.E246.format(meta_path=meta_path, version=old.get("version"), work_version=WORK_VERSION))
    for field in CHECKED:
        if old.get(field) != meta[field]:
            raise ValueError(KBErrors.E251.format(
                work_dir=work_dir, field=field, old=_describe(field, old.get(field)), new=_describe(field, meta[field])
            ))


def _finished_chunk(path: Path, rows: int, dim: int) -> bool:
    """Whether chunk ``path`` exists (it was renamed into place complete); a wrong shape is refused."""
    if not path.is_file():
        return False
    try:
        chunk = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        raise ValueError(KBErrors.E252.format(path=path, err=err)) from err
    if chunk.shape != (rows, dim) or chunk.dtype != np.float32:
        raise ValueError(KBErrors.E247.format(path=path, dtype=chunk.dtype, shape=chunk.shape, expected=(rows, dim)))
    return True


def encode_in_chunks(
    texts_of: TextsOf,
    n: int,
    encoder: Any,
    fingerprint: Dict[str, str],
    work_dir: Path,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = True,
    texts_digest: Optional[str] = None,
) -> np.ndarray:
    """Encode the ``n`` texts ``texts_of`` gives, ``chunk_size`` rows per chunk file in ``work_dir``,
    continuing a previous run of the same encoding there. RETURNS: float32 (n, dim), memory-mapped from
    ``work_dir / vectors.npy``.

    encoder: a ``TextEncoder`` (``dim``, ``max_length``, ``batch_size``, ``device`` and
        ``encode(texts, progress=False, bar=None)``).
    fingerprint: ``encoder_fingerprint`` of the encoder's model.
    texts_digest: ``texts_sha256(texts_of, n)`` when the caller has it already.
    """
    from tqdm import tqdm

    if chunk_size < 1:
        raise ValueError(KBErrors.E248.format(chunk_size=chunk_size))
    work_dir = Path(work_dir)
    dim = int(encoder.dim)
    meta = {
        "format": WORK_FORMAT, "version": WORK_VERSION, "n": int(n), "dim": dim, "chunk_size": int(chunk_size),
        "encoder": dict(fingerprint), "max_length": int(getattr(encoder, "max_length", 0)),
        "texts_sha256": texts_digest or texts_sha256(texts_of, n),
        # For information only (see the module docstring).
        "batch_size": int(getattr(encoder, "batch_size", 0)), "device": str(getattr(encoder, "device", "")),
    }
    _check_or_write_meta(work_dir, meta)
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    stitched = work_dir / VECTORS_FILE
    if stitched.is_file():
        vectors = np.load(stitched, mmap_mode="r", allow_pickle=False)
        if vectors.shape == (n, dim) and vectors.dtype == np.float32:
            return vectors
        stitched.unlink()  # not this run's: stitch it again from the chunks
    bounds = [(start, min(n, start + chunk_size)) for start in range(0, n, chunk_size)]
    todo = [k for k, (start, end) in enumerate(bounds) if not _finished_chunk(chunk_file(work_dir, k), end - start, dim)]
    done_rows = n - sum(bounds[k][1] - bounds[k][0] for k in todo)
    with tqdm(total=n, initial=done_rows, desc="Encoding entities", unit="entity", disable=not progress) as bar:
        if done_rows:
            bar.write(f"Continuing: {len(bounds) - len(todo)} of {len(bounds)} chunks already in {work_dir}")
        for k in todo:
            start, end = bounds[k]
            chunk = np.ascontiguousarray(encoder.encode(list(texts_of(start, end)), progress=False, bar=bar), dtype=np.float32)
            if chunk.shape != (end - start, dim):
                raise ValueError(
                    KBErrors.E253.format(shape=chunk.shape, start=start, end=end - 1, expected=(end - start, dim))
                )
            if not np.isfinite(chunk).all():
                raise ValueError(KBErrors.E254.format(start=start, end=end - 1))
            write_stream(chunk_file(work_dir, k), lambda f: np.save(f, chunk, allow_pickle=False))
    return _stitch(work_dir, bounds, n, dim)


def _stitch(work_dir: Path, bounds: Sequence[tuple], n: int, dim: int) -> np.ndarray:
    """Copy the chunks into one (n, dim) .npy file, a chunk at a time, and map it."""
    target = work_dir / VECTORS_FILE

    def stitch(tmp: Path) -> None:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, dim))
        for k, (start, end) in enumerate(bounds):
            out[start:end] = np.load(chunk_file(work_dir, k), mmap_mode="r", allow_pickle=False)
        out.flush()

    write_path(target, stitch)
    return np.load(target, mmap_mode="r", allow_pickle=False)


def remove_work_dir(work_dir: Path) -> None:
    """Delete a vector work folder's files (its chunks, meta.json, vectors.npy and their temporary files),
    then the folder if nothing else is in it. A folder without meta.json is left alone."""
    work_dir = Path(work_dir)
    if not (work_dir / META_FILE).is_file():
        return
    ours = re.compile(r"^(chunk-\d{5,}\.npy|vectors\.npy|meta\.json)$")
    for path in work_dir.iterdir():
        name = temp_target(path.name) or path.name
        if path.is_file() and ours.match(name) and path.name != META_FILE:
            path.unlink()
    (work_dir / META_FILE).unlink()  # last: until then the folder is still recognised as a work folder
    try:
        work_dir.rmdir()
    except OSError:
        pass

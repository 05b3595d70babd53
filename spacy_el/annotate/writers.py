"""The output directory of ``annotate``: numbered part files, the error log and the commit manifest.

Layout of ``OUTPUT/``::

    manifest.json        the commit log: how many input documents (and parts, and error-log bytes) are committed
    part-00000.jsonl     one part per committed chunk that produced documents (.jsonl, .parquet or .spacy)
    errors.jsonl         one {"id", "error"} line per document that failed

Commit of a chunk (:meth:`OutputDir.commit`, through ``spacy_el.kb.files``):

1. the part is written to a temporary name in ``OUTPUT/``, fsynced and renamed to ``part-<n>.<ext>``;
2. the chunk's error lines are appended to ``errors.jsonl`` and fsynced;
3. the new manifest (the counts after this chunk) is written to a temporary name, fsynced and renamed onto
   ``manifest.json``, and the directory is fsynced. This rename is the commit point.

Whatever a crash leaves after the last commit point (a temporary file, a part numbered beyond the
manifest's count, error lines beyond its byte count) is not committed: :meth:`OutputDir.open` with
``resume`` deletes or truncates it, and the run goes on after the committed documents.
"""
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import Errors
from ..kb.files import append_bytes, fsync_dir, temp_target, truncate, write_bytes, write_json

MANIFEST = "manifest.json"
ERRORS = "errors.jsonl"
MANIFEST_FORMAT = "spacy_el.annotate"
MANIFEST_VERSION = 1
OUTPUT_FORMATS = ("jsonl", "parquet", "docbin")
SUFFIX = {"jsonl": ".jsonl", "parquet": ".parquet", "docbin": ".spacy"}
_PART = re.compile(r"^part-(\d{5,})\.(jsonl|parquet|spacy)$")


def _is_temp(name: str) -> bool:
    """Whether ``name`` is the temporary file of a part or of the manifest (left by a killed commit)."""
    target = temp_target(name)
    return target is not None and (target == MANIFEST or _PART.match(target) is not None)


def part_name(index: int, output_format: str) -> str:
    return f"part-{index:05d}{SUFFIX[output_format]}"


def output_format_of(path: Path, output_format: Optional[str] = None, docbin: bool = False) -> str:
    if docbin:
        if output_format not in (None, "docbin"):
            raise ValueError(Errors.E504.format(output_format=output_format))
        return "docbin"
    if output_format:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(Errors.E505.format(output_format=output_format, formats=", ".join(OUTPUT_FORMATS)))
        return output_format
    return "parquet" if Path(path).suffix.lower() == ".parquet" else "jsonl"


def jsonl_bytes(records: List[Dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records).encode("utf8")


def parquet_bytes(records: List[Dict[str, Any]], carried_schema=None) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .records import OUTPUT_KEYS, arrow_schema

    if carried_schema is None:  # infer the carried columns' types from this chunk
        carried = [{k: v for k, v in r.items() if k not in OUTPUT_KEYS} for r in records]
        carried_schema = pa.Table.from_pylist(carried).schema if any(carried) else None
    table = pa.Table.from_pylist(records, schema=arrow_schema(carried_schema))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def docbin_bytes(docs: List[Any]) -> bytes:
    from spacy.tokens import DocBin

    docbin = DocBin(store_user_data=True)
    for doc in docs:
        docbin.add(doc)
    return docbin.to_bytes()


class OutputDir:
    """The output directory and its committed state (the manifest's counts)."""

    def __init__(self, path: Path, output_format: str, settings: Dict[str, Any]) -> None:
        self.path = Path(path)
        self.output_format = output_format
        self.settings = settings
        self.state = {"docs_read": 0, "docs_written": 0, "docs_failed": 0, "parts": 0, "errors_bytes": 0}

    @property
    def errors_path(self) -> Path:
        return self.path / ERRORS

    def _ours(self) -> List[Path]:
        return [p for p in self.path.iterdir() if p.name in (MANIFEST, ERRORS) or _PART.match(p.name) or _is_temp(p.name)]

    def open(self, resume: bool = False, overwrite: bool = False) -> Dict[str, int]:
        """Check or prepare the directory; returns the committed state (all zero for a new run).

        Without ``resume`` or ``overwrite`` a non-empty directory is refused; ``overwrite`` deletes the files of
        a previous run; ``resume`` reads the manifest and removes what came after its last commit."""
        if self.path.exists() and not self.path.is_dir():
            raise OSError(Errors.E506.format(path=self.path))
        if resume and overwrite:
            raise ValueError(Errors.E507)
        self.path.mkdir(parents=True, exist_ok=True)
        manifest_path = self.path / MANIFEST
        if resume:
            if manifest_path.exists():
                self._read_manifest(manifest_path)
        elif overwrite:
            for p in self._ours():
                p.unlink()
        elif any(self.path.iterdir()):
            raise OSError(Errors.E513.format(path=self.path))
        self._discard_uncommitted()
        return dict(self.state)

    def _read_manifest(self, manifest_path: Path) -> None:
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf8"))
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E511.format(manifest_path=manifest_path, err=err)) from err
        if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
            raise ValueError(Errors.E508.format(manifest_path=manifest_path))
        if manifest.get("version") != MANIFEST_VERSION:
            raise ValueError(
                Errors.E509.format(manifest_path=manifest_path, version=manifest.get("version"), supported=MANIFEST_VERSION)
            )
        old = manifest.get("settings", {})
        differ = sorted(k for k in set(old) | set(self.settings) if old.get(k) != self.settings.get(k))
        if differ:
            what = "; ".join(f"{k}: {old.get(k)!r} then, {self.settings.get(k)!r} now" for k in differ)
            raise ValueError(Errors.E510.format(path=self.path, what=what))
        self.state = {k: int(manifest[k]) for k in self.state}

    def _discard_uncommitted(self) -> None:
        """Delete temporary files and parts beyond the committed count; cut the error log to its committed size."""
        for p in self.path.iterdir():
            m = _PART.match(p.name)
            if _is_temp(p.name) or (m and int(m.group(1)) >= self.state["parts"]):
                p.unlink()
        errors = self.errors_path
        if errors.exists() and errors.stat().st_size != self.state["errors_bytes"]:
            truncate(errors, self.state["errors_bytes"])
        fsync_dir(self.path)

    def commit(self, part: Optional[bytes], errors: List[Dict[str, Any]], docs_read: int, docs_written: int) -> None:
        """Commit one chunk: its part (None when no document of the chunk was written), its error records and
        the number of input documents it read."""
        state = dict(self.state)
        if part is not None:
            write_bytes(self.path / part_name(state["parts"], self.output_format), part)
            state["parts"] += 1
        if errors:
            data = jsonl_bytes(errors)
            append_bytes(self.errors_path, data)
            state["errors_bytes"] += len(data)
        state["docs_read"] += docs_read
        state["docs_written"] += docs_written
        state["docs_failed"] += len(errors)
        manifest = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "settings": self.settings, **state}
        write_json(self.path / MANIFEST, manifest)
        self.state = state


def read_output(path: Path) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The committed records and error records of an output directory (JSONL or Parquet parts), in input order
    within each list. For tests and small outputs: it loads them all."""
    path = Path(path)
    manifest = json.loads((path / MANIFEST).read_text(encoding="utf8"))
    records: List[Dict[str, Any]] = []
    for i in range(manifest["parts"]):
        matches = [p for p in path.glob(f"part-{i:05d}.*") if _PART.match(p.name)]
        (part,) = matches
        if part.suffix == ".jsonl":
            records.extend(json.loads(line) for line in part.read_text(encoding="utf8").splitlines())
        elif part.suffix == ".parquet":
            import pyarrow.parquet as pq

            records.extend(pq.read_table(part).to_pylist())
        else:
            raise ValueError(Errors.E512.format(part=part))
    errors_path = path / ERRORS
    errors = []
    if errors_path.exists():
        data = errors_path.read_bytes()[: manifest["errors_bytes"]]
        errors = [json.loads(line) for line in data.decode("utf8").splitlines()]
    return records, errors

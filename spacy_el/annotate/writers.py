"""The output directory of ``annotate``: numbered part files, the error log and the commit manifest.

Layout of ``OUTPUT/``::

    manifest.json        the commit log: how many input documents (and parts, and error-log bytes) are committed,
                         and for Parquet output the carried columns' schema that every part shares (:mod:`.carried`)
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

A run owns its OUTPUT (:meth:`OutputDir.opened`): it holds the folder's lock (``spacy_el.kb.files.lock_dir``)
from before it reads the manifest until its last commit, so a second run on the same OUTPUT stops at once. Its
first act is a manifest with zero counts, so a folder without an annotate manifest was never annotate's:
``--resume`` and ``--overwrite`` refuse it unless it is empty, and never go through a symlink planted at the
manifest or the error log.
"""
import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..errors import Errors, KBErrors, is_spacy_el_message
from ..kb.files import LOCK_NAME, append_bytes, fsync_dir, lock_dir, temp_target, truncate, write_bytes, write_json

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
    """A Parquet part of ``records``; ``carried_schema``: the carried columns' types (inferred from the
    records when None: :func:`~.carried.carried_columns`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .carried import carried_columns
    from .records import arrow_schema

    if carried_schema is None:
        carried_schema, _ = carried_columns(records)
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


@contextlib.contextmanager
def _coded_io(path: Path) -> Iterator[None]:
    """OSErrors of writing in ``path`` as one coded line: spacy_el's own (a symlink refused, E262) as they are,
    any other (a full disk) as E541, which says that --resume goes on."""
    try:
        yield
    except OSError as err:
        if is_spacy_el_message(str(err)):
            raise
        if is_spacy_el_message(str(err.strerror or "")):
            raise OSError(err.strerror) from err
        raise OSError(Errors.E541.format(path=path, reason=err.strerror or err)) from err


class OutputDir:
    """The output directory and its committed state (the manifest's counts)."""

    def __init__(self, path: Path, output_format: str, settings: Dict[str, Any], carried_schema=None) -> None:
        """carried_schema: the Arrow schema of the carried columns of Parquet output, where the input declares
        it (Parquet input); None: the first part fixes it (:meth:`commit`). Recorded in the manifest."""
        self.path = Path(path)
        self.output_format = output_format
        self.settings = settings
        self.carried_schema = carried_schema
        self.state = {"docs_read": 0, "docs_written": 0, "docs_failed": 0, "parts": 0, "errors_bytes": 0}

    @property
    def errors_path(self) -> Path:
        return self.path / ERRORS

    def _ours(self) -> List[Path]:
        return [p for p in self.path.iterdir() if p.name in (MANIFEST, ERRORS) or _PART.match(p.name) or _is_temp(p.name)]

    @contextlib.contextmanager
    def opened(self, resume: bool = False, overwrite: bool = False) -> Iterator[Dict[str, int]]:
        """The directory created if needed, locked for the block (E263 when another run holds it), and checked
        or prepared (:meth:`open`). YIELDS: the committed state."""
        if resume and overwrite:
            raise ValueError(Errors.E507)
        self._create()
        lock = contextlib.ExitStack()
        with _coded_io(self.path):
            lock.enter_context(lock_dir(self.path))
        with lock:
            yield self.open(resume=resume, overwrite=overwrite)

    def _create(self) -> None:
        """Create the directory, or say in one line why it cannot be (E540; E506 for a file)."""
        path = self.path
        try:
            if path.is_symlink() and not path.exists():
                raise OSError(Errors.E540.format(
                    path=path, reason=f"it is a symbolic link to {os.readlink(path)}, which does not exist"))
            if path.exists() and not path.is_dir():
                raise OSError(Errors.E506.format(path=path))
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            if is_spacy_el_message(str(err)):
                raise
            raise OSError(Errors.E540.format(path=path, reason=err.strerror or err)) from err

    def open(self, resume: bool = False, overwrite: bool = False) -> Dict[str, int]:
        """Check or prepare the directory (locked by the caller: :meth:`opened`); returns the committed state
        (all zero for a new run).

        Without ``resume`` or ``overwrite`` a non-empty directory is refused (E513). ``resume`` reads the
        manifest and removes what came after its last commit; ``overwrite`` deletes the files of an earlier run.
        Both refuse a folder that holds anything without an annotate manifest (E536, E537), and start an empty
        one afresh."""
        if resume and overwrite:
            raise ValueError(Errors.E507)
        self._create()
        with _coded_io(self.path):
            manifest_path = self.path / MANIFEST
            others = sorted(p.name for p in self.path.iterdir() if p.name != LOCK_NAME)
            if resume or overwrite:
                for path in (manifest_path, self.errors_path):
                    if path.is_symlink() and resume:  # read and cut back through it: refused, never followed
                        raise OSError(KBErrors.E262.format(path=path))
                manifest = self._manifest(manifest_path) if os.path.lexists(manifest_path) else None
                leftovers = [name for name in others if not _is_temp(name)]
                if manifest is None and leftovers:  # never annotate's: its first act is a manifest
                    names = ", ".join(leftovers[:5])
                    if resume:
                        raise ValueError(Errors.E536.format(path=self.path, names=names))
                    why = f"it holds no annotate manifest (manifest.json) but {names}"
                    raise ValueError(Errors.E537.format(path=self.path, why=why))
                if overwrite and manifest is not None and manifest.get("format") != MANIFEST_FORMAT:
                    why = f"{manifest_path} is not an annotate manifest (a KB's, or another tool's)"
                    raise ValueError(Errors.E537.format(path=self.path, why=why))
                if resume and manifest is not None:
                    self._resume_from(manifest_path, manifest)
            elif others:
                raise OSError(Errors.E513.format(path=self.path))
            if not resume or not os.path.lexists(manifest_path):
                self._write_manifest(self.state)  # overwrite: the old counts go first, then the old files
            if overwrite:
                for p in self._ours():
                    if p.name != MANIFEST:
                        p.unlink()
            self._discard_uncommitted()
        return dict(self.state)

    def _manifest(self, manifest_path: Path) -> Dict[str, Any]:
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf8"))
        except (OSError, ValueError) as err:
            raise ValueError(Errors.E511.format(manifest_path=manifest_path, err=err)) from err
        return manifest if isinstance(manifest, dict) else {}

    def _resume_from(self, manifest_path: Path, manifest: Dict[str, Any]) -> None:
        if manifest.get("format") != MANIFEST_FORMAT:
            raise ValueError(Errors.E508.format(manifest_path=manifest_path))
        if manifest.get("version") != MANIFEST_VERSION:
            raise ValueError(
                Errors.E509.format(manifest_path=manifest_path, version=manifest.get("version"), supported=MANIFEST_VERSION)
            )
        old = manifest.get("settings", {})
        counts = {k: manifest.get(k) for k in self.state}
        bad = [k for k, v in counts.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
        if not isinstance(old, dict) or bad:  # edited by hand, or not written by annotate
            what = "its settings are not an object" if not isinstance(old, dict) else f"bad counts {bad}"
            raise ValueError(Errors.E511.format(manifest_path=manifest_path, err=what))
        differ = sorted(k for k in set(old) | set(self.settings) if old.get(k) != self.settings.get(k))
        if differ:
            what = "; ".join(f"{k}: {old.get(k)!r} then, {self.settings.get(k)!r} now" for k in differ)
            raise ValueError(Errors.E510.format(path=self.path, what=what))
        self.state = counts
        if self.output_format == "parquet":
            self.carried_schema = self._resumed_schema(manifest_path, manifest)

    def _resumed_schema(self, manifest_path: Path, manifest: Dict[str, Any]) -> Any:
        """The carried columns' schema the resumed run's parts are written with: the manifest's, checked
        against the input's (a Parquet input's, where it declares one) and against the first committed part
        (E552 for a difference or a schema missing; E511 for one that is not a schema)."""
        import pyarrow.parquet as pq

        from .carried import part_schema, schema_from_text
        from .records import OUTPUT_KEYS

        try:
            recorded = schema_from_text(manifest.get("carried_schema"))
        except ValueError as err:
            raise ValueError(Errors.E511.format(manifest_path=manifest_path, err=err)) from err
        declared, what = self.carried_schema, None
        if declared is not None and recorded is not None and not recorded.equals(declared):
            what = (f"the input's carried columns ({_columns(declared)}) are not those manifest.json records "
                    f"({_columns(recorded)})")
        schema = recorded if recorded is not None else declared
        first = self.path / part_name(0, "parquet")
        if what is None and self.state["parts"] and schema is None:
            what = "manifest.json records no carried columns, though parts were committed"
        elif what is None and self.state["parts"]:
            try:
                written = pq.read_schema(first)
            except Exception as err:  # missing, or not Parquet
                what = f"the schema of {first} cannot be read ({err})"
            else:
                if not written.equals(part_schema(schema), check_metadata=False):
                    carried = [f for f in written if f.name not in OUTPUT_KEYS]
                    what = (f"{first} has the carried columns ({_columns(carried)}), manifest.json records "
                            f"({_columns(schema)})")
        if what is not None:
            raise ValueError(Errors.E552.format(path=self.path, what=what))
        return schema

    def _write_manifest(self, state: Dict[str, int], carried_schema=None) -> None:
        manifest = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "settings": self.settings, **state}
        if self.output_format == "parquet":
            from .carried import schema_text

            manifest["carried_schema"] = schema_text(carried_schema if carried_schema is not None
                                                     else self.carried_schema)
        write_json(self.path / MANIFEST, manifest)

    def _discard_uncommitted(self) -> None:
        """Delete temporary files and parts beyond the committed count; cut the error log to its committed size."""
        for p in self.path.iterdir():
            m = _PART.match(p.name)
            if _is_temp(p.name) or (m and int(m.group(1)) >= self.state["parts"]):
                p.unlink()
        errors = self.errors_path
        if errors.is_symlink():
            raise OSError(KBErrors.E262.format(path=errors))
        if errors.exists() and errors.stat().st_size != self.state["errors_bytes"]:
            truncate(errors, self.state["errors_bytes"])
        fsync_dir(self.path)

    def commit(self, part: Optional[bytes], errors: List[Dict[str, Any]], docs_read: int, docs_written: int,
               carried_schema=None) -> None:
        """Commit one chunk: its part (None when no document of the chunk was written), its error records and
        the number of input documents it read. carried_schema: the carried columns of a Parquet part; the first
        part's is recorded in the manifest, and every later part must have it."""
        state = dict(self.state)
        schema = self.carried_schema
        if part is not None and schema is None:
            schema = carried_schema
        elif part is not None and carried_schema is not None and not carried_schema.equals(schema):
            raise AssertionError("a Parquet part with other carried columns than the run's")  # a bug of the caller
        with _coded_io(self.path):
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
            self._write_manifest(state, schema)
        self.state = state
        self.carried_schema = schema


def _columns(schema: Any) -> str:
    return ", ".join(f"{f.name}: {f.type}" for f in schema) or "none"


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

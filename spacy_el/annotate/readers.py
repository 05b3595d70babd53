"""Input readers of ``annotate``: each streams one input as :class:`InputDoc` records, never loading it whole.

Formats (from the suffix, or named): ``text`` (one document per non-blank line), ``jsonl`` (one JSON
object per non-blank line: a text field, an id field, other fields carried through), ``parquet`` (a text
column, an id column, other columns carried through; read a row group at a time with pyarrow) and
``dir`` (a directory of ``.txt`` files, one document each, in name order).

A document without an id gets one: its line number (1-based, blank lines counted) or row number, or its
file name. Ids are strings. What is wrong with one document (bad UTF-8, invalid JSON, a missing or
non-string text) does not stop the run: the document comes with ``error`` set and goes to the error log.
What is wrong with the input as a whole (unreadable, the text field absent from the first record or
from the Parquet schema) raises ``ValueError``/``OSError`` with a coded message (``spacy_el.errors``).
"""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from ..errors import Errors

INPUT_FORMATS = ("text", "jsonl", "parquet", "dir")
_SUFFIXES = {".txt": "text", ".text": "text", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


@dataclass
class InputDoc:
    """One input document: its id (a string), its text, the fields carried to the output, and why it
    cannot be processed (None when it can)."""

    id: str
    text: Any
    fields: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None


def input_format_of(path: Path, input_format: Optional[str] = None) -> str:
    """The format of ``path``: ``input_format`` when given, else ``dir`` for a directory, else from the suffix."""
    if input_format:
        if input_format not in INPUT_FORMATS:
            raise ValueError(Errors.E523.format(input_format=input_format, formats=", ".join(INPUT_FORMATS)))
        return input_format
    if path.is_dir():
        return "dir"
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(Errors.E520.format(path=path, suffixes=", ".join(sorted(_SUFFIXES))))
    return fmt


def _check_readable_file(path: Path) -> None:
    if not path.exists():
        raise OSError(Errors.E521.format(path=path))
    if path.is_dir():
        raise OSError(Errors.E522.format(path=path))
    try:
        with path.open("rb") as f:
            f.read(1)
    except OSError as err:
        raise OSError(Errors.E524.format(path=path, reason=err.strerror or err)) from err


def _decode(raw: bytes, first: bool) -> str:
    text = raw.decode("utf8")
    if first and text.startswith("\ufeff"):
        text = text[1:]
    return text.rstrip("\r\n")


class Reader:
    """Base class: ``check()`` raises for an input that cannot be read at all, ``total()`` is the number
    of documents when it can be known (None otherwise), ``docs(skip)`` streams the documents after the
    first ``skip``."""

    format = ""

    def __init__(self, path: Path, text_field: str = "text", id_field: str = "id") -> None:
        self.path = Path(path)
        self.text_field = text_field
        self.id_field = id_field

    def check(self) -> None:
        raise NotImplementedError

    def total(self) -> Optional[int]:
        return None

    def docs(self, skip: int = 0) -> Iterator[InputDoc]:
        raise NotImplementedError

    def describe(self) -> Dict[str, Any]:
        """What identifies this input in the output manifest (a resumed run must read the same)."""
        return {"input": str(self.path.resolve()), "input_format": self.format, "text_field": self.text_field,
                "id_field": self.id_field}


class _LineReader(Reader):
    def check(self) -> None:
        _check_readable_file(self.path)

    def _lines(self) -> Iterator[tuple]:
        """(line number, raw bytes) of every non-blank line."""
        with self.path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                if raw.strip():
                    yield number, raw

    def total(self) -> Optional[int]:
        return sum(1 for _ in self._lines())

    def docs(self, skip: int = 0) -> Iterator[InputDoc]:
        for index, (number, raw) in enumerate(self._lines()):
            if index >= skip:
                yield self._parse(number, raw)

    def _parse(self, number: int, raw: bytes) -> InputDoc:
        raise NotImplementedError


class TextReader(_LineReader):
    format = "text"

    def _parse(self, number: int, raw: bytes) -> InputDoc:
        try:
            return InputDoc(str(number), _decode(raw, number == 1))
        except UnicodeDecodeError as err:
            return InputDoc(str(number), None, error=f"{self.path}:{number}: not valid UTF-8 ({err.reason})")


class JsonlReader(_LineReader):
    format = "jsonl"

    def check(self) -> None:
        super().check()
        first = next(self._lines(), None)
        if first is None:
            return
        number, raw = first
        try:
            record = json.loads(_decode(raw, True))
        except ValueError:
            return  # an invalid first line is that document's error, not the file's
        if isinstance(record, dict) and self.text_field not in record:
            fields = ", ".join(repr(k) for k in list(record)[:10])
            raise ValueError(
                Errors.E525.format(path=self.path, number=number, text_field=self.text_field, fields=fields)
            )

    def _parse(self, number: int, raw: bytes) -> InputDoc:
        where = f"{self.path}:{number}"
        try:
            record = json.loads(_decode(raw, number == 1))
        except UnicodeDecodeError as err:
            return InputDoc(str(number), None, error=f"{where}: not valid UTF-8 ({err.reason})")
        except ValueError as err:
            return InputDoc(str(number), None, error=f"{where}: invalid JSON ({err})")
        if not isinstance(record, dict):
            return InputDoc(str(number), None, error=f"{where}: not a JSON object")
        doc_id = record.pop(self.id_field, None)
        doc_id = str(number) if doc_id is None else str(doc_id)
        if self.text_field not in record:
            return InputDoc(doc_id, None, record, error=f"{where}: the record has no text field {self.text_field!r}")
        text = record.pop(self.text_field)
        return InputDoc(doc_id, text, record)


class DirReader(Reader):
    format = "dir"

    def check(self) -> None:
        if not self.path.is_dir():
            raise OSError(Errors.E526.format(path=self.path))
        try:
            next(iter(self.path.iterdir()), None)
        except OSError as err:
            raise OSError(Errors.E524.format(path=self.path, reason=err.strerror or err)) from err

    def _files(self) -> List[Path]:
        return sorted(p for p in self.path.glob("*.txt") if p.is_file())

    def total(self) -> Optional[int]:
        return len(self._files())

    def docs(self, skip: int = 0) -> Iterator[InputDoc]:
        for path in self._files()[skip:]:
            try:
                text = path.read_bytes().decode("utf8")
            except (OSError, UnicodeDecodeError) as err:
                yield InputDoc(path.name, None, error=f"{path}: cannot read ({err})")
                continue
            yield InputDoc(path.name, text[1:] if text.startswith("\ufeff") else text)


def _pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ImportError(Errors.E527) from err
    return pq


class ParquetReader(Reader):
    format = "parquet"

    def _file(self):
        pq = _pyarrow_parquet()
        _check_readable_file(self.path)
        try:
            return pq.ParquetFile(self.path)
        except Exception as err:  # pyarrow raises ArrowInvalid (a ValueError) and others
            raise ValueError(Errors.E529.format(path=self.path, err=err)) from err

    def check(self) -> None:
        names = self._file().schema_arrow.names
        if self.text_field not in names:
            raise ValueError(Errors.E528.format(path=self.path, text_field=self.text_field, columns=", ".join(names)))

    def total(self) -> Optional[int]:
        return self._file().metadata.num_rows

    def carried_schema(self):
        """The Arrow schema of the carried columns (the output keeps their types)."""
        schema = self._file().schema_arrow
        keep = [f for f in schema if f.name not in (self.text_field, self.id_field)]
        import pyarrow as pa

        return pa.schema(keep)

    def docs(self, skip: int = 0) -> Iterator[InputDoc]:
        pf = self._file()
        row, first_group = 0, 0  # skip whole row groups by their metadata, then rows
        while first_group < pf.num_row_groups and row + pf.metadata.row_group(first_group).num_rows <= skip:
            row += pf.metadata.row_group(first_group).num_rows
            first_group += 1
        groups = list(range(first_group, pf.num_row_groups))
        if not groups:
            return
        for batch in pf.iter_batches(batch_size=1024, row_groups=groups):
            records = batch.to_pylist()
            start = max(0, skip - row)
            for number, record in enumerate(records[start:], start=row + start + 1):
                doc_id = record.pop(self.id_field, None)
                doc_id = str(number) if doc_id is None else str(doc_id)
                text = record.pop(self.text_field)
                yield InputDoc(doc_id, text, record)
            row += len(records)


READERS = {"text": TextReader, "jsonl": JsonlReader, "parquet": ParquetReader, "dir": DirReader}


def open_reader(path: Path, input_format: Optional[str] = None, text_field: str = "text", id_field: str = "id") -> Reader:
    """The reader of ``path`` (checked: raises for an input that cannot be read)."""
    path = Path(path)
    if not path.exists():
        raise OSError(Errors.E521.format(path=path))
    reader = READERS[input_format_of(path, input_format)](path, text_field, id_field)
    reader.check()
    return reader

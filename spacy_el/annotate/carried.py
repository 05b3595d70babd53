"""The carried columns of Parquet output: one Arrow schema for every part of a run, so the parts read as one
dataset (``pyarrow.dataset`` over ``part-*.parquet``).

A Parquet input declares it (its columns other than the text and the id). An input without a schema (JSONL)
has it fixed by the run's first part: each field takes the type pyarrow infers from that part's values
(:func:`carried_columns`); the manifest records it (:func:`schema_text`), and every later part, a resumed
run's and those of worker processes included, is written with it. A document whose field its column cannot
hold, or that carries a non-null field the first part lacks, goes to the error log (:func:`conform`) instead
of making a part that the others do not match.
"""
import base64
import io
from typing import Any, Dict, List, Optional, Tuple

from ..errors import Errors
from .records import OUTPUT_KEYS, arrow_schema

_MISSING = object()


def _holds(value: Any, stored: Any) -> bool:
    """Whether ``stored`` (a value converted to a column's type and back) still says all that ``value`` said: a
    struct type drops the keys it lacks without a word."""
    if isinstance(value, dict):
        return isinstance(stored, dict) and all(k in stored and _holds(v, stored[k]) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return isinstance(stored, list) and len(value) == len(stored) and all(map(_holds, value, stored))
    return value == stored or (value != value and stored != stored)  # NaN


def _converted(value: Any, column_type: Any) -> Any:
    """``value`` stored in a column of ``column_type`` and read back (``_MISSING`` when it does not convert)."""
    import pyarrow as pa

    try:
        return pa.array([value], type=column_type).to_pylist()[0]
    except Exception:  # ArrowInvalid, ArrowTypeError, OverflowError
        return _MISSING


def _settled(column_type: Any) -> Any:
    """``column_type`` with its null types (a field that held only nulls or empty lists) as strings: a null
    column holds no later value, and a part of another type would not read with the first."""
    import pyarrow as pa

    if pa.types.is_null(column_type):
        return pa.string()
    if pa.types.is_list(column_type):
        return pa.list_(_settled(column_type.value_type))
    if pa.types.is_struct(column_type):
        return pa.struct([f.with_type(_settled(f.type)) for f in column_type])
    return column_type


def _carried_names(records: List[Dict[str, Any]]) -> List[str]:
    return list(dict.fromkeys(k for r in records for k in r if k not in OUTPUT_KEYS))


def _values(records: List[Dict[str, Any]], name: str) -> List[Tuple[int, Any]]:
    return [(i, r[name]) for i, r in enumerate(records) if r.get(name) is not None]


def carried_columns(records: List[Dict[str, Any]]) -> Tuple[Any, Dict[int, str]]:
    """The Arrow schema of the carried fields of the first part's records, and the records whose field the
    column cannot hold, by index, each with its coded message (E539). A field takes the type pyarrow infers
    from all its values (ints and floats: float64; only nulls: string); where they do not share one, the type
    of its first value, and the records whose value does not convert to it go to the error log instead of
    stopping the run. RETURNS: (the schema, empty without carried fields; rejections)."""
    import pyarrow as pa

    fields, rejected = [], {}
    for name in _carried_names(records):
        values = _values(records, name)
        try:
            fields.append(pa.field(name, _settled(pa.array([v for _, v in values]).type)))
            continue
        except Exception:  # ArrowInvalid, ArrowTypeError, OverflowError: values of several types
            pass
        column_type = None
        for i, value in values:
            converted = _converted(value, column_type)
            if converted is not _MISSING and _holds(value, converted):
                if column_type is None:
                    column_type = pa.array([value]).type
                continue
            rejected.setdefault(i, Errors.E539.format(
                field=name, doc_id=records[i].get("id"), value_type=type(value).__name__,
                column_type=column_type if column_type is not None else "another type"))
        fields.append(pa.field(name, _settled(column_type if column_type is not None else pa.null())))
    return pa.schema(fields), rejected


def conform(records: List[Dict[str, Any]], schema: Any) -> Dict[int, str]:
    """The records (by index) that a part with the run's carried ``schema`` cannot hold, each with its coded
    message: a value that does not convert to its column's type (E550), a non-null field without a column
    (E551). A null or absent field is a null."""
    import pyarrow as pa

    types = {f.name: f.type for f in schema}
    rejected: Dict[int, str] = {}
    for name in _carried_names(records):
        values = _values(records, name)
        if not values:
            continue
        if name not in types:
            for i, _ in values:
                rejected.setdefault(i, Errors.E551.format(field=name, doc_id=records[i].get("id")))
            continue
        try:  # the whole column at once; value by value only when it fails
            stored = pa.array([v for _, v in values], type=types[name]).to_pylist()
        except Exception:
            stored = [_converted(v, types[name]) for _, v in values]
        for (i, value), back in zip(values, stored):
            if back is _MISSING or not _holds(value, back):
                rejected.setdefault(i, Errors.E550.format(
                    field=name, doc_id=records[i].get("id"), value_type=type(value).__name__,
                    column_type=types[name]))
    return rejected


def schema_text(schema: Any) -> Optional[str]:
    """``schema`` as the manifest records it (its Arrow IPC bytes in base64; None for None)."""
    if schema is None:
        return None
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def schema_from_text(text: Any) -> Any:
    """The schema that :func:`schema_text` recorded (None for None); raises ValueError for anything else."""
    if text is None:
        return None
    import pyarrow as pa

    if not isinstance(text, str):
        raise ValueError(f"carried_schema is a {type(text).__name__}, not the text of an Arrow schema")
    try:
        return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text.encode("ascii"), validate=True)))
    except Exception as err:  # binascii.Error, ArrowInvalid, UnicodeEncodeError
        raise ValueError(f"carried_schema is not an Arrow schema ({err})") from err


def part_schema(carried: Any) -> Any:
    """The schema a Parquet part written with the carried columns ``carried`` reads back with (Parquet may
    store a type as another, which comes back the same way)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([], schema=arrow_schema(carried)), sink)
    return pq.read_schema(pa.BufferReader(sink.getvalue()))

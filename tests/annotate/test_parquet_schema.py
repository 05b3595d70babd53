"""Parquet output from an input without a schema (JSONL): the first part fixes the carried columns and their
types for the whole run, the manifest records them, and every later part (after ``--resume``, with worker
processes) is written with them, so the parts read as one dataset (issue 71, defect 8)."""
import base64
import json
from pathlib import Path

import pytest

from spacy_el.annotate import annotate, read_output

from .conftest import Crash, stop_after

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")


def _write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    return path


def _parts(out: Path):
    return sorted(out.glob("part-*.parquet"))


def _one_dataset(out: Path):
    """The parts read as one dataset, as docs/annotate.md says to read them."""
    return ds.dataset(sorted(Path(out).glob("part-*.parquet"))).to_table()


@pytest.mark.hostile("crashes that block a run")
def test_a_field_whose_type_changes_in_a_later_chunk_leaves_parts_that_read_as_one_dataset(nlp, tmp_path):
    years = [2000, 2001, "MMII", 2003, 2004, "2005", None, 2007.0, 2008]  # ints in the first chunk
    rows = [{"id": f"d{i}", "text": "Orvik and Lumen", "year": y} for i, y in enumerate(years)]
    src = _write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    with pytest.raises(Crash):  # killed after two parts; resumed with two worker processes
        annotate(nlp, src, out, output_format="parquet", chunk_size=2, progress=False, on_commit=stop_after(2))
    summary = annotate(nlp, src, out, output_format="parquet", chunk_size=2, n_process=2, progress=False,
                       resume=True)
    schemas = [pq.read_schema(p) for p in _parts(out)]
    assert len(schemas) == 5 and all(s.equals(schemas[0]) for s in schemas)
    assert schemas[0].field("year").type == pa.int64()
    table = _one_dataset(out)
    assert table.column("id").to_pylist() == ["d0", "d1", "d3", "d4", "d6", "d7", "d8"]
    assert table.column("year").to_pylist() == [2000, 2001, 2003, 2004, None, 2007, 2008]
    records, errors = read_output(out)
    assert [r["id"] for r in records] == table.column("id").to_pylist()
    assert [e["id"] for e in errors] == ["d2", "d5"] and all("E550" in e["error"] for e in errors)
    assert (summary.read, summary.written, summary.failed) == (9, 7, 2)


def test_a_field_the_first_part_lacks_is_an_error_record_and_a_null_column_holds_strings(nlp, tmp_path):
    rows = [{"id": "d0", "text": "Orvik", "note": None}, {"id": "d1", "text": "Lumen"},
            {"id": "d2", "text": "Orvik", "note": "kept"}, {"id": "d3", "text": "Orvik", "tag": "new"},
            {"id": "d4", "text": "Lumen", "tag": None}]
    out = tmp_path / "out"
    annotate(nlp, _write_jsonl(tmp_path / "in.jsonl", rows), out, output_format="parquet", chunk_size=2,
             progress=False)
    table = _one_dataset(out)
    assert table.column("id").to_pylist() == ["d0", "d1", "d2", "d4"] and "tag" not in table.column_names
    assert table.column("note").to_pylist() == [None, None, "kept", None]
    _, errors = read_output(out)
    assert [e["id"] for e in errors] == ["d3"] and "E551" in errors[0]["error"]


def _edit_schema(out: Path, schema) -> None:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf8"))
    manifest["carried_schema"] = base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf8")


def test_resume_refuses_a_manifest_whose_schema_disagrees_with_the_parts(nlp, tmp_path):
    rows = [{"id": f"d{i}", "text": "Orvik", "year": 2000 + i} for i in range(6)]
    src = _write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    with pytest.raises(Crash):
        annotate(nlp, src, out, output_format="parquet", chunk_size=2, progress=False, on_commit=stop_after(1))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf8"))
    _edit_schema(out, pa.schema([("year", pa.string())]))
    with pytest.raises(ValueError, match="E552"):
        annotate(nlp, src, out, output_format="parquet", chunk_size=2, progress=False, resume=True)
    (out / "manifest.json").write_text(json.dumps({**manifest, "carried_schema": "not a schema"}), encoding="utf8")
    with pytest.raises(ValueError, match="E511"):
        annotate(nlp, src, out, output_format="parquet", chunk_size=2, progress=False, resume=True)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf8")
    summary = annotate(nlp, src, out, output_format="parquet", chunk_size=2, progress=False, resume=True)
    assert summary.written == 6 and _one_dataset(out).column("year").to_pylist() == list(range(2000, 2006))


def test_resume_refuses_a_parquet_input_whose_schema_changed(nlp, tmp_path):
    rows = [{"id": f"d{i}", "text": "Orvik", "year": 2000 + i} for i in range(6)]
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "out.parquet"
    with pytest.raises(Crash):
        annotate(nlp, src, out, chunk_size=2, progress=False, on_commit=stop_after(1))
    pq.write_table(pa.Table.from_pylist([{**r, "year": str(r["year"])} for r in rows]), src)
    with pytest.raises(ValueError, match="E552"):
        annotate(nlp, src, out, chunk_size=2, progress=False, resume=True)

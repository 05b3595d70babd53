"""Bad input to ``KBBuilder`` and its JSONL readers gives one clear error naming the file, line and
entity; NaN/inf values never reach a KB."""
import json
import math

import numpy as np
import pytest

from spacy_el.kb import KBBuilder


def write_jsonl(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf8")
    return path


def read_entities(path):
    builder = KBBuilder()
    builder.read_entities_jsonl(path, progress=False)
    return builder


# -- 12. errors that name file, line and entity -----------------------------------------------------
@pytest.mark.parametrize("what", ["entities", "aliases"])
def test_non_utf8_input_names_file_and_line(tmp_path, what):
    entities = write_jsonl(tmp_path / "e.jsonl", [{"id": "Q0"}])
    aliases = write_jsonl(tmp_path / "a.jsonl", [{"alias": "x", "candidates": [["Q0", 1.0]]}])
    bad = entities if what == "entities" else aliases
    bad.write_bytes(bad.read_bytes() + '{"id": "Caf\u00e9", "alias": "Caf\u00e9", "candidates": []}\n'.encode("latin-1"))
    with pytest.raises(ValueError, match="E145") as info:
        KBBuilder.from_jsonl(entities, aliases, progress=False)
    assert f"{bad.name}:2" in str(info.value)


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "Q0"}).encode() + b"\r\n" + json.dumps({"id": "Q1"}).encode())
    assert read_entities(path).n_entities == 2


@pytest.mark.parametrize(
    "record,error",
    [({"id": 7}, "E126"),
     ({"id": "Q1", "name": 7}, "E137.*'name'"),
     ({"id": "Q1", "description": 7}, "E137.*'description'"),
     ({"id": "Q1", "types": {"PER": 1}}, "E129"),
     ({"id": "Q1", "types": ["PER", 3]}, "E129"),
     ({"id": "Q1", "frequency": "many"}, "E128"),
     ({"id": "Q1", "vector": ["a", 1]}, "E123"),
     ({"id": "Q1", "vector": [[1.0], [2.0]]}, "E123"),
     ({"id": "Q1", "vector": {"x": 1.0}}, "E123"),
     ({"id": "Q1", "vector": []}, "E123")],
)
def test_bad_entity_fields_name_entity_file_and_line(tmp_path, record, error):
    path = write_jsonl(tmp_path / "e.jsonl", [{"id": "Q0"}, record])
    with pytest.raises(ValueError, match=error) as info:
        read_entities(path)
    message = str(info.value)
    assert message.startswith("[spacy_el E") and message.count("[spacy_el") == 1
    assert "e.jsonl:2" in message
    if record["id"] == "Q1":
        assert "'Q1'" in message
    assert "AttributeError" not in message and "could not convert" not in message


@pytest.mark.parametrize(
    "candidates",
    [{"Q0": 0.5}, "Q0", [{"Q0": 0.5}], [["Q0", 0.5, 1]], [[0, 0.5]], [["Q0", "0.5"]], [["Q0", None]]],
)
def test_bad_candidate_shapes_say_what_is_expected(tmp_path, candidates):
    entities = write_jsonl(tmp_path / "e.jsonl", [{"id": "Q0"}])
    aliases = write_jsonl(tmp_path / "a.jsonl", [{"alias": "x", "candidates": candidates}])
    with pytest.raises(ValueError, match="E143") as info:
        KBBuilder.from_jsonl(entities, aliases, progress=False)
    assert "a.jsonl:1" in str(info.value) and "'x'" in str(info.value)
    assert "not in the KB" not in str(info.value)


def test_entities_file_without_entities_is_refused(tmp_path):
    for text in ["", "\n  \n"]:
        path = tmp_path / "e.jsonl"
        path.write_text(text, encoding="utf8")
        with pytest.raises(ValueError, match="E136"):
            read_entities(path)


def test_empty_aliases_file_is_fine_for_the_reader(tmp_path):
    # The CLI refuses a KB without aliases (see tests/cli); the reader itself accepts an empty file, since
    # title aliases may be added afterwards.
    builder = KBBuilder()
    builder.add_entity("Q0")
    (tmp_path / "a.jsonl").write_text("")
    builder.read_aliases_jsonl(tmp_path / "a.jsonl", progress=False)
    builder.add_title_aliases()
    assert builder.build().lookup("Q0")[0].entity_id == "Q0"


# -- 8. NaN / inf never reaches a KB ----------------------------------------------------------------
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_builder_refuses_non_finite_values(value):
    builder = KBBuilder()
    builder.add_entity("Q0")
    with pytest.raises(ValueError, match="E128.*'Q1'"):
        builder.add_entity("Q1", frequency=value)
    with pytest.raises(ValueError, match="E124.*'Q1'"):
        builder.add_entity("Q1", vector=[0.0, value])
    with pytest.raises(ValueError, match="E124.*'Q1'"):
        builder.add_entity("Q1", vector=np.array([0.0, value]))
    with pytest.raises(ValueError, match="E140"):
        builder.add_alias("x", ["Q0"], [value])
    assert builder.n_entities == 1 and builder.n_aliases == 0


def test_numpy_vectors_and_numbers_are_accepted():
    builder = KBBuilder()
    builder.add_entity("Q0", frequency=np.int64(3), vector=np.array([1, 0], dtype=np.int32))
    builder.add_entity("Q1", frequency=np.float32(1.5), vector=[0.0, np.float64(1.0)])
    builder.add_alias("x", ["Q0", "Q1"], [np.float32(0.5), 1])
    kb = builder.build()
    np.testing.assert_array_equal(kb.entities.vectors, [[1.0, 0.0], [0.0, 1.0]])
    assert kb.entities.vectors.dtype == np.float32


def test_vectors_file_with_nan_names_file_and_row(tmp_path):
    from spacy_el.kb.build_steps import attach_vectors

    from ..conftest import build_toy_kb

    kb = build_toy_kb()
    vectors = np.eye(kb.n_entities, 3, dtype=np.float32)
    vectors[2, 1] = np.nan
    np.save(tmp_path / "v.npy", vectors)
    with pytest.raises(ValueError, match=r"E150.*v\.npy.*row 2"):
        attach_vectors(kb, str(tmp_path / "v.npy"))
    assert kb.entities.vectors is None

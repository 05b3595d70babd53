import json

import numpy as np
import pytest

from spacy_el.kb import KBBuilder


def write_jsonl(path, records):
    path.write_text("\n".join(json.dumps(r) if not isinstance(r, str) else r for r in records) + "\n", encoding="utf8")
    return path


def test_build_from_jsonl(tmp_path):
    entities = write_jsonl(tmp_path / "e.jsonl", [
        {"id": "Q1", "name": "Ada Lovelace", "description": "Mathematician", "types": ["PER"], "frequency": 3},
        {"id": "Q2"},
    ])
    aliases = write_jsonl(tmp_path / "a.jsonl", [{"alias": "Ada", "candidates": [["Q1", 0.7], ["Q2", 0.2]]}])
    kb = KBBuilder.from_jsonl(entities, aliases, progress=False).build()
    assert (kb.n_entities, kb.n_aliases) == (2, 1)
    assert kb.get_entity("Q2").name == "Q2"  # name defaults to the id
    assert [h.entity_id for h in kb.lookup("Ada")] == ["Q1", "Q2"]


@pytest.mark.parametrize(
    "line,error",
    [("{not json", "E146"), ('["a list"]', "E144"), ('{"name": "x"}', "E141"),
     ('{"id": "Q1", "frequency": -1}', "E128"), ('{"id": "Q1", "types": "PER"}', "E129")],
)
def test_bad_entity_lines_name_file_and_line(tmp_path, line, error):
    path = write_jsonl(tmp_path / "e.jsonl", [{"id": "Q0"}, line])
    with pytest.raises(ValueError, match=error) as info:
        KBBuilder.from_jsonl(path, progress=False)
    assert "e.jsonl:2" in str(info.value)


@pytest.mark.parametrize(
    "record,error",
    [({"alias": "x"}, "E142"), ({"alias": "x", "candidates": [["Q0"]]}, "E143"),
     ({"alias": "x", "candidates": [["Q0", 1.5]]}, "E140"), ({"alias": "", "candidates": []}, "E131")],
)
def test_bad_alias_lines(tmp_path, record, error):
    entities = write_jsonl(tmp_path / "e.jsonl", [{"id": "Q0"}])
    aliases = write_jsonl(tmp_path / "a.jsonl", [record])
    with pytest.raises(ValueError, match=error) as info:
        KBBuilder.from_jsonl(entities, aliases, progress=False)
    assert "a.jsonl:1" in str(info.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="E125"):
        KBBuilder.from_jsonl(tmp_path / "nope.jsonl", progress=False)


def test_duplicate_entity_and_alias():
    builder = KBBuilder()
    builder.add_entity("Q1")
    with pytest.raises(ValueError, match="E127"):
        builder.add_entity("Q1")
    builder.add_alias("x", ["Q1"], [0.5])
    with pytest.raises(ValueError, match="E133"):
        builder.add_alias("x", ["Q1"], [0.5])
    builder.add_entity("Q2")
    builder.add_alias("x", ["Q1", "Q2"], [0.7, 0.1], on_duplicate="max")
    hits = builder.build().lookup("x")
    assert [(h.entity_id, round(h.prior, 2)) for h in hits] == [("Q1", 0.7), ("Q2", 0.1)]


def test_unknown_entity_in_alias_fails_or_is_counted(capsys):
    builder = KBBuilder()
    builder.add_entity("Q1")
    builder.add_alias("x", ["Q1", "Q404"], [0.5, 0.5])
    builder.add_alias("only_unknown", ["Q404"], [1.0])
    with pytest.raises(ValueError, match="E147.*Q404"):
        builder.build()
    kb = builder.build(drop_unknown=True)
    assert [h.entity_id for h in kb.lookup("x")] == ["Q1"]
    assert kb.lookup("only_unknown") == []
    assert "Dropped 2 alias candidates" in capsys.readouterr().out


def test_title_aliases_split_prior_between_namesakes():
    builder = KBBuilder()
    builder.add_entity("Paris", "Paris")
    builder.add_entity("Paris_(mythology)", "Paris")
    builder.add_title_aliases()
    hits = builder.build().lookup("Paris")
    assert sorted(h.entity_id for h in hits) == ["Paris", "Paris_(mythology)"]
    assert all(h.prior == pytest.approx(0.5) for h in hits)


def test_vectors_all_or_none_and_same_length():
    builder = KBBuilder()
    builder.add_entity("A", vector=[1.0, 0.0])
    builder.add_entity("B")
    with pytest.raises(ValueError, match="E134"):
        builder.build()
    builder = KBBuilder()
    builder.add_entity("A", vector=[1.0, 0.0])
    builder.add_entity("B", vector=[1.0])
    with pytest.raises(ValueError, match="E135"):
        builder.build()


def test_set_vectors_checks_shape_and_values(toy_kb):
    with pytest.raises(ValueError, match="E106"):
        toy_kb.set_vectors(np.zeros((3, 8), np.float32))
    with pytest.raises(ValueError, match="E107"):
        toy_kb.set_vectors(np.full((4, 8), np.nan, np.float32))
    toy_kb.set_vectors(np.ones((4, 8)))
    assert toy_kb.entity_vector_length == 8
    assert toy_kb.get_vector("Paris") == [1.0] * 8
    assert toy_kb.get_vector("unknown") == [0.0] * 8

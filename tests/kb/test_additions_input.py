"""``kb.add_entities`` refuses input that it would store wrongly or fail on deep inside (issue 71, defects 17
and 21): each refusal is a coded error naming the entity, and the KB is left as it was."""
import pytest

from ..conftest import build_toy_kb


@pytest.mark.hostile("silent wrong results")
@pytest.mark.parametrize("types", ["PER", b"PER", {"PER": 1}])
def test_types_given_as_a_string_are_refused_as_kb_build_refuses_them(types):
    kb = build_toy_kb()
    with pytest.raises(ValueError) as err:
        kb.add_entities([{"id": "Ada_Lovelace", "name": "Ada Lovelace", "types": types}])
    assert "E129" in str(err.value) and "Ada_Lovelace" in str(err.value)
    assert kb.n_entities == 4 and "Ada_Lovelace" not in kb


def test_types_as_a_list_are_stored_as_given():
    kb = build_toy_kb()
    [row] = kb.add_entities([{"id": "Ada_Lovelace", "name": "Ada Lovelace", "types": ["PER"]}])
    assert kb.entity_at(row).types == ["PER"]


@pytest.mark.hostile("unclear errors")
@pytest.mark.parametrize("field", ["id", "name", "description", "qid", "alias"])
def test_a_lone_surrogate_is_a_coded_error_naming_the_entity(field):
    kb = build_toy_kb()
    entity = {"id": "Ada_Lovelace", "name": "Ada Lovelace", "description": "Mathematician", "qid": "Q7259"}
    if field == "alias":
        entity["aliases"] = ["Ada \ud800"]
    else:
        entity[field] = entity[field] + "\ud800"
    with pytest.raises(ValueError) as err:
        kb.add_entities([entity])
    assert "E280" in str(err.value) and "Ada" in str(err.value)
    assert kb.n_entities == 4
    kb.to_bytes()  # the KB is still whole and writable

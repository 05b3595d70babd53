"""Argument checks of ``ElKnowledgeBase.lookup`` and of the KB's text encoder."""
import pytest

from ..conftest import build_toy_kb


@pytest.mark.parametrize("top_k", [0, -1, -3])
def test_lookup_refuses_non_positive_top_k(top_k):
    kb = build_toy_kb()
    with pytest.raises(ValueError, match="E101"):
        kb.lookup("Paris", top_k=top_k)
    with pytest.raises(ValueError, match="E101"):
        kb.lookup("Paris", top_k=top_k, prefer_types=["PER"])


def test_lookup_top_k_one_and_none():
    kb = build_toy_kb()
    assert [h.entity_id for h in kb.lookup("Paris", top_k=1)] == ["Paris"]
    assert len(kb.lookup("Paris", top_k=None)) == 3


def test_missing_encoder_directory_is_named(tmp_path):
    from spacy_el.kb.encoder import TextEncoder

    missing = tmp_path / "no_such_encoder"
    # An absolute path, a relative one and a nested one; a hub-like name is fetched from the hub (E270/E271 when
    # it cannot be, tests/kb/test_encoder.py).
    for name in (str(missing), "./no_such_encoder", "no/such/encoder/dir"):
        with pytest.raises(ValueError, match="E255") as info:
            TextEncoder(name)
        assert name in str(info.value)

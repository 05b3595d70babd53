"""benchmarks.coref_ceiling: the gold without its mentions wider than W, scored against the full gold."""
import pytest
import spacy
from spacy.tokens import Doc

from benchmarks.coref_ceiling import ceiling_rows, width_ceiling
from spacy_el.extensions import set_clusters


@pytest.fixture
def doc():
    words = "The old harbour master of the town said he and the harbour master were friends".split()
    doc = Doc(spacy.blank("en").vocab, words=words)
    # {The old harbour master of the town (7 tokens), he}, {the harbour master (3)}, {the town (2)} singleton
    set_clusters(doc, [[(0, 7), (8, 9)], [(10, 13)], [(5, 7)]])
    return doc


def test_a_width_covering_every_mention_is_perfect(doc):
    scores = width_ceiling([doc], 7)
    assert scores["coref_avg_f"] == 1.0 and scores["coref_mention_r"] == 1.0


def test_a_narrower_width_loses_the_wide_mentions_and_their_links(doc):
    scores = width_ceiling([doc], 3)
    assert scores["coref_mention_r"] == pytest.approx(3 / 4)  # the 7-token mention is gone
    assert scores["coref_muc_f"] == 0.0  # its cluster's only link went with it
    assert 0.0 < scores["coref_avg_f"] < 1.0
    assert width_ceiling([doc], 1)["coref_mention_r"] == pytest.approx(1 / 4)  # "he" alone


def test_rows_name_the_width_and_every_metric(doc):
    rows = ceiling_rows({"toy-test": [doc]}, [3, 7])
    assert {r["system"] for r in rows} == {"gold_width_3", "gold_width_7"}
    assert {r["metric"] for r in rows} == {"coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f", "coref_mention_r"}
    assert all(r["dataset"] == "toy-test" for r in rows)

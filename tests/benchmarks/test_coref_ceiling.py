"""benchmarks.coref_ceiling: the gold without its mentions wider than W, or split where an antecedent window of K
would split it, scored against the full gold."""
import pytest
import spacy
from spacy.tokens import Doc

from benchmarks.coref_ceiling import ceiling_rows, positive_ints, split_by_window, width_ceiling, window_ceiling
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


def test_a_window_splits_a_cluster_where_consecutive_mentions_are_too_far_apart(doc):
    cluster = list(doc.spans["coref_clusters_1"])  # starts at tokens 0 and 8
    # 8 tokens apart at 0.5 kept spans per token: 4 kept spans, inside a window of 4, outside one of 3
    assert split_by_window(cluster, window=4, span_ratio=0.5) == [cluster]
    assert split_by_window(cluster, window=3, span_ratio=0.5) == [[cluster[0]], [cluster[1]]]


def test_the_window_ceiling_is_perfect_when_no_cluster_is_split_and_drops_when_one_is(doc):
    assert window_ceiling([doc], window=4, span_ratio=0.5)["coref_avg_f"] == 1.0
    split = window_ceiling([doc], window=3, span_ratio=0.5)
    assert split["coref_muc_f"] == 0.0  # the only coreference link is lost
    assert split["coref_mention_r"] == 1.0  # but no mention


def test_window_rows_leave_out_mention_recall_which_a_window_cannot_lose(doc):
    rows = ceiling_rows({"toy-test": [doc]}, [], [50])
    assert {r["system"] for r in rows} == {"gold_window_50"}
    assert {r["metric"] for r in rows} == {"coref_muc_f", "coref_b3_f", "coref_ceafe_f", "coref_avg_f"}


def test_without_singletons_a_split_off_mention_is_left_out_as_ontogum_is_scored():
    doc = Doc(spacy.blank("en").vocab, words="Ann came home and then she slept".split())
    set_clusters(doc, [[(0, 1), (5, 6)]])
    split = window_ceiling([doc], window=1, span_ratio=0.5, keep_singletons=False)  # 5 tokens: 2.5 kept spans
    assert split["coref_mention_r"] == 0.0 and split["coref_avg_f"] == 0.0
    rows = ceiling_rows({"ontogum-test": [doc], "litbank-test": [doc]}, [], [1])
    assert all("singletons left out" in r["notes"] for r in rows if r["dataset"] == "ontogum-test")
    assert all("singletons counted" in r["notes"] for r in rows if r["dataset"] == "litbank-test")


@pytest.mark.parametrize("text", ["0,8", "8,x", "", "-5"])
def test_bad_widths_or_windows_exit_naming_the_flag_and_the_value(text):
    with pytest.raises(SystemExit, match=f"--windows must be comma-separated positive span counts, got {text!r}"):
        positive_ints(text, "--windows", "span counts")
    assert positive_ints("50,150", "--windows", "span counts") == [50, 150]

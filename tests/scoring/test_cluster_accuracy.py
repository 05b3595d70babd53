"""spacy_el.scoring.cluster_accuracy: the paper's Table 3, gold linked clusters predicted exactly."""
from spacy_el.scoring.cluster_accuracy import cluster_accuracy_counts, single_link

GOLD = [
    [((0, 1), "Q1"), ((5, 6), "Q1")],  # multi
    [((10, 11), "Q2")],  # singleton
    [((20, 21), "NIL"), ((25, 26), "NIL")],  # NIL: not counted
    [((30, 31), "")],  # no link annotated: not counted
]


def test_exact_clusters_with_their_link_are_correct():
    assert cluster_accuracy_counts([(GOLD, GOLD)]) == {"singleton": (1, 1), "multi": (1, 1)}


def test_a_cluster_with_another_mention_set_or_link_is_wrong():
    pred = [
        [((0, 1), "Q1")], [((5, 6), "Q1")],  # the pair split in two
        [((10, 11), "Q3")],  # the wrong entity
    ]
    assert cluster_accuracy_counts([(GOLD, pred)]) == {"singleton": (0, 1), "multi": (0, 1)}


def test_a_predicted_cluster_with_two_links_matches_nothing():
    pred = [[((0, 1), "Q1"), ((5, 6), "Q9")], [((10, 11), "Q2")]]
    assert cluster_accuracy_counts([(GOLD, pred)]) == {"singleton": (1, 1), "multi": (0, 1)}


def test_unannotated_mentions_take_the_clusters_link():
    assert single_link([((0, 1), "Q1"), ((5, 6), ""), ((9, 10), None)]) == "Q1"
    assert single_link([((0, 1), "Q1"), ((5, 6), "Q2")]) is None
    assert single_link([((0, 1), "")]) is None


def test_counts_add_up_over_documents():
    assert cluster_accuracy_counts([(GOLD, GOLD), (GOLD, [])]) == {"singleton": (1, 2), "multi": (1, 2)}

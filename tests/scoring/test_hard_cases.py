"""spacy_el.scoring.hard_cases: the paper's Table 4 mentions and how a system fares on them."""
from spacy_el.scoring.hard_cases import HardCase, count_hard_cases, find_hard_cases

# "Shahid Afridi" (0, 13) has the entity among its own candidates; the two "Afridi" mentions have none.
OWN = {(0, 13): True, (23, 29): False, (36, 42): False}
GOLD = [[[((0, 13), "Shahid_Afridi"), ((23, 29), "Shahid_Afridi"), ((36, 42), "Shahid_Afridi")]]]


def has_candidate(index, mentions, kb_id):
    return [OWN[m] for m in mentions]


def test_mentions_without_their_own_candidate_but_with_a_mate_that_has_it_are_hard_cases():
    assert find_hard_cases(GOLD, has_candidate) == [[HardCase((23, 29), "Shahid_Afridi", frozenset({(0, 13)})),
                                                     HardCase((36, 42), "Shahid_Afridi", frozenset({(0, 13)}))]]


def test_a_cluster_without_a_mate_that_has_the_entity_has_no_hard_case():
    nobody = lambda index, mentions, kb_id: [False] * len(mentions)  # noqa: E731
    assert find_hard_cases(GOLD, nobody) == [[]]
    only_afridis = [[[((23, 29), "Shahid_Afridi"), ((36, 42), "Shahid_Afridi")]]]
    assert find_hard_cases(only_afridis, has_candidate) == [[]]


def test_nil_clusters_and_single_mentions_have_no_hard_case():
    gold = [[[((23, 29), "NIL"), ((0, 13), "NIL")], [((36, 42), "Shahid_Afridi")]]]
    assert find_hard_cases(gold, has_candidate) == [[]]


def test_the_candidates_are_asked_with_each_documents_index():
    asked = []
    find_hard_cases([[], GOLD[0]], lambda index, mentions, kb_id: asked.append(index) or has_candidate(index, mentions, kb_id))
    assert asked == [1]


def test_counts_tell_found_with_a_mate_and_correct():
    cases = find_hard_cases(GOLD, has_candidate)
    # (23, 29) joins its mate and gets the link; (36, 42) is predicted alone, as NIL.
    pred = [[[((0, 13), "Shahid_Afridi"), ((23, 29), "Shahid_Afridi")], [((36, 42), "NIL")]]]
    assert count_hard_cases(cases, pred) == {"total": 2, "found": 2, "with_mate": 1, "correct": 1}


def test_a_mention_not_predicted_is_a_hard_case_missed():
    cases = find_hard_cases(GOLD, has_candidate)
    assert count_hard_cases(cases, [[[((0, 13), "Shahid_Afridi")]]]) == {"total": 2, "found": 0, "with_mate": 0,
                                                                          "correct": 0}


def test_the_gold_link_alone_is_correct_but_not_with_a_mate():
    cases = find_hard_cases(GOLD, has_candidate)
    pred = [[[((23, 29), "Shahid_Afridi")], [((0, 13), "Shahid_Afridi")]]]
    assert count_hard_cases(cases, pred) == {"total": 2, "found": 1, "with_mate": 0, "correct": 1}

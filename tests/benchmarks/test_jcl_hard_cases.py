"""benchmarks.joint_coref_linker: the paper's Table 4 corner cases and their breakdown."""
from types import SimpleNamespace
from typing import Dict, List

import spacy
from spacy.tokens import Doc, Span

from benchmarks.joint_coref_linker import HardCase, count_hard_cases, find_hard_cases
from spacy_el.extensions import set_clusters

TEXT = "Shahid Afridi scored . Afridi won . Afridi left ."
CANDIDATES: Dict[str, List[str]] = {"Shahid Afridi": ["Shahid_Afridi"], "Afridi": []}


class AliasOnlyKB:
    """The alias table of a KB, as ``find_hard_cases`` uses it."""

    def lookup(self, text: str, top_k: int, fuzzy: bool) -> List[SimpleNamespace]:
        return [SimpleNamespace(entity_id=e) for e in CANDIDATES.get(text, [])[:top_k]]


def clustered(clusters: List[List[tuple]], links: List[str]) -> Doc:
    doc = spacy.blank("en")(TEXT)
    set_clusters(doc, [[(s, e) for s, e in c] for c in clusters], sort=False)
    for n, (cluster, kb_id) in enumerate(zip(clusters, links), start=1):
        doc.spans[f"coref_clusters_{n}"] = [Span(doc, s, e, kb_id=kb_id) for s, e in cluster]
    return doc


def test_hard_cases_count_found_with_mate_and_correct():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    # "Afridi" (4, 5) joins its mate and is linked; "Afridi" (7, 8) is a NIL singleton.
    pred = clustered([[(0, 2), (4, 5)], [(7, 8)]], ["Shahid_Afridi", "NIL"])
    cases = find_hard_cases(AliasOnlyKB(), [gold], top_k=16)
    assert cases == [[HardCase((23, 29), "Shahid_Afridi", frozenset({(0, 13)})),
                      HardCase((36, 42), "Shahid_Afridi", frozenset({(0, 13)}))]]
    assert count_hard_cases(cases, [pred]) == {"total": 2, "found": 2, "with_mate": 1, "correct": 1}


def test_mentions_not_predicted_are_hard_cases_missed():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    pred = clustered([[(0, 2)]], ["Shahid_Afridi"])
    cases = find_hard_cases(AliasOnlyKB(), [gold], top_k=16)
    assert count_hard_cases(cases, [pred]) == {"total": 2, "found": 0, "with_mate": 0, "correct": 0}


def test_top_k_decides_whether_a_mention_has_its_own_candidate():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    assert find_hard_cases(AliasOnlyKB(), [gold], top_k=0) == [[]]  # no mention has a candidate: no mate


def test_clusters_without_a_mate_with_the_gold_entity_are_not_hard_cases():
    gold = clustered([[(4, 5), (7, 8)]], ["Shahid_Afridi"])  # no mention has the gold candidate
    assert find_hard_cases(AliasOnlyKB(), [gold], top_k=16) == [[]]


def test_reachable_share_is_the_share_of_gold_mentions_no_wider_than_the_model_reads():
    from benchmarks.joint_coref_linker import reachable_share, score_rows

    # A 2-token and two 1-token mentions in one cluster, a 1-token singleton.
    gold = clustered([[(0, 2), (4, 5), (7, 8)], [(3, 4)]], ["Shahid_Afridi", "NIL"])
    assert reachable_share([gold], 1) == 0.75
    assert reachable_share([gold], 1, keep_singletons=False) == 0.6667  # the singleton is not counted
    assert reachable_share([gold], 2) == 1.0
    rows = score_rows("global", "gum-test", [gold], [gold], "note", max_span_width=1)
    reachable = [r for r in rows if r["metric"] == "coref_mention_reachable"]
    assert [(r["value"], r["notes"]) for r in reachable] == [(0.75, "note; gold mentions no wider than max_span_width 1")]

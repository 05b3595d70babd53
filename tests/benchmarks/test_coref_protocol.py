"""The coreference-only rows' scoring protocol: singletons counted on LitBank, as its literature counts them,
left out on OntoGUM (CoNLL-2012 practice), with LitBank's no-singleton average beside its rows."""
from benchmarks.joint_coref_linker import NO_SINGLETONS_METRIC, coref_only_rows

from .test_jcl_hard_cases import clustered

GOLD = clustered([[(0, 2), (4, 5)], [(7, 8)]], ["Shahid_Afridi", "NIL"])  # a pair and a singleton
MISSES_THE_SINGLETON = clustered([[(0, 2), (4, 5)]], ["Shahid_Afridi"])


def scores(dataset: str) -> dict:
    rows = coref_only_rows("coref_none", dataset, [GOLD], [MISSES_THE_SINGLETON], "trained", max_span_width=8)
    return {r["metric"]: (r["value"], r["notes"]) for r in rows}


def test_litbank_counts_the_singletons_and_adds_the_average_without_them():
    litbank = scores("litbank-test")
    assert litbank["coref_avg_f"][0] < 1.0  # the missed singleton costs B3 and CEAF-e
    assert litbank["coref_avg_f"][1].endswith("singletons counted on both sides")
    assert litbank[NO_SINGLETONS_METRIC] == (1.0, "trained; singletons left out on both sides")


def test_ontogum_leaves_the_singletons_out():
    ontogum = scores("ontogum-test")
    assert ontogum["coref_avg_f"] == (1.0, "trained; singletons left out on both sides")
    assert NO_SINGLETONS_METRIC not in ontogum

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


def test_masked_documents_are_also_left_out_of_the_unmasked_rows():
    import spacy

    from benchmarks.joint_coref_linker import score_rows
    from spacy_el.extensions import set_clusters

    masked = spacy.blank("en")("____ __ ____ _")
    set_clusters(masked, [[(0, 1), (2, 3)]])
    nothing = spacy.blank("en")(masked.text)  # the model found nothing on the underscores
    rows = {r["metric"]: r for r in score_rows("coref_none", "ontogum-test", [GOLD, masked], [GOLD, nothing], "trained",
                                               keep_singletons=False)}
    assert rows["coref_avg_f"]["value"] < 1.0
    assert rows["coref_avg_f_unmasked"]["value"] == 1.0
    assert rows["coref_avg_f_unmasked"]["notes"] == "trained; the 1 documents with text, the 1 text-masked ones left out"
    assert "elh_f_unmasked" not in rows  # a coreference-only row has no links
    joint = {r["metric"]: r["value"] for r in score_rows("global", "gum-test", [GOLD, masked], [GOLD, nothing],
                                                         "trained", hard=[[], []])}
    assert joint["elh_f_unmasked"] == 1.0


def test_no_unmasked_rows_where_every_document_has_text():
    rows = coref_only_rows("coref_none", "ontogum-test", [GOLD], [GOLD], "trained", max_span_width=8)
    assert not [r for r in rows if r["metric"].endswith("_unmasked")]

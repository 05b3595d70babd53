"""spacy_el.scoring.coref_protocol: singletons counted where the corpus annotates them."""
import pytest

from spacy_el.scoring.coref_protocol import corpus_of, keeps_singletons


@pytest.mark.parametrize("dataset, kept", [("litbank-test", True), ("gum-test", True), ("aida-test", True),
                                           ("ontogum-test", False), ("ontogum-dev", False), ("ontogum", False)])
def test_only_ontogum_leaves_the_singletons_out(dataset, kept):
    assert keeps_singletons(dataset) is kept


def test_the_corpus_is_the_name_before_the_split():
    assert corpus_of("litbank-test") == "litbank"
    assert corpus_of("gum") == "gum"

"""Which coreference test sets are scored with their singletons: the per-dataset protocol.

A corpus that annotates singleton mentions is scored with them on both sides, as its literature scores it:
GUM and AIDA+ (the joint models' test sets) and LitBank (the LitBank paper, Bamman et al. 2020, and
fast-coref's ``cluster_threshold: 1`` count them). OntoGUM, like CoNLL-2012, annotates none, so its scores
leave them out on both sides. Where singletons are counted on a coreference-only test set, the average
without them (:data:`NO_SINGLETONS_METRIC`) is reported beside it, comparable with CoNLL-2012-style figures.
"""

#: The corpora whose coreference scores leave singletons out on both sides (CoNLL-2012 practice).
SINGLETONS_LEFT_OUT = frozenset({"ontogum"})
#: The coreference average F1 with the singletons left out, reported beside a score that counts them.
NO_SINGLETONS_METRIC = "coref_avg_f_no_singletons"


def corpus_of(dataset: str) -> str:
    """The corpus of a dataset name: ``litbank-test`` -> ``litbank``."""
    return dataset.split("-", 1)[0]


def keeps_singletons(dataset: str) -> bool:
    """Whether coreference on ``dataset`` (``<corpus>-<split>`` or a corpus name) counts singletons on both sides."""
    return corpus_of(dataset) not in SINGLETONS_LEFT_OUT

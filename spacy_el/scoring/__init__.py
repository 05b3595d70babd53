"""Evaluation metrics: NER, entity linking (GERBIL micro/macro, ED accuracy), ELm/ELh,
coreference (MUC, B-cubed, CEAF-e, CoNLL-2012 average, LEA) and candidate recall@k.

The metric modules are pure Python/numpy. The spaCy scorers live in `spacy_el.scoring.scorers`
(imported on demand, or through the `spacy_scorers` entry points) so that importing this
package does not import spaCy.
"""
from .candidates import candidate_recall_at_k
from .cluster_el import cluster_el_scores
from .coref import b_cubed, ceafe, coref_scores, lea, muc, normalize_clusters
from .el import ed_accuracy, el_scores
from .ner import ner_scores

__all__ = [
    "b_cubed",
    "candidate_recall_at_k",
    "ceafe",
    "cluster_el_scores",
    "coref_scores",
    "ed_accuracy",
    "el_scores",
    "lea",
    "muc",
    "ner_scores",
    "normalize_clusters",
]

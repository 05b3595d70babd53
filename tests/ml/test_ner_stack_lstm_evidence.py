"""The NIL classifier's candidate evidence (``candidate_evidence``): what a chunk's list says."""
import torch

from spacy_el.ml.ner_stack_lstm.modules import NIL_EVIDENCE, nil_evidence


def test_nil_evidence_reads_the_best_similarity_and_prior_of_the_real_candidates():
    rows = torch.tensor([[4, 7, -1], [2, -1, -1], [-1, -1, -1]])
    priors = torch.tensor([[0.6, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    dense = torch.tensor([[0.2, 0.5, 0.9], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # 0.9 sits on padding
    has_dense = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    evidence = nil_evidence(rows, priors, dense, has_dense)
    assert evidence.shape == (3, NIL_EVIDENCE)
    assert evidence.tolist() == [[0.5, 1.0, 0.6000000238418579, 1.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    assert nil_evidence(rows, priors, None, None)[:, :2].abs().sum() == 0  # the alias generator gives no similarity

"""The training loss of the Stack-LSTM joint NER + EL model (the ``ner_stack_lstm`` component).

``L_NER + L_EL + L_NIL`` of the seed paper (Martins et al., 2019): the cross-entropy of the gold actions
(teacher-forced), of each gold chunk's entity among its candidates, and of the NIL classifier.
:class:`~spacy_el.ml.ner_stack_lstm.modules.StackLstmForward` divides their sum over the enabled tasks by
the number of sentences. Pure PyTorch.
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

__all__ = ["compute_losses"]


def compute_losses(
    model: torch.nn.Module,
    logits: torch.Tensor,
    gold_actions: torch.Tensor,
    candidate_scores: Optional[torch.Tensor],
    gold_candidate: torch.Tensor,
    nil_logits: Optional[torch.Tensor],
    linkable: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """L_NER, L_EL, L_NIL summed as in the paper (each divided by the number of sentences later).

    logits ``(B, T, n_actions)``, gold_actions ``(B, T)`` (-1 padding); candidate_scores ``(K, C)``,
    gold_candidate ``(K,)`` (-1: NIL or gold not among the candidates, no EL loss); nil_logits
    ``(K,)``, linkable ``(K,)`` float 0/1.
    """
    steps = gold_actions >= 0
    log_probs = torch.log_softmax(logits[steps], -1)
    ner = -log_probs.gather(1, gold_actions[steps][:, None]).sum()
    zero = logits.new_zeros(())
    el = zero
    if candidate_scores is not None and bool((gold_candidate >= 0).any()):
        has_gold = gold_candidate >= 0
        el = F.cross_entropy(candidate_scores[has_gold], gold_candidate[has_gold], reduction="sum")
    nil = zero
    if nil_logits is not None and nil_logits.numel():
        nil = F.binary_cross_entropy_with_logits(nil_logits, linkable, reduction="sum")
    return ner, el, nil

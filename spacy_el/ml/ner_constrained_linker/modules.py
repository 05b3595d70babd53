"""The NER4EL candidate scorer as a PyTorch module (the ``ner_constrained_linker`` component; no Thinc here:
:mod:`spacy_el.ml.ner_constrained_linker.model` is the glue).

A transformer encodes windows in which mentions are marked (``algorithms.marked_mentions``). A mention
is represented by the opening marker's state and the mean of its wordpieces' states; a candidate by a
projection of its KB vector (an encoding of "title. description") plus, with typed entity
representations, its type distribution times a learned type-embedding matrix (NER4EL contribution 1).
The score is a learned combination of the scaled inner product and the candidate's log-prior,
initialised to their plain sum so that training starts from the prior. With ``dense_feature``, the
candidate generator's own mention-entity similarity (the dense or hybrid generator's mention encoder,
another model than this one) joins the combination, as a linear term and an input of its small MLP. A
mention-typing head predicts the mention's type (used when the NER label gives none, for constrained
decoding).
"""
import math
from typing import Optional, Tuple

import torch
from torch import nn

from ...errors import Errors

__all__ = ["Ner4elScorer"]


class Ner4elScorer(nn.Module):
    """Scores candidate entities for marked mentions.

    encoder: a Hugging Face encoder (``AutoModel``) with hidden size H.
    entity_dim: E, the width of the KB's entity vectors.
    n_types: T, the size of the type inventory.
    hidden: D, the width of the space mentions and entities are compared in.
    typed_entities: add the learned type embedding to each candidate's representation.
    dense_feature: score with the candidate generator's similarity too (``cand_dense``, ``cand_has_dense``).
    """

    def __init__(self, encoder: nn.Module, entity_dim: int, n_types: int, hidden: int = 256, typed_entities: bool = False,
                 dense_feature: bool = False):
        super().__init__()
        width = int(encoder.config.hidden_size)
        self.encoder = encoder
        self.mention_proj = nn.Sequential(nn.Linear(2 * width, hidden), nn.Tanh(), nn.Linear(hidden, hidden))
        self.entity_proj = nn.Linear(entity_dim, hidden)
        self.type_head = nn.Linear(2 * width, n_types)
        self.typed_entities = typed_entities
        self.type_embeddings = nn.Parameter(torch.zeros(n_types, hidden)) if typed_entities else None
        if typed_entities:
            nn.init.normal_(self.type_embeddings, std=0.02)
        # score = w_sim * sim + w_prior * log_prior [+ w_dense * dense] + mlp([sim, log_prior, from_alias
        # [, dense, has_dense]]). Shape (1,), not 0-d: Thinc's optimizer cannot update 0-d parameters.
        self.sim_weight = nn.Parameter(torch.ones(1))
        self.prior_weight = nn.Parameter(torch.ones(1))
        self.dense_feature = dense_feature
        # Starts at 0: training begins from the scorer without the feature, as from the prior.
        self.dense_weight = nn.Parameter(torch.zeros(1)) if dense_feature else None
        self.combine = nn.Sequential(nn.Linear(5 if dense_feature else 3, 16), nn.Tanh(), nn.Linear(16, 1))
        nn.init.zeros_(self.combine[2].weight)
        nn.init.zeros_(self.combine[2].bias)
        self.scale = 1.0 / math.sqrt(hidden)

    def encode_mentions(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        window: torch.Tensor,
        marker: torch.Tensor,
        span_weights: torch.Tensor,
    ) -> torch.Tensor:
        """Mention features.

        input_ids, attention_mask: (P, L) marked windows. window, marker: (M,) long.
        span_weights: (M, L) float, 1/len over the mention's wordpieces in its window, else 0.
        RETURNS: (M, 2H), the opening marker's state and the mention's mean state.
        """
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (P, L, H)
        marker_states = states[window, marker]  # (M, H)
        span_states = torch.einsum("ml,mlh->mh", span_weights, states[window])  # (M, H)
        return torch.cat([marker_states, span_states], dim=-1)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        window: torch.Tensor,
        marker: torch.Tensor,
        span_weights: torch.Tensor,
        cand_vectors: torch.Tensor,
        cand_type_probs: torch.Tensor,
        cand_log_prior: torch.Tensor,
        cand_from_alias: torch.Tensor,
        cand_dense: Optional[torch.Tensor] = None,
        cand_has_dense: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Candidate scores and mention-type logits.

        cand_vectors: (M, C, E); cand_type_probs: (M, C, T); cand_log_prior, cand_from_alias: (M, C);
        cand_dense, cand_has_dense: (M, C), read with ``dense_feature`` only.
        RETURNS: scores (M, C) (padding candidates get arbitrary scores: mask them outside),
            type_logits (M, T).
        """
        features = self.encode_mentions(input_ids, attention_mask, window, marker, span_weights)
        mentions = self.mention_proj(features)  # (M, D)
        entities = self.entity_proj(cand_vectors)  # (M, C, D)
        if self.type_embeddings is not None:
            entities = entities + cand_type_probs @ self.type_embeddings
        sim = torch.einsum("md,mcd->mc", mentions, entities) * self.scale  # (M, C)
        combine_inputs = [sim, cand_log_prior, cand_from_alias]
        if self.dense_feature:
            if cand_dense is None or cand_has_dense is None:
                raise ValueError(Errors.E927)
            combine_inputs += [cand_dense, cand_has_dense]
        combined = self.combine(torch.stack(combine_inputs, dim=-1)).squeeze(-1)
        scores = self.sim_weight * sim + self.prior_weight * cand_log_prior + combined
        if self.dense_weight is not None:
            scores = scores + self.dense_weight * cand_dense
        # float32 outputs even under bfloat16 autocast (numpy has no bfloat16).
        return scores.float(), self.type_head(features).float()

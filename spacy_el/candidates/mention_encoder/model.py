"""``MentionEncoderModule``: mention vectors in the space of the KB's entity vectors.

The entity side is fixed: the KB's vectors (the packaged MiniLM's encoding of "name. description").
Only the mention side is trained, so the KB never has to be re-encoded when the mention encoder is
retrained, and entities added later (``kb.add_entities``) are encoded exactly as the others.
"""
from typing import Any

import torch
from torch import nn


class MentionEncoderModule(nn.Module):
    """A transformer reads a context window; a mention is the mean of its wordpiece states ``m`` and the
    window is the mean of all its states ``w``; the vector is ``normalize(W [m; w] + b)``.

    ``W`` starts as ``[I, 0]`` (the mention's own states alone), which is close to how the entity side
    pools "name. description", so the untrained encoder is already a usable zero-shot retriever;
    training then learns how much of the context to mix in.

    transformer: a Hugging Face encoder (``last_hidden_state`` of width ``hidden``).
    dim: width of the entity vectors the output is compared with.
    """

    def __init__(self, transformer: Any, dim: int) -> None:
        super().__init__()
        self.transformer = transformer
        hidden = int(transformer.config.hidden_size)
        self.projection = nn.Linear(2 * hidden, dim)
        with torch.no_grad():
            self.projection.weight.zero_()
            self.projection.bias.zero_()
            eye = torch.eye(min(hidden, dim))
            self.projection.weight[: eye.shape[0], : eye.shape[1]] = eye

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, mention_window: torch.Tensor,
        mention_mask: torch.Tensor,
    ) -> torch.Tensor:
        """input_ids, attention_mask: int64 (W, T), the windows' wordpieces. mention_window: int64 (M,),
        the window each mention is read in. mention_mask: float (M, T), 1 on the mention's wordpieces.
        RETURNS: float32 (M, dim), L2-normalised mention vectors."""
        hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (W, T, h)
        hidden = hidden.float()
        window_mask = attention_mask.to(hidden.dtype).unsqueeze(-1)  # (W, T, 1)
        window_mean = (hidden * window_mask).sum(1) / window_mask.sum(1).clamp(min=1.0)  # (W, h)
        states = hidden[mention_window]  # (M, T, h)
        mask = mention_mask.to(hidden.dtype).unsqueeze(-1)  # (M, T, 1)
        mention_mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)  # (M, h)
        pooled = torch.cat([mention_mean, window_mean[mention_window]], dim=-1)  # (M, 2h)
        return nn.functional.normalize(self.projection(pooled), dim=-1)


__all__ = ["MentionEncoderModule"]

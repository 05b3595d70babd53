"""The dense candidate generator's mention encoder (a bi-encoder's mention side, as BLINK's first stage):
the torch module, its batched inputs, and its data-only save format."""
from .model import MentionEncoderModule
from .runtime import MentionEncoder

__all__ = ["MentionEncoderModule", "MentionEncoder"]

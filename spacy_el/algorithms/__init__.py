"""Model-independent algorithms (pure Python/numpy): transition systems, decoders, oracles."""
from .transition_system import Chunk, State, TransitionSystem

__all__ = [
    "Chunk",
    "State",
    "TransitionSystem",
]

"""Model-independent algorithms (pure Python/numpy): transition systems, decoders, oracles."""
from .arborescence import arborescence_score, max_spanning_arborescence, reachable_from
from .transition_system import Chunk, State, TransitionSystem

__all__ = [
    "Chunk",
    "State",
    "TransitionSystem",
    "arborescence_score",
    "max_spanning_arborescence",
    "reachable_from",
]

"""Documents out to workers in batches, results back in input order: what every multi-worker engine shares.

The driver numbers documents as it submits them (positions run on across chunks), so that it can submit
the next chunk before it collects the current one: the workers never wait while the driver commits a chunk
or reads the next, and no worker idles at a chunk's end while another finishes its last batch. Results
arrive in any order; :meth:`BatchDispatcher.collect` waits until a chunk's are all there.
"""
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..errors import Errors

Result = Tuple[int, Optional[Any], Optional[str]]


class BatchDispatcher:
    """The bookkeeping of an engine whose workers annotate batches of ``(position, text)`` pairs.

    A subclass sends a batch with :meth:`_send` and waits for at least one finished batch in
    :meth:`_receive`, which returns its ``(position, value, error)`` results.
    """

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._next_position = 0
        self._waiting: Set[int] = set()
        self._results: Dict[int, Tuple[Optional[Any], Optional[str]]] = {}

    def submit(self, texts: List[str]) -> range:
        """Send ``texts`` to the workers; returns their positions, the ticket for :meth:`collect`."""
        positions = range(self._next_position, self._next_position + len(texts))
        self._next_position = positions.stop
        self._waiting.update(positions)
        pairs = list(zip(positions, texts))
        for start in range(0, len(pairs), self.batch_size):
            self._send(pairs[start:start + self.batch_size])
        return positions

    def collect(self, positions: range, on_doc: Callable[[], Any]) -> List[Tuple[Optional[Any], Optional[str]]]:
        """``(value, None)`` or ``(None, error)`` for each position, in order, once all have arrived;
        ``on_doc`` is called once per document as results arrive (of this chunk or a later one)."""
        while any(position in self._waiting for position in positions):
            for position, value, error in self._receive():
                if position not in self._waiting:
                    raise RuntimeError(Errors.E501.format(position=position))
                self._waiting.discard(position)
                self._results[position] = (value, error)
                on_doc()
        return [self._results.pop(position) for position in positions]

    def _send(self, batch: List[Tuple[int, str]]) -> None:
        raise NotImplementedError

    def _receive(self) -> List[Result]:
        raise NotImplementedError

"""The training batches of spaCy's loop, with a state that can be saved and restored.

:class:`ResumableBatches` yields what ``spacy.training.loop.create_train_batches`` yields, ``(epoch, batch)``,
drawing the same random numbers in the same order: the corpus is read once (at the first batch), and
each epoch starts with ``random.shuffle`` of the examples, which are then given to the batcher. Here the
shuffle is applied to a list of example indices, which draws exactly what shuffling the examples does (a
shuffle depends only on the length), so the batches are the same (``tests/training/test_batches.py``).

Its :meth:`~ResumableBatches.state` is where the stream stands: the epoch, this epoch's order, how many of
its batches were taken, and the orders of the epochs before (a batcher may carry state from one epoch to
the next: spaCy's batchers draw their sizes from one schedule, e.g. ``compounding.v1``, for the whole run).
A stream built with that state replays the batcher over the earlier epochs (cheap: only lengths are read),
skips the batches taken, and goes on with the same batches as the stream it was saved from. The examples
are identified by a hash of their texts, so a reader that yields them in another order still resumes.

A streamed corpus (``max_epochs = -1``) cannot be resumed: it is read anew every epoch and is not kept.
"""
import hashlib
import random
from collections import defaultdict
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.errors import Errors as SpacyErrors
from spacy.training import Example
from spacy.training.loop import create_train_batches

from ..errors import Errors

__all__ = ["ResumableBatches", "example_fingerprint"]


def example_fingerprint(eg: Example) -> str:
    """A short hash of an example's predicted and reference texts."""
    text = eg.predicted.text + "\x00" + eg.reference.text
    return hashlib.sha1(text.encode("utf8")).hexdigest()[:16]


class ResumableBatches:
    """``(epoch, batch)`` pairs as spaCy's ``create_train_batches``, with :meth:`state` (module docstring)."""

    def __init__(
        self, nlp: Any, corpus: Callable[[Any], Iterable[Example]], batcher: Callable[[Iterable[Example]], Iterable[Any]],
        max_epochs: int, state: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.nlp = nlp
        self.corpus = corpus
        self.batcher = batcher
        self.max_epochs = max_epochs
        self.examples: Optional[List[Example]] = None
        self.fingerprints: List[str] = []
        self.epoch = 0
        self.order: List[int] = []
        self.taken = 0
        self.past: List[List[int]] = []
        self._saved = state
        if state is not None and max_epochs < 0:
            raise ValueError(Errors.E733)

    @property
    def resumable(self) -> bool:
        return self.max_epochs >= 0

    def load(self) -> None:
        """Read the corpus (done at the first batch otherwise, as spaCy does)."""
        if self.examples is None:
            self.examples = list(self.corpus(self.nlp))
            if not self.examples:
                raise ValueError(SpacyErrors.E986)  # what spaCy's create_train_batches raises for it
            self.fingerprints = [example_fingerprint(eg) for eg in self.examples]

    def state(self) -> Dict[str, Any]:
        """Where the stream stands (JSON)."""
        if not self.resumable:
            raise ValueError(Errors.E734)
        return {
            "epoch": self.epoch, "order": list(self.order), "taken": self.taken, "past": [list(o) for o in self.past],
            "fingerprints": list(self.fingerprints),
        }

    def _restore(self, saved: Dict[str, Any]) -> Iterator[Any]:
        """Take the saved state; RETURNS the current epoch's batch iterator, positioned after the batches taken."""
        remap = self._remap(saved["fingerprints"])
        self.past = [[remap[i] for i in order] for order in saved["past"]]
        for order in self.past:  # advance whatever state the batcher carries across epochs
            for _ in self.batcher([self.examples[i] for i in order]):
                pass
        self.epoch = saved["epoch"]
        self.order = [remap[i] for i in saved["order"]]
        batches = iter(self.batcher([self.examples[i] for i in self.order]))
        for _ in range(saved["taken"]):
            next(batches)
        self.taken = saved["taken"]
        return batches

    def _remap(self, saved: List[str]) -> List[int]:
        """Saved example index -> index in this run's examples (the same examples, maybe in another order)."""
        if saved == self.fingerprints:
            return list(range(len(saved)))
        positions: Dict[str, List[int]] = defaultdict(list)
        for i, fingerprint in enumerate(self.fingerprints):
            positions[fingerprint].append(i)
        if sorted(saved) != sorted(self.fingerprints):
            raise ValueError(Errors.E735)
        return [positions[fingerprint].pop(0) for fingerprint in saved]

    def __iter__(self) -> Iterator[Tuple[int, Any]]:
        if not self.resumable:
            yield from create_train_batches(self.nlp, self.corpus, self.batcher, self.max_epochs)
            return
        self.load()
        assert self.examples is not None
        if self._saved is not None:
            batches: Optional[Iterator[Any]] = self._restore(self._saved)
            self._saved = None
        else:
            self.order = list(range(len(self.examples)))
            batches = None
        while self.max_epochs < 1 or self.epoch < self.max_epochs:
            if batches is None:
                random.shuffle(self.order)
                self.taken = 0
                batches = iter(self.batcher([self.examples[i] for i in self.order]))
            for batch in batches:
                self.taken += 1
                yield self.epoch, batch
            self.past.append(list(self.order))
            self.epoch += 1
            batches = None

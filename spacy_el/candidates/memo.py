"""``CandidateMemo``: the candidates of a linker's training mentions, generated once and reused in later
epochs.

A linker in training reads the same gold mentions every epoch. Its generator's output for a mention is
a function of the KB and of the mention's document text and character offsets (the dense generator's
vector cache rests on the same fact), so the lists of the first epoch serve every later one: the
alias look-up, the encoder pass, the dense index search and the fusion run once per mention rather
than once per epoch.

The memo empties itself when what the lists were made from changes: another generator or KB object, or
a KB whose entities, vectors, aliases, dense index or look-up settings were replaced, that gained
entities or aliases (``kb.add_entities``), or, for a generator that reads the mention encoder, that
carries another encoder. The lists it returns are read-only, so that no caller can change what a later
epoch reads.
"""
import hashlib
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Span

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts
from .dense import ATTACHMENT, DenseCandidates
from .types import CandidateGenerator, MentionCandidates

Key = Tuple[bytes, int, int]


def reads_encoder(generator: CandidateGenerator) -> bool:
    """Whether ``generator`` reads the KB's mention encoder (dense, or hybrid with a dense part)."""
    return isinstance(generator, DenseCandidates) or isinstance(getattr(generator, "dense", None), DenseCandidates)


class _Same:
    """What the lists were made from, compared by identity (weak references to the KB's parts, so that an
    emptied memo holds none of a replaced KB) and by size."""

    def __init__(self, generator: CandidateGenerator, kb: ElKnowledgeBase, held_out: bool = False) -> None:
        self.generator = generator
        self.held_out = held_out
        self.parts = [_ref(p) for p in _kb_parts(kb)]
        self.sizes = (kb.n_entities, kb.n_aliases)
        # The encoder's bytes (not weakly referable): what the dense generator decodes its encoder from.
        self.encoder = kb.attachment(ATTACHMENT) if reads_encoder(generator) else None

    def holds(self, generator: CandidateGenerator, kb: ElKnowledgeBase, held_out: bool = False) -> bool:
        return (
            generator is self.generator
            and held_out == self.held_out
            and all(ref() is part for ref, part in zip(self.parts, _kb_parts(kb)))
            and (kb.n_entities, kb.n_aliases) == self.sizes
            and (not reads_encoder(generator) or kb.attachment(ATTACHMENT) is self.encoder)
        )


def _kb_parts(kb: ElKnowledgeBase) -> Tuple[Any, ...]:
    return (kb, kb.entities, kb.entities.vectors, kb.aliases, kb.dense_index, kb.settings)


def _ref(obj: Any) -> Any:
    """A weak reference to ``obj``; for None, a callable that returns None."""
    return (lambda: None) if obj is None else weakref.ref(obj)


def _read_only(found: MentionCandidates) -> MentionCandidates:
    for array in (found.rows, found.prior, found.tier, found.dense, found.score, found.query):
        if array is not None:
            array.flags.writeable = False
    return found


class CandidateMemo:
    """Per mention (document text, start and end character), the list ``generator(kb, [mention])`` gave.

    limit: mentions kept at most; later ones are generated on every call (0: keep none). hits / misses:
    the mentions served from the memo / generated, since it was made or emptied.
    """

    def __init__(self, limit: int = 100_000) -> None:
        if int(limit) < 0:
            raise ValueError(Errors.E401.format(limit=limit))
        self.limit = int(limit)
        self._found: Dict[Key, MentionCandidates] = {}
        self._made_from: Optional[_Same] = None
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._found)

    def clear(self) -> None:
        self._found.clear()
        self._made_from = None
        self.hits = self.misses = 0

    def __call__(
        self, generator: CandidateGenerator, kb: ElKnowledgeBase, mentions: Sequence[Span],
        held_out: Optional[Sequence[Optional[AliasCounts]]] = None,
    ) -> List[MentionCandidates]:
        """The lists of ``mentions``, in order: from the memo, else from one call of ``generator`` for the
        mentions it lacks. ``held_out``: per mention, its document's alias counts for the generator (see
        :class:`CandidateGenerator`); a mention's counts are those of its document, the same every epoch,
        so they may key the memo by the mention alone. Lists made with and without them are not mixed."""
        if not mentions:
            return []
        holding = held_out is not None
        if self._made_from is None or not self._made_from.holds(generator, kb, holding):
            self.clear()
        keys = _keys(mentions)
        todo: Dict[Key, int] = {}  # each missing mention once, at its first position
        for i, key in enumerate(keys):
            if key not in self._found and key not in todo:
                todo[key] = i
        fresh: Dict[Key, MentionCandidates] = {}
        if todo:
            missing = [mentions[i] for i in todo.values()]
            if holding:
                generated = generator(kb, missing, held_out=[held_out[i] for i in todo.values()])
            else:  # generators written before held_out take (kb, mentions) only
                generated = generator(kb, missing)
            if self._made_from is not None and not self._made_from.holds(generator, kb, holding):
                # The call changed the KB (a generator given an encoder folder attaches it on first use):
                # only the lists it made now are of the KB as it is.
                self._found.clear()
            for key, found in zip(todo, generated):
                fresh[key] = found
                if len(self._found) < self.limit:
                    self._found[key] = _read_only(found)
        if todo or self._made_from is None:
            self._made_from = _Same(generator, kb, holding)
        self.misses += len(todo)
        self.hits += len(keys) - len(todo)
        return [self._found[key] if key in self._found else fresh[key] for key in keys]


def _keys(mentions: Sequence[Span]) -> List[Key]:
    digests: Dict[int, bytes] = {}  # one digest per document
    keys = []
    for span in mentions:
        doc = span.doc
        if id(doc) not in digests:
            digests[id(doc)] = hashlib.blake2b(doc.text.encode("utf8"), digest_size=16).digest()
        keys.append((digests[id(doc)], span.start_char, span.end_char))
    return keys


__all__ = ["CandidateMemo", "reads_encoder"]

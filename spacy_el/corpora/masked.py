"""Text-masked documents: documents distributed with their annotations but not their words.

GUM's Reddit documents (``GUM_reddit_*``: 14 of its 191 training documents, 2 of 32 in dev and in test) are such:
Reddit's terms keep their text out of the distribution, so every token is replaced by underscores of the same
length, in the TSV, CoNLL and OntoGUM files alike, while the mentions and clusters stay. A model can learn nothing
true from them, and what it predicts on them is arbitrary, yet it is scored with the rest: GUM dev's two hold about
6% of its tokens. This module says which documents are masked, once, for the corpus readers (``skip_masked``),
``evaluate`` and ``tune``, and for scores reported without them.
"""

from typing import Callable, Iterable, Iterator, List

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

#: The character that replaces every character of a masked document's tokens.
MASK_CHAR = "_"


def is_text_masked(doc: Doc) -> bool:
    """True when ``doc`` has words and every one of them is made of :data:`MASK_CHAR` only.

    A real document with a few underscore tokens (a blank filled in as ``"_"``, a ``"___"`` line) is not masked:
    all of its non-space tokens must be underscores. An empty or whitespace-only document is not masked.
    """
    words = [token.text for token in doc if not token.is_space]
    return bool(words) and all(set(word) == {MASK_CHAR} for word in words)


def unmasked(docs: Iterable[Doc]) -> List[Doc]:
    """The documents of ``docs`` that are not text-masked (:func:`is_text_masked`), in order."""
    return [doc for doc in docs if not is_text_masked(doc)]


def without_masked(corpus: Callable[[Language], Iterable[Example]]) -> Callable[[Language], Iterator[Example]]:
    """``corpus`` (a spaCy corpus: ``nlp -> examples``) without the examples whose reference is text-masked."""

    def examples(nlp: Language) -> Iterator[Example]:
        return (eg for eg in corpus(nlp) if not is_text_masked(eg.reference))

    return examples

"""Tokenise raw text so that annotated character offsets fall on token boundaries.

Corpora with character offsets (ELEVANT, GAP) are tokenised with the pipeline's tokenizer; tokens that
straddle an annotation boundary are then split there (``"Smith's"`` stays two tokens, ``"U.S.-led"``
with a label on ``"U.S."`` becomes ``"U.S."`` + ``"-led"``), so gold spans keep their exact offsets.
"""

from bisect import bisect_right
from typing import Iterable, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span


def make_doc_with_boundaries(nlp: Language, text: str, boundaries: Iterable[int]) -> Doc:
    """Tokenise ``text`` with ``nlp.make_doc`` and split tokens at every offset in ``boundaries``."""
    doc = nlp.make_doc(text)
    cuts = sorted({b for b in boundaries if 0 < b < len(text)})
    if not cuts:
        return doc
    words: List[str] = []
    spaces: List[bool] = []
    changed = False
    for token in doc:
        start, end = token.idx, token.idx + len(token.text)
        first = bisect_right(cuts, start)
        inner = [c for c in cuts[first : bisect_right(cuts, end - 1)] if start < c < end]
        pieces = [start] + inner + [end]
        changed = changed or bool(inner)
        for a, b in zip(pieces, pieces[1:]):
            words.append(text[a:b])
            spaces.append(False)
        spaces[-1] = bool(token.whitespace_)
    if not changed:
        return doc
    return Doc(nlp.vocab, words=words, spaces=spaces)


def char_span_or_expand(
    doc: Doc, start: int, end: int, label: str = "", kb_id: str = ""
) -> Tuple[Optional[Span], bool]:
    """``doc.char_span`` with strict alignment, falling back to ``alignment_mode="expand"``.

    Returns (span, was_expanded); span is None only when even the expanded span is empty (for
    instance a span of whitespace only).
    """
    span = doc.char_span(start, end, label=label, kb_id=kb_id)
    if span is not None:
        return span, False
    span = doc.char_span(start, end, label=label, kb_id=kb_id, alignment_mode="expand")
    if span is not None and len(span) == 0:
        span = None
    return span, True

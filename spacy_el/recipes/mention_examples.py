"""Gold mentions with their KB rows, as the mention encoder trains and is evaluated on.

Training reads only training splits (data rule 3 of ``../shared/data/README.md``): AIDA train and GUM
train. GUM's mentions include pronouns and common-noun phrases; only its names (mentions with an
upper-case letter, as ``scoring.candidates.linked_mentions(names_only=True)``) are used, since a
pronoun's context, not the pronoun, says who it is, which an entity retriever cannot learn from.
"""
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

from spacy.tokens import Doc

from ..extensions import is_linked

#: ``((doc, start, end), kb_row)``: a mention's token span and its gold entity's KB row.
Example = Tuple[Tuple[Doc, int, int], int]


def kb_examples(docs: Iterable[Doc], kb, spans_key: str = "", names_only: bool = False) -> List[Example]:
    """The linked gold mentions of ``docs`` (``doc.ents``, or ``doc.spans[spans_key]``) whose entity is in ``kb``."""
    out: List[Example] = []
    for doc in docs:
        for span in doc.spans[spans_key] if spans_key else doc.ents:
            if not is_linked(span.kb_id_) or (names_only and not any(c.isupper() for c in span.text)):
                continue
            row = kb.entities.row_of(span.kb_id_)
            if row is not None:
                out.append(((doc, span.start, span.end), int(row)))
    return out


def split_examples(data: Path, kb, split: str) -> Dict[str, List[Example]]:
    """AIDA and GUM (names) examples of one split: ``{"aida-<split>": [...], "gum-<split>": [...]}``."""
    from ..corpora import read_aida, read_gum

    aida_split = {"dev": "dev", "test": "test", "train": "train"}[split]
    aida = read_aida(data / "aida", splits=(aida_split,))[aida_split]
    gum = read_gum(data / "gum", split)
    return {
        f"aida-{split}": kb_examples(aida, kb),
        f"gum-{split}": kb_examples(gum, kb, "mentions", names_only=True),
    }


__all__ = ["Example", "kb_examples", "split_examples"]

"""Held-out priors: train a linker on the alias priors its training documents will not have at test time.

An alias table built from a training split (the evaluation KB counts every AIDA and GUM train mention,
and the PPRforNED candidate lists of AIDA train) knows each training mention already: its first candidate
is right far more often on the training split than on a test split (``docs/candidates.md`` gives the
measured recall). A linker trained on such priors learns to trust them far more than a test document
warrants, and has little reason to learn from its other features (context, types, dense similarity).
With held-out priors each training mention gets its candidates as if its own document had not been
counted (leave one document out): the KB carries what each counted document contributed
(:mod:`spacy_el.kb.held_out`), and the alias generator takes it out of the priors first.
"""
from typing import Dict, List, Optional, Sequence

from spacy.tokens import Span

from ..kb import ElKnowledgeBase
from ..kb.alias_table import AliasCounts


def held_out_of(kb: ElKnowledgeBase, mentions: Sequence[Span]) -> List[Optional[AliasCounts]]:
    """Per mention, what its document (``span.doc``: a training example's reference or predicted doc, whose
    texts are the same) contributed to ``kb``'s alias counts, looked up once per document (None: not
    counted): the ``held_out`` argument of a candidate generator."""
    per_doc: Dict[int, Optional[AliasCounts]] = {}
    out = []
    for span in mentions:
        if id(span.doc) not in per_doc:
            per_doc[id(span.doc)] = kb.held_out_counts(span.doc.text)
        out.append(per_doc[id(span.doc)])
    return out


__all__ = ["held_out_of"]

"""AIDA with coreference clusters formed from the entity links (the "AIDA+" idea).

Zaporojets et al. (2022) annotate AIDA with coreference clusters (AIDA+). That annotation is not in
``../shared/data``, so we derive clusters from what AIDA has: the mentions of a document linked to
the same KB id form one cluster, and NIL mentions (``kb_id_`` ``"NIL"`` or ``""``) with the same
surface text form one cluster. Pronouns and nominal mentions are not annotated in AIDA, so the
clusters hold named mentions only; that is what a model trained on them learns to output.
"""
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

from spacy.language import Language
from spacy.tokens import Doc, DocBin

from ..errors import Errors
from ..extensions import NIL, NO_LINK, set_clusters


def entity_clusters(doc: Doc) -> List[List[Tuple[int, int]]]:
    """Clusters of ``doc.ents`` token offsets: same KB id, or NIL with the same text; in document order."""
    groups: Dict[Tuple[str, str], List[Tuple[int, int]]] = defaultdict(list)
    for ent in doc.ents:
        key = ("nil", ent.text) if ent.kb_id_ in (NO_LINK, NIL) else ("kb", ent.kb_id_)
        groups[key].append((ent.start, ent.end))
    return list(groups.values())


def with_entity_clusters(doc: Doc) -> Doc:
    """``doc`` with :func:`entity_clusters` written as its coreference clusters (in place)."""
    set_clusters(doc, entity_clusters(doc))
    return doc


def read_aida_plus(path: Path, nlp: Language) -> List[Doc]:
    """The docs of a converted AIDA split (``corpus/aida/<split>.spacy``) with entity clusters."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(Errors.E601.format(path=path))
    return [with_entity_clusters(doc) for doc in DocBin().from_disk(path).get_docs(nlp.vocab)]


__all__ = ["entity_clusters", "with_entity_clusters", "read_aida_plus"]

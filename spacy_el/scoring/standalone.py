"""The Standalone baseline of Zaporojets et al. (2022): a resolver and a linker trained apart, composed.

The coreference model (``joint_coref_linker`` in mode ``coref``) gives the clusters; the EL model (mode
``link``) links every mention on its own. Each cluster mention gets the link model's link for the same span
(NIL where it found no such mention), and the link model's linked mentions outside every cluster are added as
singletons. A cluster whose mentions got different links can never be right for ELh, as the paper counts it.
"""
from typing import Callable, List, Sequence

from spacy.tokens import Doc, Span

from ..extensions import NIL, cluster_keys, get_clusters, is_linked, set_clusters


def set_mention_links(doc: Doc, kb_id_of: Callable[[Span], str]) -> None:
    """Give every cluster mention of ``doc`` the link ``kb_id_of(span)``. The groups are reassigned: a ``kb_id_``
    set on a span read from a group does not reach the group."""
    for key in cluster_keys(doc):
        doc.spans[key] = [Span(doc, s.start, s.end, kb_id=kb_id_of(s)) for s in doc.spans[key]]


def standalone(coref_docs: Sequence[Doc], link_docs: Sequence[Doc]) -> List[Doc]:
    """Copies of ``coref_docs`` (the resolver's predictions) whose mentions carry the links of ``link_docs`` (the
    linker's predictions on the same texts, token for token), the linker's other linked mentions added as
    singleton clusters."""
    result = []
    for coref_doc, link_doc in zip(coref_docs, link_docs):
        links = {(s.start, s.end): s.kb_id_ for key in cluster_keys(link_doc) for s in link_doc.spans[key]}
        copy = coref_doc.copy()
        clusters = get_clusters(copy)
        covered = {m for cluster in clusters for m in cluster}
        clusters += [[m] for m, kb_id in links.items() if m not in covered and is_linked(kb_id)]
        set_clusters(copy, clusters)
        set_mention_links(copy, lambda s: links.get((s.start, s.end), NIL))
        result.append(copy)
    return result

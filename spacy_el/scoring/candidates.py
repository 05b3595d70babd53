"""Candidate generation recall@k.

For each InKB gold mention, a candidate generator returns a ranked list of KB ids (best
first). recall@k is the fraction of those mentions whose gold id is among the first k
candidates. Mentions whose gold id is NIL or empty are skipped: a NIL mention has no correct
candidate. A ranking shorter than k is simply searched in full.

The KB-level metrics below (``alias_table_recall``, ``has_own_candidate``, ``mate_only_mentions``)
take any KB with ``lookup(text, top_k, fuzzy)`` and docs with ``ents``/``spans``; they import neither
spaCy nor the KB, so this module stays pure.
"""
from collections import defaultdict
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..errors import Errors
from ..extensions import NIL, is_linked
from .prf import safe_div

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from ..kb import ElKnowledgeBase

DEFAULT_KS = (1, 10, 30, 100)


def candidate_recall_at_k(
    ranked_candidates: Sequence[Sequence[str]],
    gold_ids: Sequence[Optional[str]],
    ks: Iterable[int] = DEFAULT_KS,
    *,
    nil_id: str = NIL,
) -> Dict[str, float]:
    """`cand_recall_at_{k}` for each k; 0.0 for every k when there is no InKB gold mention.

    ranked_candidates[i] is the ranked id list of mention i, gold_ids[i] its gold id.
    """
    ks = list(ks)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(Errors.E049.format(k=k))
    if isinstance(ranked_candidates, str):
        raise TypeError(Errors.E050)
    if len(ranked_candidates) != len(gold_ids):
        raise ValueError(Errors.E051.format(n_lists=len(ranked_candidates), n_gold=len(gold_ids)))
    hits = {k: 0 for k in ks}
    total = 0
    for candidates, gold in zip(ranked_candidates, gold_ids):
        if not is_linked(gold, nil_id):
            continue
        if isinstance(candidates, str):
            raise TypeError(Errors.E052.format(gold=gold))
        total += 1
        candidates = list(candidates)
        # Rank of the gold id (first occurrence); a miss never counts for any k.
        rank = candidates.index(gold) + 1 if gold in candidates else None
        for k in ks:
            if rank is not None and rank <= k:
                hits[k] += 1
    return {f"cand_recall_at_{k}": safe_div(hits[k], total) for k in ks}


def linked_mentions(docs: Iterable["Doc"], spans_key: str = "", names_only: bool = False) -> Iterator[Tuple[str, str]]:
    """(mention text, kb id) of every gold linked (non-NIL) mention in ``doc.ents`` or ``doc.spans[spans_key]``.

    names_only: skip mentions without an upper-case letter (pronouns, common-noun phrases).
    """
    for doc in docs:
        for span in doc.spans[spans_key] if spans_key else doc.ents:
            if not is_linked(span.kb_id_):
                continue
            if names_only and not any(c.isupper() for c in span.text):
                continue
            yield span.text, span.kb_id_


def alias_table_recall(
    kb: "ElKnowledgeBase", mentions: Sequence[Tuple[str, str]], ks: Sequence[int] = DEFAULT_KS
) -> Dict[str, float]:
    """``cand_recall_at_K`` of the KB's alias lookup for (mention text, gold kb id) pairs."""
    ranked = [[hit.entity_id for hit in kb.lookup(text, top_k=max(ks))] for text, _ in mentions]
    return candidate_recall_at_k(ranked, [kb_id for _, kb_id in mentions], ks)


def has_own_candidate(kb: "ElKnowledgeBase", texts: Sequence[str], kb_id: str, top_k: int = 16) -> List[bool]:
    """Per mention text: is ``kb_id`` among its own ``top_k`` exact alias candidates (no fuzzy tier, as
    ``joint_coref_linker`` looks them up)?"""
    return [any(hit.entity_id == kb_id for hit in kb.lookup(text, top_k=top_k, fuzzy=False)) for text in texts]


def mate_only_mentions(kb: "ElKnowledgeBase", docs: Iterable["Doc"], top_k: int = 16) -> Dict[str, int]:
    """The paper's Table 4 cases among the gold linked mentions of ``doc.ents``, with AIDA+-style
    clusters (the mentions of one doc linked to one entity).

    Returns ``{"mate_only": n, "in_linked_clusters": n}``: the mentions whose own ``top_k`` exact
    alias candidates (what ``joint_coref_linker`` scores) lack their gold entity while another mention
    of their cluster has it, and all mentions of linked clusters of two or more mentions.
    """
    counts = {"mate_only": 0, "in_linked_clusters": 0}
    for doc in docs:
        clusters: Dict[str, List[str]] = defaultdict(list)
        for span in doc.ents:
            if is_linked(span.kb_id_) and span.kb_id_ in kb:
                clusters[span.kb_id_].append(span.text)
        for kb_id, texts in clusters.items():
            if len(texts) < 2:
                continue
            has = has_own_candidate(kb, texts, kb_id, top_k)
            counts["in_linked_clusters"] += len(texts)
            if any(has):
                counts["mate_only"] += has.count(False)
    return counts

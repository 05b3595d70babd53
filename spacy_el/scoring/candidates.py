"""Candidate generation recall@k.

For each InKB gold mention, a candidate generator returns a ranked list of KB ids (best
first). recall@k is the fraction of those mentions whose gold id is among the first k
candidates. Mentions whose gold id is NIL or empty are skipped: a NIL mention has no correct
candidate. A ranking shorter than k is simply searched in full.
"""
from typing import Dict, Iterable, Optional, Sequence

from .el import NIL_ID, is_in_kb
from .prf import safe_div

DEFAULT_KS = (1, 10, 30, 100)


def candidate_recall_at_k(
    ranked_candidates: Sequence[Sequence[str]],
    gold_ids: Sequence[Optional[str]],
    ks: Iterable[int] = DEFAULT_KS,
    *,
    nil_id: str = NIL_ID,
) -> Dict[str, float]:
    """`cand_recall_at_{k}` for each k; 0.0 for every k when there is no InKB gold mention.

    ranked_candidates[i] is the ranked id list of mention i, gold_ids[i] its gold id.
    """
    ks = list(ks)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
    if isinstance(ranked_candidates, str):
        raise TypeError("ranked_candidates must be a sequence of id lists, not a string")
    if len(ranked_candidates) != len(gold_ids):
        raise ValueError(
            f"got {len(ranked_candidates)} candidate lists for {len(gold_ids)} gold ids"
        )
    hits = {k: 0 for k in ks}
    total = 0
    for candidates, gold in zip(ranked_candidates, gold_ids):
        if not is_in_kb(gold, nil_id):
            continue
        if isinstance(candidates, str):
            raise TypeError(f"candidate list for gold {gold!r} is a string, expected a list of ids")
        total += 1
        candidates = list(candidates)
        # Rank of the gold id (first occurrence); a miss never counts for any k.
        rank = candidates.index(gold) + 1 if gold in candidates else None
        for k in ks:
            if rank is not None and rank <= k:
                hits[k] += 1
    return {f"cand_recall_at_{k}": safe_div(hits[k], total) for k in ks}

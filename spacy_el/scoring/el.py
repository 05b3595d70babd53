"""End-to-end entity linking metrics (strong matching, InKB only) and disambiguation accuracy.

A linked mention is a triple `(start, end, kb_id)`; `start`/`end` may be character or token
offsets as long as gold and predictions use the same kind. `kb_id` follows the project
convention: a KB id, `"NIL"` for a NIL mention, `""` (or None) for "no link annotation".

Rules (GERBIL's A2KB "InKB" setting, strong annotation matching):

* A prediction is correct only if its span matches a gold span exactly AND its KB id is the
  gold KB id.
* Gold mentions whose id is NIL or empty are ignored (neither found nor missed).
* Predictions of NIL or empty are not predictions. A predicted KB id at a span whose gold is
  NIL (or that has no gold mention) is a false positive.
* Identical duplicates collapse to one mention; one span carrying two different ids on the same
  side is ambiguous input and raises ValueError.

Micro P/R/F1 sum tp/fp/fn over all documents; macro P/R/F1 average the per-document P, R and
F1 (macro F1 is the mean of document F1s, not the F1 of macro P and R), as GERBIL does. Both
use GERBIL's rule that a document with no InKB gold mention and no InKB prediction scores
P = R = F1 = 1 (see `Counts.gerbil_prf`). An empty document list scores 0.0 everywhere.
"""
from typing import Dict, Hashable, Iterable, List, Optional, Sequence, Tuple

from ..errors import Errors
from ..extensions import NIL
from .prf import Counts, PRF, prf_dict, safe_div


LinkedMention = Tuple[int, int, Optional[str]]
SpanKey = Tuple[Hashable, Hashable]
DocLinks = Tuple[Iterable[LinkedMention], Iterable[LinkedMention]]



def in_kb_links(
    mentions: Iterable[LinkedMention], *, nil_id: str = NIL, side: str = "links"
) -> Dict[SpanKey, str]:
    """Map each span to its KB id, keeping InKB links only.

    Raises ValueError for a malformed mention or for one span with two different ids (NIL
    included: a span cannot be both NIL and linked).
    """
    seen: Dict[SpanKey, str] = {}
    for mention in mentions:
        if not isinstance(mention, (tuple, list)) or len(mention) != 3:
            raise ValueError(Errors.E040.format(side=side, mention=mention))
        start, end, kb_id = mention
        if not kb_id:
            continue  # no link annotation on this mention
        span = (start, end)
        previous = seen.get(span)
        if previous is not None and previous != kb_id:
            raise ValueError(Errors.E041.format(side=side, span=span, previous=previous, kb_id=kb_id))
        seen[span] = kb_id
    return {span: kb_id for span, kb_id in seen.items() if kb_id != nil_id}


def el_counts(
    gold: Iterable[LinkedMention], pred: Iterable[LinkedMention], *, nil_id: str = NIL
) -> Counts:
    """tp/fp/fn of one document under strong matching, InKB only."""
    gold_links = in_kb_links(gold, nil_id=nil_id, side="gold")
    pred_links = in_kb_links(pred, nil_id=nil_id, side="predicted")
    tp = sum(1 for span, kb_id in pred_links.items() if gold_links.get(span) == kb_id)
    return Counts(tp=tp, fp=len(pred_links) - tp, fn=len(gold_links) - tp)


def _mean_prf(values: Sequence[PRF]) -> PRF:
    n = len(values)
    return (
        sum(v[0] for v in values) / n,
        sum(v[1] for v in values) / n,
        sum(v[2] for v in values) / n,
    )


def el_scores(documents: Iterable[DocLinks], *, nil_id: str = NIL) -> Dict[str, float]:
    """Micro and macro (GERBIL) P/R/F1 of end-to-end EL over (gold, predicted) documents.

    Returns `el_micro_p/r/f` and `el_macro_p/r/f`.
    """
    per_doc: List[Counts] = [el_counts(gold, pred, nil_id=nil_id) for gold, pred in documents]
    if not per_doc:
        return {**prf_dict("el_micro", (0.0, 0.0, 0.0)), **prf_dict("el_macro", (0.0, 0.0, 0.0))}
    total = sum(per_doc, Counts())
    macro = _mean_prf([counts.gerbil_prf() for counts in per_doc])
    return {**prf_dict("el_micro", total.gerbil_prf()), **prf_dict("el_macro", macro)}


def ed_accuracy(documents: Iterable[DocLinks], *, nil_id: str = NIL) -> float:
    """Disambiguation accuracy given gold mentions.

    Fraction of InKB gold mentions whose predicted KB id at exactly the same span is the gold
    id. A missing prediction, a NIL prediction or an empty one counts as wrong; predictions at
    spans without an InKB gold mention are ignored. 0.0 when there is no InKB gold mention.
    (On end-to-end output this equals micro recall, apart from the GERBIL empty-corpus rule.)
    """
    correct = 0
    total = 0
    for gold, pred in documents:
        gold_links = in_kb_links(gold, nil_id=nil_id, side="gold")
        pred_links = in_kb_links(pred, nil_id=nil_id, side="predicted")
        total += len(gold_links)
        correct += sum(1 for span, kb_id in gold_links.items() if pred_links.get(span) == kb_id)
    return safe_div(correct, total)

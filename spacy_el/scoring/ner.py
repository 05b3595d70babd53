"""Named-entity recognition P/R/F1: exact span and label, micro over all labels and per label.

An entity is a triple `(start, end, label)`. Identical duplicates collapse to one entity; the
same span with two labels is two entities (multi-label annotation such as DWIE's is allowed).
P, R and F1 sum tp/fp/fn over documents and are 0.0 where a denominator is 0.
"""
from collections import defaultdict
from typing import Dict, Hashable, Iterable, Set, Tuple, Union

from ..errors import Errors
from .prf import Counts, prf_dict

Entity = Tuple[Hashable, Hashable, str]
DocEntities = Tuple[Iterable[Entity], Iterable[Entity]]


def _entity_set(entities: Iterable[Entity], side: str) -> Set[Entity]:
    result: Set[Entity] = set()
    for entity in entities:
        if not isinstance(entity, (tuple, list)) or len(entity) != 3:
            raise ValueError(Errors.E038.format(side=side, entity=entity))
        if not entity[2]:
            raise ValueError(Errors.E039.format(side=side, entity=entity))
        start, end, label = entity
        result.add((start, end, label))
    return result


def ner_scores(
    documents: Iterable[DocEntities],
) -> Dict[str, Union[float, Dict[str, Dict[str, float]]]]:
    """Micro `ner_p/r/f` and `ner_per_type` ({label: {"p", "r", "f"}}, spaCy's layout).

    A label appears in `ner_per_type` if it occurs in the gold or the predictions.
    """
    per_label: Dict[str, Counts] = defaultdict(Counts)
    for gold, pred in documents:
        gold_set = _entity_set(gold, "gold")
        pred_set = _entity_set(pred, "predicted")
        for entity in gold_set | pred_set:
            in_gold = entity in gold_set
            in_pred = entity in pred_set
            per_label[entity[2]] = per_label[entity[2]] + Counts(
                tp=int(in_gold and in_pred),
                fp=int(in_pred and not in_gold),
                fn=int(in_gold and not in_pred),
            )
    total = sum(per_label.values(), Counts())
    per_type = {}
    for label in sorted(per_label):
        p, r, f = per_label[label].prf()
        per_type[label] = {"p": p, "r": r, "f": f}
    return {**prf_dict("ner", total.prf()), "ner_per_type": per_type}

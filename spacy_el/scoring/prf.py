"""Precision/recall/F1 arithmetic shared by the metric modules.

Two kinds of counts are used:

* `Counts` (tp/fp/fn) for metrics that match items one-to-one (NER, EL, ELm, ELh).
* `PRCounts` (separate numerators and denominators for precision and recall) for coreference
  metrics, whose precision and recall numerators differ (B-cubed, CEAF-e, LEA).

Both are summed over documents before dividing, which is how the CoNLL-2012 reference scorer
and GERBIL's micro scores aggregate a corpus.
"""
from dataclasses import dataclass
from typing import Tuple

PRF = Tuple[float, float, float]


def safe_div(numerator: float, denominator: float) -> float:
    """`numerator / denominator`, or 0.0 when the denominator is 0 (nothing to score)."""
    return numerator / denominator if denominator else 0.0


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall; 0.0 when both are 0."""
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


@dataclass
class Counts:
    """True positives, false positives and false negatives of a set-matching metric."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def is_empty(self) -> bool:
        """True when there was nothing to find and nothing was found."""
        return self.tp == 0 and self.fp == 0 and self.fn == 0

    def prf(self) -> PRF:
        """(precision, recall, F1); 0.0 where a denominator is 0 (spaCy's convention)."""
        precision = safe_div(self.tp, self.tp + self.fp)
        recall = safe_div(self.tp, self.tp + self.fn)
        return precision, recall, f1_score(precision, recall)

    def gerbil_prf(self) -> PRF:
        """(precision, recall, F1) with GERBIL's rule for documents without any annotation.

        GERBIL (dice-group/gerbil, src/main/java/org/aksw/gerbil/evaluate/impl/
        FMeasureCalculator.java, method `calculateMeasures`, commit
        d5f87412720096189868ecb91add0165dac75e4f): if tp == 0 and also fp == 0 and fn == 0
        ("nothing to find and nothing has been found") precision = recall = F1 = 1; if tp == 0
        otherwise, all three are 0; else the usual ratios.
        """
        if self.tp == 0:
            value = 1.0 if self.is_empty else 0.0
            return value, value, value
        return self.prf()


@dataclass
class PRCounts:
    """Precision and recall as separate fractions (numerator/denominator pairs)."""

    p_num: float = 0.0
    p_den: float = 0.0
    r_num: float = 0.0
    r_den: float = 0.0

    def __add__(self, other: "PRCounts") -> "PRCounts":
        return PRCounts(
            self.p_num + other.p_num,
            self.p_den + other.p_den,
            self.r_num + other.r_num,
            self.r_den + other.r_den,
        )

    @property
    def precision(self) -> float:
        return safe_div(self.p_num, self.p_den)

    @property
    def recall(self) -> float:
        return safe_div(self.r_num, self.r_den)

    @property
    def f1(self) -> float:
        return f1_score(self.precision, self.recall)

    def prf(self) -> PRF:
        """(precision, recall, F1); 0.0 where a denominator is 0."""
        return self.precision, self.recall, self.f1


def prf_dict(prefix: str, values: PRF) -> dict:
    """`{prefix}_p`, `{prefix}_r`, `{prefix}_f` entries for a results dict."""
    precision, recall, f1 = values
    return {f"{prefix}_p": precision, f"{prefix}_r": recall, f"{prefix}_f": f1}

"""Choosing a prediction setting of a trained pipeline on a dev corpus, by the score training selected it by.

Some settings change what a trained component predicts without retraining it: ``joint_coref_linker``'s
``predict_max_antecedents`` (how many antecedents each mention is scored against) or a linker's
``similarity_weight``. :func:`tune_setting` tries each value on the dev corpus and keeps the best by the
pipeline's ``training.score_weights``: the same weighted score ``spacy train`` (and ``python -m spacy_el train``)
picked ``model-best`` by. :func:`save_pipeline` writes the pipeline with it, under a temporary name renamed into
place. ``python -m spacy_el tune`` is the command line.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.training.loop import create_evaluation_callback

from ..errors import Errors
from ..kb.files import new_dir
from ..pipeline.configure import check_settings, configurable_pipe

__all__ = ["TUNED_META", "Tuned", "kept_index", "save_pipeline", "tune_setting"]

#: The key of ``nlp.meta`` that records what was tuned, on what, and the score of every value tried.
TUNED_META = "spacy_el_tuned"


@dataclass(frozen=True)
class Tuned:
    """The outcome of :func:`tune_setting`: the value kept and each value's weighted dev score, in the order tried."""

    component: str
    setting: str
    value: Any
    scores: List[Tuple[Any, float]]
    min_gain: float = 0.0

    def meta(self, dev: str) -> Dict[str, Any]:
        return {"component": self.component, "setting": self.setting, "value": self.value, "dev": dev,
                "min_gain": self.min_gain, "scores": [[value, score] for value, score in self.scores]}


def tune_setting(nlp: Language, dev_corpus: Callable[[Language], Iterable[Example]], component: str, setting: str,
                 values: Sequence[Any], on_value: Callable[[Any, float], None] = lambda value, score: None,
                 min_gain: float = 0.0) -> Tuned:
    """Set ``component``'s ``setting`` to each of ``values`` in turn (``configure``; an unknown setting or a bad
    value is refused, naming it, before anything is scored), score the pipeline on ``dev_corpus(nlp)`` (fresh
    examples each time) by its ``training.score_weights``, and leave it with the value kept.

    ``values`` are taken as ordered from cheapest to costliest (``predict_max_antecedents``: fewer antecedents
    predict faster). Going through them in order, a value replaces the one kept so far only when it scores more
    than ``min_gain`` above it: with ``min_gain = 0`` the best value is kept (ties: the earlier one); with, say,
    ``0.005``, a costlier value must earn its cost. ``on_value`` is told each value's score as it is measured
    (progress)."""
    if not values:
        raise ValueError(Errors.E713)
    if min_gain < 0:
        raise ValueError(Errors.E714.format(min_gain=min_gain))
    pipe = configurable_pipe(nlp, component, "tune")
    if next(iter(dev_corpus(nlp)), None) is None:  # scores over no example are 0.0 for every value
        raise ValueError(Errors.E749)
    for value in values:  # every value checked before any is scored: a bad one fails at once, naming it
        check_settings(pipe, component, {setting: value}, "tune")
    weights = dict(nlp.config["training"]["score_weights"])
    evaluate = create_evaluation_callback(nlp, dev_corpus, weights)
    scores: List[Tuple[Any, float]] = []
    for value in values:
        pipe.configure(**{setting: value})
        score, _ = evaluate()
        scores.append((value, float(score)))
        on_value(value, float(score))
    kept = kept_index(scores, min_gain)
    pipe.configure(**{setting: scores[kept][0]})
    return Tuned(component, setting, scores[kept][0], scores, min_gain)


def kept_index(scores: Sequence[Tuple[Any, float]], min_gain: float = 0.0) -> int:
    """The index of the value kept of ``(value, dev score)`` pairs: going through them in order, each that beats the
    one kept so far by more than ``min_gain`` is kept instead (``min_gain = 0``: the highest score, the earliest of
    equal ones). The one rule for choosing a value on dev, for ``tune`` and for every sweep of the project."""
    kept = 0
    for i, (_, score) in enumerate(scores):
        if score > scores[kept][1] + min_gain:
            kept = i
    return kept


def save_pipeline(nlp: Language, output: Path, force: bool = False) -> None:
    """``nlp.to_disk(output)`` through a temporary folder beside it, renamed into place; an existing ``output`` is
    replaced only with ``force``."""
    output = Path(output)
    if output.exists() and not force:
        raise FileExistsError(Errors.E715.format(output=output))
    output.parent.mkdir(parents=True, exist_ok=True)
    with new_dir(output) as tmp:
        nlp.to_disk(tmp)

"""The targets of issue 30 (coreference, ELh, inference speed), read from the results files: one generated table.

Each target names the model the docs recommend for it (chosen on dev, never the best of many test rows), its
score on the whole test set and, where the test set has GUM's text-masked Reddit documents, on the documents
with text (the ``<metric>_unmasked`` row, ``spacy_el/corpora/masked.py``). A target is read on the documents
with text where that row exists: a masked document has underscores for words, so what any model predicts on it
is arbitrary, and the original GUM has text there (docs/joint_coref_linker.md, "Targets"). The whole-set figure
stands beside it, so that neither reading hides the other.

Rendered by ``python -m benchmarks.tables`` into the page ``PAGES["coref_targets"]``; no benchmark is run.
"""
import json
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from .results_io import RESULTS_DIR
from .tables import PAGES, format_value, markdown_table, result_value, update_readme_section

#: The metric suffix of a score over the documents with text (benchmarks.joint_coref_linker's ``unmasked_rows``).
UNMASKED = "_unmasked"


class Target(NamedTuple):
    """One goal of the issue and the model it is read on."""
    goal_label: str  # what is measured, for the table
    goal: float  # the score to reach
    results: str  # file name under benchmarks/results
    dataset: str
    metric: str
    system: str
    # The system whose ``train_minutes`` row times this one, when not itself; for a mean over seeds, each seed's.
    trained_as: Union[None, str, Tuple[str, ...]] = None


TARGETS: Sequence[Target] = (
    # LitBank: of the resolvers trained on two seeds, the one with the highest mean dev score (the best model's,
    # at the antecedents it was trained with): mentions of up to 16 tokens, coarse-to-fine, antecedent averaging.
    Target("LitBank test coreference average F1, mean of two seeds", 0.68, "joint_coref_linker.json",
           "litbank-test", "coref_avg_f", "coref_antecedent_averaging_converged_coarse_width16_seed_mean",
           ("coref_antecedent_averaging_converged_coarse_width16",
            "coref_antecedent_averaging_converged_coarse_width16_seed1")),
    Target("GUM test coreference average F1", 0.66, "pretrained.json", "gum-test", "coref_avg_f",
           "en_spacy_el_coref"),
    Target("GUM test coreference average F1", 0.66, "joint_coref_linker.json", "gum-test", "coref_avg_f",
           "global_converged_coarse_width16_predict_antecedents", "global_converged_coarse_width16"),
    Target("OntoGUM test coreference average F1", 0.55, "joint_coref_linker.json", "ontogum-test", "coref_avg_f",
           "coref_none_converged_coarse_predict_antecedents", "coref_none_converged_coarse"),
    Target("GUM test ELh (its own open-data KB)", 0.40, "pretrained.json", "gum-test", "elh_f", "en_spacy_el_coref"),
    Target("GUM test ELh (the evaluation KB)", 0.40, "joint_coref_linker.json", "gum-test", "elh_f",
           "global_converged_coarse_averaging_predict_antecedents", "global_converged_coarse_averaging"),
    # Speed: the ready pipeline's over the width-8 Global model with antecedent averaging, in the same run.
    Target("GUM test inference speed, relative to Global (8 tokens, averaging) in the same run", 1.0,
           "jcl_inference_speed.json", "gum-test", "speed_ratio", "en_spacy_el_coref"),
)


def _value(rows: Sequence[Dict[str, Any]], system: str, dataset: str, metric: str) -> Optional[Any]:
    """:func:`benchmarks.tables.result_value`, or None where the row is absent (a reading that may not exist)."""
    try:
        return result_value(rows, system, dataset, metric)
    except KeyError:
        return None


def target_line(target: Target, results_dir: Path = RESULTS_DIR) -> List[str]:
    """The table line of ``target``: its goal, model, both readings, whether the goal is met and the model's
    training minutes. KeyError naming the file when the model has no whole-set row."""
    path = Path(results_dir) / target.results
    rows = json.loads(path.read_text(encoding="utf8"))["rows"]
    whole = _value(rows, target.system, target.dataset, target.metric)
    if whole is None:
        raise KeyError(f"{path.name}: no row ({target.system}, {target.dataset}, {target.metric}) for the target "
                       f"{target.goal_label!r}")
    with_text = _value(rows, target.system, target.dataset, target.metric + UNMASKED)
    read = with_text if with_text is not None else whole
    return [target.goal_label, format_value(target.goal), f"`{target.system}`", score_text(whole, target.goal),
            score_text(with_text, target.goal) if with_text is not None else "–",
            "yes" if read >= target.goal else "no", minutes_text(target, rows)]


def score_text(value: float, goal: float) -> str:
    """``value`` as the tables write it, or to 4 places where that would read as the goal itself (0.6797 as
    0.680 against 0.68): the table's "met" must be visible in its figures."""
    text = format_value(value)
    return f"{value:.4f}" if text == format_value(goal) and value != goal else text


def minutes_text(target: Target, rows: Sequence[Dict[str, Any]]) -> str:
    """The training minutes of the model(s) ``target`` is read on, as recorded (wall clock, resumed runs added
    up): one figure, or for a mean over seeds each seed's that has a row, ``a / b``; "–" where none has."""
    timed = target.trained_as or target.system
    systems = (timed,) if isinstance(timed, str) else timed
    train = target.dataset.replace("-test", "-train")
    minutes = [_value(rows, system, train, "train_minutes") for system in systems]
    return " / ".join(format_value(m) for m in minutes if m is not None) or "–"


def targets_table(targets: Sequence[Target] = TARGETS, results_dir: Path = RESULTS_DIR) -> str:
    """The markdown table of ``targets``."""
    header = ["target", "goal", "model", "whole test set", "documents with text", "met", "minutes to train (each seed)"]
    return markdown_table(header, [target_line(t, results_dir) for t in targets])


def write_targets(results_dir: Path = RESULTS_DIR, page: Path = PAGES["coref_targets"]) -> None:
    """Re-render the targets table on its page."""
    update_readme_section(page, "coref_targets", targets_table(results_dir=results_dir))

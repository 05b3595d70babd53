"""Learning curves: a run's evaluations.json as results rows, its best step in the rows' notes, the curve table."""
import json
from pathlib import Path
from types import SimpleNamespace

from benchmarks import joint_coref_linker
from benchmarks.common import best_evaluation, curve_rows
from benchmarks.results_io import row
from benchmarks.tables import suffix_table
from spacy_el.training.resume import EVALUATIONS


def write_evaluations(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{"step": step, "epoch": step // 191, "seconds": seconds, "score": score,
                                 "scores": {"coref_avg_f": score, "elh_f": score / 2}}
                                for step, seconds, score in records]), encoding="utf8")
    return path


def test_curve_rows_take_several_metrics_and_the_training_set(tmp_path: Path):
    evaluations = write_evaluations(tmp_path / EVALUATIONS, [(381, 600, 0.5), (190, 300, 0.4)])
    rows = curve_rows(evaluations, "global_converged", "gum-dev", ("coref_avg_f", "elh_f"), train_dataset="gum-train")
    assert [(r["dataset"], r["metric"], r["value"]) for r in rows] == [
        ("gum-dev", "coref_avg_f@step=190", 0.4), ("gum-dev", "elh_f@step=190", 0.2), ("gum-dev", "train_minutes@step=190", 5.0),
        ("gum-dev", "coref_avg_f@step=381", 0.5), ("gum-dev", "elh_f@step=381", 0.25), ("gum-dev", "train_minutes@step=381", 10.0),
        ("gum-train", "train_minutes", 10.0)]
    assert rows[-1]["notes"] == "381 steps, wall clock with the evaluations"


def test_the_best_evaluation_is_the_latest_of_equal_scores_as_spacys_model_best(tmp_path: Path):
    evaluations = write_evaluations(tmp_path / EVALUATIONS, [(190, 1, 0.5), (381, 2, 0.6), (572, 3, 0.6), (763, 4, 0.55)])
    assert best_evaluation(evaluations)["step"] == 572
    assert best_evaluation(tmp_path / "missing.json") is None


def test_a_trained_runs_note_gives_the_best_step_and_its_minutes(tmp_path: Path):
    write_evaluations(tmp_path / EVALUATIONS, [(190, 600, 0.5), (381, 1200, 0.6), (572, 1800, 0.58)])
    (tmp_path / "model-best").mkdir()
    nlp = SimpleNamespace(config={"training": {"max_steps": 3820}}, path=tmp_path / "model-best")
    assert joint_coref_linker.training_steps(nlp) == "572 of 3,820 steps (best on dev at step 381; 30.0 min)"
    finished = SimpleNamespace(config={"training": {"max_steps": 572}}, path=tmp_path / "model-best")
    assert joint_coref_linker.training_steps(finished) == "572 steps (best on dev at step 381; 30.0 min)"
    plain = SimpleNamespace(config={"training": {"max_steps": 750}}, path=tmp_path / "elsewhere" / "model-best")
    assert joint_coref_linker.training_steps(plain) == "750 steps"


def curve_results(tmp_path: Path) -> Path:
    rows = [row("global_converged", "gum-dev", f"{metric}@step={step}", value, "")
            for step, values in ((381, (0.5, 0.3, 10.0)), (190, (0.4, 0.2, 5.0)))
            for metric, value in zip(("coref_avg_f", "elh_f", "train_minutes"), values)]
    rows.append(row("global_converged", "gum-test", "coref_avg_f", 0.6, ""))
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"rows": rows}), encoding="utf8")
    return results


def test_the_curve_table_has_a_line_per_evaluation(tmp_path: Path):
    table = suffix_table(curve_results(tmp_path), "@step=", "step", ("coref_avg_f", "elh_f", "train_minutes")).splitlines()
    assert table[0] == "| system | dataset | step | coref_avg_f | elh_f | train_minutes |"
    assert table[2:] == ["| global_converged | gum-dev | 381 | 0.500 | 0.300 | 10 |",
                         "| global_converged | gum-dev | 190 | 0.400 | 0.200 | 5 |"]

"""Learning curves (issue 30): a run's evaluations.json as results rows, its best step in the rows' notes, the
curve table and the PNG drawn from the results file."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import joint_coref_linker
from benchmarks.common import best_evaluation, curve_rows
from benchmarks.plot_curves import learning_curves, plot
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


def test_the_minutes_say_what_they_were_measured_under_where_the_evaluations_record_it(tmp_path: Path):
    evaluations = write_evaluations(tmp_path / EVALUATIONS, [(80, 500, 0.5), (160, 1000, 0.6)])
    records = json.loads(evaluations.read_text(encoding="utf8"))
    assert joint_coref_linker.training_conditions(records) == "", "runs before the conditions were recorded"
    for record, load in zip(records, (2.14, 2.46)):
        record.update(torch_threads=1, load_average=load)
    assert joint_coref_linker.training_conditions(records) == "1 torch thread, load average 2.1 to 2.5 at the evaluations"
    records[1].update(torch_threads=2, load_average=2.1)
    assert joint_coref_linker.training_conditions(records) == "1/2 torch threads, load average 2.1 at the evaluations"
    evaluations.write_text(json.dumps(records), encoding="utf8")
    (tmp_path / "model-best").mkdir()
    nlp = SimpleNamespace(config={"training": {"max_steps": 160}}, path=tmp_path / "model-best")
    assert joint_coref_linker.training_steps(nlp) == (
        "160 steps (best on dev at step 160; 16.7 min; 1/2 torch threads, load average 2.1 at the evaluations)")


def test_variant_folders_give_their_joint_models_curves(tmp_path: Path):
    write_evaluations(tmp_path / "gum-converged" / "global" / EVALUATIONS, [(190, 60, 0.5)])
    (tmp_path / "gum-converged" / "local").mkdir()  # no evaluations.json: no curve
    systems = {"global": "global_converged", "local": "local_converged"}
    rows = joint_coref_linker.learning_curve_rows(SimpleNamespace(models=str(tmp_path)), "gum-converged", systems, "gum",
                                                  joint_coref_linker.CURVE_METRICS)
    assert {r["system"] for r in rows} == {"global_converged"}
    assert [(r["dataset"], r["metric"]) for r in rows] == [
        ("gum-dev", "coref_avg_f@step=190"), ("gum-dev", "elh_f@step=190"), ("gum-dev", "train_minutes@step=190"),
        ("gum-train", "train_minutes")]


def test_a_later_seeds_models_give_their_training_minutes_not_their_curves(tmp_path: Path):
    write_evaluations(tmp_path / "litbank-converged" / "none" / EVALUATIONS, [(80, 60, 0.5)])
    write_evaluations(tmp_path / "litbank-converged-seed1" / "none" / EVALUATIONS, [(80, 300, 0.5), (160, 660, 0.6)])
    (tmp_path / "litbank-converged-seed2" / "none").mkdir(parents=True)  # no evaluations.json: no row
    rows = joint_coref_linker.seed_minutes_rows(SimpleNamespace(models=str(tmp_path)), "litbank-converged",
                                                {"none": "coref_none_converged"}, "litbank")
    assert [(r["system"], r["dataset"], r["metric"], r["value"]) for r in rows] == [
        ("coref_none_converged_seed1", "litbank-train", "train_minutes", 11.0)]


def test_a_variant_run_scores_its_refinement_models_and_their_curves_only(tmp_path: Path, monkeypatch):
    write_evaluations(tmp_path / "ontogum-converged" / "none" / EVALUATIONS, [(190, 60, 0.5)])
    (tmp_path / "ontogum").mkdir()  # the corpus's own models: not scored with --variants
    scored = []
    monkeypatch.setattr(joint_coref_linker, "score_refinement",
                        lambda args, folder, refinement, name, *rest, **kw: scored.append((folder, name)) or [])
    args = SimpleNamespace(models=str(tmp_path), variants=["converged"])
    rows = joint_coref_linker.refinement_rows(args, "ontogum", "ontogum-test", [])
    assert scored == [("ontogum-converged", f"coref_{r}_converged") for r in joint_coref_linker.REFINEMENTS]
    assert [(r["system"], r["metric"]) for r in rows] == [
        ("coref_none_converged", "coref_avg_f@step=190"), ("coref_none_converged", "train_minutes@step=190"),
        ("coref_none_converged", "train_minutes")]


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


def test_learning_curves_are_read_by_step_and_drawn(tmp_path: Path):
    rows = json.loads(curve_results(tmp_path).read_text(encoding="utf8"))["rows"]
    curves = learning_curves(rows)
    assert curves == {("global_converged", "gum-dev"): {
        "coref_avg_f": [(190, 0.4), (381, 0.5)], "elh_f": [(190, 0.2), (381, 0.3)], "train_minutes": [(190, 5.0), (381, 10.0)]}}
    assert learning_curves(rows, systems=["global"]) == {}
    pytest.importorskip("matplotlib")
    out = plot(curves, tmp_path / "docs" / "curve.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in out.parent.iterdir()] == ["curve.png"]  # no temporary file left
    with pytest.raises(ValueError, match="no learning-curve rows"):
        plot({}, tmp_path / "empty.png")


def test_minutes_axis_names_the_machine_of_each_curve():
    from benchmarks.plot_curves import hardware

    rows = [
        {"system": "a", "dataset": "gum-dev", "metric": "coref_avg_f@step=1", "value": 0.5,
         "machine": {"cpu": "x", "cores": 2, "gpu": None}},
        {"system": "b", "dataset": "litbank-dev", "metric": "coref_avg_f@step=1", "value": 0.5,
         "machine": {"cpu": "x", "cores": 16, "gpu": "NVIDIA H200"}},
        {"system": "c", "dataset": "gum-test", "metric": "coref_avg_f", "value": 0.5, "machine": {"cores": 2}},
    ]
    assert hardware(rows) == {("a", "gum-dev"): "2 CPU cores", ("b", "litbank-dev"): "1 NVIDIA H200"}

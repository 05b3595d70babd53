"""benchmarks.project_timings: workflow totals from step timings measured a few steps at a time."""
import json

import pytest

from benchmarks.project_timings import METRIC, TOTAL, timings_table, with_totals, workflow_steps
from benchmarks.results_io import merge_rerun, row


def _timed(step: str, workflow: str, minutes: float, measured: str) -> dict:
    return {**row(step, workflow, METRIC, minutes, "cpu"), "measured": measured}


def test_workflow_steps_follow_the_project_file(tmp_path):
    project = tmp_path / "project.yml"
    project.write_text("title: t\ncommands:\n  - name: a\n    script: [echo a]\n  - name: b\n    script: [echo b]\n"
                       "workflows:\n  demo:\n    - b\n    - a\n", encoding="utf8")
    assert workflow_steps("demo", project) == ["b", "a"]
    with pytest.raises(SystemExit, match="No workflow 'nope'"):
        workflow_steps("nope", project)


def test_total_only_once_every_step_is_timed():
    steps = workflow_steps("demo")
    partial = [_timed(s, "demo", 1.0, "T1") for s in reversed(steps[:3])]
    rows = with_totals(partial)
    assert [r["system"] for r in rows] == steps[:3] + [TOTAL]  # back in the workflow's order
    assert (rows[-1]["metric"], rows[-1]["value"]) == ("steps_timed", 3)
    complete = with_totals([_timed(s, "demo", 0.5, f"T{i}") for i, s in enumerate(steps)])
    total = complete[-1]
    assert (total["system"], total["metric"], total["value"]) == (TOTAL, METRIC, round(0.5 * len(steps), 1))
    assert total["measured"] == max(f"T{i}" for i in range(len(steps)))


def test_rows_of_a_workflow_project_yml_no_longer_has_are_an_error():
    rows = [_timed("kb-demo", "demo", 0.5, "T1"), _timed("old-step", "retired", 1.0, "T1")]
    with pytest.raises(SystemExit, match=r"no longer has \(retired\)"):
        with_totals(rows)


def test_retimed_step_replaces_its_row_and_updates_the_total(tmp_path):
    steps = workflow_steps("demo")
    out = tmp_path / "timings.json"
    earlier = with_totals([{**_timed(s, "demo", 1.0, "2000-01-01T00:00:00Z"), "command": "full"} for s in steps])
    out.write_text(json.dumps({"command": "full", "created": "T0", "rows": earlier}))
    rows = with_totals(merge_rerun(out, [row(steps[1], "demo", METRIC, 3.0, "cpu")], "partial"))
    assert [r["system"] for r in rows] == steps + [TOTAL]
    assert rows[1]["value"] == 3.0 and rows[1]["command"] == "partial"
    assert rows[-1]["value"] == round(len(steps) + 2.0, 1)
    assert rows[-1]["command"] == "partial"  # the total now rests on the re-timed step


def test_timing_one_workflow_leaves_the_others_totals_alone():
    demo, test = workflow_steps("demo"), workflow_steps("test")
    demo_rows = [{**_timed(s, "demo", 1.0, "T0"), "command": "demo run"} for s in demo]
    test_row = {**_timed(test[0], "test", 0.1, "T1"), "command": "test run"}
    rows = with_totals(demo_rows + [test_row])
    totals = {r["dataset"]: r for r in rows if r["system"] == TOTAL}
    assert (totals["demo"]["command"], totals["demo"]["measured"]) == ("demo run", "T0")
    assert (totals["test"]["command"], totals["test"]["measured"]) == ("test run", "T1")


def test_timings_table_shows_minutes_or_the_steps_still_untimed():
    steps = workflow_steps("demo")
    table = timings_table(with_totals([_timed(steps[0], "demo", 0.5, "2026-11-23T10:00:00Z")]))
    assert f"| demo | `{steps[0]}` | 0.5 | cpu | 2026-11-23 |" in table
    assert f"| demo | **{TOTAL}** |  | 1 of {len(steps)} steps; no total until every step has been timed |" in table


def _training_project(tmp_path, script: str):
    (tmp_path / "project.yml").write_text(
        "title: t\nvars:\n  out: training/run\ncommands:\n"
        f"  - name: train\n    script:\n      - >-\n        {script}\n  - name: convert\n    script:\n      - echo hi\n",
        encoding="utf8")
    return tmp_path


def test_a_finished_resumable_training_is_timed_from_its_own_record(tmp_path):
    from benchmarks.project_timings import recorded_training_minutes

    project = _training_project(tmp_path, "python -m spacy_el train cfg.cfg --output ${vars.out} --resume --gpu-id -1")
    run = project / "training" / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "evaluations.json").write_text(json.dumps([{"step": 0, "seconds": 30, "scores": {}},
                                                      {"step": 2655, "seconds": 6600, "scores": {}}]), encoding="utf8")
    with pytest.raises(SystemExit, match=r"has not finished \(no checkpoints/finished.json\)"):
        recorded_training_minutes("train", project)
    (run / "checkpoints" / "finished.json").write_text("{}", encoding="utf8")
    minutes, how = recorded_training_minutes("train", project)
    assert minutes == 110.0
    assert "evaluations.json (step 2,655; resumed runs added)" in how
    with pytest.raises(SystemExit, match="'convert' is not a resumable training"):
        recorded_training_minutes("convert", project)


def test_a_training_without_resume_is_not_taken_from_a_record(tmp_path):
    from benchmarks.project_timings import recorded_training_minutes

    project = _training_project(tmp_path, "python -m spacy_el train cfg.cfg --output ${vars.out}")
    with pytest.raises(SystemExit, match="'train' is not a resumable training"):
        recorded_training_minutes("train", project)

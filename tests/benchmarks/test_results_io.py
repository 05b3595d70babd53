"""benchmarks.results_io.merge_rerun: a partial benchmark rerun merged into its earlier results file."""
import json

from benchmarks.results_io import cpu_name, merge_rerun, row, this_machine


def test_rerun_rows_replace_their_pairs_in_place(tmp_path):
    out = tmp_path / "results.json"
    earlier = [row("a", "x", "m1", 1), row("a", "x", "m2", 2), row("b", "x", "m1", 3), row("a", "y", "m1", 4)]
    out.write_text(json.dumps({"command": "full", "created": "T0", "machine": {"cpu": "earlier"}, "rows": earlier}))
    merged = merge_rerun(out, [row("a", "x", "m1", 10), row("a", "x", "m2", 20), row("c", "x", "m1", 30)], "partial")
    assert [(r["system"], r["dataset"], r["metric"], r["value"]) for r in merged] == [
        ("a", "x", "m1", 10), ("a", "x", "m2", 20), ("b", "x", "m1", 3), ("c", "x", "m1", 30), ("a", "y", "m1", 4)]
    kept = [r for r in merged if r["value"] in (3, 4)]
    assert all(r["measured"] == "T0" and r["machine"] == {"cpu": "earlier"} and r["command"] == "full" for r in kept)
    new = [r for r in merged if r["value"] >= 10]
    assert all(r["command"] == "partial" and r["measured"] != "T0" and r["machine"] == this_machine() for r in new)


def test_rerun_of_some_metrics_keeps_the_others(tmp_path):
    out = tmp_path / "results.json"
    earlier = [row("a", "x", "m1", 1), row("a", "x", "speed", 5, "fp32"), row("a", "x", "speed", 6, "bf16"),
               row("b", "x", "m1", 3)]
    out.write_text(json.dumps({"command": "full", "created": "T0", "rows": earlier}))
    # without the speed rows: they stay
    merged = merge_rerun(out, [row("a", "x", "m1", 10)], "partial")
    assert [(r["metric"], r["value"]) for r in merged] == [("m1", 10), ("speed", 5), ("speed", 6), ("m1", 3)]
    # a metric's new rows replace all its earlier ones; a new metric joins its system's rows
    merged = merge_rerun(out, [row("a", "x", "speed", 50, "fp32"), row("a", "x", "m3", 7)], "partial")
    assert [(r["system"], r["metric"], r["value"]) for r in merged] == [
        ("a", "m1", 1), ("a", "speed", 50), ("a", "m3", 7), ("b", "m1", 3)]


def test_rerun_pairs_of_a_new_dataset_go_last(tmp_path):
    out = tmp_path / "results.json"
    out.write_text(json.dumps({"command": "full", "created": "T0", "rows": [row("a", "x", "m1", 1)]}))
    merged = merge_rerun(out, [row("a", "z", "m1", 2), row("b", "z", "m1", 3)], "partial")
    assert [(r["system"], r["dataset"]) for r in merged] == [("a", "x"), ("a", "z"), ("b", "z")]


def test_a_rerun_curve_replaces_the_whole_earlier_curve(tmp_path):
    out = tmp_path / "results.json"
    earlier = [row("a", "dev", f"f@step={s}", s / 10) for s in (0, 80, 160)] + [
        row("a", "dev", f"train_minutes@step={s}", s) for s in (0, 80, 160)] + [
        row("b", "dev", "f@step=160", 1.0), row("a", "test", "f", 0.5)]
    out.write_text(json.dumps({"command": "full", "created": "T0", "rows": earlier}))
    # a shorter rerun of a's f curve: its step 160 must not survive beside the new steps
    merged = merge_rerun(out, [row("a", "dev", "f@step=0", 0.0), row("a", "dev", "f@step=80", 0.9)], "partial")
    assert [(r["system"], r["dataset"], r["metric"], r["value"]) for r in merged] == [
        ("a", "dev", "f@step=0", 0.0), ("a", "dev", "f@step=80", 0.9),
        ("a", "dev", "train_minutes@step=0", 0), ("a", "dev", "train_minutes@step=80", 80),
        ("a", "dev", "train_minutes@step=160", 160),  # another metric's curve, not rerun: kept
        ("b", "dev", "f@step=160", 1.0), ("a", "test", "f", 0.5)]


def test_rerun_without_earlier_file(tmp_path):
    merged = merge_rerun(tmp_path / "missing.json", [row("a", "x", "m1", 1)], "partial")
    assert [(r["value"], r["command"]) for r in merged] == [(1, "partial")]


def test_cpu_name_adds_family_model_and_stepping_to_a_bare_vendor_name():
    info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n\nprocessor\t: 1\n"
    assert cpu_name(info) == "AMD EPYC (family 25, model 17, stepping 1)"
    assert cpu_name("model name\t: Some CPU\n") == "Some CPU"

"""The counters and document helpers of benchmarks/annotate.py (no pipeline run)."""
from benchmarks.annotate import interleave, lost_and_duplicated, output_ids
from spacy_el.annotate.writers import OutputDir


def test_lost_and_duplicated_counts():
    assert lost_and_duplicated(["a", "b", "c"], ["a", "b", "c"]) == (0, 0)
    assert lost_and_duplicated(["a", "b", "c"], ["a", "c"]) == (1, 0)
    assert lost_and_duplicated(["a", "b", "c"], ["a", "b", "b", "c", "c", "c"]) == (0, 3)
    assert lost_and_duplicated(["a", "b"], ["a", "x"]) == (1, 1)  # an id not in the input counts as extra


def test_output_ids_reads_records_and_errors(tmp_path):
    out = OutputDir(tmp_path / "out", "jsonl", {"test": True})
    out.open()
    out.commit(b'{"id": "1", "entities": [], "clusters": []}\n', [{"id": "2", "error": "bad"}], 2, 1)
    out.commit(b'{"id": "3", "entities": [], "clusters": []}\n', [], 1, 1)
    assert sorted(output_ids(tmp_path / "out")) == ["1", "2", "3"]


def test_interleave_takes_the_lists_in_turn():
    assert interleave([("a", "1"), ("b", "2")], [("x", "9")]) == [("a", "1"), ("x", "9"), ("b", "2")]


def test_worker_rows_report_the_peak_and_the_most_private_worker():
    from benchmarks.annotate import peak_worker_rows, speedup_row

    workers = [{"hwm": 900, "rss": 800, "shared": 600, "private": 200, "kb": {"rss": 300, "private_dirty": 0}},
               {"hwm": 700, "rss": 650, "shared": 100, "private": 550, "kb": {"rss": 200, "private_dirty": 40}}]
    rows = {r["metric"]: r["value"] for r in peak_worker_rows("local_2proc", "d", workers, "workers", "", "p")}
    assert rows == {"peak_rss_bytes": 900, "worker_private_bytes": 550, "worker_kb_private_bytes": 40}
    assert peak_worker_rows("local_2proc", "d", [], "workers", "", "p") == []
    assert speedup_row("ray_2actors", "d", 10.0, 12.0, 2, "p")["value"] == 1.2


def test_a_run_on_the_fixtures_times_each_engine_and_counts_the_kb(tiny_jcl_models, tmp_path, one_torch_thread):
    import json

    from benchmarks.annotate import main

    from .conftest import FIXTURES

    out = tmp_path / "annotate.json"
    main(["--pipeline", str(tiny_jcl_models / "gum" / "global" / "model-best"), "--data", str(FIXTURES), "--docs", "12",
          "--batch-size", "4", "--chunk-size", "5", "--kills", "0", "--no-ray", "--out", str(out)])
    rows = {(r["system"], r["metric"]): r["value"] for r in json.loads(out.read_text(encoding="utf8"))["rows"]}
    assert {("local_1proc", "docs_per_s"), ("local_2proc", "docs_per_s"), ("nlp_pipe", "docs_per_s"),
            ("local_2proc", "speedup"), ("kb", "kb_bytes")} <= set(rows)
    assert rows[("kb", "kb_bytes")] > 0

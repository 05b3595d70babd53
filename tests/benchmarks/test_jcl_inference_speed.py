"""benchmarks/jcl_inference_speed.py: its arguments, the rotating order and the rows (no model runs)."""
import pytest

from benchmarks.jcl_inference_speed import component_settings, measure, named_paths, replacing_test_set, rotations, speed_rows


def test_named_paths_keep_order(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pairs = named_paths([f"nearest={tmp_path / 'a'}", f"coarse={tmp_path / 'b'}"])
    assert [name for name, _ in pairs] == ["nearest", "coarse"]
    assert pairs[1][1] == tmp_path / "b"


@pytest.mark.parametrize("values, message", [
    (["nearest"], "expected name=path"),
    (["=x", "b=y"], "expected name=path"),
    (["a={d}", "a={d}"], "given twice"),
    (["a={d}", "b={d}/missing"], "does not exist"),
    (["a={d}"], "a baseline and at least one"),
])
def test_named_paths_refuse_bad_values(tmp_path, values, message):
    with pytest.raises(SystemExit, match=message):
        named_paths([v.format(d=tmp_path) for v in values])


def test_rotations_put_each_pipeline_first_in_turn():
    assert rotations(["a", "b", "c"], 4) == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_measure_times_every_document_by_every_pipeline_after_the_warmup():
    calls = []
    pipelines = {name: (lambda text, name=name: calls.append((name, text)) or f"{name}:{text}") for name in ("a", "b")}
    seconds, docs = measure(pipelines, ["x", "y", "z"], warmup=1)
    assert calls == [("a", "x"), ("b", "x"),  # warm-up, untimed
                     ("a", "x"), ("b", "x"), ("b", "y"), ("a", "y"), ("a", "z"), ("b", "z")]
    assert set(seconds) == {"a", "b"} and all(s > 0 for s in seconds.values())
    assert docs == {"a": ["a:x", "a:y", "a:z"], "b": ["b:x", "b:y", "b:z"]}  # in text order, whatever the turn


def test_component_settings_read_json_values_per_pipeline():
    assert component_settings(["k30.predict_max_antecedents=30", "k30.write_ents=true", "b.spans_prefix=x"],
                              ["a", "b", "k30"]) == {"k30": {"predict_max_antecedents": 30, "write_ents": True},
                                                     "b": {"spans_prefix": "x"}}


@pytest.mark.parametrize("value, message", [
    ("k30=30", "expected name.setting=value"),
    ("k30.predict_max_antecedents", "expected name.setting=value"),
    ("other.predict_max_antecedents=30", "not one of the --models names"),
])
def test_component_settings_refuse_bad_values(value, message):
    with pytest.raises(SystemExit, match=message):
        component_settings([value], ["a", "k30"])


def test_speed_rows_compare_with_the_first_pipeline():
    rows = speed_rows("litbank-test", 1000, {"nearest": 2.0, "coarse": 2.5}, "note")
    by = {(r["system"], r["metric"]): r["value"] for r in rows}
    assert by == {("nearest", "words_per_s"): 500, ("nearest", "speed_ratio"): 1.0,
                  ("coarse", "words_per_s"): 400, ("coarse", "speed_ratio"): 0.8}
    assert all(r["dataset"] == "litbank-test" for r in rows)


def test_tables_give_one_line_per_pipeline_and_how_each_test_set_ran(tmp_path):
    from benchmarks.jcl_inference_speed import NAME, write_tables
    from benchmarks.results_io import row, write_results

    rows = speed_rows("litbank-test", 1000, {"nearest": 2.0, "coarse": 2.5}, "10 documents")
    rows += [row("coarse", "litbank-test", "coref_avg_f", 0.66, "the predictions timed"),
             row("coarse", "litbank-test", "long_doc_peak_rss_mb", 900, "one 20,000-token document"),
             row("coarse", "litbank-test", "long_doc_seconds", 12.5, "one 20,000-token document")]
    results = write_results(tmp_path / "results.json", "test", rows)
    page = tmp_path / "page.md"
    page.write_text(f"before\n<!-- results:{NAME} -->\n<!-- /results:{NAME} -->\nafter\n", encoding="utf8")
    write_tables(results, page)
    text = page.read_text(encoding="utf8")
    assert "| system | dataset | words_per_s | speed_ratio | coref_avg_f | long_doc_seconds | long_doc_peak_rss_mb |" in text
    assert "| coarse | litbank-test | 400 | 0.800 | 0.660 | 12.5 | 900 |" in text
    assert "litbank-test: 10 documents." in text and "litbank-test, long document: one 20,000-token document." in text
    assert text.startswith("before\n") and text.endswith("after\n")


def test_a_run_replaces_its_test_sets_rows_and_keeps_the_others(tmp_path):
    from benchmarks.results_io import row, write_results

    out = write_results(tmp_path / "results.json", "earlier", [
        row("nearest", "litbank-test", "words_per_s", 100), row("coarse_k20", "litbank-test", "words_per_s", 120),
        row("nearest", "litbank-test", "long_doc_seconds", 9.0), row("nearest", "gum-test", "words_per_s", 300)])
    rows = replacing_test_set(out, [row("nearest", "litbank-test", "words_per_s", 110)], "litbank-test")
    assert [(r["system"], r["dataset"], r["metric"], r["value"]) for r in rows] == [
        ("nearest", "litbank-test", "words_per_s", 110), ("nearest", "gum-test", "words_per_s", 300)]


def test_a_run_on_the_fixtures_times_each_pipeline_against_the_first(tiny_jcl_models, tmp_path, one_torch_thread):
    import json

    from benchmarks.jcl_inference_speed import main

    from .conftest import FIXTURES

    model = tiny_jcl_models / "litbank" / "none" / "model-best"
    out = tmp_path / "speed.json"
    main(["--models", f"base={model}", f"k2={model}", "--set", "k2.predict_max_antecedents=2", "--dataset", "litbank-test",
          "--data", str(FIXTURES), "--warmup", "0", "--threads", "1", "--out", str(out), "--readme", str(tmp_path / "p.md")])
    rows = {(r["system"], r["metric"]): r["value"] for r in json.loads(out.read_text(encoding="utf8"))["rows"]}
    assert rows[("base", "speed_ratio")] == 1.0 and rows[("k2", "speed_ratio")] > 0
    assert {("base", "coref_avg_f"), ("k2", "coref_avg_f"), ("k2", "words_per_s")} <= set(rows)


# -- benchmarks/jcl_long_documents.py (no model runs) -------------------------------------------------------------

def test_a_book_is_the_bundled_gum_texts_cut_at_the_tokens_asked(tmp_path):
    import spacy

    from benchmarks.jcl_long_documents import book

    text = book(2500, tmp_path)  # no shared data under tmp_path: the bundled documents, repeated as needed
    assert len(spacy.blank("en").make_doc(text)) == 2500


def test_each_mode_runs_each_document_and_the_longest_gets_its_time_growth(monkeypatch, tmp_path):
    from benchmarks import jcl_long_documents as bench

    runs = []

    def fake_child(function, model, text, mode, threads, limit):
        runs.append(text)
        return {"seconds": {"a": 1.0, "b": 6.0}[text], "peak_mb": 100.0, "loaded_mb": 50.0}

    monkeypatch.setattr(bench, "in_child", fake_child)
    monkeypatch.setattr(bench, "book", lambda tokens, data: {1000: "a", 100000: "b"}[tokens])
    rows = bench.long_rows("model", [100000, 1000], ["global"], tmp_path, 1, limit_gb=20.0)
    by = {(r["system"], r["dataset"], r["metric"]): r for r in rows}
    assert runs == ["a", "b"]
    assert by[("global_sparse", "gum-joined-1k", "long_doc_peak_rss_mb")]["value"] == 100
    assert by[("global_sparse", "gum-joined-100k", "time_growth")]["value"] == pytest.approx(6.0 / 100)

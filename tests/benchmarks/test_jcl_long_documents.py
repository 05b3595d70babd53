"""benchmarks/jcl_long_documents.py: the book it reads and the rows it writes (no model runs)."""
import pytest


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

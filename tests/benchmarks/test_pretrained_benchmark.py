"""benchmarks.pretrained: the package's scores and its learning curve in one docs section."""
import json
from pathlib import Path

from benchmarks.pretrained import SYSTEM, write_tables
from benchmarks.results_io import row


def test_the_docs_section_has_the_test_scores_then_the_curve(tmp_path: Path):
    rows = [row(SYSTEM, "gum-test", "coref_avg_f", 0.61, ""), row(SYSTEM, "gum-test", "elh_f", 0.3, ""),
            row(SYSTEM, "gum-dev", "coref_avg_f@step=191", 0.5, ""), row(SYSTEM, "gum-dev", "train_minutes@step=191", 6.0, ""),
            row(SYSTEM, "gum-train", "train_minutes", 6.0, "")]
    results = tmp_path / "pretrained.json"
    results.write_text(json.dumps({"rows": rows}), encoding="utf8")
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- results:pretrained -->\n<!-- /results:pretrained -->\nafter\n", encoding="utf8")
    write_tables(results, page)
    lines = page.read_text(encoding="utf8").splitlines()
    assert lines[0] == "before" and lines[-1] == "after"
    scores = lines.index("| system | dataset | coref_avg_f | elh_f |")  # the test scores: no minutes, no curve
    assert lines[scores + 2] == f"| {SYSTEM} | gum-test | 0.610 | 0.300 |"
    curve = [line for line in lines if line.startswith(f"| {SYSTEM} | gum-dev |")]
    assert curve == [f"| {SYSTEM} | gum-dev | 191 | 0.500 |  | 6 |"]


def test_the_curve_says_when_its_dev_scores_left_the_masked_documents_out():
    from thinc.api import Config

    from benchmarks.pretrained import dev_note

    class Pipeline:  # only the config is read
        def __init__(self, dev):
            self.config = Config({"corpora": {"dev": dev}})

    assert "skip_masked" in dev_note(Pipeline({"skip_masked": True}))
    assert dev_note(Pipeline({"skip_masked": False})) == dev_note(Pipeline({})) == ""


def test_a_run_on_the_fixtures_scores_the_pipeline_on_gum_test(tiny_jcl_models, one_torch_thread):
    from benchmarks.pretrained import evaluate

    from .conftest import FIXTURES

    rows = evaluate(tiny_jcl_models / "gum" / "global" / "model-best", FIXTURES, batch_size=2, threads=1)
    metrics = {r["metric"] for r in rows if r["system"] == SYSTEM and r["dataset"] == "gum-test"}
    assert {"coref_avg_f", "elh_f", "hard_case_accuracy", "words_per_s"} <= metrics

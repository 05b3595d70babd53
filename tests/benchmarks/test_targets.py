"""benchmarks.targets: the coreference targets, read on the documents with text where a test set has masked ones."""
import json

import pytest

from benchmarks.tables import PAGES
from benchmarks.targets import TARGETS, Target, target_line, targets_table, write_targets


def _results(tmp_path, rows):
    (tmp_path / "toy.json").write_text(json.dumps({"command": "c", "created": "T", "rows": [
        {"system": s, "dataset": d, "metric": m, "value": v, "notes": ""} for s, d, m, v in rows]}), encoding="utf8")
    return tmp_path


def test_a_target_is_met_on_the_documents_with_text_and_the_whole_set_stands_beside_it(tmp_path):
    results = _results(tmp_path, [("m", "gum-test", "coref_avg_f", 0.64), ("m", "gum-test", "coref_avg_f_unmasked", 0.67),
                                  ("m", "gum-train", "train_minutes", 120.0)])
    line = target_line(Target("GUM coref", 0.66, "toy.json", "gum-test", "coref_avg_f", "m"), results)
    assert line == ["GUM coref", "0.660", "`m`", "0.640", "0.670", "yes", "120"]


def test_without_masked_documents_the_whole_set_decides(tmp_path):
    results = _results(tmp_path, [("mean", "litbank-test", "coref_avg_f", 0.676),
                                  ("seed0", "litbank-train", "train_minutes", 128.2)])
    line = target_line(Target("LitBank", 0.68, "toy.json", "litbank-test", "coref_avg_f", "mean", "seed0"), results)
    assert line[3:] == ["0.676", "–", "no", "128"]


def test_a_mean_over_seeds_gives_the_minutes_of_each_seed_that_has_them(tmp_path):
    results = _results(tmp_path, [("mean", "litbank-test", "coref_avg_f", 0.681),
                                  ("seed0", "litbank-train", "train_minutes", 128.2),
                                  ("seed1", "litbank-train", "train_minutes", 84.6)])
    both = Target("LitBank", 0.68, "toy.json", "litbank-test", "coref_avg_f", "mean", ("seed0", "seed1"))
    assert target_line(both, results)[-2:] == ["yes", "128 / 84.6"]
    one = Target("LitBank", 0.68, "toy.json", "litbank-test", "coref_avg_f", "mean", ("seed0", "seed2"))
    assert target_line(one, results)[-1] == "128"


def test_a_score_that_rounds_to_the_goal_shows_the_place_that_decides(tmp_path):
    results = _results(tmp_path, [("below", "litbank-test", "coref_avg_f", 0.6797),
                                  ("at", "litbank-test", "coref_avg_f", 0.68)])
    below = target_line(Target("LitBank", 0.68, "toy.json", "litbank-test", "coref_avg_f", "below"), results)
    assert below[3] == "0.6797" and below[5] == "no"
    at = target_line(Target("LitBank", 0.68, "toy.json", "litbank-test", "coref_avg_f", "at"), results)
    assert at[3] == "0.680" and at[5] == "yes"


def test_an_untimed_model_shows_a_dash_and_a_missing_model_names_its_file(tmp_path):
    results = _results(tmp_path, [("m", "gum-test", "elh_f", 0.41)])
    assert target_line(Target("ELh", 0.4, "toy.json", "gum-test", "elh_f", "m"), results)[-2:] == ["yes", "–"]
    with pytest.raises(KeyError, match=r"toy.json: no row \(gone, gum-test, elh_f\) for the target 'ELh'"):
        target_line(Target("ELh", 0.4, "toy.json", "gum-test", "elh_f", "gone"), results)


def test_the_published_targets_render_from_the_results_as_they_are(tmp_path):
    table = targets_table()
    assert len(table.splitlines()) == 2 + len(TARGETS)
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- results:coref_targets -->\nold\n<!-- /results:coref_targets -->\nb\n", encoding="utf8")
    write_targets(page=page)
    assert table.rstrip() in page.read_text(encoding="utf8")
    assert "<!-- results:coref_targets -->" in PAGES["coref_targets"].read_text(encoding="utf8")

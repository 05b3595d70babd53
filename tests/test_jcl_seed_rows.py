"""benchmarks/joint_coref_linker.py: which model folders are seeds and variants, and the rows averaged over seeds."""
import sys
from pathlib import Path
from types import SimpleNamespace

from .conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import joint_coref_linker  # noqa: E402
from joint_coref_linker import JOINT, joint_variant_rows, seed_folders, seed_mean_rows, seeded  # noqa: E402
from results_io import row  # noqa: E402


def test_seed_folders_in_seed_order_and_only_the_corpus_own(tmp_path: Path):
    for name in ("aida", "aida-seed10", "aida-seed2", "aida-long", "aida-seedx", "aidaplus-seed1"):
        (tmp_path / name).mkdir()
    assert seed_folders(str(tmp_path), "aida") == [("aida", 0), ("aida-seed2", 2), ("aida-seed10", 10)]
    assert seed_folders(str(tmp_path), "gum") == [("gum", 0)]


def test_seeded_names():
    assert seeded("global", 0) == "global"
    assert seeded("global", 1) == "global_seed1"


def scored(values):
    return [row("global", "aida-test", metric, value, "") for metric, value in values.items()]


def test_seed_mean_rows_average_each_metric():
    rows = seed_mean_rows("global", "aida-test", {0: scored({"elh_f": 0.6, "elm_f": 0.5}), 1: scored({"elh_f": 0.7, "elm_f": 0.6})},
                          [0, 1], ("elh_f", "elm_f"))
    assert [(r["system"], r["metric"], r["value"]) for r in rows] == [
        ("global_seed_mean", "elh_f", 0.65), ("global_seed_mean", "elm_f", 0.55)]
    assert rows[0]["notes"] == "mean over seeds 0, 1"


def test_no_seed_mean_unless_every_seed_was_scored():
    one = {0: scored({"elh_f": 0.6})}
    assert seed_mean_rows("global", "aida-test", one, [0], ("elh_f",)) == []
    assert seed_mean_rows("global", "aida-test", one, [0, 1], ("elh_f",)) == []
    # a metric one seed lacks gets no mean either
    both = {0: scored({"elh_f": 0.6, "elm_f": 0.5}), 1: scored({"elh_f": 0.7})}
    assert [r["metric"] for r in seed_mean_rows("global", "aida-test", both, [0, 1], ("elh_f", "elm_f"))] == ["elh_f"]


def test_variant_rows_come_from_the_corpus_variant_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "gum-candidate-dropout").mkdir()
    calls = []

    def fake_score_model(args, folder, system, name, dataset, gold, note, hard):
        calls.append((folder, system, name))
        return [row(name, dataset, "elh_f", 0.2, note)]

    monkeypatch.setattr(joint_coref_linker, "score_model", fake_score_model)
    args = SimpleNamespace(models=str(tmp_path))
    rows = joint_variant_rows(args, "gum", "gum-test", [], [])
    assert calls == [("gum-candidate-dropout", system, f"{system}_candidate_dropout") for system in JOINT]
    assert "gold_candidate_dropout 0.2" in rows[0]["notes"]
    # no variant folder for the corpus: no rows, no model looked up
    calls.clear()
    assert joint_variant_rows(args, "aida", "aida-test", [], []) == []
    assert calls == []


def test_refinement_variant_rows_come_from_the_corpus_variant_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "litbank-long").mkdir()
    calls = []

    def fake_score_refinement(args, folder, refinement, name, dataset, gold, trained):
        calls.append((folder, refinement, name))
        return None if folder == "litbank" else [row(name, dataset, "coref_avg_f", 0.5, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_refinement", fake_score_refinement)
    rows = joint_coref_linker.refinement_rows(SimpleNamespace(models=str(tmp_path)), "litbank", "litbank-test", [])
    refinements = joint_coref_linker.REFINEMENTS
    # the seed-0 folder is looked up (and missing: no rows, no mean), then the variant folder
    assert calls == ([("litbank", r, f"coref_{r}") for r in refinements]
                     + [("litbank-long", r, f"coref_{r}_long") for r in refinements])
    assert [r["system"] for r in rows] == [f"coref_{r}_long" for r in refinements]
    assert "more training steps" in rows[0]["notes"]

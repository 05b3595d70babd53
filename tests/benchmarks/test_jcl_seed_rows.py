"""benchmarks.joint_coref_linker: which model folders are seeds and variants, and the rows averaged over seeds."""
import json
from pathlib import Path
from types import SimpleNamespace

from benchmarks import joint_coref_linker
from benchmarks.joint_coref_linker import (JOINT, NOT_YET, SeedColumn, seed_folders, seed_mean_rows, seed_means_across_runs,
                                           seed_table, seeded)
from benchmarks.results_io import row
from spacy_el.candidates import AliasCandidates


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


def test_joint_rows_score_the_corpus_then_each_variant_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "gum-long").mkdir()
    (tmp_path / "gum-long-seed1").mkdir()  # a seed of the variant, not a variant of its own
    calls = []

    def fake_model_set_rows(args, folder, suffix, trained, dataset, gold, peers):
        calls.append((folder, suffix, trained, peers))
        return [row(f"global{suffix}", dataset, "elh_f", 0.2, trained)]

    monkeypatch.setattr(joint_coref_linker, "model_set_rows", fake_model_set_rows)
    args = SimpleNamespace(models=str(tmp_path))
    rows = joint_coref_linker.joint_rows(args, "gum", "gum-test", [])
    # only the corpus's own set gets the peers
    assert calls == [("gum", "", "trained on gum", True),
                     ("gum-long", "_long", "trained on gum with longer training", False)]
    assert [r["system"] for r in rows] == ["global", "global_long"]
    # no variant folder for the corpus: its own set only
    calls.clear()
    joint_coref_linker.joint_rows(args, "aida", "aida-test", [])
    assert [c[0] for c in calls] == ["aida"]


def test_a_variant_seed_gives_suffixed_seed_rows_and_with_seed_0_a_mean(tmp_path: Path, monkeypatch):
    (tmp_path / "gum-long-seed1").mkdir()
    calls = []

    def fake_score_model(args, folder, system, name, dataset, gold, trained, hard):
        calls.append((folder, system, name))
        return None if system != "global" else [row(name, dataset, "elh_f", 0.4, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_model", fake_score_model)
    seed0 = [row("global_long", "gum-test", "elh_f", 0.3, ""), row("global", "gum-test", "elh_f", 0.9, "")]
    rows = joint_coref_linker.joint_seed_rows(SimpleNamespace(models=str(tmp_path)), "gum-long", "_long",
                                              "trained on gum with longer training", "gum-test", [], [])
    assert calls == [("gum-long-seed1", system, f"{system}_long_seed1") for system in JOINT]
    assert [(r["system"], r["value"]) for r in rows] == [("global_long_seed1", 0.4)]
    assert rows[0]["notes"] == "trained on gum with longer training, seed 1"
    means = seed_means_across_runs(seed0 + rows)
    assert [(r["system"], r["value"]) for r in means] == [("global_long_seed_mean", 0.35)]


def test_a_seed_folder_with_coref_and_link_models_gives_standalone_seed_rows(tmp_path: Path, monkeypatch):
    (tmp_path / "gum-converged-seed1").mkdir()
    calls = []

    def fake_score_standalone(args, folder, name, dataset, gold, trained, hard):
        calls.append((folder, name, trained))
        return [row(name, dataset, "elh_f", 0.3, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_standalone", fake_score_standalone)
    monkeypatch.setattr(joint_coref_linker, "score_model", lambda *args: None)
    rows = joint_coref_linker.joint_seed_rows(SimpleNamespace(models=str(tmp_path)), "gum-converged", "_converged",
                                              "trained on gum", "gum-test", [], [])
    assert calls == [("gum-converged-seed1", "standalone_converged_seed1", "trained on gum, seed 1")]
    assert [(r["system"], r["value"]) for r in rows] == [("standalone_converged_seed1", 0.3)]


def test_standalone_needs_both_of_a_seeds_halves(tmp_path: Path):
    args = SimpleNamespace(models=str(tmp_path / "models"), batch_size=1, halves=tmp_path / "halves", limit=0)
    (tmp_path / "models" / "gum-converged-seed1").mkdir(parents=True)
    assert joint_coref_linker.score_standalone(args, "gum-converged-seed1", "standalone_converged_seed1", "gum-test",
                                               [], "trained on gum, seed 1", []) is None


def test_refinement_variant_rows_come_from_the_corpus_variant_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "litbank-long").mkdir()
    calls = []

    def fake_score_refinement(args, folder, refinement, name, dataset, gold, trained, report_missing=False):
        calls.append((folder, refinement, name))
        return None if folder == "litbank" else [row(name, dataset, "coref_avg_f", 0.5, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_refinement", fake_score_refinement)
    rows = joint_coref_linker.refinement_rows(SimpleNamespace(models=str(tmp_path)), "litbank", "litbank-test", [])
    refinements = joint_coref_linker.REFINEMENTS
    # the seed-0 folder is looked up (and missing: no rows, no mean), then the variant folder
    assert calls == ([("litbank", r, f"coref_{r}") for r in refinements]
                     + [("litbank-long", r, f"coref_{r}_long") for r in refinements])
    assert [r["system"] for r in rows] == [f"coref_{r}_long" for r in refinements]
    assert "longer training" in rows[0]["notes"]


def test_a_refinement_variant_seed_gives_suffixed_seed_rows(tmp_path: Path, monkeypatch):
    (tmp_path / "litbank-converged").mkdir()
    (tmp_path / "litbank-converged-seed1").mkdir()
    calls = []

    def fake_score_refinement(args, folder, refinement, name, dataset, gold, trained, report_missing=False):
        calls.append((folder, name, report_missing))
        value = 0.6 if folder.endswith("-seed1") else 0.5
        return [row(name, dataset, "coref_avg_f", value, trained)] if refinement == "none" else None

    monkeypatch.setattr(joint_coref_linker, "score_refinement", fake_score_refinement)
    args = SimpleNamespace(models=str(tmp_path), variants=["converged"])
    rows = joint_coref_linker.refinement_rows(args, "litbank", "litbank-test", [])
    trained = "trained on litbank train with training to a dev plateau (resumable, one evaluation per epoch)"
    assert [(r["system"], r["value"], r["notes"]) for r in rows] == [
        ("coref_none_converged", 0.5, trained), ("coref_none_converged_seed1", 0.6, f"{trained}, seed 1")]
    assert ("litbank-converged-seed1", "coref_entity_equalization_converged_seed1", False) in calls
    assert not any(report for _, _, report in calls)  # a variant's missing models go unmentioned


def test_the_seed_mean_averages_the_models_own_rows_not_their_antecedent_sweeps(tmp_path: Path, monkeypatch):
    (tmp_path / "litbank-converged").mkdir()
    (tmp_path / "litbank-converged-seed1").mkdir()

    def fake_score_refinement(args, folder, refinement, name, dataset, gold, trained, report_missing=False):
        if refinement != "none":
            return None
        value = 0.6 if folder.endswith("-seed1") else 0.5
        return [row(name, dataset, "coref_avg_f", value, trained),  # with --sweep-antecedents: the dev-chosen rows too
                row(f"{name}_predict_antecedents", dataset, "coref_avg_f", value + 0.1, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_refinement", fake_score_refinement)
    args = SimpleNamespace(models=str(tmp_path), variants=["converged"])
    rows = joint_coref_linker.refinement_rows(args, "litbank", "litbank-test", [])
    means = [(r["system"], r["value"]) for r in seed_means_across_runs(rows)]
    assert means == [("coref_none_converged_seed_mean", 0.55)]


def f1(system: str, value: float, dataset: str = "litbank-test") -> dict:
    return row(system, dataset, "coref_avg_f", value, "")


def test_a_seed_scored_now_joins_the_seeds_an_earlier_run_left_in_the_results(tmp_path: Path):
    """A checkout keeps the results, not the models: seed 1 trained in a later session still makes the mean with
    seed 0's row, whose model is gone."""
    out = tmp_path / "joint_coref_linker.json"
    earlier = [f1("coref_ee", 0.5), f1("coref_ee_seed1", 0.9), f1("coref_ee_seed_mean", 0.7), f1("coref_none", 0.3),
               f1("coref_ee", 0.1, "ontogum-test")]
    out.write_text(json.dumps({"rows": earlier}))
    now = [f1("coref_ee_seed1", 0.6)]  # replaces the file's seed-1 row
    means = seed_means_across_runs(now, out)
    assert [(r["system"], r["dataset"], r["value"], r["notes"]) for r in means] == [
        ("coref_ee_seed_mean", "litbank-test", 0.55, "mean over seeds 0, 1")]
    # seed 0 alone (its other seed in neither) makes none; nor do the systems this run did not score
    assert seed_means_across_runs([f1("coref_none", 0.4)], out) == []
    # without the earlier file, only this run's seeds count
    assert seed_means_across_runs(now) == []
    assert seed_means_across_runs(now, tmp_path / "missing.json") == []


def test_required_seeds_hold_back_a_mean_over_some_of_them(tmp_path: Path):
    rows = [f1("coref_ee", 0.5), f1("coref_ee_seed1", 0.6)]
    assert [r["value"] for r in seed_means_across_runs(rows)] == [0.55]
    assert seed_means_across_runs(rows, required_seeds=(0, 1, 2)) == []
    assert [r["notes"] for r in seed_means_across_runs(rows + [f1("coref_ee_seed2", 0.7)])] == ["mean over seeds 0, 1, 2"]


def test_a_variant_whose_seed_0_folder_is_gone_is_still_scored_for_its_seeds(tmp_path: Path):
    (tmp_path / "litbank-converged-coarse-seed1").mkdir()
    (tmp_path / "gum-long").mkdir()
    assert [v for v, _, _ in joint_coref_linker.variant_folders(str(tmp_path), "litbank")] == ["converged_coarse"]
    assert [v for v, _, _ in joint_coref_linker.variant_folders(str(tmp_path), "gum")] == ["long"]
    assert joint_coref_linker.variant_folders(str(tmp_path), "ontogum") == []


def test_without_seed_0_models_the_seed_rows_use_a_seed_models_hard_cases(tmp_path: Path, monkeypatch):
    pipe = SimpleNamespace(kb="the kb", candidates=AliasCandidates(top_k=16))
    monkeypatch.setattr(joint_coref_linker, "first_model", lambda args, folder: SimpleNamespace(get_pipe=lambda name: pipe))
    monkeypatch.setattr(joint_coref_linker, "find_hard_cases", lambda kb, gold, top_k: [(kb, top_k)])
    standalone_calls, calls = [], []

    def fake_score_standalone(args, folder, name, dataset, gold, trained, hard, recall_note=""):
        standalone_calls.append((folder, name, hard, recall_note))
        return None  # neither half trained nor recorded

    def fake_joint_seed_rows(args, folder, suffix, trained, dataset, gold, hard):
        calls.append((folder, suffix, hard))
        return [row(f"global{suffix}_seed1", dataset, "elh_f", 0.4, trained)]

    monkeypatch.setattr(joint_coref_linker, "score_standalone", fake_score_standalone)
    monkeypatch.setattr(joint_coref_linker, "joint_seed_rows", fake_joint_seed_rows)
    args = SimpleNamespace(models=str(tmp_path))
    rows = joint_coref_linker.model_set_rows(args, "gum-converged", "_converged", "trained on gum", "gum-test", [], peers=False)
    # seed 0's Standalone is still tried (its halves may be recorded), with the seed model's hard cases
    assert standalone_calls == [("gum-converged", "standalone_converged", [("the kb", 16)], "")]
    assert calls == [("gum-converged", "_converged", [("the kb", 16)])]
    assert [r["system"] for r in rows] == ["global_converged_seed1"]
    # no model in the folder or its seeds: no rows
    monkeypatch.setattr(joint_coref_linker, "first_model", lambda args, folder: None)
    assert joint_coref_linker.model_set_rows(args, "gum-converged", "_converged", "trained on gum", "gum-test", [],
                                             peers=False) == []


def test_seed_0_standalone_rows_come_from_its_halves_beside_the_joint_seed_rows(tmp_path: Path, monkeypatch):
    pipe = SimpleNamespace(kb="the kb", candidates=AliasCandidates(top_k=16))
    monkeypatch.setattr(joint_coref_linker, "first_model", lambda args, folder: SimpleNamespace(get_pipe=lambda name: pipe))
    monkeypatch.setattr(joint_coref_linker, "find_hard_cases", lambda kb, gold, top_k: [])
    monkeypatch.setattr(joint_coref_linker, "score_standalone",
                        lambda args, folder, name, dataset, gold, trained, hard, recall_note="":
                        [row(name, dataset, "elh_f", 0.25, trained)])
    monkeypatch.setattr(joint_coref_linker, "joint_seed_rows", lambda *args: [])
    rows = joint_coref_linker.model_set_rows(SimpleNamespace(models=str(tmp_path)), "gum-converged", "_converged",
                                             "trained on gum", "gum-test", [], peers=False)
    assert [(r["system"], r["value"]) for r in rows] == [("standalone_converged", 0.25)]


def test_first_model_looks_through_the_folder_then_its_seeds(tmp_path: Path, monkeypatch):
    args = SimpleNamespace(models=str(tmp_path))
    (tmp_path / "gum-converged-seed1").mkdir()
    assert joint_coref_linker.first_model(args, "gum-converged") is None
    loads = []
    monkeypatch.setattr(joint_coref_linker.spacy, "load", lambda path: loads.append(path) or path)
    for folder in ("gum-converged-seed1/coref", "gum-converged/link", "gum-converged/global"):
        (tmp_path / folder / "model-best").mkdir(parents=True)
    # seed 0 before the seeds; in a folder, the joint models before the halves
    assert joint_coref_linker.first_model(args, "gum-converged") == tmp_path / "gum-converged/global/model-best"


def test_seed_table_gives_each_seed_the_mean_and_the_swept_rows_and_marks_what_is_missing(tmp_path: Path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"rows": [
        row("coref_none_x", "litbank-test", "coref_avg_f", 0.6), row("coref_none_x_seed1", "litbank-test", "coref_avg_f", 0.7),
        row("coref_none_x_seed_mean", "litbank-test", "coref_avg_f", 0.65),
        row("coref_none_x_seed1_predict_antecedents", "litbank-test", "coref_avg_f", 0.71),
        row("coref_ee_x", "litbank-test", "coref_avg_f", 0.5),
        row("coref_ee_x_seed1", "gum-test", "coref_avg_f", 0.9),  # another test set: not this table's
    ]}))
    table = seed_table(results, "refinement", [("none", "coref_none_x"), ("ee", "coref_ee_x")], "litbank-test",
                       (SeedColumn("seeds", "coref_avg_f"), SeedColumn("mean", "coref_avg_f", mean=True),
                        SeedColumn("swept", "coref_avg_f", swept=True)))
    assert table.splitlines() == [
        "| refinement | seeds | mean | swept |", "|---|---|---|---|",
        f"| none | 0.600 / 0.700 | 0.650 | {NOT_YET} / 0.710 |",
        f"| ee | 0.500 / {NOT_YET} | {NOT_YET} | {NOT_YET} / {NOT_YET} |"]

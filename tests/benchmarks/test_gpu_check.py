"""benchmarks.gpu: its coreference trainings are the converged workflow's, moved to the GPU."""
import shlex
from pathlib import Path

import srsly

from benchmarks.gpu import COREF_RUNS, coref_train_command

from ..conftest import REPO_ROOT


def converged_step(name: str) -> list:
    project = srsly.read_yaml(REPO_ROOT / "projects" / "joint_coref_linker" / "project.yml")
    command = next(c for c in project["commands"] if c["name"] == name)
    return shlex.split(command["script"][0])


def option(words: list, name: str) -> str:
    return words[words.index(name) + 1]


def test_coref_runs_use_the_converged_workflows_settings():
    from benchmarks.joint_coref_linker import SINGLETONS_SCORED

    singletons = "--components.joint_coref_linker.scorer.keep_singletons"
    for corpus, dataset, folder, splits, steps, every in COREF_RUNS:
        converged = converged_step(f"train-jcl-{corpus}-converged")
        ours = coref_train_command(Path("/data"), corpus, folder, splits, steps, every, gpu_id=0, minutes=4.5,
                                   singletons=dataset in SINGLETONS_SCORED)
        for name in ("--training.max_steps", "--training.eval_frequency", "--training.patience",
                     "--components.joint_coref_linker.refinement"):
            assert option(ours, name) == option(converged, name), (corpus, name)
        # selected on dev as the test set is scored: with singletons on LitBank only
        assert (option(ours, singletons) if singletons in ours else None) == (
            option(converged, singletons) if singletons in converged else None) == (
            "true" if dataset in SINGLETONS_SCORED else None), corpus
        assert Path(option(converged, "--paths.corpus")).name == Path(folder).name
        assert option(ours, "--paths.corpus") == f"/data/{folder}"
        assert Path(option(converged, "--output")).parts[-2:] == (f"{corpus}-converged", "none")
        assert Path(option(ours, "--output")).parts[-2:] == (f"{corpus}-gpu", "none")
        assert option(ours, "--gpu-id") == "0" and option(ours, "--max-minutes") == "4.5" and "--resume" in ours


def test_ee_study_writes_the_seed_folders_that_the_benchmark_reads(tmp_path):
    from benchmarks.gpu import EE_MODELS, EE_STEPS, ee_name, ee_train_command
    from benchmarks.joint_coref_linker import seed_folders

    seed0 = ee_train_command(Path("/data"), "entity_equalization", 0, gpu_id=0, minutes=5)
    seed1 = ee_train_command(Path("/data"), "entity_equalization", 1, gpu_id=0, minutes=5)
    assert Path(option(seed0, "--output")) == EE_MODELS / "ontogum" / "entity_equalization"
    assert Path(option(seed1, "--output")) == EE_MODELS / "ontogum-seed1" / "entity_equalization"
    assert option(seed1, "--system.seed") == "1" and option(seed1, "--training.max_steps") == str(EE_STEPS)
    for folder in ("ontogum", "ontogum-seed1"):
        (tmp_path / folder).mkdir()
    assert seed_folders(str(tmp_path), "ontogum") == [("ontogum", 0), ("ontogum-seed1", 1)]
    assert ee_name("coref_entity_equalization_mean_seed1") == "coref_entity_equalization_mean_converged_gpu_seed1"
    assert ee_name("coref_entity_equalization_seed_mean") == "coref_entity_equalization_converged_gpu_seed_mean"
    assert ee_name("coref_none") == "coref_none_converged_gpu"


def test_systems_study_trains_each_mode_into_its_seed_folder():
    from benchmarks.gpu import SYSTEMS_MODELS, SYSTEMS_RUNS, systems_name, systems_train_command

    assert {mode for mode, _ in SYSTEMS_RUNS} == {"global", "local", "coref", "link"}  # coref + link: Standalone
    local1 = systems_train_command(Path("/data"), "local", 1, gpu_id=0, minutes=5)
    assert Path(option(local1, "--output")) == SYSTEMS_MODELS / "gum-seed1" / "local"
    assert option(local1, "--components.joint_coref_linker.mode") == "local" and option(local1, "--system.seed") == "1"
    assert option(local1, "--paths.kb") == "kb/pretrained"
    assert [systems_name(s) for s in ("global", "local_seed1", "standalone", "global_seed_mean", "prior_only")] == [
        "global_converged_gpu", "local_converged_gpu_seed1", "standalone_converged_gpu", "global_converged_gpu_seed_mean",
        "prior_only"]


def test_model_study_changes_one_model_setting_per_training_of_the_ee_studys_none():
    from benchmarks.gpu import EE_STEPS, MODEL_MODELS, MODEL_VARIANTS, ee_train_command, model_train_command

    baseline = ee_train_command(Path("/data"), "none", 0, gpu_id=0, minutes=6)
    for variant, changes in MODEL_VARIANTS.items():
        ours = model_train_command(Path("/data"), variant, gpu_id=0, minutes=6)
        assert Path(option(ours, "--output")) == MODEL_MODELS / f"ontogum-{variant}" / "none"
        assert option(ours, "--training.max_steps") == str(EE_STEPS)
        changed = {name: option(ours, f"--components.joint_coref_linker.model.{name}") for name in changes}
        assert changed == {name: str(value) for name, value in changes.items()}
        # apart from the output folder, the seed (0 either way) and the changed settings, it is the EE study's run
        ignored = {"--output", "--system.seed", *(f"--components.joint_coref_linker.model.{name}" for name in changes)}
        assert without(ours, ignored) == without(baseline, ignored)


def without(command: list, names: set) -> list:
    """``command`` without the options ``names`` and their values."""
    kept, skip = [], False
    for word in command:
        if skip:
            skip = False
        elif word in names:
            skip = True
        else:
            kept.append(word)
    return kept


def test_parity_rows_tell_decisions_from_scores():
    from benchmarks.gpu import compare_rows

    path = "training/test/joint_coref_linker/model-best"
    ent = {"start": 0, "end": 5, "label": "PER", "kb_id": "Q1", "nil_prob": 0.25, "candidate_scores": [0.5], "link_score": 0.5}
    doc = {"ents": [ent], "spans": {"coref_clusters_1": [ent]}, "passages": [[0, 10, ["Q1"], [0.7]]]}
    noisy = {"ents": [{**ent, "nil_prob": 0.2500001}], "spans": {"coref_clusters_1": [ent]}, "passages": [[0, 10, ["Q1"], [0.7000001]]]}
    other = {**doc, "ents": [{**ent, "kb_id": "Q2"}]}
    rows = compare_rows({"pipelines": {path: [doc, doc, doc]}, "on_gpu": {path: 1.0}},
                        {"pipelines": {path: [doc, noisy, other]}, "on_gpu": {}}, gpu_id=0)
    values = {r["metric"]: r["value"] for r in rows}
    assert values["gpu_params_on_gpu"] == 1.0
    assert values["gpu_cpu_same_decisions"] == round(2 / 3, 4)
    assert values["gpu_cpu_identical_docs"] == round(1 / 3, 4)
    assert 0 < values["gpu_cpu_max_score_diff"] < 1e-5


def test_seed_means_join_a_seed_run_to_the_other_seeds_rows_in_the_results_file(tmp_path):
    """One seed a session: the means are made once the merged file holds every seed, never from some."""
    import json

    from benchmarks.gpu import seed_means_across_runs
    from benchmarks.results_io import row

    def f1(system: str, value: float) -> dict:
        return row(system, "ontogum-test", "coref_avg_f", value, "")

    out = tmp_path / "gpu.json"
    seed0 = [f1("coref_none_converged_gpu", 0.5), f1("coref_entity_equalization_converged_gpu", 0.4)]
    assert seed_means_across_runs(out, seed0, "ee") == []
    out.write_text(json.dumps({"rows": seed0 + [f1("coref_none_converged_gpu_seed1", 0.9)]}))
    seed1 = [f1("coref_none_converged_gpu_seed1", 0.6)]  # replaces the file's seed-1 row
    means = seed_means_across_runs(out, seed1, "ee")
    assert [(r["system"], r["value"]) for r in means] == [("coref_none_converged_gpu_seed_mean", 0.55)]
    assert means[0]["notes"] == "mean over seeds 0, 1"


def test_seeds_must_be_the_studys():
    import argparse

    import pytest

    from benchmarks.gpu import study_seeds

    assert study_seeds("1") == [1] and study_seeds("0,1") == [0, 1]
    for bad in ("2", "a", "", "0,x"):
        with pytest.raises(argparse.ArgumentTypeError, match="seeds of 0, 1"):
            study_seeds(bad)

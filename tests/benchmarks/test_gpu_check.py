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
    for corpus, _, folder, splits, steps, every in COREF_RUNS:
        converged = converged_step(f"train-jcl-{corpus}-converged")
        ours = coref_train_command(Path("/data"), corpus, folder, splits, steps, every, gpu_id=0, minutes=4.5)
        for name in ("--training.max_steps", "--training.eval_frequency", "--training.patience",
                     "--components.joint_coref_linker.refinement"):
            assert option(ours, name) == option(converged, name), (corpus, name)
        assert Path(option(converged, "--paths.corpus")).name == Path(folder).name
        assert option(ours, "--paths.corpus") == f"/data/{folder}"
        assert Path(option(converged, "--output")).parts[-2:] == (f"{corpus}-converged", "none")
        assert Path(option(ours, "--output")).parts[-2:] == (f"{corpus}-gpu", "none")
        assert option(ours, "--gpu-id") == "0" and option(ours, "--max-minutes") == "4.5" and "--resume" in ours

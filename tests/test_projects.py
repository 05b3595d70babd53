"""The root project.yml and the studies under projects/: they load, their paths lead to the repository
root from the folder spaCy runs them in, and every dependency is made by some step, is in the repository, or is
data. Fast: nothing is trained (the `test` workflow runs in tests/test_project_workflow.py)."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly
from weasel.schemas import ProjectConfigSchema, validate
from weasel.util.config import substitute_project_variables
from weasel.util.validation import validate_project_commands

from benchmarks.project_timings import step_folders, workflow_steps

from .conftest import REPO_ROOT

STUDIES = sorted(p.parent for p in (REPO_ROOT / "projects").glob("*/project.yml"))
DATA = "<data>"  # vars.data, so that paths under it are told apart whatever its value


def load(folder: Path) -> dict:
    """The project.yml of ``folder``, checked and interpolated as `spacy project run` does (without making its
    directories), with vars.data set to DATA."""
    config = srsly.read_yaml(folder / "project.yml")
    assert not validate(ProjectConfigSchema, config), folder
    validate_project_commands(config)
    return substitute_project_variables(config, {"vars.data": DATA})


def resolve(folder: Path, path: str):
    """(where, path): "data" and the path under vars.data, or "repo" and the path from the repository root."""
    if path.startswith(DATA):
        return "data", path[len(DATA):].lstrip("/")
    full = Path(os.path.normpath(folder / path))
    assert full.is_relative_to(REPO_ROOT), f"{folder.name}: {path} leads outside the repository"
    return "repo", full.relative_to(REPO_ROOT).as_posix()


def test_the_root_has_the_plain_commands_and_reads_in_a_minute():
    config = load(REPO_ROOT)
    commands = {c["name"] for c in config["commands"]}
    assert {"evaluate", "package"} <= commands
    assert {"demo", "train", "test", "all"} <= set(config["workflows"])
    assert not [c for c in commands if c.startswith(("train-jcl-", "train-ner4el-", "train-nsl-"))
                and c not in ("train-jcl-aida-global", "train-nsl-joint")], "research variants belong in projects/"
    assert len(commands) <= 43, "39, and the `pretrained` workflow's four"


def test_train_builds_the_pipeline_that_evaluate_and_package_take():
    config = load(REPO_ROOT)
    commands = {c["name"]: c for c in config["commands"]}
    made = {out for step in config["workflows"]["train"] for out in commands[step].get("outputs", [])}
    for name in ("evaluate", "package"):
        assert "training/pipelines/nsl_jcl" in commands[name]["deps"]
    assert "training/pipelines/nsl_jcl" in made


@pytest.mark.parametrize("folder", STUDIES, ids=lambda p: p.name)
def test_a_study_runs_its_commands_from_its_folder(folder):
    config = load(folder)
    own_assets = {asset["dest"] for asset in config.get("assets", [])}  # downloaded into the study's folder
    for command in config["commands"]:
        for line in command["script"]:
            words = line.split()
            bare = [w for w in words if re.match(r"(configs|training|kb|corpus|metrics|assets)/", w) and w not in own_assets]
            assert not bare, f"{command['name']}: {bare} would be read from {folder.name}/, not the root"
            assert "-m benchmarks." not in line, f"{command['name']}: use python ${{vars.root}}/benchmarks NAME"
            match = re.match(r"python -m spacy (?:train|assemble) (\S+)", line)
            if match:  # every relative path of the config is given from the root
                where, cfg = resolve(folder, match.group(1))
                text = (REPO_ROOT / cfg).read_text(encoding="utf8")
                paths = re.search(r"^\[paths\]\n(.*?)^\[", text, re.S | re.M).group(1)
                relative = re.findall(r'^(\w+) = "([^"]+)"', paths, re.M)
                missing = [k for k, _ in relative if f"--paths.{k} " not in line + " "]
                assert not missing, f"{command['name']}: give --paths.{' --paths.'.join(missing)} from the root"


def test_every_dependency_is_made_by_a_step_or_is_in_the_repository():
    made, needed = set(), []
    for folder in [REPO_ROOT] + STUDIES:
        # A project's assets are made by `spacy project assets` (with --extra for those marked extra).
        made |= {resolve(folder, asset["dest"]) for asset in load(folder).get("assets", [])}
        for command in load(folder)["commands"]:
            made |= {resolve(folder, out) for out in command.get("outputs", [])}
            needed += [(folder.name, command["name"], resolve(folder, dep)) for dep in command.get("deps", [])]
    tracked = set(subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True).stdout.split())
    for folder, name, (where, path) in needed:
        if where == "data" or (where, path) in made:
            continue
        in_repo = path in tracked or any(t.startswith(path + "/") for t in tracked) or (REPO_ROOT / path).is_file()
        assert in_repo, f"{folder}/{name}: {path} is neither made by a step nor in the repository"


def test_the_kb_study_builds_from_the_downloaded_dumps_and_benchmarks_the_synthetic_ones():
    config = load(REPO_ROOT / "projects" / "kb")
    commands = {c["name"]: c for c in config["commands"]}
    assets = {asset["dest"]: asset for asset in config["assets"]}
    from_dumps = commands["kb-from-dumps"]
    assert set(from_dumps["deps"]) == set(assets), "the dumps it reads are the study's assets"
    for dest, asset in assets.items():
        assert dest.startswith("assets/dumps/") and asset["url"].startswith("https://dumps.wikimedia.org/")
        assert asset["extra"], "downloaded only with `spacy project assets --extra`: the dumps are huge"
        assert dest in from_dumps["script"][0]
        assert subprocess.run(["git", "check-ignore", "-q", f"projects/kb/{dest}"], cwd=REPO_ROOT).returncode == 0
    assert from_dumps["script"][0].startswith("python -m spacy_el kb from-dumps ../../kb/wikipedia ")
    assert commands["bench-kb-from-dumps"]["script"] == ["python ../../benchmarks kb_from_dumps --sizes 1m"]
    assert not {"kb-from-dumps", "bench-kb-from-dumps"} & set(config["workflows"]["all"]), "hours, or downloads"


def test_all_is_train_then_every_study():
    config = load(REPO_ROOT)
    steps = workflow_steps("all")
    assert len(steps) == len(set(steps)), "step names are unique across the projects"
    folders = step_folders("all")
    assert {folders[s] for s in steps} == {REPO_ROOT, *STUDIES}, "all runs every study"
    for step, folder in folders.items():
        assert step in {c["name"] for c in load(folder)["commands"]}
    assert set(config["workflows"]["train"]) - {"assemble"} <= set(steps)


def test_study_runner_passes_an_absolute_data_folder():
    sys.path.insert(0, str(REPO_ROOT / "projects"))
    try:
        from run import study_command
    finally:
        sys.path.pop(0)
    command = study_command(["kb", "all", "--vars.data", "../shared/data", "--vars.gpu_id", "-1"])
    assert command[-6:] == ["all", str(REPO_ROOT / "projects" / "kb"), "--vars.data",
                            str(Path("../shared/data").resolve()), "--vars.gpu_id", "-1"]
    with pytest.raises(SystemExit, match="No study 'nope'"):
        study_command(["nope", "all"])


def test_dry_runs_print_the_commands(tmp_path):
    shutil.copy(REPO_ROOT / "project.yml", tmp_path)
    shutil.copytree(REPO_ROOT / "projects", tmp_path / "projects", ignore=shutil.ignore_patterns("project.lock"))
    run = lambda *args: subprocess.run([sys.executable, "-m", "spacy", "project", "run", *args, "--dry"],
                                       cwd=tmp_path, capture_output=True, text=True)
    train = run("train")
    assert train.returncode == 0, train.stderr
    assert "spacy assemble configs/pipelines/nsl_jcl.cfg training/pipelines/nsl_jcl" in train.stdout
    study = run("jcl-benchmark", "projects/joint_coref_linker")
    assert study.returncode == 0, study.stderr
    assert "benchmarks joint_coref_linker --data ../../../shared/data" in study.stdout


def test_benchmarks_run_by_path_from_a_study_folder():
    done = subprocess.run([sys.executable, "../../benchmarks", "tables", "--help"], cwd=REPO_ROOT / "projects" / "kb",
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Re-render the README and docs tables" in done.stdout


#: Issue 26: each linker's hybrid-candidate model and the step that trains its alias-table reference:
#: (study, hybrid step, folder of the reference step, reference step).
HYBRID_STEPS = [
    ("ner_constrained_linker", "train-ner4el-all-hybrid", "projects/ner_constrained_linker", "train-ner4el-all"),
    ("ner_stack_lstm", "train-nsl-joint-hybrid", ".", "train-nsl-joint"),
    ("joint_coref_linker", "train-jcl-aida-global-hybrid", ".", "train-jcl-aida-global"),
]


def train_options(folder: Path, step: str):
    """``(config, {option: value})`` of the ``spacy train`` command of ``step``: paths from the repository
    root, the config's own [paths] where the command gives none."""
    command = next(c for c in load(folder)["commands"] if c["name"] == step)
    [line] = command["script"]
    words = line.split()
    assert words[:4] == ["python", "-m", "spacy", "train"], line
    _, config = resolve(folder, words[4])
    options = dict(zip(words[5::2], words[6::2]))
    text = (REPO_ROOT / config).read_text(encoding="utf8")
    paths = re.search(r"^\[paths\]\n(.*?)^\[", text, re.S | re.M).group(1)
    for key, value in re.findall(r'^(\w+) = "([^"]+)"', paths, re.M):
        options.setdefault(f"--paths.{key}", value)
    for key, value in options.items():
        if key.startswith("--paths.") or key == "--output":
            options[key] = resolve(folder, value)[1]
    return config, options


@pytest.mark.parametrize("study, step, reference_folder, reference", HYBRID_STEPS, ids=[s[1] for s in HYBRID_STEPS])
def test_a_hybrid_step_trains_its_reference_with_hybrid_candidates_only(study, step, reference_folder, reference):
    config, options = train_options(REPO_ROOT / "projects" / study, step)
    ref_config, ref_options = train_options((REPO_ROOT / reference_folder).resolve(), reference)
    assert config == ref_config
    component = config.split("/")[-1].split(".")[0].removesuffix("_aida")
    candidates = f"--components.{component}.candidates."
    changed = {k: v for k, v in options.items() if ref_options.get(k) != v}
    assert changed.pop("--output") != ref_options["--output"]
    assert changed.pop(candidates + "@misc") == "spacy-el.HybridCandidates.v1"
    assert all(k.startswith(candidates) for k in changed), changed  # the generator's settings, nothing else
    assert set(ref_options) <= set(options)

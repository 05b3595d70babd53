"""The root project.yml and the component projects under projects/: they load and validate as spaCy's
`project run` loads them, every workflow step finds its inputs (made by an earlier step, by another project,
in the repository or under vars.data), a component project's paths lead from its folder to the repository root,
the training commands' overrides name settings of their configs, the benchmarks they call accept their options,
and `spacy project run --dry` prints the commands with the variables given. Fast: nothing is trained (the `test`
workflow runs in tests/test_project_workflow.py)."""
import contextlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
import spacy
import srsly
from spacy.cli._util import parse_config_overrides
from spacy.util import load_config
from weasel.cli.run import project_run
from weasel.schemas import ProjectConfigSchema, validate
from weasel.util.config import substitute_project_variables
from weasel.util.validation import validate_project_commands

from .conftest import REPO_ROOT

COMPONENTS = sorted(p.parent for p in (REPO_ROOT / "projects").glob("*/project.yml"))
PROJECTS = [REPO_ROOT] + COMPONENTS
DATA = "<data>"  # vars.data, so that paths under it are told apart whatever its value
#: Options of `spacy train`, `spacy_el train` and `spacy assemble` that are not config overrides (flags take no value).
RUN_OPTIONS, RUN_FLAGS = ("--output", "--gpu-id", "--code", "--max-minutes"), ("--resume", "--verbose")
TRAIN = re.compile(r"python -m (spacy|spacy_el) (train|assemble) ")
BENCHMARK = re.compile(r"python (\S+)/benchmarks (\w+)")


def load(folder: Path, overrides: Dict[str, str] = {}) -> dict:
    """The project.yml of ``folder``, checked and interpolated as `spacy project run` does (without making its
    directories), with vars.data set to DATA and the other ``overrides`` (``{"vars.mode": "local"}``)."""
    config = srsly.read_yaml(folder / "project.yml")
    assert not validate(ProjectConfigSchema, config), folder
    validate_project_commands(config)
    return substitute_project_variables(config, {"vars.data": DATA, **overrides})


def name(folder: Path) -> str:
    return "root" if folder == REPO_ROOT else folder.name


def resolve(folder: Path, path: str) -> Tuple[str, str]:
    """(where, path): "data" and the path under vars.data, or "repo" and the path from the repository root."""
    if path.startswith(DATA):
        return "data", path[len(DATA):].lstrip("/")
    full = Path(os.path.normpath(folder / path))
    assert full.is_relative_to(REPO_ROOT), f"{name(folder)}: {path} leads outside the repository"
    return "repo", full.relative_to(REPO_ROOT).as_posix()


def script_lines(folder: Path) -> Iterator[Tuple[str, str]]:
    """(command name, script line) of every command of the project in ``folder``, interpolated."""
    for command in load(folder)["commands"]:
        for line in command["script"]:
            yield command["name"], " ".join(line.split())


def made_by(folder: Path) -> Dict[Tuple[str, str], str]:
    """What the project in ``folder`` makes, (where, path) -> the command (or "assets") making it."""
    config = load(folder)
    made = {resolve(folder, asset["dest"]): "assets" for asset in config.get("assets", [])}
    for command in config["commands"]:
        made.update({resolve(folder, out): command["name"] for out in command.get("outputs", [])})
    return made


def test_the_root_has_the_workflows_users_run():
    config = load(REPO_ROOT)
    commands = {c["name"] for c in config["commands"]}
    assert {"demo", "train", "pretrained", "test"} <= set(config["workflows"])
    assert {"evaluate", "package"} <= commands


def test_train_builds_the_pipeline_that_evaluate_and_package_take():
    config = load(REPO_ROOT)
    commands = {c["name"]: c for c in config["commands"]}
    made = {out for step in config["workflows"]["train"] for out in commands[step].get("outputs", [])}
    for name in ("evaluate", "package"):
        assert "training/pipelines/nsl_jcl" in commands[name]["deps"]
    assert "training/pipelines/nsl_jcl" in made


@pytest.mark.parametrize("folder", COMPONENTS, ids=name)
def test_a_component_project_gives_every_path_from_the_repository_root(folder):
    config = srsly.read_yaml(folder / "project.yml")
    assert (folder / config["vars"]["root"]).resolve() == REPO_ROOT, "vars.root is the repository root"
    own = {asset["dest"] for asset in config.get("assets", [])}  # downloaded into the project's folder
    for command in config["commands"]:
        for path in command.get("deps", []) + command.get("outputs", []):
            assert path.startswith(("${vars.root}/", "${vars.data}")) or path in own, f"{command['name']}: {path}"
        for line in command["script"]:
            for word in shlex.split(line):
                value = word.split("=", 1)[-1]  # name=path arguments
                assert not re.match(r"(configs|training|kb|corpus|metrics|assets|benchmarks)/|benchmarks$", value) \
                    or value in own, f"{command['name']}: {value} would be read from {folder.name}/, not the root"
            assert "-m benchmarks." not in line, f"{command['name']}: use python ${{vars.root}}/benchmarks NAME"


@pytest.mark.parametrize("folder", COMPONENTS, ids=name)
def test_a_training_gives_every_relative_path_of_its_config_from_the_root(folder):
    for command, line in script_lines(folder):
        match = TRAIN.match(line)
        if match:
            _, config = resolve(folder, line.split()[4])
            paths = load_config(REPO_ROOT / config, interpolate=False)["paths"]
            relative = [k for k, v in paths.items() if isinstance(v, str) and v and not Path(v).is_absolute()]
            missing = [k for k in relative if f"--paths.{k} " not in line + " "]
            assert not missing, f"{command}: give --paths.{' --paths.'.join(missing)} from the root"


def test_every_workflow_step_finds_its_inputs():
    """A dependency is data, in the repository, or made: by an earlier step of the same workflow when its own
    project makes it, else by another project (the root's `train`, projects/baselines, ...)."""
    made = {folder: made_by(folder) for folder in PROJECTS}
    tracked = set(subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True).stdout.split())

    def in_repository(path: str) -> bool:
        return path in tracked or any(t.startswith(path + "/") for t in tracked)

    for folder in PROJECTS:
        config = load(folder)
        commands = {c["name"]: c for c in config["commands"]}
        elsewhere = {path for other, paths in made.items() if other != folder for path in paths}
        in_workflows = {step for steps in config.get("workflows", {}).values() for step in steps}
        runs = [(workflow, steps) for workflow, steps in config.get("workflows", {}).items()]
        runs += [(None, [c]) for c in commands if c not in in_workflows]  # a command run on its own
        for workflow, steps in runs:
            before = {path for path, by in made[folder].items() if by == "assets"}
            for step in steps:
                for dep in commands[step].get("deps", []):
                    where, path = resolve(folder, dep)
                    if where == "data" or (where, path) in before or in_repository(path):
                        continue
                    if (where, path) in made[folder] and (where, path) not in elsewhere and workflow is not None:
                        pytest.fail(f"{name(folder)} {workflow}: {step} needs {path}, made by the later or missing "
                                    f"step {made[folder][(where, path)]}")
                    assert (where, path) in made[folder] or (where, path) in elsewhere, \
                        f"{name(folder)}/{step}: {path} is neither made by a step nor in the repository"
                before |= {resolve(folder, out) for out in commands[step].get("outputs", [])}


def training_lines() -> Iterator[Tuple[str, Path, Dict]]:
    """(where, config, overrides) of every `spacy train`, `spacy_el train` and `spacy assemble` line."""
    for folder in PROJECTS:
        for command, line in script_lines(folder):
            if TRAIN.match(line):
                words = shlex.split(line)[4:]
                config, rest = words[0], words[1 if "train" in line.split()[3] else 2:]
                args: List[str] = []
                while rest:
                    word = rest.pop(0)
                    if word in RUN_OPTIONS:
                        rest.pop(0)
                    elif word not in RUN_FLAGS:
                        args.append(word)
                yield f"{name(folder)}/{command}", REPO_ROOT / resolve(folder, config)[1], parse_config_overrides(args)


@pytest.mark.parametrize("where, config, overrides",
                         [pytest.param(*line, id=f"{line[0]}:{i}") for i, line in enumerate(training_lines())])
def test_a_training_overrides_settings_its_config_has(where, config, overrides):
    """Each override names a value of the config file, or a setting of the component it is under (built alone
    with the overrides, as `spacy train` would build it)."""
    raw = load_config(config, interpolate=False)
    for key in overrides:
        section, *rest = key.split(".")
        if section != "components":
            node = raw
            for part in key.split("."):
                assert isinstance(node, dict) and part in node, f"{where}: {key} is not in {config.name}"
                node = node[part]
    filled = load_config(config, overrides=overrides, interpolate=True)
    nlp = spacy.blank(filled["nlp"]["lang"])
    for component in sorted({key.split(".")[1] for key in overrides if key.startswith("components.")}):
        block = dict(filled["components"][component])
        assert "source" not in block, f"{where}: {component} is sourced, its settings are the trained pipeline's"
        nlp.add_pipe(block.pop("factory"), name=component, config=block, validate=True)


def benchmark_lines() -> Iterator[Tuple[str, str, List[str]]]:
    """(where, module, options) of every `python ${vars.root}/benchmarks NAME ...` line of the projects."""
    for folder in COMPONENTS:
        for command, line in script_lines(folder):
            for match in BENCHMARK.finditer(line):
                options = [w.split("=")[0] for w in shlex.split(line[match.end():]) if w.startswith("--")]
                yield f"{folder.name}/{command}", match.group(2), options


@pytest.mark.parametrize("where, module, options",
                         [pytest.param(*line, id=f"{line[0]}:{i}") for i, line in enumerate(benchmark_lines())])
def test_a_benchmark_step_calls_a_benchmark_with_options_it_has(where, module, options, monkeypatch):
    assert (REPO_ROOT / "benchmarks" / f"{module}.py").is_file(), f"{where}: no benchmarks/{module}.py"
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    usage = io.StringIO()
    with contextlib.redirect_stdout(usage), pytest.raises(SystemExit):
        importlib.import_module(f"benchmarks.{module}").main()
    accepted = set(re.findall(r"--[\w-]+", usage.getvalue()))
    assert set(options) <= accepted, f"{where}: benchmarks.{module} has no {sorted(set(options) - accepted)}"


def dry_run(project: Path, step: str, capsys, **variables: str) -> str:
    """What `spacy project run STEP --dry` prints for the project in ``project``, with ``variables``."""
    capsys.readouterr()
    project_run(project, step, overrides={f"vars.{k}": v for k, v in variables.items()}, dry=True)
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The projects in a folder of their own: a dry run makes the root's directories."""
    root = tmp_path_factory.mktemp("repository")
    shutil.copy(REPO_ROOT / "project.yml", root)
    shutil.copytree(REPO_ROOT / "projects", root / "projects", ignore=shutil.ignore_patterns("project.lock", "assets"))
    return root


@pytest.mark.parametrize("folder", PROJECTS, ids=name)
def test_a_dry_run_prints_every_workflows_commands(folder, copy, capsys):
    project = copy / folder.relative_to(REPO_ROOT)
    config = load(folder, {"vars.data": srsly.read_yaml(folder / "project.yml")["vars"]["data"]})
    commands = {c["name"]: c for c in config["commands"]}
    for workflow, steps in config["workflows"].items():
        printed = " ".join(dry_run(project, workflow, capsys).split())
        for step in steps:
            for line in commands[step]["script"]:
                assert shlex.join(shlex.split(line)[1:]) in printed, f"{name(folder)} {workflow}: {step} not run"


def test_variables_pick_a_variant(copy, capsys):
    jcl = copy / "projects" / "joint_coref_linker"
    assert "training/jcl/gum-converged/global " in dry_run(jcl, "train", capsys)
    local = dry_run(jcl, "train", capsys, mode="local")
    assert "training/jcl/gum-converged/local " in local and "joint_coref_linker.model.mode local" in local
    ner4el = dry_run(copy / "projects" / "ner_constrained_linker", "train", capsys, name="plain", decoding="none")
    assert "training/ner4el/plain " in ner4el and "ner_constrained_linker.decoding none" in ner4el


def test_the_cli_runs_a_component_workflow_dry(copy):
    done = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "all", "projects/ner_stack_lstm", "--dry"],
                          cwd=copy, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "benchmarks ner_stack_lstm" in done.stdout


def test_benchmarks_run_by_path_from_a_project_folder():
    done = subprocess.run([sys.executable, "../../benchmarks", "tables", "--help"], cwd=REPO_ROOT / "projects" / "kb",
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_the_kb_dumps_are_extra_assets_outside_every_workflow():
    config = load(REPO_ROOT / "projects" / "kb")
    commands = {c["name"]: c for c in config["commands"]}
    assets = {asset["dest"]: asset for asset in config["assets"]}
    assert set(commands["kb-from-dumps"]["deps"]) == set(assets), "the dumps it reads are the project's assets"
    for dest, asset in assets.items():
        assert asset["extra"], "downloaded only with `spacy project assets --extra`: the dumps are huge"
        assert asset["url"].startswith("https://dumps.wikimedia.org/")
        assert subprocess.run(["git", "check-ignore", "-q", f"projects/kb/{dest}"], cwd=REPO_ROOT).returncode == 0
    in_workflows = {step for steps in config["workflows"].values() for step in steps}
    assert not {"kb-from-dumps", "bench-kb-from-dumps"} & in_workflows, "hours, or downloads"

"""Every name declared in setup.cfg's spaCy entry points resolves, without importing spacy_el first."""
import configparser
import subprocess
import sys

import pytest

from .conftest import REPO_ROOT

GROUP_TO_REGISTRY = {
    "spacy_factories": "factories",
    "spacy_architectures": "architectures",
    "spacy_readers": "readers",
    "spacy_scorers": "scorers",
    "spacy_misc": "misc",
    "spacy_callbacks": "callbacks",
}


def declared_entry_points():
    config = configparser.ConfigParser()
    config.read(REPO_ROOT / "setup.cfg")
    section = config["options.entry_points"]
    for group, registry_name in GROUP_TO_REGISTRY.items():
        for line in section.get(group, "").strip().splitlines():
            name, target = (part.strip() for part in line.split("=", 1))
            yield group, registry_name, name, target


ENTRY_POINTS = list(declared_entry_points())


def test_every_group_is_declared():
    config = configparser.ConfigParser()
    config.read(REPO_ROOT / "setup.cfg")
    assert set(GROUP_TO_REGISTRY) <= set(config["options.entry_points"])
    assert ENTRY_POINTS, "no entry points declared"


@pytest.mark.parametrize("group,registry_name,name,target", ENTRY_POINTS, ids=[e[2] for e in ENTRY_POINTS])
def test_entry_point_is_installed(group, registry_name, name, target):
    from importlib.metadata import entry_points

    installed = {ep.name: ep.value for ep in entry_points(group=group)}
    assert installed.get(name) == target, f"reinstall the package (pip install -e .): {name} not installed in {group}"


def test_registered_names_resolve_in_a_fresh_interpreter():
    """spaCy must find our functions through entry points alone, as a user's config would."""
    checks = "\n".join(
        f"assert callable(registry.{registry_name}.get({name!r})), {name!r}"
        for _, registry_name, name, _ in ENTRY_POINTS
        if registry_name != "factories"
    )
    code = f"from spacy.util import registry\n{checks}\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_factories_are_found_by_add_pipe_without_import():
    factories = [name for _, registry_name, name, _ in ENTRY_POINTS if registry_name == "factories"]
    if not factories:
        pytest.skip("no factories declared yet")
    code = "import spacy\nnlp = spacy.blank('en')\n" + "\n".join(f"nlp.add_pipe({f!r})" for f in factories)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

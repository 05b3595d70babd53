"""The package's floors hold: each room imports only rooms on its own floor or below (``FLOORS``), ``kb/`` is a
leaf, pure algorithms and metrics import neither Thinc nor torch, and each Doc convention is defined once (in
``spacy_el/extensions.py``).

Imports are read from the source with ``ast`` (module level and inside functions alike), so a lazy
import that breaks a boundary is caught too.
"""
import ast
import re
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "spacy_el"
# Modules that must not import Thinc or torch (DEVELOPERS.md, "Code layout"); spaCy-facing scorers,
# the spaCy-facing KB and the model code are not among them.
PURE_MODULES = [
    *sorted((PACKAGE / "algorithms").glob("*.py")),
    *(PACKAGE / "scoring" / f"{name}.py" for name in ("assignment", "candidates", "cluster_el", "coref", "el", "ner", "prf")),
    PACKAGE / "extensions.py",
]


# The rooms of spacy_el (a subpackage, or a top-level module), lowest first. A room may import its own floor and the
# floors below it, never one above: the KB and the Doc schema know nothing of models, models nothing of
# components, components nothing of the commands that run them.
FLOORS = [
    {"kb"},  # the leaf: also holds the coded-message mechanism and the file writer every room uses
    {"about", "errors", "extensions", "algorithms"},  # messages, the Doc schema, pure algorithms
    {"corpora", "scoring", "ml"},  # readers and metrics; the Thinc-wrapped torch models
    {"candidates", "recipes"},  # candidate generators; how this project's evaluation resources are made
    {"pipeline"},  # the spaCy components
    {"annotate", "training", "package", "visualize"},  # running, training, shipping and drawing a pipeline
    {"cli", "__main__", "__init__"},  # python -m spacy_el
]
FLOOR_OF = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}


def room_of(module: str) -> str:
    """The room of ``spacy_el.<room>[.<...>]``: its subpackage, or its top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path) -> Iterator[Tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``; relative imports are resolved."""
    package = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module


def test_every_room_is_on_a_floor():
    rooms = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
             if (path.suffix == ".py" or (path / "__init__.py").is_file())}
    assert rooms <= set(FLOOR_OF), f"place {sorted(rooms - set(FLOOR_OF))} in FLOORS"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_room_imports_no_room_above_it(path):
    module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
    floor = FLOOR_OF.get(room_of(module))
    offences = [
        f"line {line}: {imported} (floor {FLOOR_OF[room_of(imported)]})"
        for line, imported in imported_modules(path)
        if imported.startswith("spacy_el.") and FLOOR_OF.get(room_of(imported), -1) > (floor if floor is not None else 99)
    ]
    assert not offences, f"{path.relative_to(REPO_ROOT)} (floor {floor}) imports a room above it:\n" + "\n".join(offences)


def test_kb_is_a_leaf():
    offences = [
        f"{path.relative_to(REPO_ROOT)}:{line} imports {module}"
        for path in sorted((PACKAGE / "kb").rglob("*.py"))
        for line, module in imported_modules(path)
        if module.startswith("spacy_el") and not module.startswith("spacy_el.kb")
    ]
    assert not offences, "spacy_el/kb must import nothing else of the package:\n" + "\n".join(offences)


@pytest.mark.parametrize("path", PURE_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_modules_import_neither_thinc_nor_torch(path):
    offences = [
        f"line {line}: {module}"
        for line, module in imported_modules(path)
        if module.split(".")[0] in {"thinc", "torch"}
        or module.startswith(("spacy_el.ml", "spacy_el.pipeline"))
    ]
    assert not offences, f"{path.relative_to(REPO_ROOT)} must stay pure:\n" + "\n".join(offences)


@pytest.mark.parametrize("path", sorted((PACKAGE / "pipeline").glob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_components_handle_no_tensors(path):
    """The models give the components numpy arrays (``spacy_el.ml.thinc_glue``): ``spacy_el/pipeline`` never imports torch."""
    offences = [f"line {line}: {module}" for line, module in imported_modules(path) if module.split(".")[0] == "torch"]
    assert not offences, f"{path.relative_to(REPO_ROOT)} imports torch:\n" + "\n".join(offences)


@pytest.mark.parametrize(
    "pattern, what",
    [
        (r'^\s*[A-Z_]*NIL[A-Z_]*\s*=.*"NIL"', "a NIL constant"),
        (r'^\s*[A-Z_]*PREFIX[A-Z_]*\s*=\s*"coref_clusters', "the cluster prefix"),
    ],
)
def test_each_doc_convention_is_defined_once(pattern, what):
    places = [
        f"{path.relative_to(REPO_ROOT)}:{n}"
        for root in ("spacy_el", "benchmarks", "scripts")
        for path in sorted((REPO_ROOT / root).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf8").splitlines(), start=1)
        if re.match(pattern, line)
    ]
    assert places == [places[0]] and places[0].startswith("spacy_el/extensions.py"), f"{what} is defined at {places}"

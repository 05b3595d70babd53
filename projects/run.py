"""Run a workflow or command of a study under projects/ from the root project (its `study-*` commands).

    python projects/run.py STUDY STEP [--vars.NAME VALUE ...]

runs ``python -m spacy project run STEP projects/STUDY`` with the variables given. A study runs its commands
in its own folder, so a relative ``--vars.data`` (the root's ``../shared/data``) is made absolute here, from
the folder this is called in; every other variable is passed on as it is.
"""
import subprocess
import sys
from pathlib import Path
from typing import List

PROJECTS = Path(__file__).resolve().parent
PATH_VARS = ("--vars.data",)


def study_command(argv: List[str]) -> List[str]:
    if len(argv) < 2 or len(argv[2:]) % 2:
        raise SystemExit(__doc__)
    study, step, rest = argv[0], argv[1], list(argv[2:])
    folder = PROJECTS / study
    if not (folder / "project.yml").is_file():
        studies = sorted(p.parent.name for p in PROJECTS.glob("*/project.yml"))
        raise SystemExit(f"No study {study!r} under {PROJECTS}; the studies are: {', '.join(studies)}")
    for i in range(0, len(rest), 2):
        if rest[i] in PATH_VARS:
            rest[i + 1] = str(Path(rest[i + 1]).expanduser().resolve())
    return [sys.executable, "-m", "spacy", "project", "run", step, str(folder), *rest]


if __name__ == "__main__":
    sys.exit(subprocess.call(study_command(sys.argv[1:])))

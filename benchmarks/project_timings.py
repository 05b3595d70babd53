"""Wall-clock minutes of the project's workflows, step by step, on this machine.

Runs the steps of a workflow in ``project.yml`` one after another with ``python -m spacy project run
STEP [FOLDER] --force`` (forced, so that an up-to-date step is timed too) and records each step's wall-clock
minutes. A workflow's duration is the sum of its steps' (weasel runs them in sequence). A root command that
runs a study under ``projects/`` (``all``'s ``study-*``) stands for the study's own steps, each timed in
its folder.

``all`` takes longer than one working session on 2 cores, so its steps can be timed a few at a time
(``--steps``): each timed step replaces its own earlier row (``results_io.merge_rerun``), the others
stay, and every row says when, on which CPU and by which command it was measured. The workflow's
total is written only once every one of its steps has a row; until then a ``steps_timed`` row says
how many have one. A step that fails stops the run; its time is not recorded.

    python -m benchmarks.project_timings demo                                   # the whole demo
    python -m benchmarks.project_timings all --steps kb-eval train-jcl-ontogum-none

Writes ``benchmarks/results/project_timings.json`` and the table of docs/reproducing.md between
``<!-- results:project_timings -->`` markers.
"""
import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import srsly

from .results_io import RESULTS_DIR, ROOT, Row, cpu_name, merge_rerun, row, write_results
from .tables import PAGES, markdown_table, publish_table

NAME = "project_timings"
TOTAL = "(workflow total)"
METRIC = "wall_minutes"


# A root command that runs a study of projects/ (``python projects/run.py STUDY STEP ...``).
STUDY_COMMAND = re.compile(r"projects/run\.py\s+(\S+)\s+(\S+)")


def located_steps(steps: Sequence[str], project_dir: Path = ROOT) -> List[Tuple[str, Path]]:
    """``steps`` of the project in ``project_dir``, each with the folder whose project.yml defines it.

    A root command that runs a study under ``projects/`` stands for that study's steps (the steps of its
    workflow, or its one command), so a workflow's steps are the commands that actually do the work, wherever
    they are defined, and their names stay unique across the projects.
    """
    commands = {c["name"]: c for c in srsly.read_yaml(project_dir / "project.yml").get("commands", [])}
    located: List[Tuple[str, Path]] = []
    for step in steps:
        study = [m for line in commands.get(step, {}).get("script", [])
                 if (m := STUDY_COMMAND.search(" ".join(line.split())))]
        if not study:
            located.append((step, project_dir))
            continue
        study_dir = project_dir / "projects" / study[0].group(1)
        workflows = srsly.read_yaml(study_dir / "project.yml").get("workflows", {})
        name = study[0].group(2)
        located += located_steps(workflows.get(name, [name]), study_dir)
    return located


def project_workflows(project_file: Path = ROOT / "project.yml") -> Dict[str, List[str]]:
    """Every workflow of ``project.yml`` with its steps (a study's in place of the command running it), in order."""
    workflows = srsly.read_yaml(project_file).get("workflows", {})
    return {name: [s for s, _ in located_steps(steps, project_file.parent)] for name, steps in workflows.items()}


def workflow_steps(workflow: str, project_file: Path = ROOT / "project.yml") -> List[str]:
    """The steps of ``workflow`` in ``project.yml``, in order."""
    workflows = project_workflows(project_file)
    if workflow not in workflows:
        raise SystemExit(f"No workflow {workflow!r} in {project_file}; it has: {', '.join(workflows)}")
    return workflows[workflow]


def step_folders(workflow: str, project_file: Path = ROOT / "project.yml") -> Dict[str, Path]:
    """The folder whose project.yml defines each step of ``workflow``."""
    workflows = srsly.read_yaml(project_file).get("workflows", {})
    return dict(located_steps(workflows.get(workflow, []), project_file.parent))


def time_step(step: str, project_dir: Path = ROOT) -> float:
    """Run one project step (forced) and return its wall-clock minutes; exit if it fails."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "spacy", "project", "run", step, str(project_dir), "--force"], cwd=ROOT)
    minutes = (time.perf_counter() - start) / 60
    if done.returncode != 0:
        raise SystemExit(f"Step {step!r} failed (exit {done.returncode}) after {minutes:.1f} min; nothing recorded for it")
    return minutes


def total_rows(workflow: str, steps: Sequence[str], rows: Sequence[Row]) -> List[Row]:
    """The workflow's total (every step timed) or how many of its steps are timed so far (``rows``: its step rows)."""
    minutes = {r["system"]: r["value"] for r in rows if r["metric"] == METRIC}
    timed = [s for s in steps if s in minutes]
    if len(timed) < len(steps):
        return [row(TOTAL, workflow, "steps_timed", len(timed),
                    f"of {len(steps)} steps; no total until every step has been timed")]
    return [row(TOTAL, workflow, METRIC, round(sum(minutes[s] for s in steps), 1),
                f"sum of its {len(steps)} steps' wall-clock minutes")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workflow", help="a workflow of project.yml (demo, all, test)")
    parser.add_argument("--steps", nargs="+", help="time only these steps of the workflow (default: all of them, in order)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=str(PAGES[NAME]), help="the page whose table to update")
    args = parser.parse_args()
    steps = workflow_steps(args.workflow)
    chosen = args.steps or steps
    unknown = [s for s in chosen if s not in steps]
    if unknown:
        raise SystemExit(f"Not steps of the {args.workflow!r} workflow: {', '.join(unknown)}")
    machine = f"{cpu_name()}, {os.cpu_count()} cores"
    out = Path(args.out)
    command = "python -m benchmarks.project_timings " + " ".join(sys.argv[1:])
    folders = step_folders(args.workflow)
    for step in chosen:  # written after every step: a later failure keeps the earlier timings
        minutes = time_step(step, folders[step])
        print(f"{step}: {minutes:.1f} min", flush=True)
        rows = merge_rerun(out, [row(step, args.workflow, METRIC, round(minutes, 1), machine)], command)
        write_results(out, command, with_totals(rows))
    write_tables(out, Path(args.readme))


def with_totals(rows: Sequence[Row]) -> List[Row]:
    """``rows`` grouped per workflow, steps in the workflow's order, each group followed by its total rows.

    A total is as recent as its latest step row and names that row's command: re-timing a step of one
    workflow leaves the other workflows' totals as they were.
    """
    workflows = project_workflows()
    present = {r["dataset"] for r in rows}
    if present - set(workflows):
        gone = ", ".join(sorted(present - set(workflows)))
        raise SystemExit(f"The timing rows name workflows that project.yml no longer has ({gone}); remove those rows")
    steps_of = {w: steps for w, steps in workflows.items() if w in present}
    result: List[Row] = []
    for workflow, steps in steps_of.items():
        timed = sorted((r for r in rows if r["dataset"] == workflow and r["system"] != TOTAL),
                       key=lambda r: steps.index(r["system"]) if r["system"] in steps else len(steps))
        latest = max(timed, key=lambda r: r["measured"], default={})
        provenance = {"measured": latest.get("measured", ""), "command": latest.get("command", "")}
        result += timed + [{**t, **provenance} for t in total_rows(workflow, steps, timed)]
    return result


def timings_table(rows: Sequence[Row]) -> str:
    """Markdown: one line per timed step and per workflow total, minutes to one decimal."""
    lines = []
    for r in rows:
        step = f"**{r['system']}**" if r["system"] == TOTAL else f"`{r['system']}`"
        if r["metric"] == METRIC:
            where = "sum of the steps above" if r["system"] == TOTAL else r["notes"]
            lines.append([r["dataset"], step, f"{r['value']:.1f}", where, r.get("measured", "")[:10]])
        else:  # steps_timed: no total yet
            lines.append([r["dataset"], step, "", f"{r['value']} {r['notes']}", r.get("measured", "")[:10]])
    return markdown_table(["workflow", "step", "minutes", "measured on", "date"], lines)


def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Path = PAGES[NAME]) -> None:
    publish_table(readme, NAME, timings_table(srsly.read_json(results)["rows"]))


if __name__ == "__main__":
    main()

"""Frozen at commit 2cf69fc (see REPORT.md), not maintained; moved from ``benchmarks/``.

Wall-clock minutes of the project's workflows, step by step, on this machine.

Runs the steps of a workflow of ``project.yml`` one after another (``python -m spacy project run STEP [FOLDER]
--force``, so that an up-to-date step is timed too); a workflow's duration is the sum of its steps'. Steps can be
timed a few at a time (``--steps``): each replaces its own earlier row (``results_io.merge_rerun``), and the
workflow's total is written once every step has a row (until then ``steps_timed`` says how many have). With
``--recorded``, a finished resumable training (``python -m spacy_el train ... --resume``) is not run: its minutes
are those it recorded in ``DIR/evaluations.json``, resumed runs added up.

    python -m benchmarks.project_timings demo
    python -m benchmarks.project_timings pretrained --steps pretrained-train --recorded

Writes ``benchmarks/results/project_timings.json`` (the file stays there: ``python -m benchmarks.tables`` renders
its table on docs/reproducing.md).
"""
import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import srsly

from .results_io import RESULTS_DIR, ROOT, Row, cpu_name, merge_rerun, repo_relative, row, write_results
from .tables import PAGES, markdown_table, publish_table, published_only

NAME = "project_timings"
TOTAL = "(workflow total)"
METRIC = "wall_minutes"


# A resumable training, which records its own wall clock: ``python -m spacy_el train CONFIG --output DIR ... --resume``.
RESUMABLE_TRAINING = re.compile(r"-m spacy_el train\s.*?--output\s+(\S+)")


def project_workflows(project_file: Path = ROOT / "project.yml") -> Dict[str, List[str]]:
    """Every workflow of ``project.yml`` with its steps, in order."""
    return dict(srsly.read_yaml(project_file).get("workflows", {}))


def workflow_steps(workflow: str, project_file: Path = ROOT / "project.yml") -> List[str]:
    """The steps of ``workflow`` in ``project.yml``, in order."""
    workflows = project_workflows(project_file)
    if workflow not in workflows:
        raise SystemExit(f"No workflow {workflow!r} in {project_file}; it has: {', '.join(workflows)}")
    return workflows[workflow]


def step_folders(workflow: str, project_file: Path = ROOT / "project.yml") -> Dict[str, Path]:
    """The folder whose project.yml defines each step of ``workflow``: the project's own (the root workflows run
    the commands of the root project.yml; the component projects are timed in their own folders)."""
    return {step: project_file.parent for step in workflow_steps(workflow, project_file)}


def time_step(step: str, project_dir: Path = ROOT) -> float:
    """Run one project step (forced) and return its wall-clock minutes; exit if it fails."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "spacy", "project", "run", step, str(project_dir), "--force"], cwd=ROOT)
    minutes = (time.perf_counter() - start) / 60
    if done.returncode != 0:
        raise SystemExit(f"Step {step!r} failed (exit {done.returncode}) after {minutes:.1f} min; nothing recorded for it")
    return minutes


def recorded_training_minutes(step: str, project_dir: Path = ROOT) -> Tuple[float, str]:
    """The minutes a finished resumable training step recorded itself (module docstring) and where they come from;
    exit, naming why, when ``step`` is not such a training or has not finished."""
    from spacy_el.training.checkpoint import CHECKPOINTS
    from spacy_el.training.resume import EVALUATIONS, FINISHED
    from weasel.util import load_project_config

    from .common import read_evaluations

    commands = {c["name"]: c for c in load_project_config(project_dir, interpolate=True).get("commands", [])}
    script = " ".join(" ".join(commands.get(step, {}).get("script", [])).split())
    found = RESUMABLE_TRAINING.search(script)
    if not found or "--resume" not in script.split():
        raise SystemExit(f"--recorded: {step!r} is not a resumable training (python -m spacy_el train ... --output DIR "
                         f"--resume); time it by running it, without --recorded")
    run = project_dir / found.group(1)
    if not (run / CHECKPOINTS / FINISHED).exists():
        raise SystemExit(f"--recorded: the training of {step!r} in {run} has not finished (no "
                         f"{CHECKPOINTS}/{FINISHED}); run the step to finish it first")
    last = read_evaluations(run / EVALUATIONS)[-1]
    return (last["seconds"] / 60,
            f"recorded by the training in {repo_relative(run / EVALUATIONS)} (step {last['step']:,}; resumed runs added)")


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
    parser.add_argument("workflow", help="a workflow of the root project.yml (demo, train, pretrained, test)")
    parser.add_argument("--steps", nargs="+", help="time only these steps of the workflow (default: all of them, in order)")
    parser.add_argument("--recorded", action="store_true",
                        help="take each step's minutes from its finished resumable training's own record instead of "
                             "running it (module docstring)")
    parser.add_argument("--out", default=str(RESULTS_DIR / f"{NAME}.json"))
    parser.add_argument("--readme", default=PAGES[NAME], help="the page whose table to update (default: its page, if any)")
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
        if args.recorded:
            minutes, how = recorded_training_minutes(step, folders[step])
            notes = f"{machine}; {how}"
        else:
            minutes, notes = time_step(step, folders[step]), machine
        print(f"{step}: {minutes:.1f} min", flush=True)
        rows = merge_rerun(out, [row(step, args.workflow, METRIC, round(minutes, 1), notes)], command)
        write_results(out, command, with_totals(rows))
    write_tables(out, args.readme)


def with_totals(rows: Sequence[Row]) -> List[Row]:
    """``rows`` grouped per workflow, steps in the workflow's order, each group followed by its total rows;
    the rows of steps that a workflow no longer has are dropped.

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
        gone = [r["system"] for r in rows if r["dataset"] == workflow and r["system"] not in steps + [TOTAL]]
        if gone:  # steps the workflow no longer has: their timings describe nothing that runs
            print(f"{workflow}: dropping the timings of steps it no longer has: {', '.join(gone)}")
        timed = sorted((r for r in rows if r["dataset"] == workflow and r["system"] in steps),
                       key=lambda r: steps.index(r["system"]))
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


@published_only
def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Optional[Path] = PAGES[NAME]) -> None:
    publish_table(readme, NAME, timings_table(srsly.read_json(results)["rows"]))


if __name__ == "__main__":
    main()

"""The hostile-use table of docs/reliability.md: every test marked ``@pytest.mark.hostile("<class>")``, run and counted.

    python -m benchmarks.reliability            # runs the marked tests (a few minutes), writes the table
    python -m benchmarks.reliability --tables   # only re-renders the table from the results file

Each row of ``benchmarks/results/reliability.json`` is one class of hostile use (the headings of the hardening
issues: data loss, writing outside the folder, ...): ``cases`` (test cases tried, parametrisations counted),
``passed`` (cases whose outcome is the documented one: a coded error, a refusal or a correct result) and, in the
notes, the tests with their case counts. A case that fails or errors counts as tried and not passed; a skipped
case (no ``../shared``) is not counted.
"""
import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest

from .results_io import RESULTS_DIR, ROOT, Row, row, write_results
from .tables import PAGES, format_value, publish_table

NAME = "reliability"
COMMAND = "python -m benchmarks.reliability"
#: The classes in the order the table shows them; a marker with another class is an error of the test suite.
CLASSES = ("data loss", "writing outside the folder", "crashes that block a run", "resources",
           "silent wrong results", "unclear errors", "first contact", "what holds")


class HostileCases:
    """A pytest plugin: the outcome of each test marked ``hostile``, by class (a failed setup or teardown is
    the case's outcome too)."""

    def __init__(self) -> None:
        self.outcomes: Dict[str, Dict[str, str]] = defaultdict(dict)  # class -> node id -> outcome
        self.unknown: List[str] = []

    def pytest_collection_modifyitems(self, items) -> None:  # noqa: ANN001 (pytest's items)
        for item in items:
            marker = item.get_closest_marker("hostile")
            if marker is not None and (not marker.args or marker.args[0] not in CLASSES):
                self.unknown.append(f"{item.nodeid}: {marker.args}")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):  # noqa: ANN001, ANN201
        report = (yield).get_result()
        marker = item.get_closest_marker("hostile")
        if marker is None or not marker.args:
            return
        cases = self.outcomes[marker.args[0]]
        if report.when == "call" or report.outcome != "passed":
            if cases.get(report.nodeid) != "failed":
                cases[report.nodeid] = report.outcome


def test_name(node_id: str) -> str:
    """``tests/annotate/test_x.py::test_lock[jsonl]`` -> ``annotate/test_x.py::test_lock`` (cases counted apart)."""
    name = node_id.split("[", 1)[0]
    return name[len("tests/"):] if name.startswith("tests/") else name


def rows_of(outcomes: Dict[str, Dict[str, str]]) -> List[Row]:
    rows = []
    for cls in CLASSES:
        cases = {node: outcome for node, outcome in outcomes.get(cls, {}).items() if outcome != "skipped"}
        if not cases:
            continue
        per_test = Counter(test_name(node) for node in cases)
        notes = "; ".join(f"{name} ({n})" if n > 1 else name for name, n in sorted(per_test.items()))
        rows.append(row("spacy_el", cls, "cases", len(cases), notes))
        rows.append(row("spacy_el", cls, "passed", sum(o == "passed" for o in cases.values()), ""))
    return rows


def table(rows: Sequence[Row]) -> str:
    by_class: Dict[str, Dict[str, Row]] = defaultdict(dict)
    for r in rows:
        by_class[r["dataset"]][r["metric"]] = r
    lines = ["| class | cases tried | outcome as documented | tests |", "|---|---|---|---|"]
    for cls in CLASSES:
        if cls not in by_class:
            continue
        cases, passed = by_class[cls]["cases"], by_class[cls]["passed"]
        tests = cases["notes"].replace("|", "\\|")
        lines.append(f"| {cls} | {format_value(cases['value'])} | {format_value(passed['value'])} | {tests} |")
    return "\n".join(lines) + "\n"


def write_tables(results: Path = RESULTS_DIR / f"{NAME}.json", readme: Optional[Path] = PAGES[NAME]) -> None:
    import json

    publish_table(readme, NAME, table(json.loads(Path(results).read_text(encoding="utf8"))["rows"]))


def run(tests: Path = ROOT / "tests", pytest_args: Sequence[str] = ()) -> List[Row]:
    """The rows of the hostile cases under ``tests`` (``pytest_args``: more pytest options, such as ``-x``)."""
    plugin = HostileCases()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-m", "hostile", str(tests), *pytest_args], plugins=[plugin])
    if plugin.unknown:
        sys.exit("tests marked with a class that is not in benchmarks.reliability.CLASSES:\n"
                 + "\n".join(plugin.unknown))
    if code not in (0, 1):  # 1: some cases failed, which the table shows; anything else is a broken run
        sys.exit(f"pytest ended with exit code {code}")
    return rows_of(plugin.outcomes)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", action="store_true", help="only re-render the table from the results file")
    args, pytest_args = parser.parse_known_args(argv)
    out = RESULTS_DIR / f"{NAME}.json"
    if not args.tables:
        write_results(out, COMMAND, run(pytest_args=pytest_args))
    write_tables(out)


if __name__ == "__main__":
    main(sys.argv[1:])

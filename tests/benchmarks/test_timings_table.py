"""benchmarks.tables.timings_table: the workflows' minutes on docs/reproducing.md (script in studies/project_timings)."""
import re

from benchmarks.results_io import RESULTS_DIR, row
from benchmarks.tables import PAGES, _rows, timings_table


def test_timings_table_shows_minutes_or_the_steps_still_untimed():
    rows = [{**row("kb-demo", "demo", "wall_minutes", 0.5, "cpu"), "measured": "2026-11-23T10:00:00Z"},
            {**row("(workflow total)", "demo", "steps_timed", 1, "of 12 steps; no total yet"), "measured": ""}]
    table = timings_table(rows)
    assert "| demo | `kb-demo` | 0.5 | cpu | 2026-11-23 |" in table
    assert "| demo | **(workflow total)** |  | 1 of 12 steps; no total yet |  |" in table


def test_the_page_shows_what_the_results_render():
    page = PAGES["project_timings"].read_text(encoding="utf8")
    shown = re.search(r"<!-- results:project_timings -->\n(.*?)<!-- /results:project_timings -->", page, re.DOTALL)
    assert shown.group(1) == timings_table(_rows(RESULTS_DIR / "project_timings.json"))

"""benchmarks/reliability.py: the hostile-use table counts each marked case once, by class and outcome."""
import textwrap
from pathlib import Path

import pytest

from benchmarks import reliability

CASES = '''
import pytest

@pytest.mark.hostile("data loss")
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_refused(fmt):
    assert fmt

@pytest.mark.hostile("data loss")
def test_still_broken():
    assert False

@pytest.mark.hostile("resources")
def test_needs_shared():
    pytest.skip("no ../shared")

def test_not_hostile():
    pass
'''


def test_counts_cases_by_class_and_outcome(tmp_path: Path) -> None:
    (tmp_path / "test_cases.py").write_text(textwrap.dedent(CASES), encoding="utf8")
    rows = {(r["dataset"], r["metric"]): r for r in reliability.run(tmp_path, ["-W", "ignore", "--rootdir", str(tmp_path)])}
    assert rows[("data loss", "cases")]["value"] == 3
    assert rows[("data loss", "passed")]["value"] == 2
    assert "test_cases.py::test_refused (2)" in rows[("data loss", "cases")]["notes"]
    assert ("resources", "cases") not in rows  # a skipped case is not tried


def test_a_class_outside_the_table_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_outside.py").write_text(
        "import pytest\n\n@pytest.mark.hostile('dataloss')\ndef test_x():\n    pass\n", encoding="utf8")
    with pytest.raises(SystemExit, match="dataloss"):  # a misspelt class would vanish from the table
        reliability.run(tmp_path, ["-W", "ignore", "--rootdir", str(tmp_path)])


def test_table_lists_classes_in_order() -> None:
    rows = [reliability.row("spacy_el", "resources", "cases", 2, "a.py::t (2)"),
            reliability.row("spacy_el", "resources", "passed", 2, ""),
            reliability.row("spacy_el", "data loss", "cases", 1, "b.py::t"),
            reliability.row("spacy_el", "data loss", "passed", 0, "")]
    lines = reliability.table(rows).splitlines()
    assert lines[2].startswith("| data loss | 1 | 0 |") and lines[3].startswith("| resources | 2 | 2 |")

"""benchmarks.tables.published_only: a smoke run's results (``--out /tmp/...``) never rewrite the docs."""
import json
from pathlib import Path
from typing import Optional

import pytest

from benchmarks.results_io import RESULTS_DIR, row
from benchmarks.tables import PAGES, is_published, publish_table, published_only, update_readme_section

MARKERS = "<!-- results:t -->\nold\n<!-- /results:t -->\n"


@pytest.fixture
def published_page(tmp_path: Path) -> Path:
    """A page standing in for a docs page: a ``write_tables`` whose page argument is left at its default."""
    page = tmp_path / "published.md"
    page.write_text(MARKERS, encoding="utf8")
    return page


def make_write_tables(default_page: Path):
    @published_only
    def write_tables(results: Path = RESULTS_DIR / "t.json", page: Path = default_page) -> None:
        value = json.loads(Path(results).read_text(encoding="utf8"))["rows"][0]["value"]
        page.write_text(f"<!-- results:t -->\n{value}\n<!-- /results:t -->\n", encoding="utf8")
    return write_tables


def smoke_results(tmp_path: Path) -> Path:
    results = tmp_path / "smoke.json"
    results.write_text(json.dumps({"rows": [row("s", "d", "m", 0.5)]}), encoding="utf8")
    return results


def test_results_outside_benchmarks_results_leave_the_default_page_alone(tmp_path: Path, published_page: Path,
                                                                          capsys: pytest.CaptureFixture):
    write_tables = make_write_tables(published_page)
    write_tables(smoke_results(tmp_path))
    write_tables(smoke_results(tmp_path), published_page)  # the default passed explicitly is still the default
    assert published_page.read_text(encoding="utf8") == MARKERS
    assert "Docs left as they are" in capsys.readouterr().out


def test_a_page_of_the_callers_own_is_written(tmp_path: Path, published_page: Path):
    own_page = tmp_path / "own.md"
    make_write_tables(published_page)(smoke_results(tmp_path), own_page)
    assert own_page.read_text(encoding="utf8").splitlines()[1] == "0.5"
    assert published_page.read_text(encoding="utf8") == MARKERS


def test_only_files_directly_under_benchmarks_results_are_published(tmp_path: Path):
    assert is_published(RESULTS_DIR / "joint_coref_linker.json")
    assert not is_published(tmp_path / "joint_coref_linker.json")
    assert not is_published(RESULTS_DIR / "sub" / "joint_coref_linker.json")


def test_a_table_on_no_page_is_printed_and_written_nowhere(tmp_path: Path, capsys: pytest.CaptureFixture):
    """A study's table: its benchmark renders it, PAGES lists no page for it, and no page is touched."""
    assert PAGES["a_study_table"] is None and "a_study_table" not in PAGES

    @published_only
    def write_tables(results: Path = RESULTS_DIR / "t.json", page: Optional[Path] = PAGES["a_study_table"]) -> None:
        publish_table(page, "a_study_table", "| t |\n|---|\n")

    write_tables(RESULTS_DIR / "t.json")
    out = capsys.readouterr().out
    assert "a_study_table: on no page" in out and "| t |" in out
    assert not update_readme_section(None, "a_study_table", "x")

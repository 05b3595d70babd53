"""The README and the docs: their Python examples run as written and print what their comments say, their
links lead somewhere, and their generated tables sit where the benchmarks write them and are what the results
files render now (what ``python -m benchmarks.tables`` would write, checked on copies of the pages).

Every ```python block of README.md and docs/*.md runs, in a fresh namespace and an empty working directory.
A block that cannot run offline in seconds (it downloads a pipeline, or needs models trained on the full
data) is fenced ```python skip-test instead, and must be listed in SKIP_TEST with the reason and the test
that covers it: exemptions are rare and each is justified here.
"""
import contextlib
import importlib
import inspect
import io
import re
from pathlib import Path

import pytest

from benchmarks.results_io import RESULTS_DIR
from benchmarks.tables import PAGES, RENDERERS, SELECTIONS, selection_table, summary_table

from .conftest import REPO_ROOT

PAGES_WITH_CODE = [REPO_ROOT / "README.md"] + sorted((REPO_ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
# page -> (number of skip-test blocks, why, and what tests it instead)
SKIP_TEST = {
    "docs/drop_in.md": (1, "loads en_core_web_sm (a download) and linkers trained on AIDA; "
                           "tests/pipeline/test_drop_in.py runs the same recipe with a built OntoNotes ner"),
    "docs/pretrained.md": (1, "loads en_spacy_el_coref, which `spacy project run pretrained` builds in hours, and "
                              "en_core_web_sm (a download); tests/test_package.py installs a tiny en_spacy_el_coref "
                              "and runs it alone and sourced after another pipeline"),
}


def _rel(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


def _blocks():
    for page in PAGES_WITH_CODE:
        for n, match in enumerate(FENCE.finditer(page.read_text(encoding="utf8"))):
            yield pytest.param(page, match.group(1).split(), match.group(2), id=f"{_rel(page)}:block{n}")


@pytest.mark.parametrize("page,flags,code", list(_blocks()))
def test_python_block(page, flags, code, tmp_path, monkeypatch):
    if "skip-test" in flags:
        assert _rel(page) in SKIP_TEST, f"{_rel(page)}: a skip-test block must be listed, with its reason, in SKIP_TEST"
        pytest.skip(SKIP_TEST[_rel(page)][1])
    assert not flags, f"unknown fence flags {flags}: use ```python or ```python skip-test"
    monkeypatch.chdir(tmp_path)
    expected = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s+#\s*(.+)", code)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(page), "exec"), {})
    printed = [line.strip() for line in out.getvalue().splitlines()]
    # Progress messages may come between the prints: the expected lines must appear in order.
    remaining = iter(printed)
    missing = [line for line in expected if not any(line == p for p in remaining)]
    assert not missing, f"not printed (in order): {missing}; printed: {printed}"


def test_skip_test_blocks_are_the_listed_ones():
    counts = {}
    for page in PAGES_WITH_CODE:
        flags = [m.group(1).split() for m in FENCE.finditer(page.read_text(encoding="utf8"))]
        counts[_rel(page)] = sum("skip-test" in f for f in flags)
    found = {page: n for page, n in counts.items() if n}
    assert found == {page: n for page, (n, _) in SKIP_TEST.items()}


def test_readme_has_the_two_setup_commands():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf8")
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf8")
    test_command = 'pip install -c constraints.txt -e ".[tests]" && python -m pytest tests -q'
    assert test_command in text and test_command in ci
    assert "pip install -c constraints.txt -e . && python -m spacy project run demo" in text


MARKER = re.compile(r"<!-- (/?)results:([\w-]+) -->")


def test_every_table_sits_on_the_page_its_benchmark_writes():
    on_page = {}
    for page in [REPO_ROOT / "README.md"] + sorted((REPO_ROOT / "docs").glob("*.md")):
        markers = MARKER.findall(re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf8")))  # not in `code`
        opened = [name for slash, name in markers if not slash]
        assert opened == [name for slash, name in markers if slash], f"{_rel(page)}: unpaired markers"
        for name in opened:
            assert name not in on_page, f"table {name} on {on_page.get(name)} and {_rel(page)}"
            on_page[name] = _rel(page)
    assert on_page == {name: _rel(path) for name, path in PAGES.items()}


def _section(page: Path, name: str) -> str:
    match = re.search(rf"<!-- results:{name} -->\n(.*?)<!-- /results:{name} -->", page.read_text(encoding="utf8"), re.S)
    assert match, f"{_rel(page)} has no {name} markers"
    return match.group(1)


def test_tables_chosen_in_benchmarks_tables_are_rendered_from_the_results():
    """The summaries and the selections on the pages are what the results files render now."""
    expected = {"summary": summary_table(), "headlines": summary_table(page_dir=REPO_ROOT / "docs")}
    expected.update({name: selection_table(selection) for name, selection in SELECTIONS.items()})
    stale = [name for name, table in expected.items() if _section(PAGES[name], name) != table]
    assert not stale, f"re-render them: python -m benchmarks.tables ({', '.join(stale)})"


@pytest.mark.parametrize("name", RENDERERS)
def test_benchmark_tables_on_the_pages_are_what_their_results_render(name, tmp_path, monkeypatch):
    """The benchmark's ``write_tables``, run on copies of the pages, changes nothing in them."""
    results = RESULTS_DIR / f"{name}.json"
    if not results.is_file():
        pytest.skip(f"no {_rel(results)}")
    own_page = PAGES[name]
    copies = {}
    for table, page in list(PAGES.items()):  # PAGES is the dict the benchmarks read their pages from
        if page not in copies:
            copies[page] = tmp_path / _rel(page).replace("/", "_")
            copies[page].write_text(page.read_text(encoding="utf8"), encoding="utf8")
        monkeypatch.setitem(PAGES, table, copies[page])
    write_tables = importlib.import_module(f"benchmarks.{name}").write_tables
    takes_a_page = len(inspect.signature(write_tables).parameters) > 1  # else it reads PAGES when called
    write_tables(results, copies[own_page]) if takes_a_page else write_tables(results)
    stale = [_rel(page) for page, copy in copies.items()
             if copy.read_text(encoding="utf8") != page.read_text(encoding="utf8")]
    assert not stale, f"re-render them: python -m benchmarks.tables {name} ({', '.join(stale)})"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf8"), flags=re.S | re.M)
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_lead_to_files_and_headings():
    broken = []
    for page in [REPO_ROOT / "README.md"] + sorted((REPO_ROOT / "docs").glob("*.md")):
        for target in LINK.findall(page.read_text(encoding="utf8")):
            if re.match(r"[a-z]+://|mailto:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{_rel(page)}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append(f"{_rel(page)}: {target} (no such heading)")
    assert not broken

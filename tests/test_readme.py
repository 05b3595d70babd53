"""The README's Python examples run as written, and print what their comments say."""
import contextlib
import io
import re

import pytest

from .conftest import REPO_ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (REPO_ROOT / "README.md").read_text(encoding="utf8"), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = [m.group(1).strip() for m in re.finditer(r"print\(.*\)\s+#\s*(.+)", code)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = [line.strip() for line in out.getvalue().splitlines()]
    # Progress messages may come between the prints: the expected lines must appear in order.
    remaining = iter(printed)
    missing = [line for line in expected if not any(line == p for p in remaining)]
    assert not missing, f"not printed (in order): {missing}; printed: {printed}"


def test_readme_has_the_two_setup_commands():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf8")
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf8")
    test_command = 'pip install -c constraints.txt -e ".[tests]" && python -m pytest tests -q'
    assert test_command in text and test_command in ci
    assert "pip install -c constraints.txt -e . && python -m spacy project run demo" in text

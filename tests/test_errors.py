"""The coded messages of ``spacy_el.errors`` (and the KB's, re-exported there): each code is unique across
the classes, renders as "[spacy_el Ennn] ..." (a ``W`` for a warning), and each template formats with its
own placeholders, so that no raise fails on its own message."""
import ast
import inspect
import re
import string
import subprocess
import sys

import pytest

from spacy_el import errors
from spacy_el.errors import Errors, KBErrors, KBWarnings, Warnings
from spacy_el.kb import errors as kb_errors

CLASSES = {"Errors": (Errors, "E"), "Warnings": (Warnings, "W"), "KBErrors": (KBErrors, "E"), "KBWarnings": (KBWarnings, "W")}
# every attribute of a class of messages is a message (Python's own attributes aside)
ALL = [
    (name, code, getattr(cls, code)) for name, (cls, _) in CLASSES.items() for code in vars(cls) if not code.startswith("__")
]


class _Any:
    """A stand-in value for a placeholder: it takes any format spec (``{byte:#04x}``, ``{score:.3f}``)."""

    def __format__(self, spec: str) -> str:
        return format(7, spec) if spec else "x"

    def __repr__(self) -> str:
        return "'x'"


def test_every_code_is_unique_across_the_classes():
    seen = {}
    for name, code, _ in ALL:
        assert code not in seen, f"{code} is in {seen.get(code)} and {name}"
        seen[code] = name
    # A class body that assigns a code twice keeps only the second message: read the definitions themselves.
    for module in (errors, kb_errors):
        for node in ast.parse(inspect.getsource(module)).body:
            if isinstance(node, ast.ClassDef) and node.name in CLASSES:
                assigned = [target.id for stmt in node.body if isinstance(stmt, ast.Assign) for target in stmt.targets]
                twice = sorted({code for code in assigned if assigned.count(code) > 1})
                assert not twice, f"{node.name} defines {twice} more than once"


@pytest.mark.parametrize("name, code, text", ALL, ids=[code for _, code, _ in ALL])
def test_a_message_renders_its_code(name, code, text):
    kind = CLASSES[name][1]
    assert re.fullmatch(rf"{kind}\d{{3}}", code), f"{name}.{code} is not named {kind}nnn"
    assert text.startswith(f"[spacy_el {code}] ")
    assert errors.message_code(text) == code and errors.is_spacy_el_message(text)


@pytest.mark.parametrize("name, code, text", ALL, ids=[code for _, code, _ in ALL])
def test_a_template_formats_with_its_placeholders(name, code, text):
    fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    assert all(field.isidentifier() for field in fields), f"{code}: placeholders must be names, got {fields}"
    rendered = text.format(**{field: _Any() for field in fields})
    assert rendered.startswith(f"[spacy_el {code}] ")


@pytest.mark.parametrize("name, code, text", ALL, ids=[code for _, code, _ in ALL])
def test_a_template_without_placeholders_reads_as_written(name, code, text):
    """A message without placeholders is raised as it is (``raise ValueError(Errors.E018)``), unformatted: so it
    must hold no escaped brace, which only ``format`` turns into one."""
    fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    if not fields:
        assert text.format() == text, f"{code} has no placeholder but escaped braces: give it a placeholder"


def test_kb_messages_are_found_from_spacy_el_errors():
    assert errors.KBErrors is kb_errors.KBErrors and errors.KBWarnings is kb_errors.KBWarnings


def test_a_located_message_keeps_its_code():
    text = KBErrors.E101.format(top_k=0)
    located = errors.with_place(text, "kb.jsonl:3")
    assert located.startswith("[spacy_el E101] kb.jsonl:3: ") and errors.untagged(located).startswith("kb.jsonl:3: ")
    assert errors.message_code("[spacy_el] not coded") is None and errors.message_code("E101 elsewhere") is None


def test_importing_the_messages_imports_neither_spacy_thinc_nor_torch():
    """``extensions.py`` and the pure metrics raise through ``spacy_el.errors``; importing it (and so the KB's
    ``spacy_el.kb.errors``) must stay cheap."""
    code = "import sys, spacy_el.errors, spacy_el.extensions; print(sorted({'spacy', 'thinc', 'torch'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"

"""Fixtures of the annotate tests: a cheap pipeline (entity_ruler + a fake linker that writes links,
candidates and clusters) and one small corpus in every input format."""
import json
from pathlib import Path
from typing import Dict, List

import pytest

from .components import FAIL_MARKER, build_pipeline

TEXTS = [
    "Ada Mercer painted Orvik .",
    "Lumen played in Orvik ; Orvik was loud .",
    "Nothing to link here .",
    "Ada Mercer met Ada Mercer in a mirror .",
    "Orvik",
    "A quiet line about Lumen .",
    "Ada Mercer , Orvik and Lumen .",
]


def write_inputs(directory: Path, texts: List[str]) -> Dict[str, Path]:
    """The same corpus as text, JSONL (ids d0.., a carried field), Parquet and a directory of .txt files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    paths = {"text": directory / "corpus.txt", "jsonl": directory / "corpus.jsonl",
             "parquet": directory / "corpus.parquet", "dir": directory / "docs"}
    paths["text"].write_text("".join(t + "\n" for t in texts), encoding="utf8")
    records = [{"id": f"d{i}", "text": t, "source": f"src{i % 2}", "year": 2000 + i} for i, t in enumerate(texts)]
    paths["jsonl"].write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf8")
    pq.write_table(pa.Table.from_pylist(records), paths["parquet"], row_group_size=3)
    paths["dir"].mkdir(exist_ok=True)
    for i, t in enumerate(texts):
        (paths["dir"] / f"doc{i:02d}.txt").write_text(t, encoding="utf8")
    return paths


class Crash(BaseException):
    """Stands for a kill: not an Exception, so nothing catches it and nothing cleans up."""


def stop_after(parts: int):
    """An ``on_commit`` hook that kills the run (:class:`Crash`) once ``parts`` parts are committed."""
    def stop(state):
        if state["parts"] == parts:
            raise Crash()
    return stop


@pytest.fixture(scope="session")
def pipeline_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("annotate_pipeline") / "pipeline"
    build_pipeline().to_disk(path)
    return path


@pytest.fixture(scope="session")
def failing_pipeline_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("annotate_failing_pipeline") / "pipeline"
    build_pipeline(fail=True).to_disk(path)
    return path


@pytest.fixture(scope="session")
def nlp():
    return build_pipeline()


@pytest.fixture(scope="session")
def failing_nlp():
    return build_pipeline(fail=True)


@pytest.fixture
def inputs(tmp_path) -> Dict[str, Path]:
    return write_inputs(tmp_path / "in", TEXTS)


@pytest.fixture
def failing_inputs(tmp_path) -> Dict[str, Path]:
    texts = list(TEXTS)
    texts[2] = f"Ada Mercer {FAIL_MARKER} here ."
    texts[5] = f"{FAIL_MARKER} again"
    return write_inputs(tmp_path / "in_fail", texts)

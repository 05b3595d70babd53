"""``annotate --engine ray`` on a local Ray (2 CPUs, 2 actors): the same output as the local engine, the same
error records, and exactly once across a crash and ``--resume``. Skipped where Ray is not installed (CI
installs ``.[tests]`` only); ``pip install -e ".[ray]"`` to run it."""
import re

import pytest

ray = pytest.importorskip("ray")

import spacy  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from spacy_el.annotate import annotate, read_output  # noqa: E402
from spacy_el.cli import app  # noqa: E402

from .components import FAIL_MARKER  # noqa: E402
from .conftest import Crash, write_inputs  # noqa: E402
from .test_annotate import CRASH_TEXTS  # noqa: E402

pytestmark = pytest.mark.slow
RAY = {"engine": "ray", "actors": 2}


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield
    ray.shutdown()


def _parts(out):
    return {p.name: p.read_bytes() for p in out.iterdir() if p.name != "manifest.json"}


@pytest.mark.parametrize("input_format,output_format", [("jsonl", "jsonl"), ("parquet", "parquet")])
def test_same_output_as_the_local_engine(failing_nlp, failing_inputs, tmp_path, input_format, output_format):
    options = dict(output_format=output_format, chunk_size=3, batch_size=2, progress=False)
    local = annotate(failing_nlp, failing_inputs[input_format], tmp_path / "local", **options)
    remote = annotate(failing_nlp, failing_inputs[input_format], tmp_path / "ray", **options, **RAY)
    assert (remote.read, remote.written, remote.failed, remote.parts) == (local.read, local.written, local.failed, 3)
    records, errors = read_output(tmp_path / "ray")
    assert (records, errors) == read_output(tmp_path / "local")
    assert len(records) == 5 and [e["error"] for e in errors] == [f"ValueError: the test component refuses {FAIL_MARKER}"] * 2
    if output_format == "jsonl":  # byte for byte
        assert _parts(tmp_path / "ray") == _parts(tmp_path / "local")


def test_resume_after_a_crash(failing_nlp, tmp_path):
    src = write_inputs(tmp_path / "in", CRASH_TEXTS)["jsonl"]

    def stop_after_two(state):
        if state["parts"] == 2:
            raise Crash()

    with pytest.raises(Crash):
        annotate(failing_nlp, src, tmp_path / "ray", chunk_size=3, progress=False, on_commit=stop_after_two, **RAY)
    summary = annotate(failing_nlp, src, tmp_path / "ray", chunk_size=3, resume=True, progress=False, **RAY)
    assert summary.resumed_from == 6 and summary.read == len(CRASH_TEXTS)
    annotate(failing_nlp, src, tmp_path / "local", chunk_size=3, progress=False)
    assert read_output(tmp_path / "ray") == read_output(tmp_path / "local")


def test_cli_with_a_pipeline_path(inputs, tmp_path):
    """The actors load the pipeline from its path (built-in components only: a fresh Ray worker has not
    imported the test components)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "LOC", "pattern": "Orvik"}])
    nlp.to_disk(tmp_path / "pipeline")
    runner = CliRunner()
    for name, extra in (("local", []), ("ray", ["--engine", "ray", "--actors", "2"])):
        result = runner.invoke(app, ["annotate", str(tmp_path / "pipeline"), str(inputs["jsonl"]), str(tmp_path / name),
                                     "--no-progress", "--chunk-size", "4", *extra])
        assert result.exit_code == 0, result.output
    assert _parts(tmp_path / "ray") == _parts(tmp_path / "local")
    result = runner.invoke(app, ["annotate", str(tmp_path / "missing"), str(inputs["jsonl"]), str(tmp_path / "x"),
                                 "--no-progress", "--engine", "ray", "--actors", "1"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert re.search(r"\[spacy_el E831\] Cannot load the pipeline", " ".join(result.output.split()))


def test_docbin_is_refused(nlp, inputs, tmp_path):
    with pytest.raises(ValueError, match="E533"):
        annotate(nlp, inputs["text"], tmp_path / "out", docbin=True, progress=False, **RAY)
    assert not (tmp_path / "out").exists()

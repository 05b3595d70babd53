"""The `test` workflow of project.yml runs end to end on CPU with the tiny configs in configs/test and the
invented fixtures (as explosion's projects test their workflows), and a re-run skips what is up to date."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from spacy.util import load_config

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def run_workflow(project):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "test", str(project)],
                            capture_output=True, text=True, env=env, cwd=project)
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def test_test_workflow_runs_end_to_end(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("project.yml", "configs", "assets"):
        source = REPO_ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, project / name)
    shutil.copytree(REPO_ROOT / "tests" / "fixtures" / "corpora", project / "tests" / "fixtures" / "corpora")
    run_workflow(project)
    assert (project / "training" / "test" / "ner_stack_lstm" / "model-best").is_dir()
    scores = json.loads((project / "metrics" / "test_ner_stack_lstm.json").read_text())
    assert {"ner_f", "el_micro_f", "ed_accuracy"} <= set(scores)
    assert all(0.0 <= scores[k] <= 1.0 for k in ("ner_f", "el_micro_f"))
    expected = {
        "test_ner_ner4el.json": {"ner_f", "el_micro_f"},
        "test_nsl_jcl.json": {"ner_f", "el_micro_f", "coref_avg_f", "elh_f"},
        "test_entqa_jcl.json": {"el_micro_f", "coref_avg_f", "elh_f"},
    }
    for name, metrics in expected.items():
        scores = json.loads((project / "metrics" / name).read_text())
        assert metrics <= set(scores), name
        assert all(0.0 <= scores[m] <= 1.0 for m in metrics), name
    # The composed pipelines carry the joint model's settings for clustering upstream entities.
    for name in ("nsl_jcl", "entqa_jcl"):
        config = load_config(project / "training" / "test" / "pipelines" / name / "config.cfg")
        settings = config["components"]["joint_coref_linker"]
        assert (settings["mentions_from"], settings["cluster_link"], settings["write_ents"]) == ("ents", "upstream", True)
    again = run_workflow(project)
    assert again.count("Skipping") == 9, "every step is up to date on a re-run"

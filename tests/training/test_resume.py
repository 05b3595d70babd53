"""Resumable training (issue 30): a run interrupted after k steps and resumed from its last checkpoint ends
with exactly the weights, evaluations and losses of the uninterrupted run (bit for bit, on CPU with the
same torch threads); with no interruption it is spaCy's own ``train``; a kill in the middle of writing a
checkpoint leaves the previous one usable."""
import io
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
import torch
from spacy import util
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as spacy_train

from spacy_el.kb.files import temp_target
from spacy_el.training import read_checkpoint, train
from spacy_el.training.checkpoint import CHECKPOINTS, LATEST, checkpoint_dirs
from spacy_el.training.resume import EVALUATIONS, FINISHED, load_for_resume, train_nlp

from ..conftest import REPO_ROOT
from ..torch_modules import torch_module


class Interrupted(Exception):
    pass


def weights(nlp: Any) -> Dict[str, bytes]:
    return {name: proc.model.to_bytes() for name, proc in nlp.pipeline if hasattr(proc, "model")}


def run(config: Path, output: Path, *, resume: bool = False, stop_at: int = -1, **kwargs: Any) -> Tuple[Any, List[Dict[str, Any]]]:
    """Train (or resume); RETURNS the pipeline (None when interrupted) and per step (step, epoch, score, losses)."""
    log: List[Dict[str, Any]] = []

    def after_step(info: Dict[str, Any]) -> None:
        log.append({"step": info["step"], "epoch": info["epoch"], "score": info["score"], "losses": dict(info["losses"]),
                    "words": info["words"], "checkpoints": list(info["checkpoints"])})
        if info["step"] == stop_at:
            raise Interrupted()

    try:
        nlp, _ = train(config, output, resume=resume, after_step=after_step, stdout=io.StringIO(), stderr=io.StringIO(), **kwargs)
    except Interrupted:
        nlp = None
    return nlp, log


def scramble_rngs() -> None:
    """What a new process would have: other random states than the run that wrote the checkpoint."""
    random.seed(12345)
    np.random.seed(12345)
    torch.manual_seed(12345)


@pytest.mark.parametrize("config_name, stop_at, resumes_after", [
    ("ner_config", 6, 5),  # mid-epoch (3 batches an epoch), 1 step after the checkpoint, before an evaluation
    ("ner_config", 3, 3),  # right after a checkpoint
    ("jcl_config", 6, 5),
    ("jcl_frozen_config", 6, 5),  # frozen, cached layers: the cache starts empty again after the resume
])
def test_resumed_run_equals_uninterrupted(request, tmp_path, one_torch_thread, config_name, stop_at, resumes_after):
    config = request.getfixturevalue(config_name)
    full, full_log = run(config, tmp_path / "full")
    assert full_log[-1]["step"] == util.load_config(config)["training"]["max_steps"]
    if config_name == "jcl_frozen_config":  # the frozen layers' cache was read: later epochs reuse the first's outputs
        assert torch_module(full.get_pipe("joint_coref_linker")).lower_cache.hits > 0
    assert any(entry["epoch"] >= 2 for entry in full_log)

    interrupted, first_log = run(config, tmp_path / "split", stop_at=stop_at)
    assert interrupted is None and first_log[-1]["step"] == stop_at
    assert read_checkpoint(tmp_path / "split").step == resumes_after
    scramble_rngs()
    resumed, second_log = run(config, tmp_path / "split", resume=True)
    assert second_log[0]["step"] == resumes_after + 1

    assert weights(resumed) == weights(full)
    # Every step after the checkpoint: same epoch, evaluation, loss, words and evaluation history.
    assert second_log == full_log[resumes_after + 1:]
    best = [(p / "model-best" / "meta.json").read_text() for p in (tmp_path / "full", tmp_path / "split")]
    assert best[0] == best[1]
    curves = [json.loads((p / EVALUATIONS).read_text()) for p in (tmp_path / "full", tmp_path / "split")]
    def scores(curve):
        return [(e["step"], e["score"], {k: v for k, v in e["scores"].items() if k != "speed"}) for e in curve]

    assert scores(curves[0]) == scores(curves[1])  # "speed" (words per second) is wall-clock
    assert [e["step"] for e in curves[0]] == list(range(0, full_log[-1]["step"] + 1, 2))
    # What the seconds were measured under, at each evaluation of both runs.
    assert all(e["torch_threads"] == 1 and e["load_average"] >= 0 for curve in curves for e in curve)


def test_without_interruption_it_is_spacys_train(ner_config, tmp_path, one_torch_thread):
    """The checkpointing loop trains exactly as spacy.training.loop.train (same batches, steps, updates)."""
    config = util.load_config(ner_config, interpolate=False)
    nlp = init_nlp(config)
    (tmp_path / "spacy").mkdir()
    spacy_train(nlp, tmp_path / "spacy", stdout=io.StringIO(), stderr=io.StringIO())
    ours = init_nlp(config)
    train_nlp(ours, tmp_path / "ours", checkpoint_every=2, stdout=io.StringIO(), stderr=io.StringIO())
    assert weights(ours) == weights(nlp)
    for name in ("model-best", "model-last"):
        assert (tmp_path / "ours" / name / "ner" / "model").read_bytes() == (tmp_path / "spacy" / name / "ner" / "model").read_bytes()


def test_finished_run_is_not_trained_again_unless_extended(ner_config, tmp_path, one_torch_thread):
    nlp, log = run(ner_config, tmp_path)
    assert (tmp_path / CHECKPOINTS / FINISHED).is_file()
    again, log_again = run(ner_config, tmp_path, resume=True)
    assert again is None and log_again == []
    longer, log_longer = run(ner_config, tmp_path, resume=True, overrides={"training.max_steps": 13})
    assert log_longer[0]["step"] == 12 and log_longer[-1]["step"] == 13  # from the last checkpoint (step 11)


def test_max_minutes_stops_at_a_checkpoint_and_resumes_to_the_same_end(ner_config, tmp_path, one_torch_thread):
    """A run given a time budget stops at the first checkpoint after it (here: the first), unfinished, and
    resuming it ends where the uninterrupted run ends."""
    full, _ = run(ner_config, tmp_path / "full")
    budgeted, log = run(ner_config, tmp_path / "split", max_minutes=0)
    assert log[-1]["step"] == read_checkpoint(tmp_path / "split").step == 1  # checkpoint_every = eval_frequency = 2
    assert not (tmp_path / "split" / CHECKPOINTS / FINISHED).exists()
    resumed, _ = run(ner_config, tmp_path / "split", resume=True)
    assert weights(resumed) == weights(full)


def test_max_minutes_needs_checkpoints(ner_config, tmp_path, one_torch_thread):
    with pytest.raises(ValueError, match="E731"):
        run(ner_config, tmp_path, checkpoint_every=0, max_minutes=1)


def test_fresh_run_refuses_to_overwrite_checkpoints(ner_config, tmp_path, one_torch_thread):
    run(ner_config, tmp_path, stop_at=1)
    with pytest.raises(ValueError, match="E732"):
        run(ner_config, tmp_path)


def test_resume_refuses_another_config(ner_config, tmp_path, one_torch_thread):
    run(ner_config, tmp_path, stop_at=1)
    checkpoint = read_checkpoint(tmp_path)
    changed = util.load_config(ner_config, overrides={"training.dropout": 0.3}, interpolate=False)
    with pytest.raises(ValueError, match=r"E729.*training\.dropout"):
        load_for_resume(changed, checkpoint)
    allowed = util.load_config(ner_config, overrides={"training.patience": 5}, interpolate=False)
    load_for_resume(allowed, checkpoint)


def test_a_setting_newer_than_the_checkpoint_may_keep_its_default(ner_config, tmp_path, one_torch_thread):
    """A checkpoint written before a component had a setting resumes when the setting keeps its factory
    default (the behaviour the run had), and is refused when it does not."""
    run(ner_config, tmp_path, stop_at=1)
    checkpoint = read_checkpoint(tmp_path)
    saved_config = checkpoint.model_path / "config.cfg"
    saved = util.load_config(saved_config, interpolate=False)
    del saved["components"]["ner"]["update_with_oracle_cut_size"]
    saved.to_disk(saved_config)
    load_for_resume(util.load_config(ner_config, interpolate=False), checkpoint)  # 100, the ner factory's default
    changed = util.load_config(ner_config, overrides={"components.ner.update_with_oracle_cut_size": 50}, interpolate=False)
    with pytest.raises(ValueError, match=r"E729.*update_with_oracle_cut_size"):
        load_for_resume(changed, checkpoint)


def test_a_model_argument_newer_than_the_checkpoint_may_keep_its_default(ner_config, tmp_path, one_torch_thread):
    """The same for an argument of a registered function, here the ner model architecture's ``nO`` (default
    null), as when spacy_el adds an architecture setting after a checkpoint was written; an argument without
    a default (``hidden_width``) is refused."""
    run(ner_config, tmp_path, stop_at=1)
    checkpoint = read_checkpoint(tmp_path)
    saved_config = checkpoint.model_path / "config.cfg"
    saved = util.load_config(saved_config, interpolate=False)
    assert saved["components"]["ner"]["model"]["nO"] is None
    del saved["components"]["ner"]["model"]["nO"]
    saved.to_disk(saved_config)
    load_for_resume(util.load_config(ner_config, interpolate=False), checkpoint)
    changed = util.load_config(ner_config, overrides={"components.ner.model.nO": 5}, interpolate=False)
    with pytest.raises(ValueError, match=r"E729.*components\.ner\.model\.nO"):
        load_for_resume(changed, checkpoint)
    del saved["components"]["ner"]["model"]["hidden_width"]
    saved.to_disk(saved_config)
    with pytest.raises(ValueError, match=r"E729.*components\.ner\.model\.hidden_width"):
        load_for_resume(util.load_config(ner_config, interpolate=False), checkpoint)


def test_checkpoint_every_must_follow_the_evaluations(ner_config, tmp_path, one_torch_thread):
    with pytest.raises(ValueError, match="E730"):
        run(ner_config, tmp_path, checkpoint_every=3)


def test_damaged_checkpoint_is_passed_over(ner_config, tmp_path, one_torch_thread):
    run(ner_config, tmp_path, stop_at=4)
    newest, older = checkpoint_dirs(tmp_path)
    data = bytearray((newest / "optimizer.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (newest / "optimizer.safetensors").write_bytes(bytes(data))
    warnings: List[str] = []
    assert read_checkpoint(tmp_path, warn=warnings.append).path == older
    assert "does not match its manifest" in warnings[0]


KILL_SCRIPT = """
import io, os, sys
import torch
torch.set_num_threads(1)
import spacy_el.training.checkpoint as checkpoint
from spacy_el.training import train

original = checkpoint._save_arrays
calls = []

def save_then_die(path, arrays):
    calls.append(path)
    if len(calls) == 2:  # the second checkpoint: its model is written, the optimizer half written
        path.write_bytes(b"partial")
        os._exit(9)
    original(path, arrays)

checkpoint._save_arrays = save_then_die
train(sys.argv[1], sys.argv[2], stdout=io.StringIO(), stderr=io.StringIO())
"""


def test_kill_while_writing_a_checkpoint_keeps_the_previous_one(ner_config, tmp_path, one_torch_thread):
    output = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(KILL_SCRIPT), str(ner_config), str(output)], env=env,
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 9, result.stderr
    root = output / CHECKPOINTS
    assert [p.name for p in checkpoint_dirs(output)] == ["step-00000001"]
    assert [temp_target(p.name) for p in root.iterdir()].count("step-00000003") == 1  # the interrupted write
    assert '"step-00000001"' in (root / LATEST).read_text()
    assert read_checkpoint(output).step == 1

    scramble_rngs()
    resumed, log = run(ner_config, output, resume=True)
    assert log[0]["step"] == 2
    assert not any(temp_target(p.name) for p in root.iterdir())
    full, _ = run(ner_config, tmp_path / "full")
    assert weights(resumed) == weights(full)

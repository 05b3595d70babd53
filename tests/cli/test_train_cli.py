"""``python -m spacy_el train``: spacy train with checkpoints, overrides as spacy train takes them."""
from typer.testing import CliRunner

import spacy_el.cli  # noqa: F401  (registers every command)
from spacy_el.cli._app import app
from spacy_el.training import read_checkpoint

from ..training.conftest import ner_config  # noqa: F401  (fixture)

runner = CliRunner()


def text(result) -> str:
    return " ".join(result.output.split())  # wasabi wraps long lines


def test_train_checkpoints_and_resumes(ner_config, tmp_path, one_torch_thread):  # noqa: F811
    out = tmp_path / "out"
    args = ["train", str(ner_config), "--output", str(out), "--training.max_steps", "4", "--checkpoint-every", "4"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert read_checkpoint(out).step == 3 and (out / "model-best" / "meta.json").is_file()
    result = runner.invoke(app, args)  # a fresh run over a run's checkpoints is refused
    assert result.exit_code == 1 and "--resume" in text(result)
    result = runner.invoke(app, [*args, "--resume"])
    assert result.exit_code == 0 and "already finished" in text(result)
    result = runner.invoke(app, ["train", str(ner_config), "--output", str(tmp_path / "other"), "--checkpoint-every", "3"])
    assert result.exit_code == 1 and "multiple of training.eval_frequency" in text(result)

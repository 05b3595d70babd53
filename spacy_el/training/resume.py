"""Resumable training with spaCy's own loop: ``python -m spacy_el train CONFIG --output DIR [--resume]``.

:func:`train` does what ``spacy train`` does (``init_nlp``, then ``spacy.training.loop.train``: the same
steps, evaluations, logger, ``model-last`` and ``model-best``) and also writes a checkpoint
(:mod:`spacy_el.training.checkpoint`) every ``checkpoint_every`` steps. With ``resume`` it continues from the
newest intact checkpoint of the output directory, and the run goes on exactly as the uninterrupted one
would have: same batches, same random numbers, same updates, same evaluations
(``tests/training/test_resume.py`` checks the weights bit for bit).

How spaCy's loop is reused. The steps come from spaCy's ``train_while_improving`` itself, fed with
:class:`~spacy_el.training.batches.ResumableBatches` (the batches of spaCy's ``create_train_batches``, with a
state). That generator keeps its step counter, its list of evaluations, the losses since the last
evaluation and the words seen to itself and starts them at 0, so a resumed run gets, around it:

* **the step**: the resumed generator's step ``i`` is step ``offset + i`` of the run (``info["step"]``, and
  the ``before_update`` callback's step). It evaluates when ``i % eval_frequency == 0``, so a checkpoint
  is only written after a step ``s`` with ``(s + 1) % eval_frequency == 0``: the resumed run then
  evaluates at the same steps. ``checkpoint_every`` must be a multiple of ``eval_frequency``;
* **the evaluations**: best-checkpoint choice, patience and ``max_steps`` are decided here over all the
  run's evaluations (spaCy's generator is given ``patience = max_steps = 0``), with spaCy's rules: a score
  equal to the best is best; stop when ``step - best_step >= patience`` (the earliest best step) or
  ``step >= max_steps``;
* **losses, words, seconds**: the losses since the last evaluation are saved (with their numpy type) and
  put into the generator's losses dict when it is first passed to ``nlp.update``, so the components add
  to them in the same order as in the uninterrupted run; words and seconds are added to what it reports.

The optimizer is rebuilt from the config and given the saved state; the random generators are restored
right before the first batch is drawn. A resumed run must use the same config: only ``training.max_steps``,
``training.patience`` and ``training.logger`` may change (a learning-rate schedule that depends on
``max_steps``, as ``warmup_linear.v1`` with ``total_steps = ${training.max_steps}``, then refuses the
change).

Determinism: on CPU, with the same number of torch threads, a resumed run matches bit for bit. On GPU,
cuDNN/cuBLAS kernels that are not deterministic make any two runs differ, resumed or not.
"""
import inspect
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from spacy import util
from spacy.language import Language
from spacy.schemas import ConfigSchemaTraining
from spacy.training.initialize import init_nlp
from spacy.training.loop import (
    DIR_MODEL_BEST, DIR_MODEL_LAST, clean_output_dir, create_before_to_disk_callback, create_evaluation_callback,
    train_while_improving, update_meta,
)
from thinc.api import Config, fix_random_seed, set_gpu_allocator
from wasabi import Printer

from ..errors import Errors
from ..kb.files import new_dir, write_json
from .batches import ResumableBatches
from .checkpoint import (
    CHECKPOINTS, Checkpoint, checkpoint_dirs, param_paths, read_checkpoint, restore_optimizer, set_rng_state,
    write_checkpoint,
)

__all__ = ["train", "train_nlp", "load_for_resume", "EVALUATIONS", "FINISHED", "RESUMABLE_CHANGES"]

#: Written to ``OUTPUT/checkpoints/`` when a run ends (stop rule or last epoch).
FINISHED = "finished.json"
#: ``OUTPUT/evaluations.json``: every evaluation of the run (step, epoch, seconds, weighted score, scores),
#: across resumed runs: the learning curve. Each also records the torch threads and the machine's one-minute
#: load average then (``torch_threads``, ``load_average``; runs before these existed lack them): what the
#: seconds were measured under, since a run that shared its cores with other jobs took longer.
EVALUATIONS = "evaluations.json"
#: Config settings that may differ between a checkpoint and the run that resumes it (dotted prefixes).
RESUMABLE_CHANGES = ("training.max_steps", "training.patience", "training.logger")


def train(
    config_path: Union[str, Path],
    output_path: Union[str, Path],
    *,
    resume: bool = False,
    checkpoint_every: Optional[int] = None,
    keep: int = 2,
    overrides: Dict[str, Any] = util.SimpleFrozenDict(),
    use_gpu: int = -1,
    max_minutes: Optional[float] = None,
    stdout: Optional[IO] = None,
    stderr: Optional[IO] = None,
    after_step: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Tuple[Optional[Language], Path]:
    """``spacy train`` with checkpoints. ``resume``: continue from the newest intact checkpoint of
    ``output_path`` (start afresh when there is none). ``checkpoint_every``: steps between checkpoints (a
    multiple of ``eval_frequency``; None = ``eval_frequency``, 0 = none). ``keep``: checkpoints kept.
    ``max_minutes``: stop at the first checkpoint written after that many minutes of this run (the run
    stays resumable: rerun with ``resume`` to go on). ``after_step(info)``: called after each step is
    logged and checkpointed.
    RETURNS: the trained pipeline (None when the output's run had already finished) and model-last's path."""
    msg = Printer(no_print=True)
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    output_path = Path(output_path)
    output_path.mkdir(parents=True, exist_ok=True)
    config = util.load_config(config_path, overrides=overrides, interpolate=False)
    checkpoint = None
    if resume:
        checkpoint = read_checkpoint(output_path, warn=lambda text: stdout.write(msg.warn(text) + "\n"))
        if _finished(output_path, config):
            stdout.write(msg.good(f"Training in {output_path} had already finished; nothing to do") + "\n")
            return None, output_path / DIR_MODEL_LAST
    elif checkpoint_dirs(output_path):
        raise ValueError(Errors.E732.format(output_path=output_path, checkpoints=output_path / CHECKPOINTS))
    (output_path / CHECKPOINTS / FINISHED).unlink(missing_ok=True)
    if use_gpu >= 0:
        from spacy.cli._util import setup_gpu

        setup_gpu(use_gpu)
    if checkpoint is None:
        nlp = init_nlp(config, use_gpu=use_gpu)
    else:
        stdout.write(msg.info(f"Resuming after step {checkpoint.step} from {checkpoint.path}") + "\n")
        nlp = load_for_resume(config, checkpoint)
    nlp, path = train_nlp(
        nlp, output_path, checkpoint=checkpoint, checkpoint_every=checkpoint_every, keep=keep, use_gpu=use_gpu,
        max_minutes=max_minutes, stdout=stdout, stderr=stderr, after_step=after_step,
    )
    return nlp, path


def load_for_resume(config: Config, checkpoint: Checkpoint) -> Language:
    """The pipeline of ``config`` with the checkpoint's weights, refused when the configs differ in more
    than :data:`RESUMABLE_CHANGES`."""
    nlp = util.load_model_from_config(config, auto_fill=True)
    saved = _flatten(Config().from_disk(checkpoint.model_path / "config.cfg", interpolate=False).interpolate())
    current = _flatten(nlp.config.interpolate())
    changed = [
        key for key in _changed_keys(saved, current)
        if not any(key == allowed or key.startswith(allowed + ".") for allowed in RESUMABLE_CHANGES)
        and not (key not in saved and _is_newer_default(nlp, current, key))
    ]
    if changed:
        raise ValueError(Errors.E729.format(
            path=checkpoint.path, changed=", ".join(changed[:6]), more=" ..." if len(changed) > 6 else "",
            resumable=", ".join(RESUMABLE_CHANGES),
        ))
    nlp.from_disk(checkpoint.model_path, exclude=["config"])  # keep this config: util.from_disk matches "config.cfg" by "config"
    return nlp


class _Progress:
    """The run's state that spaCy's ``train_while_improving`` keeps to itself (module docstring)."""

    def __init__(self, saved: Optional[Dict[str, Any]]) -> None:
        saved = saved or {}
        self.offset = saved.get("step", -1) + 1
        self.results: List[Tuple[float, int]] = [(float(s), int(t)) for s, t in saved.get("results", [])]
        self.evaluations: List[Dict[str, Any]] = list(saved.get("evaluations", []))
        self.words = int(saved.get("words", 0))
        self.seconds = int(saved.get("seconds", 0))
        self.losses: Dict[str, Any] = {name: _loss_value(value) for name, value in saved.get("losses", {}).items()}

    def update(self, info: Dict[str, Any]) -> Optional[bool]:
        """Make ``info`` the run's (step, words, seconds, checkpoints); RETURNS is-best (None: not evaluated)."""
        info["step"] += self.offset
        info["words"] += self.words
        info["seconds"] += self.seconds
        is_best = None
        if info["score"] is not None:
            self.results.append((info["score"], info["step"]))
            is_best = info["score"] == max(self.results)[0]
            scores = {k: float(v) for k, v in (info["other_scores"] or {}).items() if isinstance(v, (int, float))}
            self.evaluations.append({"step": info["step"], "epoch": info["epoch"], "seconds": info["seconds"],
                                     "score": float(info["score"]), "scores": scores,
                                     "torch_threads": _torch_threads(), "load_average": _load_average()})
        info["checkpoints"] = self.results
        return is_best

    def should_stop(self, step: int, patience: int, max_steps: int) -> bool:
        if patience and self.results:
            best_step = -max((score, -s) for score, s in self.results)[1]
            if step - best_step >= patience:
                return True
        return bool(max_steps and step >= max_steps)

    def state(self, info: Dict[str, Any], evaluated: bool, batches: ResumableBatches) -> Dict[str, Any]:
        return {
            "step": info["step"], "epoch": info["epoch"], "results": [[float(s), t] for s, t in self.results],
            "evaluations": self.evaluations,
            "words": int(info["words"]), "seconds": int(info["seconds"]),
            # spaCy's generator empties its losses after an evaluation
            "losses": {} if evaluated else {k: [float(v), type(v).__name__] for k, v in info["losses"].items()},
            "batches": batches.state(),
            "torch_threads": _torch_threads(),
        }


def train_nlp(
    nlp: Language,
    output_path: Optional[Path],
    *,
    checkpoint: Optional[Checkpoint] = None,
    checkpoint_every: Optional[int] = None,
    keep: int = 2,
    use_gpu: int = -1,
    max_minutes: Optional[float] = None,
    stdout: Optional[IO] = None,
    stderr: Optional[IO] = None,
    after_step: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Tuple[Language, Optional[Path]]:
    """``spacy.training.loop.train`` with checkpoints (module docstring); ``nlp`` is initialised, or loaded
    from ``checkpoint`` (:func:`load_for_resume`). ``max_minutes``: as for :func:`train`."""
    msg = Printer(no_print=True)
    deadline = None if max_minutes is None else time.monotonic() + 60 * max_minutes
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    config = nlp.config.interpolate()
    if checkpoint is None and config["training"]["seed"] is not None:
        fix_random_seed(config["training"]["seed"])  # as spaCy's train(); a resumed run restores its RNGs
    allocator = config["training"]["gpu_allocator"]
    if use_gpu >= 0 and allocator:
        set_gpu_allocator(allocator)
    T = util.registry.resolve(config["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = util.resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
    optimizer = T["optimizer"]
    before_to_disk = create_before_to_disk_callback(T["before_to_disk"])
    eval_frequency = T["eval_frequency"]
    every = eval_frequency if checkpoint_every is None else checkpoint_every
    if output_path is not None:
        output_path = Path(output_path)
        output_path.mkdir(parents=True, exist_ok=True)
    if every < 0 or (every and every % eval_frequency):
        raise ValueError(Errors.E730.format(eval_frequency=eval_frequency, every=every))
    if output_path is None:
        every = 0
    saved_loop = checkpoint.state["loop"] if checkpoint is not None else None
    batches = ResumableBatches(nlp, train_corpus, T["batcher"], T["max_epochs"], saved_loop["batches"] if saved_loop else None)
    if not batches.resumable:
        every = 0
    if max_minutes is not None and not every:
        raise ValueError(Errors.E731)
    progress = _Progress(saved_loop)
    paths = param_paths(nlp) if (every or checkpoint is not None) else {}
    if checkpoint is not None:
        restore_optimizer(optimizer, checkpoint.optimizer_arrays, checkpoint.state["optimizer"], paths, steps=progress.offset)
    before_update = T["before_update"]
    if before_update is not None and progress.offset:
        callback = before_update

        def before_update(nlp: Language, args: Dict[str, Any]) -> None:  # noqa: F811
            callback(nlp, {**args, "step": args["step"] + progress.offset})

    if progress.losses:
        _restore_losses_at_first_update(nlp, progress.losses)
    frozen_components = T["frozen_components"]
    annotating_components = T["annotating_components"]
    steps = train_while_improving(
        nlp, optimizer, batches, create_evaluation_callback(nlp, dev_corpus, T["score_weights"]),
        dropout=T["dropout"], accumulate_gradient=T["accumulate_gradient"], patience=0, max_steps=0,
        eval_frequency=eval_frequency, exclude=frozen_components, annotating_components=annotating_components,
        before_update=before_update,
    )

    def save_model(is_best: bool) -> None:
        """model-last (and model-best), as spaCy's loop saves them, each replaced in one rename."""
        assert output_path is not None
        last = output_path / DIR_MODEL_LAST
        with new_dir(last) as tmp, nlp.use_params(optimizer.averages):
            before_to_disk(nlp).to_disk(tmp)
        if is_best:
            with new_dir(output_path / DIR_MODEL_BEST) as tmp:
                shutil.copytree(last, tmp, dirs_exist_ok=True)

    if checkpoint is None:
        clean_output_dir(output_path)
    stdout.write(msg.info(f"Pipeline: {nlp.pipe_names}") + "\n")
    if frozen_components:
        stdout.write(msg.info(f"Frozen components: {frozen_components}") + "\n")
    if annotating_components:
        stdout.write(msg.info(f"Set annotations on update for: {annotating_components}") + "\n")
    stdout.write(msg.info(f"Initial learn rate: {optimizer.learn_rate}") + "\n")
    if every:
        stdout.write(msg.info(f"Checkpoint every {every} steps in {output_path / CHECKPOINTS}") + "\n")
    with nlp.select_pipes(disable=frozen_components):
        log_step, finalize_logger = T["logger"](nlp, stdout, stderr)
    if checkpoint is not None:
        threads = saved_loop.get("torch_threads")
        if threads is not None and threads != _torch_threads():
            stdout.write(msg.warn(
                f"The checkpoint was written with {threads} torch threads, this run has {_torch_threads()}: float "
                "sums may then differ in the last bits from an uninterrupted run."
            ) + "\n")
        batches.load()  # a reader may draw random numbers: before they are restored
        set_rng_state(nlp, checkpoint.state["rng"])
    finished = False
    try:
        for _, info, _ in steps:
            is_best = progress.update(info)
            if is_best is not None:
                with nlp.select_pipes(disable=frozen_components):
                    update_meta(T, nlp, info)
                if output_path is not None:
                    save_model(is_best)
                    info["output_path"] = str(output_path / DIR_MODEL_LAST)
                    write_json(output_path / EVALUATIONS, progress.evaluations, indent=1)
            log_step(info if is_best is not None else None)
            step = info["step"]
            checkpointed = bool(every) and (step + 1) % every == 0
            if checkpointed:
                write_checkpoint(output_path, step, nlp, optimizer, paths, progress.state(info, is_best is not None, batches), keep)
            if after_step is not None:
                after_step(info)
            if progress.should_stop(step, T["patience"], T["max_steps"]):
                finished = True
                break
            if checkpointed and deadline is not None and time.monotonic() >= deadline:
                stdout.write(msg.info(
                    f"Stopping after step {step}: {max_minutes:g} minutes have passed. Rerun with --resume to go on."
                ) + "\n")
                break
        else:
            finished = True
    except Exception as e:
        if output_path is not None:
            stdout.write(msg.warn(f"Aborting and saving the final best model. Encountered exception: {repr(e)}") + "\n")
        raise e
    finally:
        finalize_logger()
        if output_path is not None:
            save_model(False)
    if finished and output_path is not None and every:
        write_json(output_path / CHECKPOINTS / FINISHED, _stop_rules(nlp.config), indent=None)
    if output_path is not None:
        stdout.write(msg.good("Saved pipeline to output directory", output_path / DIR_MODEL_LAST) + "\n")
        return nlp, output_path / DIR_MODEL_LAST
    return nlp, None


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _load_average() -> Optional[float]:
    """The one-minute load average (None where the platform has none: Windows)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _loss_value(saved: Any) -> Any:
    """A saved loss, ``[value, type name]``, as the value of that type (numpy's float32 adds as float32)."""
    value, kind = saved
    return getattr(np, kind)(value) if kind in ("float16", "float32", "float64") else float(value)


def _restore_losses_at_first_update(nlp: Language, losses: Dict[str, Any]) -> None:
    """Put ``losses`` into the dict that spaCy's loop passes to the first ``nlp.update`` (its own, which it
    creates empty), before the components add to it."""
    update = nlp.update

    def first_update(*args: Any, **kwargs: Any) -> Any:
        del nlp.update  # the class's method again
        if kwargs.get("losses") is not None:
            kwargs["losses"].update(losses)
        return update(*args, **kwargs)

    nlp.update = first_update  # type: ignore[method-assign]


def _stop_rules(config: Config) -> Dict[str, Any]:
    """The settings that decide when a run ends, spaCy's defaults filled in."""
    defaults = util.get_lang_class(config["nlp"]["lang"]).default_config
    training = defaults.merge(config).interpolate()["training"]
    return {name: training[name] for name in ("max_steps", "patience", "max_epochs")}


def _finished(output_path: Path, config: Config) -> bool:
    """Whether the output's run ended under the same stop rules (a finished run resumed with a larger
    ``max_steps`` or ``patience`` goes on)."""
    path = output_path / CHECKPOINTS / FINISHED
    if not path.is_file():
        return False
    try:
        saved = json.loads(path.read_text(encoding="utf8"))
    except ValueError:
        return False
    return saved == _stop_rules(config)


def _flatten(data: Any, prefix: str = "") -> Dict[str, Any]:
    if isinstance(data, dict):
        out: Dict[str, Any] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out or {prefix.rstrip("."): {}}
    return {prefix.rstrip("."): data}


def _is_newer_default(nlp: Language, current: Dict[str, Any], key: str) -> bool:
    """Whether ``key`` of the flattened config ``current`` holds the default of what it sets: a component
    setting (``components.NAME.SETTING``) its factory's default, an argument of a registered function (a
    model architecture's, a scorer's: ``...BLOCK.ARG`` beside ``...BLOCK.@REGISTRY``) the function's. A
    setting added after a checkpoint was written changes nothing when it keeps the behaviour the run had."""
    value = current[key]
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "components" and parts[1] in nlp.component_names:
        defaults = nlp.get_pipe_meta(parts[1]).default_config
        return parts[2] in defaults and defaults[parts[2]] == value
    block, _, argument = key.rpartition(".")
    references = [(name[len(block) + 2:], ref) for name, ref in current.items() if name.startswith(block + ".@")]
    if len(references) != 1:
        return False
    registry_name, function_name = references[0]
    try:
        function = util.registry.get(registry_name, function_name)
    except Exception:  # an unknown registry or name: not a default we can vouch for
        return False
    parameter = inspect.signature(function).parameters.get(argument)
    return parameter is not None and parameter.default is not inspect.Parameter.empty and parameter.default == value


def _changed_keys(a: Dict[str, Any], b: Dict[str, Any]) -> List[str]:
    return sorted(key for key in set(a) | set(b) if a.get(key, object()) != b.get(key, object()))

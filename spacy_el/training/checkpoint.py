"""Training checkpoints: everything a spaCy training run needs to continue exactly where it stopped.

A checkpoint is a directory ``OUTPUT/checkpoints/step-<step>/``::

    model/                   nlp.to_disk: the raw weights (not the optimizer's averages), the KBs, the config
    optimizer.safetensors    the Thinc optimizer's arrays: mom1 / mom2 / averages, one tensor per parameter
    state.json               the optimizer's counters and current rates, the RNG states, the loop's state
    manifest.json            SHA-256 and size of every other file (written last)

and ``OUTPUT/checkpoints/latest.json`` names the newest complete one.

**Parameter keys.** Thinc's optimizer keys its state by ``(id, name)``: a Thinc node's id and parameter
name, or a shim's id and the torch parameter's name (``PyTorchShim`` and spacy_el's ``EncoderLRShim``
step the torch parameters with the Thinc optimizer, so every spacy_el component's state is there too).
Ids are process-wide counters that differ between processes, so a checkpoint stores each key under a
stable path, ``<component>/<index in model.walk()>/<node name>/<param>`` (``.../shim<j>/<torch name>``
for a shim), and maps the paths back to the new process's ids (:func:`param_paths`).

**Learning-rate schedules** are Python generators, which cannot be saved: the optimizer is rebuilt from the
config and its schedules advanced by the number of steps done; the rates it then has must equal the saved
ones, or the resume is refused (the schedule changed).

**Atomicity.** A checkpoint is written to a temporary directory, every file fsynced, and renamed into
place; then ``latest.json`` is replaced (temporary file, fsync, rename). A kill at any point leaves
``latest.json`` naming the previous complete checkpoint; leftovers are deleted by the next write.
Nothing is pickled: JSON, safetensors and spaCy's own serialisation.
"""
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from thinc.api import Model, Optimizer, get_current_ops

from ..errors import Errors, untagged
from ..kb.files import new_dir, remove_temps, sha256_file, write_json

__all__ = [
    "CHECKPOINTS", "LATEST", "Checkpoint", "param_paths", "optimizer_state", "restore_optimizer", "rng_state",
    "set_rng_state", "write_checkpoint", "read_checkpoint", "checkpoint_dirs",
]

CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
MODEL = "model"
OPTIMIZER = "optimizer.safetensors"
STATE = "state.json"
MANIFEST = "manifest.json"
FORMAT = "spacy_el.training.checkpoint"
VERSION = 1
_PREFIX = "step-"
#: The optimizer's current hyper-parameters (set by a schedule or a constant).
_SCALARS = ("learn_rate", "b1", "b2", "eps", "L2", "grad_clip")
_ARRAYS = ("mom1", "mom2", "averages")
_COUNTERS = ("nr_update", "last_seen")

KeyT = Tuple[int, str]


# -- parameter keys --------------------------------------------------------------------------------
def param_paths(nlp: Any) -> Dict[KeyT, str]:
    """Every optimizer key of ``nlp``'s components, ``(id, name)``, mapped to a path that is the same in any
    process that builds the same pipeline (module docstring). A node shared by two components takes the
    path of the first one (pipeline order)."""
    paths: Dict[KeyT, str] = {}
    owners: Dict[KeyT, Any] = {}

    def add(key: KeyT, path: str, owner: Any) -> None:
        if key in paths:
            if owners[key] is not owner:
                raise ValueError(Errors.E727.format(key=key, other_path=paths[key], path=path))
            return
        paths[key] = path
        owners[key] = owner

    for component, proc in nlp.components:
        model = getattr(proc, "model", None)
        if not isinstance(model, Model):
            continue
        for i, node in enumerate(model.walk()):
            prefix = f"{component}/{i}/{node.name}"
            for name in node.param_names:
                add((node.id, name), f"{prefix}/{name}", node)
            for j, shim in enumerate(node.shims):
                module = getattr(shim, "_model", None)
                if hasattr(module, "named_parameters"):
                    for name, _ in module.named_parameters():
                        add((shim.id, name), f"{prefix}/shim{j}/{name}", shim)
    return paths


def _path_of(paths: Dict[KeyT, str], key: Any) -> str:
    path = paths.get(tuple(key)) if isinstance(key, (tuple, list)) else None
    if path is None:
        raise ValueError(Errors.E716.format(key=key))
    return path


# -- the optimizer ---------------------------------------------------------------------------------
def optimizer_state(optimizer: Optimizer, paths: Dict[KeyT, str]) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """(arrays named ``<field>/<path>``, the JSON part: counters by path, current rates, options)."""
    ops = get_current_ops()
    arrays: Dict[str, np.ndarray] = {}
    for field in _ARRAYS:
        for key, value in (getattr(optimizer, field) or {}).items():
            arrays[f"{field}/{_path_of(paths, key)}"] = np.ascontiguousarray(ops.to_numpy(value))
    meta: Dict[str, Any] = {
        field: {_path_of(paths, key): int(n) for key, n in getattr(optimizer, field).items()} for field in _COUNTERS
    }
    meta["scalars"] = {name: getattr(optimizer, name) for name in _SCALARS}
    meta["schedules"] = sorted(optimizer.schedules)
    meta["use_averages"] = optimizer.averages is not None
    meta["use_radam"] = bool(optimizer.use_radam)
    meta["L2_is_weight_decay"] = bool(optimizer.L2_is_weight_decay)
    return arrays, meta


def restore_optimizer(
    optimizer: Optimizer, arrays: Dict[str, np.ndarray], meta: Dict[str, Any], paths: Dict[KeyT, str], steps: int
) -> None:
    """Give a freshly built ``optimizer`` (same config) the saved state: its schedules advanced by ``steps``
    (the training steps done), checked against the saved rates, and its per-parameter state."""
    for option in ("use_radam", "L2_is_weight_decay"):
        if bool(getattr(optimizer, option)) != meta[option]:
            raise ValueError(Errors.E723.format(option=option, value=meta[option]))
    if (optimizer.averages is not None) != meta["use_averages"]:
        raise ValueError(Errors.E723.format(option="use_averages", value=meta["use_averages"]))
    if sorted(optimizer.schedules) != meta["schedules"]:
        raise ValueError(Errors.E718.format(current=sorted(optimizer.schedules), saved=meta["schedules"]))
    for _ in range(steps):
        optimizer.step_schedules()
    changed = [
        f"{name} {getattr(optimizer, name)!r} != {value!r}" for name, value in meta["scalars"].items()
        if getattr(optimizer, name) != value
    ]
    if changed:
        raise ValueError(Errors.E719.format(rates="; ".join(changed)))
    keys = {path: key for key, path in paths.items()}

    def key_of(path: str) -> KeyT:
        if path not in keys:
            raise ValueError(Errors.E724.format(path=path))
        return keys[path]

    ops = get_current_ops()
    for field in _ARRAYS:
        if getattr(optimizer, field) is not None:
            getattr(optimizer, field).clear()
    for name, value in arrays.items():
        field, path = name.split("/", 1)
        getattr(optimizer, field)[key_of(path)] = ops.asarray(value.copy())
    for field in _COUNTERS:
        counter = getattr(optimizer, field)
        counter.clear()
        for path, n in meta[field].items():
            counter[key_of(path)] = n


# -- random number generators ---------------------------------------------------------------------
def _component_rngs(nlp: Any) -> Dict[str, Dict[str, Any]]:
    """The RNG objects components hold as attributes (numpy Generators, ``random.Random``, torch Generators)."""
    import torch

    found: Dict[str, Dict[str, Any]] = {}
    for component, proc in nlp.components:
        for attr, value in sorted(getattr(proc, "__dict__", {}).items(), key=lambda item: item[0]):
            if isinstance(value, (np.random.Generator, random.Random, torch.Generator)):
                found.setdefault(component, {})[attr] = value
    return found


def rng_state(nlp: Any) -> Dict[str, Any]:
    """The states of Python's ``random``, numpy's and torch's global generators and the components' own, as
    JSON (torch's CUDA generators too, where CUDA is initialised)."""
    import torch

    version, internal, gauss = random.getstate()
    keys = np.random.get_state()
    state: Dict[str, Any] = {
        "python": [version, list(internal), gauss],
        "numpy": {"keys": keys[1].tolist(), "pos": int(keys[2]), "has_gauss": int(keys[3]), "cached_gaussian": float(keys[4])},
        "torch": torch.get_rng_state().tolist(),
        "cuda": [s.tolist() for s in torch.cuda.get_rng_state_all()] if torch.cuda.is_initialized() else None,
        "components": {},
    }
    for component, rngs in _component_rngs(nlp).items():
        for attr, rng in rngs.items():
            if isinstance(rng, np.random.Generator):
                saved = {"kind": "numpy", "state": rng.bit_generator.state}
            elif isinstance(rng, random.Random):
                v, s, g = rng.getstate()
                saved = {"kind": "python", "state": [v, list(s), g]}
            else:
                saved = {"kind": "torch", "state": rng.get_state().tolist()}
            state["components"].setdefault(component, {})[attr] = saved
    return state


def set_rng_state(nlp: Any, state: Dict[str, Any]) -> None:
    """Restore what :func:`rng_state` saved."""
    import torch

    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    saved = state["numpy"]
    np.random.set_state(("MT19937", np.asarray(saved["keys"], dtype=np.uint32), saved["pos"], saved["has_gauss"], saved["cached_gaussian"]))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]])
    rngs = _component_rngs(nlp)
    for component, attrs in state.get("components", {}).items():
        for attr, saved in attrs.items():
            rng = rngs.get(component, {}).get(attr)
            if rng is None:
                raise ValueError(Errors.E728.format(component=component, attr=attr))
            if saved["kind"] == "numpy":
                rng.bit_generator.state = saved["state"]
            elif saved["kind"] == "python":
                v, s, g = saved["state"]
                rng.setstate((v, tuple(s), g))
            else:
                rng.set_state(torch.tensor(saved["state"], dtype=torch.uint8))


# -- writing and reading ---------------------------------------------------------------------------
@dataclass
class Checkpoint:
    """A verified checkpoint: its directory, step, ``state.json`` and optimizer arrays."""

    path: Path
    step: int
    state: Dict[str, Any]
    optimizer_arrays: Dict[str, np.ndarray]

    @property
    def model_path(self) -> Path:
        return self.path / MODEL


def _name(step: int) -> str:
    return f"{_PREFIX}{step:08d}"


def _files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _save_arrays(path: Path, arrays: Dict[str, np.ndarray]) -> None:
    from safetensors.numpy import save_file

    save_file(arrays, str(path))


def _load_arrays(path: Path) -> Dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(path))


def checkpoint_dirs(output: Path) -> List[Path]:
    """The complete-looking checkpoint directories of ``output``, newest first."""
    root = Path(output) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(_PREFIX) and p.name[len(_PREFIX):].isdigit()]
    return sorted(found, key=lambda p: int(p.name[len(_PREFIX):]), reverse=True)


def write_checkpoint(
    output: Path, step: int, nlp: Any, optimizer: Optimizer, paths: Dict[KeyT, str], loop: Dict[str, Any], keep: int = 2,
) -> Path:
    """Write the checkpoint after training step ``step`` (0-based), atomically, and keep the newest ``keep``.
    ``loop``: the training loop's own state (JSON). RETURNS: the checkpoint's directory."""
    root = Path(output) / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    remove_temps(root)  # left by a run killed while writing
    target = root / _name(step)
    with new_dir(target) as tmp:  # the same step written again (a resumed run) is replaced
        nlp.to_disk(tmp / MODEL)
        arrays, optimizer_meta = optimizer_state(optimizer, paths)
        _save_arrays(tmp / OPTIMIZER, arrays)
        state = {
            "format": FORMAT, "version": VERSION, "step": step, "optimizer": optimizer_meta, "rng": rng_state(nlp),
            "loop": loop,
        }
        # The standard library's json: floats round-trip exactly and integers of any size are kept.
        write_json(tmp / STATE, state, indent=None)
        files = {str(p.relative_to(tmp)): {"sha256": sha256_file(p), "bytes": p.stat().st_size} for p in _files(tmp)}
        write_json(tmp / MANIFEST, {"format": FORMAT, "version": VERSION, "step": step, "files": files}, indent=None)
    write_json(root / LATEST, {"checkpoint": target.name, "step": step}, indent=None)
    for old_dir in checkpoint_dirs(output)[max(keep, 1):]:
        if old_dir != target:
            shutil.rmtree(old_dir, ignore_errors=True)
    return target


def _verify(path: Path) -> Dict[str, Any]:
    """The checkpoint's manifest, after checking every file it lists; ValueError naming what is wrong."""
    manifest_path = path / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf8"))
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E725.format(path=path, manifest=MANIFEST, err=err)) from err
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise ValueError(Errors.E720.format(manifest_path=manifest_path))
    if manifest.get("version") != VERSION:
        raise ValueError(Errors.E721.format(path=path, version=manifest.get("version"), supported=VERSION))
    for rel, expected in manifest["files"].items():
        file = path / rel
        if not file.is_file() or file.stat().st_size != expected["bytes"] or sha256_file(file) != expected["sha256"]:
            raise ValueError(Errors.E726.format(path=path, rel=rel))
    return manifest


def read_checkpoint(output: Path, warn: Any = None) -> Optional[Checkpoint]:
    """The newest intact checkpoint of ``output`` (the one ``latest.json`` names first, then older ones,
    each verified against its manifest); None when there is none. ``warn(message)`` hears of a damaged one
    that is passed over."""
    root = Path(output) / CHECKPOINTS
    order = checkpoint_dirs(output)
    latest = root / LATEST
    if latest.is_file():
        try:
            named = root / json.loads(latest.read_text(encoding="utf8"))["checkpoint"]
        except (OSError, ValueError, KeyError, TypeError):
            named = None
        if named is not None and named in order:
            order.remove(named)
            order.insert(0, named)
        elif named is not None and warn is not None:
            warn(f"{latest} names {named.name}, which is missing; using the newest intact checkpoint.")
    for path in order:
        try:
            manifest = _verify(path)
            state = json.loads((path / STATE).read_text(encoding="utf8"))
            arrays = _load_arrays(path / OPTIMIZER)
        except (ValueError, OSError) as err:
            if warn is not None:
                warn(untagged(str(err)))
            continue
        return Checkpoint(path, int(manifest["step"]), state, arrays)
    if order:
        raise ValueError(Errors.E722.format(root=root))
    return None

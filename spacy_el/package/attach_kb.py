"""Giving a trained pipeline's components a KB of your choice (``python -m spacy_el kb attach``).

spacy_el's trainable components save their KB inside the pipeline (``<component>/kb``). Their models score
entity vectors and alias priors, never KB rows, so a trained component works with another KB whose entity
vectors come from the same encoder, with the same width. A pipeline may also be saved without a component's
KB (trained heads shipped for a KB built elsewhere, as ``assets/models/joint_coref_linker``); it loads only
once it has one.

:func:`attach_kb` writes a copy of the pipeline whose components carry the given KB, after checking that

* the KB has entity vectors of the width each component was trained with (``dims.nE`` in its ``cfg``);
* their encoder (the KB manifest's ``vectors_encoder``) is that of the KB the component was trained with: the
  KB it carries, or, when it carries none, the one the pipeline's meta.json records
  (``meta["spacy_el"]["kb_vectors_encoder"][component]``, written by whoever removed the KB); when neither
  records one, the check is skipped;
* the copy loads (``spacy.load``, which also verifies the KB's checksums).

The copy is written beside the output and renamed into place (``kb.files.new_dir``). An existing output is
replaced only when ``kb attach`` wrote it and nothing in it changed since: the copy's meta.json records every file
it holds with its size and modification time (``meta["spacy_el"]["kb_attach"]["files"]``), and an output
holding a file it does not record (a user's notes), or one whose size or time differs, is refused whole (E745),
as is any other existing folder or file (E015 when it has no ``config.cfg``).
"""
import os
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import srsly
from spacy import util

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.files import new_dir, write_json
from ..kb.serialization import read_manifest

__all__ = ["META_KEY", "attach_kb", "kb_components"]

PathLike = Union[str, Path]
#: meta.json key of what spacy_el records about a pipeline (``kb_vectors_encoder``: per component saved
#: without its KB, the vectors encoder of the KB it was trained with).
META_KEY = "spacy_el"
#: ``meta[META_KEY]`` key of what ``kb attach`` wrote: ``{"files": {relative path: [size, mtime_ns]}}``, every
#: file of the copy but meta.json.
ATTACH_KEY = "kb_attach"
META_FILE = "meta.json"
KB_FOLDER = "kb"


def _spacy_el_factories() -> List[str]:
    """The spaCy factories spacy_el registers (setup.cfg entry points): its components, which all carry a KB."""
    return sorted(
        ep.name for ep in metadata.entry_points(group="spacy_factories") if ep.value.startswith("spacy_el.")
    )


def kb_components(pipeline_dir: PathLike) -> List[str]:
    """The names of the pipeline's components made by a spacy_el factory (from its config.cfg)."""
    config = util.load_config(Path(pipeline_dir) / "config.cfg", interpolate=False)
    factories = set(_spacy_el_factories())
    return [
        name for name in config["nlp"]["pipeline"]
        if config["components"].get(name, {}).get("factory") in factories
    ]


def _trained_width(component_dir: Path) -> Optional[int]:
    dims = srsly.read_json(component_dir / "cfg").get("dims") or {}
    return dims.get("nE")


def _trained_vectors_encoder(pipeline_dir: Path, name: str) -> Optional[Dict[str, Any]]:
    """The vectors encoder of the KB the component was trained with (None when unknown)."""
    own = pipeline_dir / name / KB_FOLDER
    if own.exists():
        return read_manifest(own).get("vectors_encoder")
    meta = srsly.read_json(pipeline_dir / "meta.json") if (pipeline_dir / "meta.json").exists() else {}
    return ((meta.get(META_KEY) or {}).get("kb_vectors_encoder") or {}).get(name)


def _check_fits(kb: ElKnowledgeBase, kb_dir: Path, pipeline_dir: Path, name: str) -> None:
    width = _trained_width(pipeline_dir / name)
    if width is not None and kb.entity_vector_length != width:
        raise ValueError(
            Errors.E011.format(
                kb_dir=kb_dir, kb_width=kb.entity_vector_length or "none", name=name, pipeline_dir=pipeline_dir, width=width
            )
        )
    trained = _trained_vectors_encoder(pipeline_dir, name)
    if trained and kb.vectors_encoder and dict(trained) != dict(kb.vectors_encoder):
        raise ValueError(
            Errors.E012.format(
                kb_dir=kb_dir, vectors_encoder=kb.vectors_encoder, name=name, pipeline_dir=pipeline_dir, trained=trained
            )
        )


def _files_of(folder: Path) -> Dict[str, List[int]]:
    """Every file below ``folder`` but its meta.json (relative POSIX path -> [size, mtime_ns]); a symlink counts
    as a file of its own (it is not followed)."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root, name)
            relative = path.relative_to(folder).as_posix()
            if relative != META_FILE:
                info = path.lstat()
                found[relative] = [info.st_size, info.st_mtime_ns]
    return found


def _record_written(staging: Path) -> None:
    """Record in the copy's meta.json every file ``kb attach`` wrote (module docstring)."""
    meta_path = staging / META_FILE
    meta = srsly.read_json(meta_path) if meta_path.is_file() else {}
    meta.setdefault(META_KEY, {})[ATTACH_KEY] = {"files": _files_of(staging)}
    write_json(meta_path, meta)


def _check_replaceable(output_dir: Path) -> None:
    """Refuse an existing ``output_dir`` unless ``kb attach`` wrote it and nothing in it changed since."""
    if not os.path.lexists(output_dir):
        return
    if output_dir.is_symlink() or not output_dir.is_dir():
        raise ValueError(Errors.E745.format(output_dir=output_dir, problem="it is not a folder"))
    if not (output_dir / "config.cfg").is_file():
        raise ValueError(Errors.E015.format(output_dir=output_dir))
    try:
        meta = srsly.read_json(output_dir / META_FILE)
        recorded = meta[META_KEY][ATTACH_KEY]["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(Errors.E745.format(output_dir=output_dir, problem=f"its {META_FILE} records no files of "
                                            "kb attach")) from None
    found = _files_of(output_dir)
    added = sorted(set(found) - set(recorded))
    changed = sorted(name for name in set(found) & set(recorded) if list(recorded[name]) != found[name])
    if added or changed:
        problem = "; ".join(part for part in (
            f"it did not write {', '.join(added[:5])}{' ...' if len(added) > 5 else ''}" if added else "",
            f"{', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''} changed since" if changed else "",
        ) if part)
        raise ValueError(Errors.E745.format(output_dir=output_dir, problem=problem))


def attach_kb(
    pipeline_dir: PathLike, kb_dir: PathLike, output_dir: PathLike, components: Sequence[str] = (),
) -> List[str]:
    """Write a copy of ``pipeline_dir`` to ``output_dir`` whose ``components`` (default: every spacy_el
    component) carry the KB at ``kb_dir`` (module docstring). RETURNS: the components given the KB."""
    import spacy

    pipeline_dir, kb_dir, output_dir = Path(pipeline_dir), Path(kb_dir), Path(output_dir)
    if not (pipeline_dir / "config.cfg").is_file():
        raise ValueError(Errors.E013.format(pipeline_dir=pipeline_dir))
    known = kb_components(pipeline_dir)
    names = list(components) or known
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise ValueError(Errors.E014.format(pipeline_dir=pipeline_dir, unknown=unknown or "", known=known or "none"))
    if output_dir.resolve() == pipeline_dir.resolve():
        raise ValueError(Errors.E016)
    _check_replaceable(output_dir)
    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    for name in names:
        _check_fits(kb, kb_dir, pipeline_dir, name)
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    with new_dir(output_dir) as staging:
        shutil.copytree(pipeline_dir, staging, dirs_exist_ok=True)
        for name in names:
            target = staging / name / KB_FOLDER
            if target.exists():
                shutil.rmtree(target)
            kb.to_disk(target)
        spacy.load(staging)  # refuses a pipeline that does not load, naming the file
        _record_written(staging)
    return names

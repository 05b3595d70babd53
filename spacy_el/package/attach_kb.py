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

The copy is written beside the output and renamed into place (``kb.files.new_dir``): an existing output is
replaced only when it is a spaCy pipeline directory (it has a ``config.cfg``).
"""
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import srsly
from spacy import util

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.files import new_dir
from ..kb.serialization import read_manifest

__all__ = ["META_KEY", "attach_kb", "kb_components"]

PathLike = Union[str, Path]
#: meta.json key of what spacy_el records about a pipeline (``kb_vectors_encoder``: per component saved
#: without its KB, the vectors encoder of the KB it was trained with).
META_KEY = "spacy_el"
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
    if output_dir.exists() and not (output_dir / "config.cfg").is_file():
        raise ValueError(Errors.E015.format(output_dir=output_dir))
    if output_dir.resolve() == pipeline_dir.resolve():
        raise ValueError(Errors.E016)
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
    return names

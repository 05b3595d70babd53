"""Train/dev/test document lists (GUM ``splits.md``, LitBank ``splits.json``) and file selection."""

import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import srsly

from ..errors import Errors
from ._util import CorpusFormatError, PathLike, ensure_dir, ensure_file, read_lines

_MD_HEADING = re.compile(r"^##\s+(\S+)\s*$")
_MD_ITEM = re.compile(r"^\s*[*-]\s+(\S+)\s*$")


def load_gum_splits(path: PathLike) -> Dict[str, List[str]]:
    """Parse GUM's ``splits.md``: ``## name`` headings followed by ``* DOCNAME`` items."""
    splits: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line_no, line in enumerate(read_lines(path, "GUM splits file"), start=1):
        heading = _MD_HEADING.match(line)
        if heading:
            current = heading.group(1)
            splits.setdefault(current, [])
            continue
        item = _MD_ITEM.match(line)
        if item:
            if current is None:
                raise CorpusFormatError(path, line_no, Errors.E608)
            splits[current].append(item.group(1))
    return splits


def load_json_splits(path: PathLike) -> Dict[str, List[str]]:
    """Parse a JSON object {split: [document stem, ...]} (LitBank ``splits.json``); other keys are ignored."""
    data = srsly.read_json(ensure_file(path, "Splits file"))
    if not isinstance(data, dict):
        raise CorpusFormatError(path, None, Errors.E609.format(value_type=type(data).__name__))
    return {key: [str(x) for x in value] for key, value in data.items() if isinstance(value, list)}


def load_splits(path: PathLike) -> Dict[str, List[str]]:
    """Load a splits file: ``.json`` (LitBank style) or ``.md`` (GUM style)."""
    path = Path(path)
    if path.suffix == ".json":
        return load_json_splits(path)
    if path.suffix == ".md":
        return load_gum_splits(path)
    raise ValueError(Errors.E610.format(path=path))


def find_upwards(start: PathLike, names: Sequence[str], levels: int = 3) -> Optional[Path]:
    """The first existing ``<dir>/<name>`` for ``dir`` = start and up to ``levels`` parents."""
    directory = Path(start).resolve()
    for _ in range(levels + 1):
        for name in names:
            candidate = directory / name
            if candidate.exists():
                return candidate
        directory = directory.parent
    return None


def select_files(
    directory: PathLike,
    suffix: str,
    split: Optional[str] = None,
    splits: Optional[Mapping[str, Sequence[str]]] = None,
) -> List[Path]:
    """The corpus files of one split, in a deterministic order.

    * ``split`` None: every ``*<suffix>`` file in ``directory`` (or, if there is none, in its
      subdirectories), sorted by path.
    * ``<directory>/<split>/`` exists: every ``*<suffix>`` file in it, sorted.
    * otherwise: ``<directory>/<name><suffix>`` for each name of ``splits[split]``, in that order;
      missing files raise FileNotFoundError.
    """
    directory = ensure_dir(directory, "Corpus directory")
    if split is None:
        files = sorted(directory.glob(f"*{suffix}"))
        return files or sorted(directory.glob(f"*/*{suffix}"))
    if (directory / split).is_dir():
        return sorted((directory / split).glob(f"*{suffix}"))
    if splits is None:
        raise ValueError(Errors.E611.format(split=split, directory=directory))
    if split not in splits:
        raise ValueError(Errors.E021.format(what="split", name=split, known=", ".join(splits)))
    files = [directory / f"{name}{suffix}" for name in splits[split]]
    missing = [f.name for f in files if not f.exists()]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise FileNotFoundError(
            Errors.E612.format(n_missing=len(missing), split=split, directory=directory, shown=shown)
        )
    return files


SPLIT_NAMES = ("train", "dev", "test")


def resolve_corpus_dir(path: PathLike, suffix: str, default_subdir: str, what: str) -> Path:
    """``path`` itself if it holds ``*<suffix>`` files or split subdirectories, else ``<path>/<default_subdir>``.

    Lets every converter accept the corpus root, its file directory, or a directory of split folders.
    """
    path = ensure_dir(path, f"{what} directory")
    if any(path.glob(f"*{suffix}")) or any((path / split).is_dir() for split in SPLIT_NAMES):
        return path
    return ensure_dir(path / default_subdir, f"{what} {suffix} directory")

"""Small helpers shared by the corpus converters: file checks, errors, progress bars, default nlp."""

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, Optional, TypeVar, Union

import spacy
from spacy.language import Language
from spacy.vocab import Vocab
from tqdm import tqdm

from ..errors import Errors, with_place

PathLike = Union[str, Path]
T = TypeVar("T")


class CorpusFormatError(ValueError):
    """A corpus file is malformed. ``message`` is a coded message of ``spacy_el.errors``; the error's text
    places the file and, where known, the line number after its code: ``"[spacy_el E614] test.txt:7: ..."``."""

    def __init__(self, path: PathLike, line: Optional[int], message: str):
        self.path = Path(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(with_place(message, where))


def _existing(path: PathLike, what: str) -> Path:
    """Return ``path`` as a Path, raising FileNotFoundError with a clear message if nothing is there."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(Errors.E605.format(what=what, path=path))
    return path


def ensure_file(path: PathLike, what: str = "Input file") -> Path:
    """Return ``path`` as a Path, raising FileNotFoundError with a clear message if it is no file."""
    path = _existing(path, what)
    if not path.is_file():
        raise FileNotFoundError(Errors.E606.format(what=what, path=path))
    return path


def ensure_dir(path: PathLike, what: str = "Input directory") -> Path:
    """Return ``path`` as a Path, raising FileNotFoundError with a clear message if it is no directory."""
    path = _existing(path, what)
    if not path.is_dir():
        raise FileNotFoundError(Errors.E607.format(what=what, path=path))
    return path


def read_lines(path: PathLike, what: str = "Input file") -> Iterator[str]:
    """Yield the lines of a UTF-8 file without line endings (``\\n`` and ``\\r\\n`` alike)."""
    path = ensure_file(path, what)
    with path.open(encoding="utf8", newline="") as fileh:
        for line in fileh:
            yield line.rstrip("\r\n")


@lru_cache(maxsize=4)
def _blank(lang: str) -> Language:
    return spacy.blank(lang)


def get_nlp(nlp: Optional[Language] = None, lang: str = "en") -> Language:
    """``nlp`` itself, or a cached blank pipeline for ``lang`` (its vocab and tokenizer only)."""
    return nlp if nlp is not None else _blank(lang)


def get_vocab(nlp: Optional[Language] = None) -> Vocab:
    """``nlp.vocab``, or a fresh language-neutral ``Vocab`` (enough for corpora that come tokenised)."""
    return nlp.vocab if nlp is not None else Vocab()


def progress(items: Iterable[T], desc: str, show: bool, total: Optional[int] = None) -> Iterable[T]:
    """Wrap ``items`` in a tqdm progress bar (on stderr) when ``show`` is True."""
    if not show:
        return items
    return tqdm(items, desc=desc, total=total, unit="doc", leave=False)


def warn(message: str) -> None:
    """Emit a UserWarning from corpus code (so callers can filter or assert it)."""
    warnings.warn(message, UserWarning, stacklevel=3)

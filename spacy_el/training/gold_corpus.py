"""The gold corpus that ``evaluate`` and ``tune`` score on, checked before anything runs.

spaCy's :class:`~spacy.training.Corpus` reads only files named ``*.spacy`` and skips every other path with a
warning, and skips documents without tokens: given a JSONL file or an empty DocBin it reads no document, and a
score over no document is 0 for every metric, which ``evaluate`` printed and ``tune`` then saved a pipeline by.
:func:`gold_corpus` refuses such a corpus first, naming the file: not a ``.spacy`` file, not readable as a
DocBin, or holding no document with tokens (or none once the text-masked ones are left out).
"""
from pathlib import Path
from typing import Callable, Iterable, Union

from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Corpus, Example

from ..corpora.masked import is_text_masked, without_masked
from ..errors import Errors

__all__ = ["check_docbin", "gold_corpus"]

SUFFIX = ".spacy"


def check_docbin(path: Union[str, Path]) -> int:
    """Refuse a ``path`` from which spaCy's Corpus would read no document (ValueError naming it).
    RETURNS: the number of its documents with tokens."""
    path = Path(path)
    if not path.is_file() or not path.name.endswith(SUFFIX):
        raise ValueError(Errors.E746.format(path=path))
    try:
        docbin = DocBin().from_disk(path)
    except Exception as err:  # noqa: BLE001 - zlib, msgpack and DocBin's own errors alike: not a DocBin
        raise ValueError(Errors.E747.format(path=path, err=f"{type(err).__name__}: {err}")) from err
    n_docs = sum(1 for tokens in docbin.tokens if len(tokens))
    if not n_docs:
        raise ValueError(Errors.E748.format(path=path, problem="no document with tokens"))
    return n_docs


def gold_corpus(path: Union[str, Path], nlp: Language, *, gold_preproc: bool = False,
                skip_masked: bool = False) -> Callable[[Language], Iterable[Example]]:
    """spaCy's Corpus over the DocBin at ``path`` (``without_masked`` with ``skip_masked``), after checking that
    it gives at least one example for ``nlp`` (:func:`check_docbin`; E743 when every document is text-masked)."""
    check_docbin(path)
    corpus = Corpus(path, gold_preproc=gold_preproc)
    if skip_masked:
        if all(is_text_masked(eg.reference) for eg in corpus(nlp)):
            raise ValueError(Errors.E743.format(data_path=path))
        return without_masked(corpus)
    return corpus

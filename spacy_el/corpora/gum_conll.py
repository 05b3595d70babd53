"""GUM's own CoNLL coreference files (``coref/gum/conll``): ``index<TAB>token<TAB>entities``.

Mentions are written ``(type-clusterid[-Title]`` ... ``type-clusterid[-Title])``; titles are
percent-encoded (``-`` inside a title is ``%2D``), so the body splits unambiguously. The result has the
same mentions, links and clusters as :mod:`.gum` builds from the TSV files, but no sentence starts
(the CoNLL files have no sentence breaks) and single spaces between all tokens; ``doc.ents`` are
again the linked mentions reduced by ``filter_spans``.
"""

import re
from pathlib import Path
from typing import List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import filter_spans

from ..errors import Errors
from ._util import PathLike, get_vocab, progress
from .conll2012 import MENTIONS_KEY, coref_document_to_doc, read_conll2012
from .gum import select_gum_files
from .splits import resolve_corpus_dir
from .titles import decode_url_title

_BODY = re.compile(r"^([^-]+)-(\d+)(?:-(.+))?$")


def gum_body(body: str) -> Tuple[str, str, Optional[str]]:
    """``'person-3-Lord_Byron'`` -> ('3', 'person', 'Lord_Byron'); ``'time-6'`` -> ('6', 'time', None)."""
    match = _BODY.match(body)
    if not match:
        raise ValueError(Errors.E631.format(body=body))
    label, cluster, title = match.groups()
    return cluster, label, title


def resolve_gum_conll_dir(path: PathLike) -> Path:
    """``path`` if it holds ``*.conll`` files or split subdirectories, else ``<path>/coref/gum/conll``."""
    return resolve_corpus_dir(path, ".conll", "coref/gum/conll", "GUM")


def read_gum_conll(
    path: PathLike,
    split: Optional[str] = None,
    *,
    splits_path: Optional[PathLike] = None,
    wiki_map_path: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    set_ents: bool = True,
    limit: int = 0,
    show_progress: bool = False,
) -> List[Doc]:
    """Convert GUM CoNLL files of one split (or all); paths are found as in :func:`.gum.read_gum`."""
    files, wiki_map = select_gum_files(
        resolve_gum_conll_dir(path), ".conll", split, splits_path, wiki_map_path, limit
    )
    vocab = get_vocab(nlp)
    docs = []
    for f in progress(files, f"GUM CoNLL {split or 'all'}", show_progress):
        for parsed in read_conll2012(f, gum_body):
            doc = coref_document_to_doc(vocab, parsed, wiki_map, decode_url_title)
            if set_ents:
                doc.ents = filter_spans([span for span in doc.spans[MENTIONS_KEY] if span.kb_id_])
            docs.append(doc)
    return docs

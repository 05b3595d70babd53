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

from ._util import PathLike, get_vocab, progress
from .conll2012 import MENTIONS_KEY, coref_document_to_doc, read_conll2012
from .splits import find_upwards, load_splits, resolve_corpus_dir, select_files
from .titles import decode_url_title, load_wiki_map

_BODY = re.compile(r"^([^-]+)-(\d+)(?:-(.+))?$")


def gum_body(body: str) -> Tuple[str, str, Optional[str]]:
    """``'person-3-Lord_Byron'`` -> ('3', 'person', 'Lord_Byron'); ``'time-6'`` -> ('6', 'time', None)."""
    match = _BODY.match(body)
    if not match:
        raise ValueError(f"expected 'type-cluster[-Title]', got {body!r}")
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
    conll_dir = resolve_gum_conll_dir(path)
    splits = None
    if split is not None:
        found = splits_path or find_upwards(conll_dir, ["splits.md"])
        splits = load_splits(found) if found else None
    map_path = wiki_map_path or find_upwards(conll_dir, ["wiki_map.tab", "coref/wiki_map.tab"])
    wiki_map = load_wiki_map(map_path) if map_path else None
    files = select_files(conll_dir, ".conll", split, splits)
    if limit:
        files = files[:limit]
    vocab = get_vocab(nlp)
    docs = []
    for f in progress(files, f"GUM CoNLL {split or 'all'}", show_progress):
        for parsed in read_conll2012(f, gum_body):
            doc = coref_document_to_doc(vocab, parsed, wiki_map, decode_url_title)
            if set_ents:
                doc.ents = filter_spans([span for span in doc.spans[MENTIONS_KEY] if span.kb_id_])
            docs.append(doc)
    return docs

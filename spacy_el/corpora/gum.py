"""GUM (WebAnno TSV 3.2) -> ``Doc`` objects with mentions, Wikipedia links and coreference clusters.

Result per document (``doc.user_data["doc_id"]`` = file stem, e.g. ``"GUM_bio_byron"``):

* ``doc.spans["mentions"]``: every mention, label = entity type (``person``, ``place``, ...),
  ``kb_id_`` = its Wikipedia identity (percent-decoded, e.g. ``"Aberdeen_Grammar_School"``) or ``""``
  when the mention has none; ``span._.qid`` from ``coref/wiki_map.tab`` when the map is available;
* clusters (:func:`~spacy_el.extensions.set_clusters`) from the identity relations (coref, ana,
  cata, appos, disc, pred; bridging excluded), singletons included, so every mention is in exactly
  one cluster;
* ``doc.ents``: the *linked* mentions, reduced to a non-overlapping set by
  ``spacy.util.filter_spans`` (longest first, so "Aberdeen Grammar School" wins over "Aberdeen"),
  label = entity type. GUM links pronouns too ("his" -> Lord_Byron), so these ents include linked
  pronouns. Mentions left out of ``doc.ents`` are still in ``doc.spans["mentions"]``;
* sentence boundaries from the TSV sentence ids; a space after a token wherever the character
  offsets leave a gap (so ``doc.text`` has single spaces where the source had line breaks).
"""

from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans
from spacy.vocab import Vocab

from ..errors import Errors
from ..extensions import register_extensions, set_clusters
from ._util import CorpusFormatError, PathLike, get_vocab, progress
from .gum_tsv import BRIDGING_PREFIX, IDENTITY_RELATIONS, GumTsvDocument, read_gum_tsv
from .splits import find_upwards, load_splits, resolve_corpus_dir, select_files
from .titles import decode_url_title, load_wiki_map

MENTIONS_KEY = "mentions"


class _UnionFind:
    def __init__(self, keys: List[str]):
        self.parent = {key: key for key in keys}

    def find(self, key: str) -> str:
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[root_b] = root_a


def gum_clusters(parsed: GumTsvDocument) -> List[List[str]]:
    """Group the mention keys of a parsed document into identity clusters (singletons included)."""
    keys = list(parsed.mentions)
    union_find = _UnionFind(keys)
    for rel in parsed.relations:
        if rel.kind in IDENTITY_RELATIONS:
            union_find.union(rel.source, rel.target)
        elif not rel.kind.startswith(BRIDGING_PREFIX):
            message = Errors.E643.format(
                kind=rel.kind, identity=", ".join(sorted(IDENTITY_RELATIONS)), bridging=BRIDGING_PREFIX
            )
            raise CorpusFormatError(parsed.path, rel.line, message)
    groups: Dict[str, List[str]] = {}
    for key in keys:
        groups.setdefault(union_find.find(key), []).append(key)
    return list(groups.values())


def gum_document_to_doc(
    vocab: Vocab,
    parsed: GumTsvDocument,
    doc_id: str,
    wiki_map: Optional[Mapping[str, str]] = None,
    set_ents: bool = True,
) -> Doc:
    """Build the ``Doc`` for one parsed GUM TSV document (see the module docstring)."""
    register_extensions()
    doc = Doc(vocab, words=parsed.words, spaces=parsed.spaces, sent_starts=parsed.sent_starts)
    spans: Dict[str, Span] = {}
    for key, mention in parsed.mentions.items():
        kb_id = decode_url_title(mention.title) if mention.title else ""
        spans[key] = Span(doc, mention.start, mention.end, label=mention.label, kb_id=kb_id)
    ordered = sorted(spans.values(), key=lambda s: (s.start, -s.end, s.label_))
    doc.spans[MENTIONS_KEY] = ordered
    if wiki_map:
        for key, mention in parsed.mentions.items():
            qid = wiki_map.get(mention.title) if mention.title else None
            if qid is not None:
                spans[key]._.qid = qid
    set_clusters(doc, [[(spans[k].start, spans[k].end) for k in cluster] for cluster in gum_clusters(parsed)])
    if set_ents:
        doc.ents = filter_spans([span for span in ordered if span.kb_id_])
    doc.user_data["doc_id"] = doc_id
    return doc


def read_gum_file(
    path: PathLike,
    *,
    nlp: Optional[Language] = None,
    wiki_map: Optional[Mapping[str, str]] = None,
    set_ents: bool = True,
) -> Doc:
    """Convert one GUM TSV file."""
    return gum_document_to_doc(get_vocab(nlp), read_gum_tsv(path), Path(path).stem, wiki_map, set_ents)


def resolve_gum_tsv_dir(path: PathLike) -> Path:
    """``path`` itself if it holds ``*.tsv`` files or split subdirectories, else ``<path>/coref/gum/tsv``."""
    return resolve_corpus_dir(path, ".tsv", "coref/gum/tsv", "GUM")


def select_gum_files(
    directory: Path,
    suffix: str,
    split: Optional[str],
    splits_path: Optional[PathLike],
    wiki_map_path: Optional[PathLike],
    limit: int,
) -> Tuple[List[Path], Optional[Dict[str, str]]]:
    """The GUM files of ``split`` in ``directory`` (at most ``limit`` when > 0) and the title -> QID map.

    ``splits.md`` and ``wiki_map.tab`` default to the first found in ``directory`` or up to three levels
    above it; the splits file is only needed when there is no ``<directory>/<split>/`` folder.
    """
    splits = None
    if split is not None and not (directory / split).is_dir():
        found = splits_path or find_upwards(directory, ["splits.md"])
        splits = load_splits(found) if found else None
    map_path = wiki_map_path or find_upwards(directory, ["wiki_map.tab", "coref/wiki_map.tab"])
    wiki_map = load_wiki_map(map_path) if map_path else None
    files = select_files(directory, suffix, split, splits)
    return (files[:limit] if limit else files), wiki_map


def read_gum(
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
    """Convert the GUM TSV documents of one split (or all of them when ``split`` is None).

    path: the GUM root (with ``coref/gum/tsv``), a directory of ``.tsv`` files, or a directory with
        ``train/``, ``dev/``, ``test/`` subdirectories.
    splits_path / wiki_map_path: default to the ``splits.md`` / ``coref/wiki_map.tab`` found in the
        directory or up to three levels above it; without a wiki map, ``span._.qid`` stays None.
    """
    files, wiki_map = select_gum_files(resolve_gum_tsv_dir(path), ".tsv", split, splits_path, wiki_map_path, limit)
    vocab = get_vocab(nlp)
    return [
        gum_document_to_doc(vocab, read_gum_tsv(f), f.stem, wiki_map, set_ents)
        for f in progress(files, f"GUM {split or 'all'}", show_progress)
    ]

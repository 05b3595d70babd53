"""Corpus converters and readers: AIDA CoNLL-YAGO, ELEVANT JSONL, GUM, OntoGUM, LitBank and GAP -> ``Doc``.

Conventions shared by every converter (see :mod:`spacy_el.extensions`):

* links in ``span.kb_id_``: the KB id (Wikipedia title in URL form; the QID for ELEVANT), ``"NIL"``
  for mentions annotated as having no KB entity, ``""`` for mentions without link annotation;
  ``span._.qid`` holds the Wikidata QID when known;
* coreference clusters in ``doc.spans["coref_clusters_<n>"]`` and ``doc._.coref_clusters``, written by
  :func:`set_clusters` and read by :func:`get_clusters`;
* the document id in ``doc.user_data["doc_id"]`` (also ``doc._.doc_id``).

Importing this package registers the extensions.
"""

from ..extensions import NIL, get_cluster_spans, get_clusters, register_extensions, set_clusters
from ._util import CorpusFormatError
from .aida_tsv import read_aida_tsv
from .conll2003_aida import conll2003_to_docs, read_aida, read_aida_annotations, read_aida_split
from .conll2012 import read_conll2012, read_conll2012_dir
from .elevant import read_elevant
from .gap import read_gap
from .gum import read_gum, read_gum_file
from .gum_conll import read_gum_conll
from .litbank_entities import read_litbank_entities
from .splits import load_splits
from .stats import corpus_stats, doc_annotations, mention_widths, share_wider_than

register_extensions()

__all__ = [
    "NIL",
    "CorpusFormatError",
    "register_extensions",
    "set_clusters",
    "get_clusters",
    "get_cluster_spans",
    "read_aida",
    "read_aida_split",
    "read_aida_annotations",
    "read_aida_tsv",
    "conll2003_to_docs",
    "read_elevant",
    "read_gum",
    "read_gum_file",
    "read_gum_conll",
    "read_conll2012",
    "read_conll2012_dir",
    "read_litbank_entities",
    "read_gap",
    "load_splits",
    "corpus_stats",
    "mention_widths",
    "share_wider_than",
    "doc_annotations",
]

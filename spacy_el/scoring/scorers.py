"""spaCy scorers for the spacy_el metrics.

Each `make_*_scorer` is registered in `spacy.registry.scorers` and returns the scoring callable
(spaCy's pattern, e.g. `spacy.entity_linker_scorer.v1`). A scorer takes `examples`, reads the
gold annotation from `eg.reference` and the predictions from `eg.predicted`, and returns a
dict of fractions in [0, 1]. The returned callables are `functools.partial` objects over
module-level functions so that pipelines holding them stay picklable.

What is read from a Doc:

* Entity links: `doc.ents` (or `doc.spans[spans_key]`), span offsets in characters, the id in
  `span.kb_id_` ("NIL" = NIL mention, "" = no link annotation).
* Coreference clusters: one span group per cluster, keys `coref_clusters_1`,
  `coref_clusters_2`, ... (spaCy's coref convention; `prefix` changes "coref_clusters"),
  ordered by their number.
* For ELm/ELh, a cluster mention's id is its `kb_id_`, or, when that is empty, the `kb_id_`
  of the entity in `doc.ents` with the same offsets; entities that are in no cluster become
  singleton clusters (`ents_as_singletons`), because a linked entity mentioned once is a
  cluster of its own in the ELh definition even if no span group was written for it.

Spans are compared by character offsets because the reference and predicted Docs of an
Example may be tokenized differently.
"""
from functools import partial
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

from ..errors import Errors
from ..extensions import CLUSTER_PREFIX, NIL, cluster_keys
from .cluster_el import cluster_el_scores
from .coref import OVERLAP_POLICIES, coref_scores
from .el import LinkedMention, ed_accuracy, el_scores
from .ner import ner_scores

Offsets = Tuple[int, int]
Scorer = Callable[..., Dict[str, Any]]


def _offsets(span: Span) -> Offsets:
    return span.start_char, span.end_char


def _mention_spans(doc: Doc, spans_key: Optional[str]) -> Iterable[Span]:
    """doc.ents, or the span group `spans_key` (absent group = no mentions)."""
    if spans_key is None:
        return doc.ents
    return doc.spans[spans_key] if spans_key in doc.spans else []


def doc_links(doc: Doc, spans_key: Optional[str] = None) -> List[LinkedMention]:
    """(start_char, end_char, kb_id) of every entity mention of `doc`."""
    return [(*_offsets(span), span.kb_id_) for span in _mention_spans(doc, spans_key)]


def doc_entities(doc: Doc, spans_key: Optional[str] = None) -> List[Tuple[int, int, str]]:
    """(start_char, end_char, label) of every entity of `doc`."""
    return [(*_offsets(span), span.label_) for span in _mention_spans(doc, spans_key)]


def cluster_groups(doc: Doc, prefix: str = CLUSTER_PREFIX) -> List[List[Span]]:
    """Spans of each `{prefix}_{n}` span group, ordered by n."""
    return [list(doc.spans[key]) for key in cluster_keys(doc, prefix)]


def doc_clusters(doc: Doc, prefix: str = CLUSTER_PREFIX) -> List[List[Offsets]]:
    """Coreference clusters of `doc` as lists of character offsets."""
    return [[_offsets(span) for span in group] for group in cluster_groups(doc, prefix)]


def doc_linked_clusters(
    doc: Doc, prefix: str = CLUSTER_PREFIX, ents_as_singletons: bool = True
) -> List[List[Tuple[Offsets, str]]]:
    """Clusters of (offsets, kb_id) pairs for ELm/ELh (see the module docstring)."""
    ent_links = {_offsets(ent): ent.kb_id_ for ent in doc.ents if ent.kb_id_}
    clusters: List[List[Tuple[Offsets, str]]] = []
    covered = set()
    for group in cluster_groups(doc, prefix):
        cluster = []
        for span in group:
            offsets = _offsets(span)
            cluster.append((offsets, span.kb_id_ or ent_links.get(offsets, "")))
            covered.add(offsets)
        clusters.append(cluster)
    if ents_as_singletons:
        for ent in doc.ents:
            offsets = _offsets(ent)
            if offsets not in covered:
                clusters.append([(offsets, ent.kb_id_)])
                covered.add(offsets)
    return clusters


def el_score(
    examples: Iterable[Example],
    *,
    spans_key: Optional[str] = None,
    nil_id: str = NIL,
    **kwargs: Any,
) -> Dict[str, Any]:
    """`el_micro_*`, `el_macro_*` (GERBIL) and `ed_accuracy` of `examples`."""
    docs = [
        (doc_links(eg.reference, spans_key), doc_links(eg.predicted, spans_key))
        for eg in examples
    ]
    return {**el_scores(docs, nil_id=nil_id), "ed_accuracy": ed_accuracy(docs, nil_id=nil_id)}


def coref_score(
    examples: Iterable[Example],
    *,
    prefix: str = CLUSTER_PREFIX,
    keep_singletons: bool = True,
    on_overlap: str = "error",
    **kwargs: Any,
) -> Dict[str, Any]:
    """`coref_{muc,b3,ceafe,lea,avg}_{p,r,f}` of `examples`."""
    docs = [
        (doc_clusters(eg.reference, prefix), doc_clusters(eg.predicted, prefix))
        for eg in examples
    ]
    return coref_scores(docs, keep_singletons=keep_singletons, on_overlap=on_overlap)


def cluster_el_score(
    examples: Iterable[Example],
    *,
    prefix: str = CLUSTER_PREFIX,
    ents_as_singletons: bool = True,
    nil_id: str = NIL,
    **kwargs: Any,
) -> Dict[str, Any]:
    """`elm_{p,r,f}` and `elh_{p,r,f}` of `examples`."""
    docs = [
        (
            doc_linked_clusters(eg.reference, prefix, ents_as_singletons),
            doc_linked_clusters(eg.predicted, prefix, ents_as_singletons),
        )
        for eg in examples
    ]
    return cluster_el_scores(docs, nil_id=nil_id)


def ner_score(
    examples: Iterable[Example], *, spans_key: Optional[str] = None, **kwargs: Any
) -> Dict[str, Any]:
    """`ner_{p,r,f}` and `ner_per_type` of `examples`."""
    docs = [
        (doc_entities(eg.reference, spans_key), doc_entities(eg.predicted, spans_key))
        for eg in examples
    ]
    return ner_scores(docs)


@spacy.registry.scorers("spacy-el.el_scorer.v1")
def make_el_scorer(spans_key: Optional[str] = None, nil_id: str = NIL) -> Scorer:
    """End-to-end EL (micro/macro, InKB, strong matching) and disambiguation accuracy."""
    return partial(el_score, spans_key=spans_key, nil_id=nil_id)


@spacy.registry.scorers("spacy-el.coref_scorer.v1")
def make_coref_scorer(
    prefix: str = CLUSTER_PREFIX, keep_singletons: bool = True, on_overlap: str = "error"
) -> Scorer:
    """MUC, B-cubed, CEAF-e, CoNLL-2012 average and LEA over `{prefix}_N` span groups."""
    if on_overlap not in OVERLAP_POLICIES:  # fail when the config is loaded, not at evaluation
        known = ", ".join(OVERLAP_POLICIES)
        raise ValueError(Errors.E021.format(what="on_overlap policy", name=on_overlap, known=known))
    return partial(
        coref_score, prefix=prefix, keep_singletons=keep_singletons, on_overlap=on_overlap
    )


@spacy.registry.scorers("spacy-el.cluster_el_scorer.v1")
def make_cluster_el_scorer(
    prefix: str = CLUSTER_PREFIX, ents_as_singletons: bool = True, nil_id: str = NIL
) -> Scorer:
    """ELm (mention-level) and ELh (cluster-level hard) link F1."""
    return partial(
        cluster_el_score, prefix=prefix, ents_as_singletons=ents_as_singletons, nil_id=nil_id
    )


@spacy.registry.scorers("spacy-el.ner_scorer.v1")
def make_ner_scorer(spans_key: Optional[str] = None) -> Scorer:
    """NER P/R/F1 (exact span and label), micro and per label."""
    return partial(ner_score, spans_key=spans_key)


def ner_el_score(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
    """NER (`ner_*`) and end-to-end EL (`el_*`, `ed_accuracy`) of the same `doc.ents`."""
    examples = list(examples)
    return {**ner_score(examples), **el_score(examples)}


@spacy.registry.scorers("spacy-el.ner_el_scorer.v1")
def make_ner_el_scorer() -> Scorer:
    """Joint NER + EL scores (used by `ner_stack_lstm`)."""
    return ner_el_score

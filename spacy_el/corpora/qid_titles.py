"""Wikidata QID -> Wikipedia title map, and ELEVANT benchmarks (MSNBC, ACE2004) with title kb_ids.

KB ids in this project are Wikipedia titles (``Lord_Byron``); the ELEVANT benchmark files give Wikidata
QIDs. :func:`qid_title_map` learns the identity map between the two id schemes from two sources in
``../shared/data``:

(a) GUM ``gum/coref/wiki_map.tab`` (title -> QID, inverted; titles percent-decoded as GUM docs' kb_ids);
(b) the AIDA alignment of the data README: in ``elevant/benchmark_labels_conll-{dev,test}.jsonl``, a
    document's labels sorted by ``span[0]`` correspond one to one to the annotation lines of the same
    document in ``aida/AIDA-YAGO2-annotations.tsv`` (dev = AIDA documents 947-1162, test = 1163-1393, in
    file order; the train documents 1-946 are not in the ELEVANT files). A label with a QID and an AIDA
    line with a title give one (QID, title) pair.

Source (b) reads AIDA dev/test annotations **only to learn QID -> title names** (an identity map between
two id schemes, like a Wikidata sitelink table). It is never used to build candidates, aliases or priors,
and no mention text or surface form is read or kept: only (QID, title) pairs.

:func:`elevant_title_docs` reads an ELEVANT file with :func:`.elevant.read_elevant` and replaces each
gold QID by its title.
"""

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Container, DefaultDict, Dict, Iterable, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import Errors
from ..extensions import NIL
from ._util import CorpusFormatError, PathLike, ensure_dir
from .conll2003_aida import AIDA_ANNOTATIONS_FILE, read_aida_annotations
from .elevant import SPANS_KEY, iter_elevant_records, read_elevant
from .titles import decode_url_title, is_qid, load_wiki_map

GUM_WIKI_MAP = Path("gum") / "coref" / "wiki_map.tab"
AIDA_ANNOTATIONS = Path("aida") / AIDA_ANNOTATIONS_FILE
ELEVANT_CONLL = {
    "dev": Path("elevant") / "benchmark_labels_conll-dev.jsonl",
    "test": Path("elevant") / "benchmark_labels_conll-test.jsonl",
}
UNLINKABLE = ""  # kb_id_ of a QID label whose title is unknown: no gold link for evaluation
STATS_KEYS = ("n_labels", "mapped_by_table", "mapped_by_name", "unmapped", "nil")


def _underscore(title: str) -> str:
    return title.strip().replace(" ", "_")


def gum_qid_title_pairs(wiki_map_path: PathLike) -> List[Tuple[str, str]]:
    """(QID, title) for every GUM ``wiki_map.tab`` row with a QID; titles percent-decoded."""
    return [(qid, decode_url_title(title)) for title, qid in load_wiki_map(wiki_map_path).items()]


def aida_qid_title_pairs(annotations_path: PathLike, elevant_conll: Dict[str, PathLike]) -> List[Tuple[str, str]]:
    """(QID, AIDA title) per linked mention, by aligning ELEVANT's AIDA files with the AIDA tsv.

    elevant_conll: split ("dev"/"test") -> ``benchmark_labels_conll-<split>.jsonl``. Within a split the
    k-th JSONL line is the k-th AIDA document of that split, and its labels sorted by ``span[0]`` match
    the document's annotation lines in order. The number of documents, the number of labels per document
    and each document's first word (AIDA header vs. first word of the JSONL text) are checked; a
    mismatch raises a CorpusFormatError. Only ids are returned, no text.
    """
    annotations = read_aida_annotations(annotations_path)
    pairs: List[Tuple[str, str]] = []
    for split, path in elevant_conll.items():
        aida_docs = [doc for doc in annotations if doc.split == split]
        records = list(iter_elevant_records(path))
        if len(records) != len(aida_docs):
            message = Errors.E653.format(
                n_records=len(records), annotations_path=annotations_path, n_aida=len(aida_docs), split=split
            )
            raise CorpusFormatError(path, None, message)
        for (line_no, record), aida_doc in zip(records, aida_docs):
            words = str(record.get("text") or "").split(maxsplit=1)
            if aida_doc.first_word and words and words[0] != aida_doc.first_word:
                message = Errors.E654.format(first_word=aida_doc.first_word, doc_id=aida_doc.doc_id)
                raise CorpusFormatError(path, line_no, message)
            labels = sorted(record.get("labels") or [], key=lambda label: label["span"][0])
            links = list(aida_doc.links.values())  # file order
            if len(labels) != len(links):
                message = Errors.E655.format(n_labels=len(labels), doc_id=aida_doc.doc_id, n_links=len(links))
                raise CorpusFormatError(path, line_no, message)
            for label, (title, _) in zip(labels, links):
                qid = label.get("entity_id")
                if title is not None and isinstance(qid, str) and is_qid(qid):
                    pairs.append((qid, _underscore(title)))
    return pairs


def combine_qid_title_pairs(pairs: Iterable[Tuple[str, str]]) -> Dict[str, str]:
    """{QID: title}; a QID seen with several titles keeps the most frequent, ties -> the first seen."""
    counts: DefaultDict[str, Counter] = defaultdict(Counter)
    for qid, title in pairs:
        if title:
            counts[qid][title] += 1
    # Counter.most_common is stable: among equal counts the first inserted title wins.
    return {qid: titles.most_common(1)[0][0] for qid, titles in counts.items()}


def qid_title_map(data_dir: PathLike) -> Dict[str, str]:
    """Wikidata QID -> Wikipedia title (KB id form, underscores) from the shared data directory.

    Combines (a) GUM ``gum/coref/wiki_map.tab`` (one vote per row) and (b) the ELEVANT/AIDA dev+test
    alignment (one vote per linked mention; see the module docstring). Source (b) uses AIDA dev/test
    annotations only to learn QID -> title names, an identity map between two id schemes; it never
    provides candidates, aliases or priors. When a QID maps to several titles the most frequent is kept
    (ties: GUM before AIDA, then file order).
    """
    data_dir = ensure_dir(data_dir, "Shared data directory")
    pairs = gum_qid_title_pairs(data_dir / GUM_WIKI_MAP)
    pairs += aida_qid_title_pairs(
        data_dir / AIDA_ANNOTATIONS, {split: data_dir / rel for split, rel in ELEVANT_CONLL.items()}
    )
    return combine_qid_title_pairs(pairs)


def _label_names(doc: Doc) -> Dict[Tuple[int, int], str]:
    """(start_char, end_char) -> the ``name`` of the (first) raw ELEVANT label with those offsets."""
    names: Dict[Tuple[int, int], str] = {}
    for label in doc.user_data.get("elevant_labels") or []:
        span = label.get("span")
        name = label.get("name")
        if isinstance(span, list) and len(span) == 2 and isinstance(name, str):
            names.setdefault((span[0], span[1]), name)
    return names


def _name_for(span: Span, names: Dict[Tuple[int, int], str]) -> Optional[str]:
    name = names.get((span.start_char, span.end_char))
    if name is None:  # label expanded to token boundaries: find the label inside the span
        inside = [n for (s, e), n in names.items() if span.start_char <= s and e <= span.end_char]
        name = inside[0] if len(inside) == 1 else None
    if not name or name.startswith("Unknown"):
        return None
    return _underscore(name)


def _title_kb_id(
    span: Span,
    names: Dict[Tuple[int, int], str],
    qid_to_title: Dict[str, str],
    kb: Optional[Container[str]],
) -> Tuple[str, str]:
    """(new kb_id, route) for one span; route is one of the stats keys."""
    qid = span.kb_id_
    if qid == NIL or not is_qid(qid):
        return qid, "nil"
    title = qid_to_title.get(qid)
    if title:
        return title, "mapped_by_table"
    if kb is not None:
        fallback = _name_for(span, names)
        if fallback and fallback in kb:
            return fallback, "mapped_by_name"
    return UNLINKABLE, "unmapped"


def _retitle(
    doc: Doc, spans: Iterable[Span], names: Dict[Tuple[int, int], str], qid_to_title: Dict[str, str], kb: Any
) -> Tuple[List[Span], List[str]]:
    new_spans: List[Span] = []
    routes: List[str] = []
    for span in spans:
        qid = span._.qid
        kb_id, route = _title_kb_id(span, names, qid_to_title, kb)
        new = Span(doc, span.start, span.end, label=span.label, kb_id=kb_id)
        new._.qid = qid  # set explicitly rather than rely on how spaCy keys span extension values
        new_spans.append(new)
        routes.append(route)
    return new_spans, routes


def elevant_title_docs(
    path: PathLike,
    nlp: Optional[Language],
    qid_to_title: Dict[str, str],
    kb: Optional[Container[str]] = None,
) -> Tuple[List[Doc], Dict[str, int]]:
    """Read an ELEVANT benchmark (MSNBC, ACE2004, ...) with Wikipedia-title kb_ids.

    Every gold QID in ``doc.ents`` (and in ``doc.spans["elevant_labels"]``, nested labels included) is
    replaced by ``qid_to_title[qid]``. A QID without a mapping falls back to the label's ``name`` with
    spaces -> underscores, but only if ``kb`` is given and the title is in it (``title in kb``);
    otherwise its kb_id_ becomes ``""`` (no gold link: unlinkable for evaluation). ``"NIL"`` stays
    ``"NIL"``. Labels and ``span._.qid`` are kept.

    Returns (docs, stats); stats count the labels in ``doc.ents`` (the evaluated, non-nested ones):
    ``n_labels``, ``mapped_by_table``, ``mapped_by_name``, ``unmapped`` (QID labels with kb_id_ ``""``)
    and ``nil``; ``n_labels`` is the sum of the other four.
    """
    docs = read_elevant(path, nlp=nlp)
    stats = dict.fromkeys(STATS_KEYS, 0)
    for doc in docs:
        names = _label_names(doc)
        ents, routes = _retitle(doc, doc.ents, names, qid_to_title, kb)
        if SPANS_KEY in doc.spans:
            doc.spans[SPANS_KEY] = _retitle(doc, doc.spans[SPANS_KEY], names, qid_to_title, kb)[0]
        doc.ents = ents
        stats["n_labels"] += len(routes)
        for route in routes:
            stats[route] += 1
    return docs, stats

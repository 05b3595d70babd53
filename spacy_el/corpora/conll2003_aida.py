"""AIDA CoNLL-YAGO: CoNLL-2003 NER files joined with ``AIDA-YAGO2-annotations.tsv`` into ``Doc`` objects.

Result per document:

* ``doc.ents``: every NER entity of the CoNLL file (label = CoNLL type), with ``kb_id_`` = the AIDA
  Wikipedia title (``\\uXXXX`` escapes decoded), ``"NIL"`` for ``--NME--``, or ``""`` when AIDA has no
  annotation for the entity (103 train, 25 dev, 32 test entities); ``ent._.qid`` if a title->QID map
  is given;
* sentence boundaries from the blank lines, POS tags in ``token.tag_``;
* ``doc.user_data["doc_id"]`` = the AIDA document number as a string (``"1"`` ... ``"1393"``).

Splits: ``train.txt`` = documents 1-946, ``valid.txt`` (testa) = 947-1162, ``test.txt`` (testb) =
1163-1393. The annotation file lists all documents in that order; documents are matched by order
within a split and checked against the header's first word.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from ..errors import Errors
from ..extensions import NIL, register_extensions
from ._util import CorpusFormatError, PathLike, ensure_dir, get_vocab, progress, read_lines
from .conll2003 import ConllDocument, read_conll2003
from .titles import decode_aida_title

AIDA_SPLITS = ("train", "dev", "test")
AIDA_CONLL_FILES = {"train": "train.txt", "dev": "valid.txt", "test": "test.txt"}
AIDA_ANNOTATIONS_FILE = "AIDA-YAGO2-annotations.tsv"
# Suffix of the document number in AIDA headers ("947testa") -> split.
AIDA_SUFFIX_SPLITS = {"": "train", "testa": "dev", "testb": "test"}
AIDA_NME = "--NME--"
_HEADER = re.compile(r"^-DOCSTART- \((\d+)(testa|testb)?(?: (.*))?\)\s*$")


@dataclass
class AidaDocAnnotations:
    """The annotation lines of one AIDA document."""

    doc_id: str  # "947" for "(947testa ...)"
    split: str  # train / dev / test
    first_word: str
    line: int  # line number of the -DOCSTART- header
    # token index -> (title with escapes decoded, or None for --NME--; line number)
    links: Dict[int, Tuple[Optional[str], int]] = field(default_factory=dict)


def parse_aida_header(line: str, path: PathLike, line_no: int) -> Tuple[str, str, str]:
    """Parse ``-DOCSTART- (947testa FIRSTWORD)`` into (doc_id, split, first word)."""
    match = _HEADER.match(line)
    if not match:
        raise CorpusFormatError(path, line_no, Errors.E617.format(line=line))
    number, suffix, first_word = match.groups()
    return number, AIDA_SUFFIX_SPLITS[suffix or ""], first_word or ""


def read_aida_annotations(path: PathLike) -> List[AidaDocAnnotations]:
    """Read ``AIDA-YAGO2-annotations.tsv``: one entry per document, in file order.

    Lines after a header are ``token_index<TAB>--NME--`` or
    ``token_index<TAB>title<TAB>URL<TAB>page_id[<TAB>Freebase_MID]``; blank lines are ignored.
    """
    docs: List[AidaDocAnnotations] = []
    for line_no, line in enumerate(read_lines(path, "AIDA annotation file"), start=1):
        if not line.strip():
            continue
        if line.startswith("-DOCSTART-"):
            doc_id, split, first_word = parse_aida_header(line, path, line_no)
            docs.append(AidaDocAnnotations(doc_id, split, first_word, line_no))
            continue
        if not docs:
            raise CorpusFormatError(path, line_no, Errors.E616.format(what="an annotation"))
        cols = line.split("\t")
        if not cols[0].isdigit() or len(cols) < 2 or not cols[1]:
            raise CorpusFormatError(path, line_no, Errors.E618.format(line=line))
        if cols[1] != AIDA_NME and len(cols) < 4:
            raise CorpusFormatError(path, line_no, Errors.E619.format(line=line))
        index = int(cols[0])
        if index in docs[-1].links:
            raise CorpusFormatError(path, line_no, Errors.E620.format(index=index))
        title = None if cols[1] == AIDA_NME else decode_aida_title(cols[1])
        docs[-1].links[index] = (title, line_no)
    return docs


def conll_document_to_doc(
    vocab: Vocab,
    conll: ConllDocument,
    doc_id: Optional[str] = None,
    kb_ids: Optional[Mapping[int, str]] = None,
    title_to_qid: Optional[Mapping[str, str]] = None,
) -> Doc:
    """Build a ``Doc`` from a parsed CoNLL document; ``kb_ids`` maps entity start token -> kb_id."""
    register_extensions()
    spaces = [True] * len(conll.words)
    if spaces:
        spaces[-1] = False
    tags = conll.tags if all(tag is not None for tag in conll.tags) else None
    doc = Doc(vocab, words=conll.words, spaces=spaces, tags=tags, sent_starts=conll.sent_starts)
    kb_ids = kb_ids or {}
    doc.ents = [
        Span(doc, e.start, e.end, label=e.label, kb_id=kb_ids.get(e.start, "")) for e in conll.entities
    ]
    if title_to_qid:
        for ent in doc.ents:
            qid = title_to_qid.get(ent.kb_id_)
            if qid is not None:
                ent._.qid = qid
    if doc_id is not None:
        doc.user_data["doc_id"] = doc_id
    return doc


def link_kb_ids(conll: ConllDocument, annotations: AidaDocAnnotations, ann_path: PathLike) -> Dict[int, str]:
    """Check the AIDA annotations of one document against its CoNLL entities; return start -> kb_id."""
    if conll.words and annotations.first_word and conll.words[0] != annotations.first_word:
        message = Errors.E622.format(doc_id=annotations.doc_id, first_word=annotations.first_word,
                                     conll_place=f"{conll.path}:{conll.line}", conll_word=conll.words[0])
        raise CorpusFormatError(ann_path, annotations.line, message)
    starts = {e.start for e in conll.entities}
    kb_ids: Dict[int, str] = {}
    for index, (title, line_no) in annotations.links.items():
        if index >= len(conll.words):
            raise CorpusFormatError(ann_path, line_no, Errors.E623.format(index=index, n_tokens=len(conll.words)))
        if index not in starts:
            place = f"{conll.path}:{conll.token_lines[index]}"
            raise CorpusFormatError(
                ann_path, line_no, Errors.E624.format(index=index, word=conll.words[index], conll_place=place)
            )
        kb_ids[index] = NIL if title is None else title
    return kb_ids


def conll2003_to_docs(
    conll_path: PathLike,
    annotations: Optional[Sequence[AidaDocAnnotations]] = None,
    *,
    annotations_path: PathLike = AIDA_ANNOTATIONS_FILE,
    nlp: Optional[Language] = None,
    title_to_qid: Optional[Mapping[str, str]] = None,
    show_progress: bool = False,
) -> List[Doc]:
    """Convert one CoNLL-2003 file, optionally joined with the AIDA annotations of the same documents.

    annotations: the annotation entries of exactly this file's documents, in order (see
        :func:`read_aida_annotations`); ``None`` gives plain NER docs with empty kb_ids and doc ids
        ``"<file stem>-<n>"``.
    annotations_path: only used in error messages.
    """
    vocab = get_vocab(nlp)
    conll_docs = read_conll2003(conll_path)
    if annotations is not None and len(annotations) != len(conll_docs):
        raise ValueError(Errors.E621.format(
            conll_path=conll_path, n_conll=len(conll_docs), path=annotations_path, n_aida=len(annotations)
        ))
    docs = []
    stem = Path(conll_path).stem
    for i, conll in enumerate(progress(conll_docs, f"CoNLL {stem}", show_progress)):
        if annotations is None:
            docs.append(conll_document_to_doc(vocab, conll, f"{stem}-{i + 1}"))
            continue
        ann = annotations[i]
        kb_ids = link_kb_ids(conll, ann, annotations_path)
        docs.append(conll_document_to_doc(vocab, conll, ann.doc_id, kb_ids, title_to_qid))
    return docs


def read_aida_split(
    data_dir: PathLike,
    split: str,
    *,
    annotations_path: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    title_to_qid: Optional[Mapping[str, str]] = None,
    show_progress: bool = False,
) -> List[Doc]:
    """Read one AIDA split (``train``, ``dev`` or ``test``) from a directory with the CoNLL files.

    annotations_path: defaults to ``<data_dir>/AIDA-YAGO2-annotations.tsv``.
    """
    return read_aida(
        data_dir,
        splits=(split,),
        annotations_path=annotations_path,
        nlp=nlp,
        title_to_qid=title_to_qid,
        show_progress=show_progress,
    )[split]


def read_aida(
    data_dir: PathLike,
    *,
    splits: Sequence[str] = AIDA_SPLITS,
    annotations_path: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    title_to_qid: Optional[Mapping[str, str]] = None,
    show_progress: bool = False,
) -> Dict[str, List[Doc]]:
    """Read AIDA splits (default all three): {"train": [...], "dev": [...], "test": [...]}.

    The annotation file is read once; each split's entries (by header suffix: none = train,
    ``testa`` = dev, ``testb`` = test) are joined with that split's CoNLL file.
    """
    unknown = [split for split in splits if split not in AIDA_CONLL_FILES]
    if unknown:
        raise ValueError(Errors.E021.format(what="AIDA split", name=unknown[0], known=", ".join(AIDA_SPLITS)))
    data_dir = ensure_dir(data_dir, "AIDA data directory")
    ann_path = Path(annotations_path) if annotations_path is not None else data_dir / AIDA_ANNOTATIONS_FILE
    annotations = read_aida_annotations(ann_path)
    result: Dict[str, List[Doc]] = {}
    for split in splits:
        result[split] = conll2003_to_docs(
            data_dir / AIDA_CONLL_FILES[split],
            [a for a in annotations if a.split == split],
            annotations_path=ann_path,
            nlp=nlp,
            title_to_qid=title_to_qid,
            show_progress=show_progress,
        )
    return result

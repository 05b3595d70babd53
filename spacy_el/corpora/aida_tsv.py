"""The combined ``AIDA-YAGO2-dataset.tsv`` layout produced by the official AIDA CoNLL-YAGO tool.

Format: ``-DOCSTART- (947testa FIRSTWORD)`` starts a document; then one token per line, either just
the token, or ``token<TAB>B|I<TAB>full mention<TAB>--NME--`` or
``token<TAB>B|I<TAB>full mention<TAB>YAGO2 title<TAB>Wikipedia URL<TAB>page id[<TAB>Freebase MID]``;
blank lines separate sentences.

The file has no NER labels: mentions become ``doc.ents`` labelled ``"ENT"``, unless the CoNLL-2003
files are given (``conll_dir``), in which case the result equals :mod:`.conll2003_aida`'s: all NER
entities with their labels, linked where an AIDA mention starts.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import Errors
from ..extensions import NIL, register_extensions
from ._util import CorpusFormatError, PathLike, ensure_dir, get_vocab, progress, read_lines
from .conll2003 import ConllDocument, ConllEntity, read_conll2003
from .conll2003_aida import (
    AIDA_CONLL_FILES,
    AIDA_NME,
    AIDA_SPLITS,
    AidaDocAnnotations,
    conll_document_to_doc,
    link_kb_ids,
    parse_aida_header,
)
from .titles import decode_aida_title

DEFAULT_LABEL = "ENT"


@dataclass
class AidaTsvDocument:
    """One document of the combined AIDA tsv: its tokens (as a CoNLL document) and its links."""

    conll: ConllDocument
    annotations: AidaDocAnnotations


def read_aida_tsv_documents(path: PathLike) -> List[AidaTsvDocument]:
    """Parse the combined AIDA tsv into documents; mentions are collected as ``ENT`` entities."""
    docs: List[AidaTsvDocument] = []
    new_sentence = True
    open_mention: Optional[ConllEntity] = None
    for line_no, line in enumerate(read_lines(path, "AIDA dataset tsv"), start=1):
        if line.startswith("-DOCSTART-"):
            doc_id, split, first_word = parse_aida_header(line, path, line_no)
            ann = AidaDocAnnotations(doc_id, split, first_word, line_no)
            docs.append(AidaTsvDocument(ConllDocument(path=str(path), line=line_no), ann))
            new_sentence, open_mention = True, None
            continue
        if not line.strip():
            new_sentence, open_mention = True, None
            continue
        if not docs:
            raise CorpusFormatError(path, line_no, Errors.E616.format(what="a token"))
        conll, ann = docs[-1].conll, docs[-1].annotations
        cols = line.split("\t")
        i = len(conll.words)
        conll.words.append(cols[0])
        conll.tags.append(None)
        conll.sent_starts.append(new_sentence)
        conll.token_lines.append(line_no)
        new_sentence = False
        if len(cols) == 1:
            open_mention = None
            continue
        if len(cols) < 4 or cols[1] not in ("B", "I") or (cols[3] != AIDA_NME and len(cols) < 6):
            raise CorpusFormatError(path, line_no, Errors.E625.format(line=line))
        if cols[1] == "I":
            if open_mention is None:
                raise CorpusFormatError(path, line_no, Errors.E626)
            open_mention.end = i + 1
            continue
        open_mention = ConllEntity(start=i, end=i + 1, label=DEFAULT_LABEL)
        conll.entities.append(open_mention)
        ann.links[i] = (None if cols[3] == AIDA_NME else decode_aida_title(cols[3]), line_no)
    return docs


def read_aida_tsv(
    path: PathLike,
    *,
    conll_dir: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    show_progress: bool = False,
) -> Dict[str, List[Doc]]:
    """Convert the combined AIDA tsv into {"train": [...], "dev": [...], "test": [...]} Docs.

    conll_dir: directory with ``train.txt``/``valid.txt``/``test.txt``; when given, doc.ents are the
        NER entities of those files (tokens must match the tsv exactly) and AIDA mentions must start
        on one of them.
    """
    register_extensions()
    vocab = get_vocab(nlp)
    tsv_docs = read_aida_tsv_documents(path)
    result: Dict[str, List[Doc]] = {split: [] for split in AIDA_SPLITS}
    by_split: Dict[str, List[AidaTsvDocument]] = {split: [] for split in AIDA_SPLITS}
    for tsv_doc in tsv_docs:
        by_split[tsv_doc.annotations.split].append(tsv_doc)
    for split, split_docs in by_split.items():
        if conll_dir is None:
            for tsv_doc in progress(split_docs, f"AIDA tsv {split}", show_progress):
                links = tsv_doc.annotations.links
                kb_ids = {i: NIL if title is None else title for i, (title, _) in links.items()}
                doc_id = tsv_doc.annotations.doc_id
                result[split].append(conll_document_to_doc(vocab, tsv_doc.conll, doc_id, kb_ids))
            continue
        conll_path = ensure_dir(conll_dir, "CoNLL-2003 directory") / AIDA_CONLL_FILES[split]
        conll_docs = read_conll2003(conll_path)
        if len(conll_docs) != len(split_docs):
            raise ValueError(Errors.E621.format(
                conll_path=conll_path, n_conll=len(conll_docs), path=path, n_aida=len(split_docs)
            ))
        pairs = progress(zip(split_docs, conll_docs), f"AIDA tsv {split}", show_progress, len(conll_docs))
        for tsv_doc, conll in pairs:
            if tsv_doc.conll.words != conll.words:
                place = f"{conll_path}:{conll.line}"
                message = Errors.E627.format(doc_id=tsv_doc.annotations.doc_id, conll_place=place)
                raise CorpusFormatError(path, tsv_doc.conll.line, message)
            kb_ids = link_kb_ids(conll, tsv_doc.annotations, path)
            result[split].append(conll_document_to_doc(vocab, conll, tsv_doc.annotations.doc_id, kb_ids))
    return result

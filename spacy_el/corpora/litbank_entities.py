"""LitBank nested entities (``entities/tsv/*.tsv``) -> ``Doc`` objects.

Format: one token per line, ``token<TAB>layer1<TAB>layer2<TAB>...`` with one BIO tag per nesting layer
(layer 1 innermost; some files have an extra all-``O`` layer); blank lines end sentences.

Result: ``doc.spans["entities"]`` with ALL entities (PER, FAC, LOC, GPE, ORG, VEH) of all layers;
``doc.ents`` = the outermost ones (``filter_spans``: longest first), empty kb_ids (LitBank has no
links); sentence starts from the blank lines; ``doc.user_data["doc_id"]`` = file stem.
"""

from pathlib import Path
from typing import List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans
from spacy.vocab import Vocab

from ..errors import Errors
from ..extensions import register_extensions
from ._util import CorpusFormatError, PathLike, get_vocab, progress, read_lines
from .splits import load_splits, select_files

SPANS_KEY = "entities"


def read_litbank_entities_tsv(path: PathLike) -> Tuple[List[str], List[bool], List[Tuple[int, int, str]]]:
    """Parse one file into (words, sentence starts, [(start, end, label), ...] over all layers)."""
    words: List[str] = []
    sent_starts: List[bool] = []
    entities: List[Tuple[int, int, str]] = []
    open_by_layer: dict = {}
    new_sentence = True
    for line_no, line in enumerate(read_lines(path, "LitBank entity tsv"), start=1):
        if not line.strip():
            new_sentence, open_by_layer = True, {}
            continue
        cols = line.rstrip("\t").split("\t")
        i = len(words)
        words.append(cols[0])
        sent_starts.append(new_sentence)
        new_sentence = False
        for layer, tag in enumerate(cols[1:]):
            current = open_by_layer.get(layer)
            if tag == "O":
                open_by_layer.pop(layer, None)
            elif tag.startswith("I-") and current is not None and entities[current][2] == tag[2:]:
                start, _, label = entities[current]
                entities[current] = (start, i + 1, label)
            elif tag.startswith(("B-", "I-")) and len(tag) > 2:
                if tag.startswith("I-"):
                    raise CorpusFormatError(path, line_no, Errors.E661.format(layer=layer + 1, tag=tag))
                open_by_layer[layer] = len(entities)
                entities.append((i, i + 1, tag[2:]))
            else:
                raise CorpusFormatError(path, line_no, Errors.E662.format(layer=layer + 1, tag=tag))
    return words, sent_starts, entities


def litbank_entities_to_doc(vocab: Vocab, path: PathLike) -> Doc:
    """Convert one LitBank entity tsv file (see the module docstring)."""
    register_extensions()
    words, sent_starts, entities = read_litbank_entities_tsv(path)
    spaces = [True] * len(words)
    if spaces:
        spaces[-1] = False
    doc = Doc(vocab, words=words, spaces=spaces, sent_starts=sent_starts)
    spans = sorted(
        (Span(doc, s, e, label=label) for s, e, label in entities), key=lambda x: (x.start, -x.end)
    )
    doc.spans[SPANS_KEY] = spans
    doc.ents = filter_spans(spans)
    doc.user_data["doc_id"] = Path(path).stem
    return doc


def read_litbank_entities(
    path: PathLike,
    split: Optional[str] = None,
    *,
    splits_path: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    limit: int = 0,
    show_progress: bool = False,
) -> List[Doc]:
    """Convert the LitBank entity files of one split (``splits_path``: LitBank ``splits.json``)."""
    splits = load_splits(splits_path) if splits_path is not None else None
    files = select_files(path, ".tsv", split, splits)
    if limit:
        files = files[:limit]
    vocab = get_vocab(nlp)
    return [
        litbank_entities_to_doc(vocab, f) for f in progress(files, f"LitBank {split or 'all'}", show_progress)
    ]

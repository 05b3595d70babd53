"""spaCy corpus readers (``[corpora.train] @readers = "spacy-el.AidaConllReader.v1"``) over the converters.

Every reader returns a callable ``(nlp) -> Iterator[Example]``, like ``spacy.Corpus.v1``. The corpus is
converted once, with ``nlp.vocab`` (raw-text corpora: with ``nlp``'s tokenizer), on the first call and
cached for later epochs. The predicted doc is ``nlp.make_doc(reference.text)``, or the reference's own
tokens with ``gold_preproc = true``. ``limit`` > 0 keeps only the first ``limit`` documents. The GUM and
CoNLL-2012 readers take ``skip_masked = true`` to leave out text-masked documents (GUM's Reddit documents,
:mod:`.masked`: underscores for words), naming how many they left out in a warning.
"""

from pathlib import Path
from typing import Callable, Iterator, List, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..errors import Warnings
from ._util import warn
from .aida_plus import read_aida_plus
from .aida_tsv import read_aida_tsv
from .conll2003_aida import read_aida_split
from .conll2012 import read_conll2012_dir
from .elevant import read_elevant
from .gap import read_gap
from .gum import read_gum
from .gum_conll import read_gum_conll
from .litbank_entities import read_litbank_entities
from .masked import unmasked

ExampleReader = Callable[[Language], Iterator[Example]]


class CachedDocReader:
    """Convert a corpus once per vocab and yield ``Example`` objects from it on every call."""

    def __init__(self, load: Callable[[Language], List[Doc]], limit: int = 0, gold_preproc: bool = False,
                 skip_masked: bool = False):
        self.load = load
        self.limit = limit
        self.gold_preproc = gold_preproc
        self.skip_masked = skip_masked
        self._docs: Optional[List[Doc]] = None
        self._vocab = None

    def docs(self, nlp: Language) -> List[Doc]:
        """The reference docs, converted with ``nlp`` (cached while ``nlp.vocab`` stays the same); with
        ``skip_masked``, the text-masked ones left out (after ``limit``, which counts the documents read)."""
        if self._docs is None or self._vocab is not nlp.vocab:
            docs = self.load(nlp)
            docs = docs[: self.limit] if self.limit else docs
            if self.skip_masked:
                kept = unmasked(docs)
                if len(kept) < len(docs):
                    warn(Warnings.W601.format(n_left=len(docs) - len(kept), n_docs=len(docs)))
                docs = kept
            self._docs = docs
            self._vocab = nlp.vocab
        return self._docs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for reference in self.docs(nlp):
            if self.gold_preproc:
                words = [t.text for t in reference]
                spaces = [bool(t.whitespace_) for t in reference]
                predicted = Doc(nlp.vocab, words=words, spaces=spaces)
            else:
                predicted = nlp.make_doc(reference.text)
            yield Example(predicted, reference)


@registry.readers("spacy-el.AidaConllReader.v1")
def create_aida_conll_reader(
    path: Path,
    split: str,
    annotations_path: Optional[Path] = None,
    limit: int = 0,
    gold_preproc: bool = False,
) -> ExampleReader:
    """AIDA CoNLL-YAGO: ``path`` = directory with train.txt/valid.txt/test.txt (and, unless
    ``annotations_path`` is given, AIDA-YAGO2-annotations.tsv); ``split`` = train, dev or test."""
    return CachedDocReader(
        lambda nlp: read_aida_split(path, split, annotations_path=annotations_path, nlp=nlp),
        limit,
        gold_preproc,
    )


@registry.readers("spacy-el.AidaTsvReader.v1")
def create_aida_tsv_reader(
    path: Path, split: str, conll_dir: Optional[Path] = None, limit: int = 0, gold_preproc: bool = False
) -> ExampleReader:
    """The combined AIDA-YAGO2-dataset.tsv; NER labels from ``conll_dir`` if given, else ``ENT``."""
    return CachedDocReader(
        lambda nlp: read_aida_tsv(path, conll_dir=conll_dir, nlp=nlp)[split], limit, gold_preproc
    )


@registry.readers("spacy-el.AidaPlusReader.v1")
def create_aida_plus_reader(path: Path, limit: int = 0, gold_preproc: bool = False) -> ExampleReader:
    """A converted AIDA split (``corpus/aida/<split>.spacy``) with clusters of same-entity mentions
    (:mod:`spacy_el.corpora.aida_plus`)."""
    return CachedDocReader(lambda nlp: read_aida_plus(path, nlp), limit, gold_preproc)


@registry.readers("spacy-el.ElevantReader.v1")
def create_elevant_reader(path: Path, limit: int = 0, gold_preproc: bool = False) -> ExampleReader:
    """An ELEVANT benchmark JSONL file (kb_id_ = Wikidata QID or NIL)."""
    return CachedDocReader(lambda nlp: read_elevant(path, nlp=nlp, limit=limit), limit, gold_preproc)


@registry.readers("spacy-el.GumReader.v1")
def create_gum_reader(
    path: Path,
    split: Optional[str] = None,
    splits_path: Optional[Path] = None,
    wiki_map_path: Optional[Path] = None,
    limit: int = 0,
    gold_preproc: bool = False,
    skip_masked: bool = False,
) -> ExampleReader:
    """GUM WebAnno TSV: mentions, links, clusters (singletons included), linked ents."""
    return _gum_reader(read_gum, path, split, splits_path, wiki_map_path, limit, gold_preproc, skip_masked)


@registry.readers("spacy-el.GumConllReader.v1")
def create_gum_conll_reader(
    path: Path,
    split: Optional[str] = None,
    splits_path: Optional[Path] = None,
    wiki_map_path: Optional[Path] = None,
    limit: int = 0,
    gold_preproc: bool = False,
    skip_masked: bool = False,
) -> ExampleReader:
    """GUM's CoNLL coreference files (same annotation as the TSV, no sentence starts)."""
    return _gum_reader(read_gum_conll, path, split, splits_path, wiki_map_path, limit, gold_preproc, skip_masked)


def _gum_reader(
    read: Callable[..., List[Doc]],
    path: Path,
    split: Optional[str],
    splits_path: Optional[Path],
    wiki_map_path: Optional[Path],
    limit: int,
    gold_preproc: bool,
    skip_masked: bool,
) -> ExampleReader:
    """A cached reader over ``read_gum`` or ``read_gum_conll`` (both take the same arguments)."""
    return CachedDocReader(
        lambda nlp: read(path, split, splits_path=splits_path, wiki_map_path=wiki_map_path, nlp=nlp, limit=limit),
        limit,
        gold_preproc,
        skip_masked,
    )


@registry.readers("spacy-el.CorefConllReader.v1")
def create_coref_conll_reader(
    path: Path,
    split: Optional[str] = None,
    splits_path: Optional[Path] = None,
    limit: int = 0,
    gold_preproc: bool = False,
    skip_masked: bool = False,
) -> ExampleReader:
    """CoNLL-2012-style coreference files (LitBank ``coref/conll``, OntoGUM ``coref/ontogum/conll``);
    ``splits_path`` = LitBank splits.json or GUM splits.md."""
    return CachedDocReader(
        lambda nlp: read_conll2012_dir(path, split, splits_path=splits_path, nlp=nlp, limit=limit),
        limit,
        gold_preproc,
        skip_masked,
    )


@registry.readers("spacy-el.LitBankEntitiesReader.v1")
def create_litbank_entities_reader(
    path: Path,
    split: Optional[str] = None,
    splits_path: Optional[Path] = None,
    limit: int = 0,
    gold_preproc: bool = False,
) -> ExampleReader:
    """LitBank nested entities (``entities/tsv``): outermost entities as doc.ents."""
    return CachedDocReader(
        lambda nlp: read_litbank_entities(path, split, splits_path=splits_path, nlp=nlp, limit=limit),
        limit,
        gold_preproc,
    )


@registry.readers("spacy-el.GapReader.v1")
def create_gap_reader(path: Path, limit: int = 0, gold_preproc: bool = False) -> ExampleReader:
    """A GAP tsv file: pronoun and names in doc.spans["gap"], coreferent pairs as clusters."""
    return CachedDocReader(lambda nlp: read_gap(path, nlp=nlp, limit=limit), limit, gold_preproc)

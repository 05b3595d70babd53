"""Convert a whole corpus into named parts (usually train/dev/test) and write them as ``.spacy`` DocBins.

Used by ``python -m spacy_el convert``; every function here is also usable from Python.
"""

from pathlib import Path
from typing import Callable, Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc, DocBin

from ..errors import Errors
from ..kb.files import write_bytes
from ._util import PathLike, ensure_dir, ensure_file
from .aida_tsv import read_aida_tsv
from .conll2003_aida import read_aida
from .conll2012 import read_conll2012_dir
from .elevant import read_elevant
from .gap import read_gap
from .gum import read_gum, resolve_gum_tsv_dir
from .gum_conll import read_gum_conll, resolve_gum_conll_dir
from .litbank_entities import read_litbank_entities
from .splits import find_upwards

SPLITS = ("train", "dev", "test")
GAP_FILES = {"train": "gap-development.tsv", "dev": "gap-validation.tsv", "test": "gap-test.tsv"}

CORPUS_HELP: Dict[str, str] = {
    "aida": "AIDA CoNLL-YAGO; INPUT = dir with train.txt, valid.txt, test.txt, AIDA-YAGO2-annotations.tsv",
    "aida-tsv": "combined AIDA-YAGO2-dataset.tsv file (labels 'ENT' unless --conll-dir is given)",
    "elevant": "ELEVANT benchmark .jsonl file, or a directory of them (one output per file)",
    "gum": "GUM WebAnno TSV; INPUT = GUM root, a .tsv directory, or one with train/dev/test subdirectories",
    "gum-conll": "GUM CoNLL coreference files; INPUT = GUM root or a .conll directory",
    "ontogum": "OntoGUM CoNLL; INPUT = GUM root or coref/ontogum/conll (splits from splits.md)",
    "litbank": "LitBank coreference CoNLL; INPUT = LitBank root or coref/conll (splits from splits.json)",
    "litbank-entities": "LitBank nested entities; INPUT = LitBank root or entities/tsv",
    "gap": "GAP tsv file, or a directory with gap-{development,validation,test}.tsv (-> train/dev/test)",
}


def _sub_dir(path: Path, *parts: str) -> Path:
    """``path`` if it already holds corpus files or split subdirectories, else ``path/parts...``."""
    path = ensure_dir(path)
    if any(path.glob("*.conll")) or any(path.glob("*.tsv")) or any((path / s).is_dir() for s in SPLITS):
        return path
    return ensure_dir(path.joinpath(*parts))


def _split_parts(
    directory: Path, splits_path: Optional[PathLike], names: List[str], read: Callable[..., List[Doc]]
) -> Dict[str, List[Doc]]:
    """Read train/dev/test with ``read(directory, split, splits_path=...)``, or everything as "all"
    when there is neither a splits file nor split subdirectories."""
    found = splits_path or find_upwards(directory, names)
    if found is None and not any((directory / s).is_dir() for s in SPLITS):
        return {"all": read(directory, None, splits_path=None)}
    return {split: read(directory, split, splits_path=found) for split in SPLITS}


def convert_corpus(
    corpus: str,
    input_path: PathLike,
    *,
    splits_path: Optional[PathLike] = None,
    wiki_map_path: Optional[PathLike] = None,
    conll_dir: Optional[PathLike] = None,
    nlp: Optional[Language] = None,
    limit: int = 0,
    show_progress: bool = False,
) -> Dict[str, List[Doc]]:
    """Convert ``input_path`` in format ``corpus`` (a key of :data:`CORPUS_HELP`) into named parts."""
    path = Path(input_path)
    kwargs = {"nlp": nlp, "show_progress": show_progress}
    parts: Dict[str, List[Doc]]
    if corpus == "aida":
        parts = read_aida(path, **kwargs)
    elif corpus == "aida-tsv":
        parts = read_aida_tsv(ensure_file(path, "AIDA dataset tsv"), conll_dir=conll_dir, **kwargs)
    elif corpus == "elevant":
        files = sorted(ensure_dir(path).glob("*.jsonl")) if path.is_dir() else [ensure_file(path)]
        parts = {f.name.split(".")[0]: read_elevant(f, limit=limit, **kwargs) for f in files}
    elif corpus in ("gum", "gum-conll"):
        read = read_gum if corpus == "gum" else read_gum_conll
        directory = resolve_gum_tsv_dir(path) if corpus == "gum" else resolve_gum_conll_dir(path)

        def read_split(d: Path, split: Optional[str], splits_path: Optional[PathLike]) -> List[Doc]:
            return read(d, split, splits_path=splits_path, wiki_map_path=wiki_map_path, limit=limit, **kwargs)

        parts = _split_parts(directory, splits_path, ["splits.md"], read_split)
    elif corpus in ("ontogum", "litbank"):
        directory = (
            _sub_dir(path, "coref", "ontogum", "conll")
            if corpus == "ontogum"
            else _sub_dir(path, "coref", "conll")
        )
        names = ["splits.md"] if corpus == "ontogum" else ["splits.json"]
        parts = _split_parts(
            directory,
            splits_path,
            names,
            lambda d, s, splits_path: read_conll2012_dir(
                d, s, splits_path=splits_path, limit=limit, **kwargs
            ),
        )
    elif corpus == "litbank-entities":
        directory = _sub_dir(path, "entities", "tsv")
        parts = _split_parts(
            directory,
            splits_path,
            ["splits.json"],
            lambda d, s, splits_path: read_litbank_entities(
                d, s, splits_path=splits_path, limit=limit, **kwargs
            ),
        )
    elif corpus == "gap":
        if path.is_dir():
            files = {split: path / name for split, name in GAP_FILES.items() if (path / name).exists()}
            if not files:
                raise FileNotFoundError(Errors.E613.format(names=", ".join(GAP_FILES.values()), path=path))
        else:
            files = {path.stem: ensure_file(path, "GAP tsv file")}
        parts = {name: read_gap(f, limit=limit, **kwargs) for name, f in files.items()}
    else:
        raise ValueError(Errors.E021.format(what="corpus format", name=corpus, known=", ".join(CORPUS_HELP)))
    if limit:
        parts = {name: docs[:limit] for name, docs in parts.items()}
    return parts


def write_docbin(docs: List[Doc], path: PathLike) -> Path:
    """Write ``docs`` to a ``.spacy`` DocBin with user data (doc ids, clusters, extension values), through a
    temporary file renamed into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, DocBin(docs=docs, store_user_data=True).to_bytes())
    return path

"""One half of a Standalone pair, recorded: what a mode-``coref`` or mode-``link`` model predicted on a test set.

Standalone (``benchmarks/joint_coref_linker.py``) pairs two models, the coreference model (mode ``coref``) and
the EL model (mode ``link``), each trained to a plateau in about two hours of 2 CPU cores. Its rows need both
models' predictions at once, and a working session is too short to train both, while a checkout does not keep
trained models from one session to the next (it keeps the committed results). So whenever the benchmark predicts
with one half of a seed's pair it records that half (:data:`HALVES_DIR`), and a half whose model is gone is read
back from its record: the pair can be trained in two sessions.

A record holds, for each document, its clusters as character offsets with each mention's KB id, the model's
training note and its ``max_span_width``: never text. A fingerprint of the test documents' texts makes sure it is
read only against the documents it was made on (a ``--limit`` run, another version of the corpus: refused).
"""
import hashlib
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import srsly
from spacy.language import Language
from spacy.tokens import Doc

from spacy_el.extensions import cluster_keys, set_clusters

from .common import set_mention_links
from .results_io import ROOT, replace_text

#: Where the benchmark keeps the records: ``<folder>/<mode>-<dataset>.json``, committed beside the results (not
#: among them: ``benchmarks/results/`` holds the results files only).
HALVES_DIR = ROOT / "benchmarks" / "records" / "standalone_halves"
#: The record format's version, checked on reading.
VERSION = 1
#: The keys every record has.
RECORD_KEYS = {"version", "fingerprint", "note", "max_span_width", "docs"}


class Half(NamedTuple):
    """A half of a Standalone pair: the model's predicted docs, its training note and its ``max_span_width``."""

    docs: List[Doc]
    note: str
    max_span_width: int


def half_path(halves: Path, folder: str, mode: str, dataset: str) -> Path:
    """The record of the ``mode`` model of ``<models>/<folder>/`` on ``dataset``."""
    return Path(halves) / folder / f"{mode}-{dataset}.json"


def fingerprint(gold: Sequence[Doc]) -> str:
    """A digest of the documents' texts, in order."""
    digest = hashlib.sha256()
    for doc in gold:
        digest.update(doc.text.encode("utf8") + b"\x00")
    return digest.hexdigest()


def write_half(path: Path, gold: Sequence[Doc], half: Half) -> None:
    """Record ``half`` (predicted on the texts of ``gold``, in order) at ``path``, through a temporary file."""
    record: Dict[str, Any] = {
        "version": VERSION,
        "fingerprint": fingerprint(gold),
        "note": half.note,
        "max_span_width": half.max_span_width,
        "docs": [[[[s.start_char, s.end_char, s.kb_id_] for s in doc.spans[key]] for key in cluster_keys(doc)]
                 for doc in half.docs],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, srsly.json_dumps(record) + "\n")


def read_half(path: Path, gold: Sequence[Doc], nlp: Language) -> Optional[Half]:
    """The half recorded at ``path``, its docs rebuilt on ``nlp``'s tokenization of ``gold``'s texts; None when there
    is no record. Raises ValueError, naming the file, for a file that is not a record of this format, a record of
    other documents, or a mention that is not on ``nlp``'s token boundaries."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        record = srsly.read_json(path)
    except ValueError as error:
        raise ValueError(f"[benchmarks] {path} is not JSON ({error}): delete it and predict with the model "
                         "again.") from None
    if not isinstance(record, dict) or record.get("version") != VERSION or not RECORD_KEYS <= record.keys():
        found = record.get("version") if isinstance(record, dict) else None
        raise ValueError(f"[benchmarks] {path}: not a record of format {VERSION} with {sorted(RECORD_KEYS)} (format "
                         f"{found!r}): predict with the model again (rerun the benchmark where it is) or delete it.")
    if record["fingerprint"] != fingerprint(gold) or len(record["docs"]) != len(gold):
        raise ValueError(f"[benchmarks] {path} was recorded on other documents than these {len(gold)} (another "
                         "--limit, or another version of the corpus): score with the documents it was made on, or "
                         "delete the record and predict with the model again.")
    docs = []
    for index, (gold_doc, clusters) in enumerate(zip(gold, record["docs"])):
        doc = nlp.make_doc(gold_doc.text)
        spans = [[doc.char_span(start, end, kb_id=kb_id) for start, end, kb_id in cluster] for cluster in clusters]
        if any(span is None for cluster in spans for span in cluster):
            raise ValueError(f"[benchmarks] {path}: a mention of document {index} is not on the tokens of this "
                             "pipeline's tokenizer: rebuild the record with the model that made it.")
        set_clusters(doc, [[(s.start, s.end) for s in cluster] for cluster in spans])
        links = {(s.start, s.end): s.kb_id_ for cluster in spans for s in cluster}
        set_mention_links(doc, lambda span: links[(span.start, span.end)])
        docs.append(doc)
    return Half(docs, record["note"], int(record["max_span_width"]))

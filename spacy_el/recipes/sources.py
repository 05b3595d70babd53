"""Readers for the KB material in ``../shared/data/kb``: Wikipedia summaries, PPRforNED candidate files
(entity titles and in-link counts only) and DWIE alias priors.

All titles are returned as KB ids: Wikipedia titles in URL form with underscores, percent-decoded.
"""
import gzip
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from collections import Counter
from typing import Dict, Iterator, List, Optional, Tuple, Union

import srsly
from tqdm import tqdm

from ..corpora.titles import decode_url_title

PathLike = Union[str, Path]
_WIKI_URL = re.compile(r"^https?://en\.wikipedia\.org/wiki/")
_DISAMBIGUATOR = re.compile(r"\s*\([^()]*\)$")
# A sentence ends at . ! or ? after two lower-case letters or digits ("C." in "Arthur C. Clarke" does
# not end one), followed by an upper-case letter or the end of the text.
_FIRST_SENTENCE = re.compile(r"^(.+?[a-z0-9)]{2}[.!?])(\s+[A-Z\"']|\s*$)")
MAX_DESCRIPTION_CHARS = 300


def title_from_url(url: str) -> str:
    """``http://en.wikipedia.org/wiki/Mesa%2C_Arizona`` -> ``Mesa,_Arizona``."""
    return decode_url_title(_WIKI_URL.sub("", url))


def name_of(title: str) -> str:
    """The display name of a title: underscores to spaces."""
    return title.replace("_", " ")


def strip_disambiguator(name: str) -> str:
    """``Paris (mythology)`` -> ``Paris``; names without a trailing parenthesis are returned unchanged."""
    return _DISAMBIGUATOR.sub("", name)


def base_name(name: str) -> str:
    """The name part of a title, without a parenthesised or comma-separated qualifier: ``Tulsa, Oklahoma``
    -> ``Tulsa``, ``Arthur Wellesley, 1st Duke of Wellington`` -> ``Arthur Wellesley``.

    Not an alias rule: after a comma comes a place's region but also the rest of a name ("University
    of California, Berkeley", "International Covenant on Economic, Social and Cultural Rights"), so the
    stripped alias only drops a parenthesis (:func:`strip_disambiguator`). Used where the name part is
    wanted, as for a person's surname.
    """
    stripped = strip_disambiguator(name)
    return stripped.split(",", 1)[0].strip() or stripped


@dataclass
class EntityRecord:
    id: str
    name: str
    description: str = ""
    types: List[str] = field(default_factory=list)
    frequency: float = 0.0
    qid: str = ""  # its Wikidata QID, where a source gives one (GUM's wiki_map)


def summary_description(summary: Dict[str, str]) -> str:
    """Short description + the extract's first sentence, capped at MAX_DESCRIPTION_CHARS."""
    extract = (summary.get("extract") or "").strip()
    match = _FIRST_SENTENCE.match(extract)
    parts = [summary.get("description") or "", match.group(1) if match else extract]
    text = ". ".join(p.rstrip(".") for p in parts if p) + "."
    return text[:MAX_DESCRIPTION_CHARS] if text != "." else ""


def read_wikipedia_summaries(path: PathLike) -> Iterator[EntityRecord]:
    """Entities from ``summaries_en-us.json.gz`` (title -> {title, extract, description, topic})."""
    with gzip.open(path, "rt", encoding="utf8") as f:
        summaries = json.load(f)
    for title, summary in summaries.items():
        topic = summary.get("topic")
        types = [f"topic:{topic}"] if topic and topic != "Uncategorized" else []
        yield EntityRecord(title.replace(" ", "_"), title, summary_description(summary), types)


@dataclass
class PprCandidate:
    name: str
    in_count: int
    predicted_type: str


def _fields(line: str) -> Dict[str, str]:
    out = {}
    for part in line.rstrip("\n").split("\t")[1:]:
        key, _, value = part.partition(":")
        out[key] = value
    return out


def read_pprforned_candidates(path: PathLike, progress: bool = True) -> Dict[str, PprCandidate]:
    """Every candidate title in ``AIDA_candidates.tar.gz`` with its name, in-link count and predicted type.

    Only CANDIDATE lines are read: the mention strings of ENTITY lines are Reuters text (data rule 1) and
    the lists of dev/test documents must not act as a candidate generator (rule 2), so nothing here says
    which mention a candidate belongs to.
    """
    found: Dict[str, PprCandidate] = {}
    with tarfile.open(path, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        for member in tqdm(members, desc="PPRforNED files", disable=not progress):
            handle = tar.extractfile(member)
            if handle is None:
                continue
            for raw in handle:
                line = raw.decode("utf8")
                if not line.startswith("CANDIDATE"):
                    continue
                fields = _fields(line)
                title = title_from_url(fields["url"])
                in_count = int(fields.get("inCount") or 0)
                known = found.get(title)
                if known is None or in_count > known.in_count:
                    found[title] = PprCandidate(fields.get("name", name_of(title)), in_count, fields.get("predictedType", "UNK"))
    return found


def read_pprforned_train_lists(path: PathLike, last_train_doc: int = 946, progress: bool = True) -> Dict[int, Counter]:
    """Per TRAIN document number (1 to ``last_train_doc``, AIDA's document order), its candidate lists'
    (mention text, candidate title) -> weight.

    Rule 2 of the data README: train-split candidate lists are as legitimate as training labels;
    dev/test lists (documents > ``last_train_doc``) are never read here. Each candidate of a mention
    gets its share of the list's in-link counts (+1 smoothing), so a list weighs 1 in total. The mention
    strings are Reuters text: they may live in a KB built under ``kb/`` but never in the repository.
    """
    by_document: Dict[int, Counter] = {}
    with tarfile.open(path, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.rsplit("/", 1)[-1].isdigit()]
        members = [m for m in members if int(m.name.rsplit("/", 1)[-1]) <= last_train_doc]
        for member in tqdm(members, desc="PPRforNED train lists", disable=not progress):
            handle = tar.extractfile(member)
            if handle is None:
                continue
            weights = by_document.setdefault(int(member.name.rsplit("/", 1)[-1]), Counter())
            mention, candidates = None, []
            for raw in list(handle) + [b"ENTITY\ttext:"]:
                line = raw.decode("utf8")
                if line.startswith("ENTITY"):
                    _add_share(weights, mention, candidates)
                    mention, candidates = _fields(line).get("text"), []
                elif line.startswith("CANDIDATE"):
                    fields = _fields(line)
                    candidates.append((title_from_url(fields["url"]), int(fields.get("inCount") or 0) + 1))
    return by_document


def _add_share(weights: Counter, mention: Optional[str], candidates: List[Tuple[str, int]]) -> None:
    total = sum(count for _, count in candidates)
    if mention and total:
        for title, count in candidates:
            weights[(mention, title)] += count / total


def read_dwie_aliases(path: PathLike) -> Iterator[Tuple[str, List[Tuple[str, float]]]]:
    """(alias, [(title, prior), ...]) from ``dwie_aliases.jsonl.gz``."""
    with gzip.open(path, "rt", encoding="utf8") as f:
        for line in f:
            record = srsly.json_loads(line)
            yield record["alias"], [(decode_url_title(t), float(p)) for t, p in record["candidates"]]

"""From the Wikidata JSON dump and the Wikipedia XML dump to one ``ElKnowledgeBase``, in bounded memory.

Three passes, each streaming its file once (``docs/kb_dumps.md``):

1. Wikidata: items are parsed in worker processes and filtered (enwiki sitelink, optional P31
   allow-list, no disambiguation items); the kept ones are spooled to a file in the work directory, and
   their English labels and aliases go to the pair counter as (alias, title) label pairs.
2. Wikipedia: pages are parsed in worker processes; redirects and disambiguation pages are recorded
   as arrays of title hashes, every article link goes to the pair counter as (anchor, target), and
   the first paragraph of articles whose entity has no Wikidata description is spooled.
3. Assembly: the spooled entities become the entity columns (disambiguation pages and duplicate
   titles dropped), the merged pairs (sorted runs, ``runs.PairCounter``) give, alias by alias, the
   candidates with p(e|m) from the link counts after resolving redirects, and the in-link counts
   become the entity frequencies.

Memory: the pair buffer (``max_pairs``, written out before the assembly), 16 bytes per redirect, 8 per
disambiguation page, a few 8-byte values per entity (title hashes, rows, frequencies; 16 bytes per row
while a hash index is sorted) and a write buffer of about 1 MB per column; never a Python object per
entity, alias or link of the whole dump, and never the KB: every KB column goes straight to its ``.npy``
file in a private build folder as its rows are made (``columns.py``), and the returned KB maps those
files. ``ElKnowledgeBase.to_disk`` copies them into the KB folder (``serialization.map_built_npy``)
without reading them through the maps.
"""
import itertools
import json
import tempfile
import time
import weakref
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Literal, Optional, Tuple

import numpy as np
from spacy.strings import hash_string
from spacy.vocab import Vocab
from tqdm import tqdm

from ..alias_table import AliasTable
from ..entity_store import EntityStore
from ..errors import KBErrors
from ..knowledge_base import ElKnowledgeBase, LookupSettings
from ..ngram_index import NgramIndex
from ..normalize import normalize_alias
from ..serialization import map_built_npy
from .coarse_types import DEFAULT_COARSE_MAP
from .columns import ArrayFile, Column, StringColumn, read_chunks, read_raw, save_array, write_hash_index
from .errors import BadInput, dump_error
from .multistream import Range, pages_of_range, parallel_plan
from .page_props import read_page_props
from .parallel import chunked, ordered_map
from .redirects import NOWHERE, RedirectMap
from .runs import DEFAULT_MAX_PAIRS, PairCounter
from .streams import iter_lines
from .titles import title_hash, title_hashes, title_to_kb_id
from .wikidata import LinesResult, WikidataConfig, WikidataItem, process_lines
from .wikipedia import Page, PageConfig, PagesResult, SiteInfo, check_is_xml, iter_pages, process_pages
from .workdir import BuildFolder

KBId = Literal["title", "qid"]
DEFAULT_MAX_LINE_BYTES = 64 << 20


@dataclass
class DumpsSettings:
    """How ``build_kb_from_dumps`` reads the dumps (the options of ``kb from-dumps``).

    min_count: an (anchor, entity) pair seen in fewer links is not a candidate (unless it is also a
        Wikidata label or alias of the entity, which then gets ``label_prior``).
    label_prior: p(e|m) of a candidate that comes from a Wikidata label or alias only.
    kb_id: "title" (enwiki title in URL form, the default) or "qid".
    descriptions: use an article's first paragraph when Wikidata has no English description.
    fuzzy: build the trigram index for fuzzy lookup (off by default: at 20M aliases it needs several GB).
    max_pairs: distinct (alias, target) pairs held in memory before a sorted run file is written.
    max_line_bytes: the longest Wikidata line read (the largest real entities are a few MB): a longer one
        is an error, or skipped and counted with ``skip_bad``; memory never grows with a line.
    work_dir: where the build folder goes (the system's temporary folder when None); a build removes the
        folders that killed builds left there (``workdir.py``).
    """

    n_process: int = 1
    min_count: int = 1
    label_prior: float = 0.01
    kb_id: KBId = "title"
    skip_bad: bool = False
    p31_allow: Optional[FrozenSet[str]] = None
    coarse_map: Dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COARSE_MAP))
    descriptions: bool = True
    fuzzy: bool = False
    max_pairs: int = DEFAULT_MAX_PAIRS
    chunk_lines: int = 1000
    chunk_pages: int = 50
    progress: bool = True
    work_dir: Optional[Path] = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def __post_init__(self) -> None:
        if self.kb_id not in ("title", "qid"):
            raise ValueError(KBErrors.E301.format(kb_id=self.kb_id))
        if self.min_count < 1:
            raise ValueError(KBErrors.E302.format(min_count=self.min_count))
        if not 0.0 < self.label_prior <= 1.0:
            raise ValueError(KBErrors.E303.format(label_prior=self.label_prior))
        if self.max_line_bytes < 1:
            raise ValueError(KBErrors.E329.format(max_line_bytes=self.max_line_bytes))


@dataclass
class BuildReport:
    """Counts of everything read, kept, filtered (by reason) and skipped, per source; seconds per pass."""

    sections: Dict[str, Counter] = field(default_factory=dict)
    bad: Dict[str, BadInput] = field(default_factory=dict)
    seconds: Dict[str, float] = field(default_factory=dict)

    def section(self, name: str) -> Counter:
        return self.sections.setdefault(name, Counter())

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {name: dict(counts) for name, counts in self.sections.items()}
        out["skipped (bad input)"] = {name: bad.to_dict() for name, bad in self.bad.items()}
        out["seconds"] = {k: round(v, 2) for k, v in self.seconds.items()}
        return out


# -- worker side ----------------------------------------------------------------------------------------
_WORKER: Dict[str, Any] = {}


def _init_wikidata(config: WikidataConfig) -> None:
    _WORKER["wikidata"] = config


def _wikidata_chunk(lines: List[Tuple[int, bytes]]) -> LinesResult:
    return process_lines(lines, _WORKER["wikidata"])


def _init_pages(config: PageConfig) -> None:
    _WORKER["pages"] = config


def _pages_chunk(pages: List[Page]) -> PagesResult:
    return process_pages(pages, _WORKER["pages"])


def _init_ranges(path: Path, config: PageConfig, disambiguation_ids: FrozenSet[int], skip_bad: bool) -> None:
    _WORKER["ranges"] = (path, config, disambiguation_ids, skip_bad)


def _range_chunk(part: Range) -> Tuple[PagesResult, BadInput, int]:
    """Decompress, parse and process one range of a multistream dump (in a worker): (its result, its bad
    records, its number of pages)."""
    path, config, disambiguation_ids, skip_bad = _WORKER["ranges"]
    bad = BadInput()
    pages = pages_of_range(path, part, bad, skip_bad)
    if disambiguation_ids:
        pages = [p._replace(disambiguation_prop=True) if p.page_id in disambiguation_ids else p for p in pages]
    return process_pages(pages, config), bad, len(pages)


# -- the build -------------------------------------------------------------------------------------------
OTHER_QID = (1 << 64) - 1  # ``_Spool.qid_numbers`` of a QID that is not "Q" and a number without leading zeros


def _qid_number(qid: str) -> int:
    """The number of a canonical QID ("Q42" -> 42), else ``OTHER_QID``: equal numbers, equal QIDs."""
    digits = qid[1:]
    if qid[:1] == "Q" and digits.isascii() and digits.isdigit() and digits[:1] != "0" and len(digits) < 19:
        return int(digits)
    return OTHER_QID


class _Spool:
    """Kept Wikidata items, one JSON line each, and the per-item arrays the later passes need."""

    def __init__(self, path: Path, qid_numbers: bool = False) -> None:
        self.path = path
        self.file = path.open("w", encoding="utf8", newline="\n")
        self.title_hashes = array("Q")
        self.qid_numbers = array("Q") if qid_numbers else None  # for QIDs as KB ids, which must not repeat
        self.lacks_description = array("B")

    def add(self, item: WikidataItem) -> None:
        self.file.write(json.dumps(list(item), ensure_ascii=False, separators=(",", ":")) + "\n")
        self.title_hashes.append(title_hash(item.title) if item.title else 0)
        if self.qid_numbers is not None:
            self.qid_numbers.append(_qid_number(item.qid))
        self.lacks_description.append(0 if item.description else 1)

    def close(self) -> None:
        self.file.close()

    def __iter__(self) -> Iterator[WikidataItem]:
        with self.path.open("r", encoding="utf8") as f:
            for line in f:
                qid, title, label, description, aliases, p31, coarse = json.loads(line)
                yield WikidataItem(qid, title, label, description, tuple(aliases), tuple(p31), coarse)


class _Descriptions:
    """First paragraphs, spooled to a file and found by title hash (sorted arrays, no dict of texts). The
    texts are read from the file when asked for, not memory-mapped: mapped pages once read would stay in
    the resident set."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = path.open("wb")
        self.hashes = array("Q")
        self.offsets = array("q", [0])
        self._reader: Optional[Any] = None

    def add(self, title: str, text: str) -> None:
        self.file.write(text.encode("utf8"))
        self.hashes.append(title_hash(title))
        self.offsets.append(self.file.tell())

    def finish(self) -> None:
        self.file.close()
        hashes = np.frombuffer(self.hashes, dtype=np.uint64)
        self._order = np.argsort(hashes, kind="stable")
        self._sorted = hashes[self._order]
        self._offsets = np.frombuffer(self.offsets, dtype=np.int64)
        self._reader = self.path.open("rb")

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def get(self, title_hash_value: int) -> str:
        if not len(self._sorted):
            return ""
        h = np.uint64(title_hash_value)
        at = int(np.searchsorted(self._sorted, h))
        if at >= len(self._sorted) or self._sorted[at] != h:
            return ""
        i = int(self._order[at])
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        self._reader.seek(start)
        return self._reader.read(end - start).decode("utf8")


def build_kb_from_dumps(
    wikidata: Path, wikipedia: Path, page_props: Optional[Path] = None, settings: Optional[DumpsSettings] = None
) -> Tuple[ElKnowledgeBase, BuildReport]:
    """Build the KB (see the module docstring). RETURNS: (the KB, without vectors; the report).

    The KB's arrays are memory-mapped from the ``.npy`` files of a build folder in ``settings.work_dir``
    (default: the system's temporary folder), removed when the KB is garbage-collected or the process
    exits, and by the next build in the same work root when the process was killed (``workdir.py``);
    ``to_disk`` copies them into the KB folder."""
    settings = settings or DumpsSettings()
    report = BuildReport()
    check_is_xml(wikipedia)  # fail in seconds, not after the Wikidata pass
    folder = BuildFolder.create(Path(settings.work_dir) if settings.work_dir is not None else Path(tempfile.gettempdir()))
    work = folder.scratch
    try:
        pairs = PairCounter(work / "runs", max_pairs=settings.max_pairs)
        disambiguation_ids: FrozenSet[int] = frozenset()
        if page_props is not None:
            started = time.perf_counter()
            ids, prop_counts = read_page_props(page_props)
            disambiguation_ids = frozenset(ids)
            report.section("page_props").update({f"rows: {k}": v for k, v in prop_counts.items()})
            report.seconds["page_props"] = time.perf_counter() - started
        started = time.perf_counter()
        spool = _read_wikidata(Path(wikidata), settings, pairs, report, work)
        report.seconds["wikidata"] = time.perf_counter() - started
        started = time.perf_counter()
        pages = _read_wikipedia(Path(wikipedia), settings, pairs, spool, disambiguation_ids, report, work)
        pairs.flush()  # the pair buffer is emptied before the assembly needs its memory
        report.seconds["wikipedia"] = time.perf_counter() - started
        started = time.perf_counter()
        kb = _assemble(spool, pages, pairs, settings, report, _Folders(folder.arrays, work))
        report.seconds["assemble"] = time.perf_counter() - started
        folder.remove_scratch()
    except BaseException:
        folder.release()
        raise
    # The mapped files outlive their names (POSIX): the folder goes with the KB, or at exit; if the process
    # is killed first, the next build in the same work root removes it (``workdir``).
    weakref.finalize(kb, folder.release)
    return kb, report


def _read_wikidata(path: Path, settings: DumpsSettings, pairs: PairCounter, report: BuildReport, work: Path) -> _Spool:
    config = WikidataConfig(
        path=str(path), skip_bad=settings.skip_bad, p31_allow=settings.p31_allow, coarse_map=settings.coarse_map
    )
    counts = report.section("wikidata")
    bad = report.bad.setdefault(str(path), BadInput())
    spool = _Spool(work / "entities.jsonl", qid_numbers=settings.kb_id == "qid")
    # The line limit bounds the memory a line takes; a longer line is an error, or counted under skip_bad.
    limited = iter_lines(path, settings.max_line_bytes, bad if settings.skip_bad else None)
    lines = tqdm(limited, desc="Wikidata", unit=" lines", unit_scale=True, disable=not settings.progress)
    results = ordered_map(
        _wikidata_chunk, chunked(lines, settings.chunk_lines), settings.n_process, _init_wikidata, (config,)
    )
    for result in results:
        counts.update(result.counts)
        bad.merge(result.bad)
        for item in result.items:
            counts["kept"] += 1
            spool.add(item)
            names = [item.label, *item.aliases] if item.label else list(item.aliases)
            pairs.add_labels(item.title, names)
    spool.close()
    return spool


@dataclass
class _PagesOutput:
    redirects: RedirectMap
    disambiguations: np.ndarray  # sorted uint64 title hashes
    descriptions: _Descriptions


def _read_wikipedia(
    path: Path, settings: DumpsSettings, pairs: PairCounter, spool: _Spool, disambiguation_ids: FrozenSet[int],
    report: BuildReport, work: Path,
) -> _PagesOutput:
    counts = report.section("wikipedia")
    bad = report.bad.setdefault(str(path), BadInput())
    site: List[SiteInfo] = []
    wanted = None
    if settings.descriptions:
        hashes = np.frombuffer(spool.title_hashes, dtype=np.uint64)
        wanted = np.unique(hashes[np.frombuffer(spool.lacks_description, dtype=np.uint8) == 1])
    plan = parallel_plan(path) if settings.n_process > 1 else None
    if plan is not None:  # a multistream file: the workers decompress and parse too
        site_info, parts = plan
        config = PageConfig(namespaces=site_info.namespaces, wanted_descriptions=wanted)
        progress = tqdm(desc="Wikipedia", unit=" pages", unit_scale=True, disable=not settings.progress)
        outputs = ordered_map(
            _range_chunk, parts, settings.n_process, _init_ranges, (path, config, disambiguation_ids, settings.skip_bad)
        )
        results: Iterator[PagesResult] = _counted_pages(outputs, bad, progress, path)
    else:
        pages = iter_pages(path, bad, skip_bad=settings.skip_bad, site=site)
        if disambiguation_ids:
            pages = (p._replace(disambiguation_prop=True) if p.page_id in disambiguation_ids else p for p in pages)
        pages = tqdm(pages, desc="Wikipedia", unit=" pages", unit_scale=True, disable=not settings.progress)
        chunks = chunked(pages, settings.chunk_pages)
        first = next(chunks, None)  # reading the first page has read the siteinfo: the namespaces are known
        config = PageConfig(namespaces=site[0].namespaces if site else frozenset(), wanted_descriptions=wanted)
        all_chunks = itertools.chain([first] if first is not None else [], chunks)
        results = ordered_map(_pages_chunk, all_chunks, settings.n_process, _init_pages, (config,))
    redirect_chunks: List[Tuple[np.ndarray, np.ndarray]] = []
    disambiguation = array("Q")
    descriptions = _Descriptions(work / "descriptions.bin")
    for result in results:
        counts.update(result.counts)
        if result.redirects:
            redirect_chunks.append(
                (title_hashes(s for s, _ in result.redirects), title_hashes(t for _, t in result.redirects))
            )
        disambiguation.extend(title_hash(t) for t in result.disambiguations)
        pairs.add_links(result.links)
        for title, text in result.descriptions:
            descriptions.add(title, text)
    counts["links longer than 200 characters (not counted)"] += pairs.n_long
    descriptions.finish()
    return _PagesOutput(
        RedirectMap.from_chunks(redirect_chunks), np.unique(np.frombuffer(disambiguation, dtype=np.uint64)), descriptions
    )


def _counted_pages(
    outputs: Iterator[Tuple[PagesResult, BadInput, int]], bad: BadInput, progress: Any, path: Path
) -> Iterator[PagesResult]:
    """The results of the ranges in file order, their bad records merged into ``bad``; no page at all is an
    error (E326), as for the sequential read."""
    n_pages = 0
    for result, range_bad, n in outputs:
        bad.merge(range_bad)
        n_pages += n
        progress.update(n)
        yield result
    progress.close()
    if n_pages == 0:
        raise dump_error(path, None, KBErrors.E326, reason="no pages", found="")


@dataclass
class _Folders:
    """Where the assembly writes: ``arrays`` the KB's ``.npy`` files, ``scratch`` the files it reads back."""

    arrays: Path
    scratch: Path


def _assemble(
    spool: _Spool, pages: _PagesOutput, pairs: PairCounter, settings: DumpsSettings, report: BuildReport,
    folders: _Folders,
) -> ElKnowledgeBase:
    counts = report.section("kb")
    hashes = np.frombuffer(spool.title_hashes, dtype=np.uint64)
    # Entity rows: spooled items in dump order, less disambiguation pages and repeated titles / QIDs.
    keep = np.zeros(len(hashes), dtype=bool)
    _, first = np.unique(hashes, return_index=True)
    keep[first] = True
    del first
    counts["dropped: repeated enwiki title"] = int(len(hashes) - keep.sum())
    if len(pages.disambiguations):
        is_dab = np.isin(hashes, pages.disambiguations)
        counts["dropped: enwiki page is a disambiguation page"] = int((keep & is_dab).sum())
        keep &= ~is_dab
        del is_dab
    if spool.qid_numbers is not None:
        _drop_repeated_qids(keep, np.frombuffer(spool.qid_numbers, dtype=np.uint64), counts)
    arrays, scratch = folders.arrays, folders.scratch
    ids = StringColumn(arrays, "entities.ids", hashed=True, scratch=scratch)
    names, descriptions = StringColumn(arrays, "entities.names"), StringColumn(arrays, "entities.descriptions")
    qids = StringColumn(arrays, "entities.qids")
    type_of: Dict[str, int] = {}
    type_offsets = Column(arrays / "entities.type_offsets.npy", "q", np.int64, first=[0])
    seen_type_ids = Column(scratch / "entities.type_ids.bin", "i", np.int32, npy=False)  # numbered as first seen
    other_qids: set = set()  # the QIDs that are no "Q" and a number (none in a real dump), by string
    kept_rows = np.full(len(hashes), -1, dtype=np.int64)
    for i, item in enumerate(spool):
        if not keep[i]:
            continue
        if spool.qid_numbers is not None and spool.qid_numbers[i] == OTHER_QID:
            if item.qid in other_qids:
                counts["dropped: repeated QID"] += 1
                continue
            other_qids.add(item.qid)
        kept_rows[i] = len(ids)
        ids.append(item.qid if settings.kb_id == "qid" else title_to_kb_id(item.title))
        names.append(item.label or item.title)
        description = item.description
        if not description and settings.descriptions:
            description = pages.descriptions.get(int(hashes[i]))
            counts["descriptions from the first paragraph"] += bool(description)
        descriptions.append(description)
        qids.append(item.qid)
        seen_type_ids.extend(type_of.setdefault(name, len(type_of)) for name in (*item.p31, item.coarse))
        type_offsets.append(len(seen_type_ids))
    pages.descriptions.close()
    for column in (ids, names, descriptions, qids, type_offsets, seen_type_ids):
        column.close()
    n = len(ids)
    counts["entities"] = n
    write_hash_index(read_raw(ids.hashes_path, np.uint64), arrays, "entities.id_index")
    # The type inventory is sorted, as EntityStore.build makes it: the first-seen numbers are mapped to it.
    type_names = sorted(type_of, key=type_of.get)  # type: ignore[arg-type]
    order = sorted(range(len(type_names)), key=lambda t: type_names[t])
    remap = np.empty(len(type_names), dtype=np.int32)
    remap[order] = np.arange(len(type_names), dtype=np.int32)
    type_ids = ArrayFile(arrays / "entities.type_ids.npy", np.int32)
    for chunk in read_chunks(seen_type_ids.file.path, np.int32):
        type_ids.write(remap[chunk])
    type_ids.close()
    # title hash -> entity row, for the link targets
    row_hashes = hashes[kept_rows >= 0]
    del kept_rows, keep, hashes
    spool.title_hashes = spool.qid_numbers = spool.lacks_description = None  # read for the last time
    by_hash = np.argsort(row_hashes, kind="stable")
    sorted_hashes = row_hashes[by_hash]
    del row_hashes
    frequencies = np.zeros(n, dtype=np.float64)
    _assemble_aliases(pairs, pages.redirects, sorted_hashes, by_hash, frequencies, settings, counts, folders)
    del sorted_hashes, by_hash
    pairs.remove_runs()
    save_array(arrays, "entities.frequencies", frequencies.astype(np.float32))
    del frequencies
    return _mapped_kb(arrays, [type_names[t] for t in order], settings)


def _drop_repeated_qids(keep: np.ndarray, numbers: np.ndarray, counts: Counter) -> None:
    """Keep only the first of the kept items with the same QID (a QID is a KB id once); the QIDs that
    are no number (``OTHER_QID``) are left to the row loop."""
    rows = np.flatnonzero(keep & (numbers != np.uint64(OTHER_QID)))
    _, first = np.unique(numbers[rows], return_index=True)
    repeated = np.ones(len(rows), dtype=bool)
    repeated[first] = False
    if repeated.any():
        keep[rows[repeated]] = False
        counts["dropped: repeated QID"] += int(repeated.sum())


def _mapped_kb(folder: Path, type_names: List[str], settings: DumpsSettings) -> ElKnowledgeBase:
    """The KB whose arrays map the ``.npy`` files the assembly wrote to ``folder``.

    Its arrays are not validated again (``ElKnowledgeBase(entities=..., aliases=...)`` would): they are
    consistent by construction, and a validation pass reads most of them, whose mapped pages would then
    count in this process's resident set: a good part of the KB, the memory this assembly does without.
    The saved KB is validated whenever it is loaded."""
    arrays = {path.name[: -len(".npy")]: map_built_npy(path) for path in sorted(folder.glob("*.npy"))}
    kb = ElKnowledgeBase(Vocab(), settings=LookupSettings(fuzzy=settings.fuzzy))
    kb.entities = EntityStore.from_arrays(arrays, type_names)
    kb.aliases = AliasTable.from_arrays(arrays)
    return kb


def _blocks(merged: Iterator[Tuple[str, str, int, int]], size: int = 100_000) -> Iterator[List[Tuple[str, str, int, int]]]:
    """The merged pairs in blocks of about ``size`` that never split an alias's pairs."""
    block: List[Tuple[str, str, int, int]] = []
    for pair in merged:
        if len(block) >= size and pair[0] != block[-1][0]:
            yield block
            block = []
        block.append(pair)
    if block:
        yield block


def _assemble_aliases(
    pairs: PairCounter, redirects: RedirectMap, sorted_hashes: np.ndarray, by_hash: np.ndarray,
    frequencies: np.ndarray, settings: DumpsSettings, counts: Counter, folders: _Folders,
) -> None:
    """Write the alias table's arrays to ``folders.arrays``, alias by alias as the merged pairs arrive, and
    add the link counts to ``frequencies``."""
    arrays, scratch = folders.arrays, folders.scratch
    strings = StringColumn(arrays, "aliases.strings", hashed=True, scratch=scratch)
    normalized_hashes = Column(scratch / "aliases.normalized.hashes.bin", "Q", np.uint64, npy=False)
    normalized: List[str] = []  # kept only for the fuzzy index
    offsets = Column(arrays / "aliases.cand_offsets.npy", "q", np.int64, first=[0])
    cand_rows = Column(arrays / "aliases.cand_entities.npy", "i", np.int32)
    cand_priors = Column(arrays / "aliases.cand_priors.npy", "f", np.float32)
    progress = tqdm(desc="Aliases", unit=" pairs", unit_scale=True, disable=not settings.progress)
    for block in _blocks(pairs.merged()):
        progress.update(len(block))
        targets, cycles = redirects.resolve(np.fromiter((hash_string(p[1]) for p in block), np.uint64, len(block)))
        counts["link targets caught in a redirect cycle"] += cycles
        at = np.minimum(np.searchsorted(sorted_hashes, targets), max(len(sorted_hashes) - 1, 0))
        found = (sorted_hashes[at] == targets) & (targets != NOWHERE) if len(sorted_hashes) else np.zeros(len(block), bool)
        rows = np.where(found, by_hash[at] if len(by_hash) else 0, -1)
        links = np.fromiter((p[2] for p in block), np.int64, len(block))
        np.add.at(frequencies, rows[found], links[found])
        counts["links to pages that are not KB entities"] += int(links[~found].sum())
        start = 0
        while start < len(block):
            alias = block[start][0]
            end = start
            candidates: Dict[int, List[int]] = {}
            while end < len(block) and block[end][0] == alias:
                if found[end]:
                    entry = candidates.setdefault(int(rows[end]), [0, 0])
                    entry[0] += int(links[end])
                    entry[1] |= block[end][3]
                end += 1
            start = end
            total = sum(c[0] for c in candidates.values())
            kept: List[Tuple[float, int]] = []
            for row, (n_links, label) in candidates.items():
                if n_links >= settings.min_count:
                    kept.append((n_links / total, row))
                elif label:
                    kept.append((settings.label_prior, row))
                else:
                    counts["candidates pruned (fewer links than min_count)"] += 1
            if not kept:
                counts["aliases dropped: no candidate in the KB"] += 1
                continue
            kept.sort(key=lambda c: (-c[0], c[1]))
            strings.append(alias)
            norm = normalize_alias(alias)
            normalized_hashes.append(hash_string(norm))
            if settings.fuzzy:
                normalized.append(norm)
            cand_rows.extend(row for _, row in kept)
            cand_priors.extend(prior for prior, _ in kept)
            offsets.append(len(cand_rows))
    progress.close()
    counts["aliases"] = len(strings)
    counts["alias candidates"] = len(cand_rows)
    for column in (strings, normalized_hashes, offsets, cand_rows, cand_priors):
        column.close()
    write_hash_index(read_raw(strings.hashes_path, np.uint64), arrays, "aliases.exact_index")
    write_hash_index(read_raw(normalized_hashes.file.path, np.uint64), arrays, "aliases.normalized_index")
    if settings.fuzzy:
        for name, values in NgramIndex.build(normalized).to_arrays("aliases.fuzzy_index").items():
            save_array(arrays, name, values)

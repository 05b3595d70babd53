"""The real-bytes part of ``benchmarks/kb_from_dumps.py`` (``--real N``), moved here when its question was answered.

Frozen, not maintained (see REPORT.md): it ran as ``python -m benchmarks.kb_from_dumps --sizes "" --real 4``
at the commit REPORT.md names, where this code was part of that module. ``--real N`` measured on the excerpts of
``../shared/dumps`` repeated N times, in one process: each pass's throughput against its floor on the same bytes
(decompression alone, and ``json.loads`` of each line for the Wikidata JSON), each stage timed alone, the
Wikipedia pass read by the main process or by the workers (multistream), and the full English build projected on
2, 16 and 64 cores from those rates and the dump sizes of ``FULL_DUMPS`` (an assumption, said so in the rows' notes).
"""
import json
import os
import resource
import shutil
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from benchmarks.kb_from_dumps import SYSTEM, Row, log
from benchmarks.results_io import RESULTS_DIR, ROOT
from benchmarks.results_io import row as result_row

# -- real bytes: the excerpts of ../shared/dumps, a stage breakdown, the floor and the projection ---------------
SHARED_DUMPS = ROOT.parent / "shared" / "dumps"
WIKIDATA_EXCERPT = SHARED_DUMPS / "wikibase-dump-filter-entities.json.gz"  # verbatim head of latest-all.json (2017)
ENWIKI_EXCERPT = SHARED_DUMPS / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
REAL = "spacy_el kb from-dumps, 1 process"
GB = 1e9

# The full English dumps the projection assumes. ASSUMPTION: ../shared/dumps/README.md states no full-dump size
# and this machine has no network, so these are approximate sizes of the 2024-2025 listings on
# dumps.wikimedia.org, from memory, not checked here. Change them and rerun `--real` to project other sizes.
FULL_DUMPS = {
    "wikidata": {"file": "wikidata latest-all.json.gz / .bz2", "gz_gb": 140.0, "bz2_gb": 95.0,
                 "decompressed_gb": 1600.0, "entities": 115e6},
    "wikipedia": {"file": "enwiki pages-articles-multistream.xml.bz2", "bz2_gb": 24.0,
                  "decompressed_gb": 105.0, "pages": 25e6},
}
FULL_DUMPS_SOURCE = ("assumed (no size is stated in ../shared/dumps/README.md and there is no network here): "
                     "approximate dumps.wikimedia.org sizes, 2024-25, from memory")


def _repeat_excerpts(out: Path, repeat: int) -> Dict[str, Path]:
    """The excerpts' decompressed bytes ``repeat`` times over, compressed as the real dumps are offered: the
    Wikidata entity lines as gzip and as bz2, the enwiki pages (between ``</siteinfo>`` and ``</mediawiki>``) as
    bz2, in one ``<mediawiki>``. Repeated items and pages are dropped as repeats by the assembly."""
    import bz2
    import gzip

    out.mkdir(parents=True, exist_ok=True)
    paths = {"wikidata-gz": out / "wikidata.json.gz", "wikidata-bz2": out / "wikidata.json.bz2",
             "wikipedia-bz2": out / "enwiki.xml.bz2"}
    if all(p.is_file() for p in paths.values()):
        return paths
    entity_lines = [line.rstrip(b",\n") for line in gzip.open(WIKIDATA_EXCERPT) if line.strip() not in (b"[", b"]")]
    body = b",\n".join(entity_lines * repeat)
    wikidata = b"[\n" + body + b"\n]\n"
    xml = bz2.decompress(ENWIKI_EXCERPT.read_bytes())
    head_end = xml.index(b"</siteinfo>") + len(b"</siteinfo>\n")
    tail = xml.rindex(b"</mediawiki>")
    wikipedia = xml[:head_end] + xml[head_end:tail] * repeat + xml[tail:]
    paths["wikidata-gz"].write_bytes(gzip.compress(wikidata, compresslevel=6))
    paths["wikidata-bz2"].write_bytes(bz2.compress(wikidata, 9))
    paths["wikipedia-bz2"].write_bytes(bz2.compress(wikipedia, 9))
    return paths


STAGE_REPEATS = 3


def _timed(func: Any, *args: Any) -> Tuple[float, Any]:
    """(CPU seconds of this process, the result) of the fastest of ``STAGE_REPEATS`` calls. CPU time, not wall
    time: the machine is shared, and wall time would count the other jobs' share of the cores."""
    best, result = float("inf"), None
    for _ in range(STAGE_REPEATS):
        started = time.process_time()
        result = func(*args)
        best = min(best, time.process_time() - started)
    return best, result


def _decompress_only(path: Path) -> int:
    from spacy_el.kb.dumps.streams import open_dump

    stream, _ = open_dump(path)
    n = 0
    with stream:
        while True:
            block = stream.read(1 << 20)
            if not block:
                return n
            n += len(block)


def _read_lines(path: Path) -> List[Tuple[int, bytes]]:
    from spacy_el.kb.dumps.streams import iter_lines

    return list(iter_lines(path))


def _json_loads_each(lines: List[Tuple[int, bytes]]) -> int:
    n = 0
    for _, raw in lines:
        line = raw.strip().rstrip(b",")
        if line not in (b"", b"[", b"]"):
            json.loads(line)
            n += 1
    return n


def _wikidata_stages(path: Path) -> Dict[str, float]:
    """Seconds of each stage of the Wikidata pass on ``path``, each alone, in this process."""
    from spacy_el.kb.dumps.wikidata import WikidataConfig, process_lines

    decompress_s, n_bytes = _timed(_decompress_only, path)
    lines = _read_lines(path)
    json_s, n_items = _timed(_json_loads_each, lines)
    parse_s, result = _timed(process_lines, lines, WikidataConfig(path=str(path)))
    return {"bytes": n_bytes, "items": n_items, "kept": len(result.items), "decompression": decompress_s,
            "json.loads": json_s, "parse + filter": parse_s}


def _wikipedia_stages(path: Path) -> Dict[str, float]:
    """Seconds of each stage of the Wikipedia pass on ``path``, each alone: the XML parse (pages out of the
    stream), then on the articles' wikitext the link scan, mwparserfromhell (the disambiguation check where
    its pre-filter lets it run, and the first paragraph of every article, which the build runs only for
    entities without a Wikidata description)."""
    from spacy_el.kb.dumps.errors import BadInput
    from spacy_el.kb.dumps.wikipedia import iter_pages
    from spacy_el.kb.dumps.wikitext import extract_links, first_paragraph, is_disambiguation

    decompress_s, n_bytes = _timed(_decompress_only, path)
    site: List[Any] = []
    xml_s, pages = _timed(lambda: list(iter_pages(path, BadInput(), site=site)))
    namespaces = site[0].namespaces
    articles = [p.text for p in pages if p.ns == 0 and p.redirect is None]
    scan_s, _ = _timed(lambda: [extract_links(t, namespaces) for t in articles])
    dab_s, _ = _timed(lambda: [is_disambiguation(t) for t in articles])
    paragraph_s, _ = _timed(lambda: [first_paragraph(t) for t in articles])
    return {"bytes": n_bytes, "pages": len(pages), "decompression": decompress_s, "XML parse": max(xml_s - decompress_s, 0.0),
            "link scan": scan_s, "mwparserfromhell: disambiguation check": dab_s,
            "mwparserfromhell: first paragraph (every article)": paragraph_s}


def _build_passes(wikidata: Path, wikipedia: Path, work: Path) -> Dict[str, float]:
    """A whole ``build_kb_from_dumps`` in this process (1 process), timed inside: the CPU seconds of each pass,
    and within it of the reading (the reader generator: decompression and line split, or decompression and
    XML parse), of the per-chunk step (what the workers do with ``--n-process``) and of the rest (spooling,
    pair counting, run files); then of the assembly and the save. Of ``STAGE_REPEATS`` builds, each pass's
    figures are those of its fastest run, so that they add up."""
    from spacy_el.kb.dumps import DumpsSettings, build, build_kb_from_dumps

    spent: Dict[str, float] = {}

    def timed(name: str, func: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - started
        return wrapper

    def timed_generator(name: str, func: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            items = iter(func(*args, **kwargs))
            while True:
                started = time.process_time()
                try:
                    item = next(items)
                except StopIteration:
                    return
                finally:
                    spent[name] = spent.get(name, 0.0) + time.process_time() - started
                yield item
        return wrapper

    names = ("_read_wikidata", "_read_wikipedia", "_assemble", "_wikidata_chunk", "_pages_chunk", "iter_lines", "iter_pages")
    originals = {name: getattr(build, name) for name in names}
    runs: List[Dict[str, float]] = []
    try:
        for name, func in originals.items():
            setattr(build, name, (timed_generator if name.startswith("iter_") else timed)(name, func))
        for _ in range(STAGE_REPEATS):
            shutil.rmtree(work, ignore_errors=True)
            spent.clear()
            kb, report = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False, work_dir=work / "build"))
            started = time.process_time()
            kb.to_disk(work / "kb")
            spent["save"] = time.process_time() - started
            del kb
            runs.append(dict(spent))
    finally:
        for name, func in originals.items():
            setattr(build, name, func)
        shutil.rmtree(work, ignore_errors=True)
    wd = min(runs, key=lambda r: r["_read_wikidata"])
    wp = min(runs, key=lambda r: r["_read_wikipedia"])
    return {
        "wikidata": wd["_read_wikidata"], "wikidata reading": wd["iter_lines"], "wikidata chunks": wd["_wikidata_chunk"],
        "wikipedia": wp["_read_wikipedia"], "wikipedia reading": wp["iter_pages"], "wikipedia chunks": wp["_pages_chunk"],
        "assemble": min(r["_assemble"] for r in runs), "save": min(r["save"] for r in runs),
    }


def _in_pass(build: Dict[str, float], name: str) -> Dict[str, float]:
    total, reading, chunks = build[name], build[f"{name} reading"], build[f"{name} chunks"]
    return {"pass": total, "reading": reading, "chunks": chunks, "rest": max(total - reading - chunks, 0.0)}


def _rate(amount: float, seconds: float) -> float:
    return amount / seconds if seconds > 0 else float("nan")


def measure_real(repeat: int, out_dir: Path, parts: Tuple[str, ...] = ("stages", "multistream")) -> List[Row]:
    """Rows of the real-bytes measurement (``--real``): throughput per pass against its floor, the stage
    breakdown and the projection of the full English build ("stages"); the Wikipedia pass read by the main
    process or by the workers ("multistream")."""
    paths = _repeat_excerpts(out_dir / f"real-x{repeat}", repeat)
    label = f"real excerpts x{repeat}"
    if "stages" not in parts:
        return _multistream_rows(paths, out_dir / f"real-x{repeat}", label)
    machine_note = (f"1 process, CPU seconds (best of {STAGE_REPEATS}): {os.cpu_count()} cores shared with other jobs, "
                    "whose share of the cores wall time would count")
    rows: List[Row] = []
    passes: Dict[str, Dict[str, float]] = {}
    for kind in ("gz", "bz2"):
        path = paths[f"wikidata-{kind}"]
        log(f"{label}: Wikidata ({kind}) stages")
        stages = _wikidata_stages(path)
        log(f"{label}: whole build with the Wikidata dump as {kind}")
        build = _build_passes(path, paths["wikipedia-bz2"], out_dir / "real-work")
        passes[f"wikidata-{kind}"] = {**stages, **_in_pass(build, "wikidata"), "compressed": path.stat().st_size}
        if kind == "bz2":
            passes["build"] = build
    log(f"{label}: Wikipedia stages")
    passes["wikipedia-bz2"] = {**_wikipedia_stages(paths["wikipedia-bz2"]), **_in_pass(passes["build"], "wikipedia"),
                               "compressed": paths["wikipedia-bz2"].stat().st_size}
    rows += _throughput_rows(passes, label, machine_note)
    rows += _stage_rows(passes, label)
    rows += _projection_rows(passes, label)
    log(f"{label}: the Wikipedia pass with 1 and 2 processes, multistream")
    rows += _multistream_rows(paths, out_dir / f"real-x{repeat}", label)
    return rows


MULTISTREAM_RANGE_BYTES = 256 << 10  # ranges of the x4 excerpt: about 25 (a full dump has thousands of 4 MB ones)


def _write_multistream(xml_bz2: Path, out: Path, per_stream: int = 100) -> Path:
    """The enwiki XML as Wikimedia's multistream file: the head, then ``per_stream`` pages a stream, the end."""
    import bz2

    if out.is_file():
        return out
    xml = bz2.decompress(xml_bz2.read_bytes())
    starts = _page_starts(xml)
    end = xml.rindex(b"</mediawiki>")
    bounds = [0] + starts[::per_stream] + [end, len(xml)]
    out.write_bytes(b"".join(bz2.compress(xml[a:b], 9) for a, b in zip(bounds, bounds[1:]) if b > a))
    return out


def _page_starts(xml: bytes) -> List[int]:
    starts, at = [], xml.find(b"<page>")
    while at >= 0:
        line_start = xml.rfind(b"\n", 0, at) + 1
        starts.append(line_start)
        at = xml.find(b"<page>", at + 1)
    return starts


def _multistream_rows(paths: Dict[str, Path], folder: Path, label: str) -> List[Row]:
    """The Wikipedia pass of the single-stream and the multistream file with 1 and 2 processes: the CPU seconds
    of the main process (the part no worker can take: what bounds the pass on many cores) and of the workers,
    and pages/s in wall time (noisy here: the machine is shared). Each the fastest of ``STAGE_REPEATS``."""
    from spacy_el.kb.dumps import DumpsSettings, build, build_kb_from_dumps, multistream

    multi = _write_multistream(paths["wikipedia-bz2"], folder / "enwiki-multistream.xml.bz2")
    rows: List[Row] = []
    spent: Dict[str, float] = {}
    original = build._read_wikipedia

    def timed(*args: Any, **kwargs: Any) -> Any:
        cpu, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            return original(*args, **kwargs)
        finally:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's workers are joined by now
            spent["main"] = time.process_time() - cpu
            spent["workers"] = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)

    saved, multistream.RANGE_BYTES = multistream.RANGE_BYTES, MULTISTREAM_RANGE_BYTES
    build._read_wikipedia = timed
    try:
        for name, xml, n_process in (("single stream", paths["wikipedia-bz2"], 1), ("single stream", paths["wikipedia-bz2"], 2),
                                     ("multistream", multi, 2)):
            best: Dict[str, float] = {}
            for _ in range(STAGE_REPEATS):
                kb, report = build_kb_from_dumps(paths["wikidata-gz"], xml, None, DumpsSettings(
                    progress=False, n_process=n_process, work_dir=folder / "multistream-work"))
                pages = report.to_dict()["wikipedia"]["pages"]
                del kb
                for key, value in (("wall", report.seconds["wikipedia"]), ("main", spent["main"]), ("workers", spent["workers"])):
                    best[key] = min(best.get(key, float("inf")), value)
            how = "the workers decompress and parse" if name == "multistream" else "the main process decompresses and parses"
            system = f"Wikipedia pass, {n_process} process{'es' if n_process > 1 else ''}"
            dataset = f"{label}: enwiki XML ({name} bz2)"
            rows += [
                result_row(system, dataset, "main_cpu_s", round(best["main"], 2), f"{how}; fastest of {STAGE_REPEATS}"),
                result_row(system, dataset, "workers_cpu_s", round(best["workers"], 2)),
                result_row(system, dataset, "pages_per_s", round(pages / best["wall"], 1), "wall time: 2 cores shared with other jobs"),
            ]
    finally:
        build._read_wikipedia = original
        multistream.RANGE_BYTES = saved
        shutil.rmtree(folder / "multistream-work", ignore_errors=True)
    return rows


def _throughput_rows(passes: Dict[str, Dict[str, float]], label: str, note: str) -> List[Row]:
    rows: List[Row] = []
    for key, what, unit in (("wikidata-gz", "Wikidata JSON (gz)", "items"), ("wikidata-bz2", "Wikidata JSON (bz2)", "items"),
                            ("wikipedia-bz2", "enwiki XML (bz2)", "pages")):
        p = passes[key]
        dataset = f"{label}: {what}"
        count = p["items"] if unit == "items" else p["pages"]
        mb = p["bytes"] / 1e6
        floor_s = p["decompression"] + p.get("json.loads", 0.0)
        floor_name = "floor: decompression + json.loads" if unit == "items" else "floor: decompression"
        rows += [
            result_row(REAL, dataset, f"{unit}_per_s", round(_rate(count, p["pass"]), 1),
                       f"{count:,} {unit}, {mb:.1f} MB decompressed; the whole pass (reading, parsing, spooling, counting); {note}"),
            result_row(REAL, dataset, "decompressed_mb_per_s", round(_rate(mb, p["pass"]), 2)),
            result_row(REAL, dataset, "compressed_mb_per_s", round(_rate(p["compressed"] / 1e6, p["pass"]), 3)),
            result_row(REAL, dataset, "fraction_of_floor", round(floor_s / p["pass"], 3),
                       f"{floor_name} time / pass time (target: >= 0.5 for the Wikidata JSON)"),
            result_row(floor_name, dataset, f"{unit}_per_s", round(_rate(count, floor_s), 1), "the same bytes, in the same run"),
            result_row(floor_name, dataset, "decompressed_mb_per_s", round(_rate(mb, floor_s), 2)),
            result_row(floor_name, dataset, "compressed_mb_per_s", round(_rate(p["compressed"] / 1e6, floor_s), 3)),
        ]
    return rows


def _stage_rows(passes: Dict[str, Dict[str, float]], label: str) -> List[Row]:
    """One row per (pass, stage): CPU seconds on the repeated excerpts, and the decompressed MB/s of that
    stage alone. "in the pass" stages are timed inside a whole build and add up to the pass; "alone" stages
    are timed on their own, on the same bytes (decompression alone is part of the reading)."""
    rows: List[Row] = []
    for key, system, stages in (
        ("wikidata-gz", "stage of the Wikidata pass (gz)", (
            ("in the pass: reading (decompression + line split)", "reading"), ("in the pass: parse + filter", "chunks"),
            ("in the pass: spool + pair counting", "rest"), ("the whole pass", "pass"),
            ("alone: decompression", "decompression"), ("alone: json.loads of each line", "json.loads"),
            ("alone: parse + filter", "parse + filter"))),
        ("wikidata-bz2", "stage of the Wikidata pass (bz2)", (
            ("in the pass: reading (decompression + line split)", "reading"), ("in the pass: parse + filter", "chunks"),
            ("in the pass: spool + pair counting", "rest"), ("the whole pass", "pass"),
            ("alone: decompression", "decompression"), ("alone: json.loads of each line", "json.loads"),
            ("alone: parse + filter", "parse + filter"))),
        ("wikipedia-bz2", "stage of the Wikipedia pass (bz2)", (
            ("in the pass: reading (decompression + XML parse)", "reading"),
            ("in the pass: per-page step (redirects, link scan, disambiguation check)", "chunks"),
            ("in the pass: pair counting, redirect and description spools", "rest"), ("the whole pass", "pass"),
            ("alone: decompression", "decompression"), ("alone: XML parse (reading less decompression)", "XML parse"),
            ("alone: link scan", "link scan"), ("alone: mwparserfromhell disambiguation check", "mwparserfromhell: disambiguation check"),
            ("alone: mwparserfromhell first paragraph, every article", "mwparserfromhell: first paragraph (every article)"))),
    ):
        p = passes[key]
        mb = p["bytes"] / 1e6
        for stage, field_name in stages:
            dataset = f"{label}: {stage}"
            rows.append(result_row(system, dataset, "seconds", round(p[field_name], 3)))
            rows.append(result_row(system, dataset, "share_of_pass", round(p[field_name] / p["pass"], 3)))
            rows.append(result_row(system, dataset, "decompressed_mb_per_s", round(_rate(mb, p[field_name]), 2)))
    build = passes["build"]
    rows.append(result_row("stage of the assembly", f"{label}: assembly (KB columns written)", "seconds", round(build["assemble"], 3)))
    rows.append(result_row("stage of the assembly", f"{label}: save (to_disk)", "seconds", round(build["save"], 3)))
    return rows


def _projection_rows(passes: Dict[str, Dict[str, float]], label: str) -> List[Row]:
    """Hours of the full English build on 2, 16 and 64 cores, from the per-process rates measured here.

    Today's build reads each dump in its main process (the reading: decompression, line split or XML parse;
    the rest: spooling and pair counting) and runs the per-chunk step in ``--n-process`` workers: a pass takes
    max(main's work, workers' work / w) with w = cores - 1 workers beside the main process (the cost of
    sending chunks to the workers is left out). Work scales with decompressed bytes (the excerpts'
    items are larger than the average item: bytes, not items, carry over)."""
    rows: List[Row] = []
    wd, wp = FULL_DUMPS["wikidata"], FULL_DUMPS["wikipedia"]
    assumed = (f"assumes {wd['file']} {wd['gz_gb']:.0f} GB gz / {wd['bz2_gb']:.0f} GB bz2, {wd['decompressed_gb']:.0f} GB "
               f"decompressed; {wp['file']} {wp['bz2_gb']:.0f} GB, {wp['decompressed_gb']:.0f} GB decompressed: "
               f"{FULL_DUMPS_SOURCE}; rates of {label}, 1 process")

    def pass_hours(p: Dict[str, float], full_gb: float, main: Tuple[str, ...], workers: Tuple[str, ...], cores: int) -> float:
        scale = full_gb * GB / p["bytes"]
        main_s = sum(p[s] for s in main) * scale
        worker_s = sum(p[s] for s in workers) * scale
        return max(main_s, worker_s / max(1, cores - 1)) / 3600

    assembly_h, assembly_note = _assembly_bound()
    for cores in (2, 16, 64):
        wikipedia_h = pass_hours(passes["wikipedia-bz2"], wp["decompressed_gb"], ("reading", "rest"), ("chunks",), cores)
        # The multistream read: the main process only merges; the workers decompress, parse and process.
        wikipedia_parallel_h = pass_hours(passes["wikipedia-bz2"], wp["decompressed_gb"], ("rest",), ("reading", "chunks"), cores)
        for kind in ("gz", "bz2"):
            wikidata_h = pass_hours(passes[f"wikidata-{kind}"], wd["decompressed_gb"], ("reading", "rest"), ("chunks",), cores)
            for read, enwiki_h in (("enwiki read by the main process", wikipedia_h),
                                   ("enwiki multistream read by the workers", wikipedia_parallel_h)):
                dataset = f"full English dumps, Wikidata as {kind}, {read}"
                system = f"projected build, {cores} cores"
                rows += [
                    result_row(system, dataset, "hours", round(wikidata_h + enwiki_h + assembly_h, 1), assumed),
                    result_row(system, dataset, "wikidata_hours", round(wikidata_h, 1)),
                    result_row(system, dataset, "wikipedia_hours", round(enwiki_h, 2)),
                    result_row(system, dataset, "assembly_hours", round(assembly_h, 2), assembly_note),
                ]
    return rows


def _assembly_bound() -> Tuple[float, str]:
    """The assembly at full scale, bounded by the whole synthetic 6M build of the results file (its passes
    included: the assembly alone takes less); 0 with a note when that row is missing."""
    path = RESULTS_DIR / "kb_from_dumps.json"
    rows = json.loads(path.read_text())["rows"] if path.is_file() else []
    for r in rows:
        if r["system"] == SYSTEM and r["dataset"] == "synthetic-dump-6m" and r["metric"] == "build_s":
            return r["value"] / 3600, "bounded by the whole synthetic 6M build (build_s of synthetic-dump-6m, 2 processes)"
    return 0.0, "not included (no synthetic-dump-6m row)"


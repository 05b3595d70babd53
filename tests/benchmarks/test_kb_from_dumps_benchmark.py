"""benchmarks.kb_from_dumps: the README's KB guide quotes only the sizes that were measured."""
from benchmarks.kb_from_dumps import SYSTEM, guide_lines


def row(dataset, metric, value, system=SYSTEM):
    return {"system": system, "dataset": dataset, "metric": metric, "value": value, "machine": {"cores": 2}}


def test_guide_lines_give_the_measured_sizes_only():
    measured = {"build_s": 598.2, "peak_rss_bytes": 1_010_524_160, "disk_bytes": 222_647_015, "load_s": 0.065}
    rows = [row("synthetic-dump-1m", m, v) for m, v in measured.items()]
    rows += [row("synthetic-dump-6m", "build_s", 5000.0)]  # an unfinished size: no line
    rows += [row("synthetic-dump-1m", "build_s", 55.6, system="spacy InMemoryLookupKB")]
    assert guide_lines(rows) == (
        "- 1M entities (synthetic dumps, 2 CPU cores, vectors excluded): 10 min, peak RSS 1.0 GB (main process), "
        "223 MB on disk, memory-mapped load 0.07 s"
    )
    rows += [row("synthetic-dump-6m", m, v) for m, v in {**measured, "build_s": 8000.0}.items()]
    assert guide_lines(rows).splitlines()[1].startswith("- 6M entities (synthetic dumps, 2 CPU cores, vectors excluded): 2.2 h,")

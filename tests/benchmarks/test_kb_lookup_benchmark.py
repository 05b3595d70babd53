"""benchmarks/kb_lookup.py on a tiny synthetic KB: every row it promises, the fast path against spaCy's look-up."""
import json
import sys

from benchmarks import kb_lookup


def test_tiny_run_writes_every_row(tmp_path, monkeypatch):
    out = tmp_path / "kb_lookup.json"
    monkeypatch.setattr(sys, "argv", ["kb_lookup", "--n-entities", "2000", "--n-lookups", "200", "--n-mentions", "500",
                                      "--rounds", "1", "--hybrid-mentions", "0", "--out", str(out)])
    kb_lookup.main()
    rows = {(r["system"], r["dataset"], r["metric"]): r["value"] for r in json.loads(out.read_text())["rows"]}
    for system in ("el_kb", "spacy InMemoryLookupKB"):
        assert rows[(system, "synthetic-2k-kb", "lookup_us_exact")] > 0
    for system in ("alias_generator", "kb_matches_batch"):
        assert rows[(system, "synthetic-2k-kb:exact", "mentions_per_s")] > 0

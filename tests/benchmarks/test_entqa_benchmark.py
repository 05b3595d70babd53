"""benchmarks.entqa: row names by reader mode, and the γ / K tables with one line per system (issue 29)."""
import json
from pathlib import Path

import spacy

from benchmarks.entqa import READER_KS, suffix_table, system_of
from benchmarks.results_io import row


def test_rows_are_named_by_reader_mode():
    for mode, system in (("per_candidate", "entqa_reader"), ("joint", "entqa_joint")):
        nlp = spacy.blank("en")
        nlp.add_pipe("entqa_reader", config={"reader_mode": mode})
        assert system_of(nlp) == system
    assert READER_KS == (10, 20, 50, 100)


def test_suffix_tables_keep_the_systems_apart(tmp_path: Path):
    rows = [row(system, "aida-test[:30]", f"{metric}@K={k}", value, "")
            for system, value in (("entqa_reader", 0.6), ("entqa_joint", 0.7))
            for k in (10, 20) for metric in ("el_micro_f", "docs_per_s")]
    results = tmp_path / "entqa.json"
    results.write_text(json.dumps({"rows": rows}), encoding="utf8")
    table = suffix_table(results, "@K=", "K", ("el_micro_f", "docs_per_s")).splitlines()
    assert table[0] == "| system | dataset | K | el_micro_f | docs_per_s |"
    assert len(table) == 2 + 4
    assert table[2].startswith("| entqa_reader | aida-test[:30] | 10 |") and table[4].startswith("| entqa_joint | aida-test[:30] | 10 |")

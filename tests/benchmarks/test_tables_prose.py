"""benchmarks.tables.PROSE: sentences of the README and the docs whose figures come from a results file."""
import json

import pytest

from benchmarks.tables import PAGES, PROSE, Prose, prose_text


def _results(tmp_path, rows, machine=None):
    path = tmp_path / "toy.json"
    path.write_text(json.dumps({"command": "c", "created": "T", "machine": machine or {"cpu": "Toy CPU", "cores": 4},
                                "rows": rows}), encoding="utf8")
    return tmp_path


def _row(system, metric, value, notes=""):
    return {"system": system, "dataset": "d", "metric": metric, "value": value, "notes": notes}


def test_figures_are_written_as_the_tables_write_them_or_with_their_own_format(tmp_path):
    results = _results(tmp_path, [_row("a", "per_s", 16342.8), _row("b", "per_s", 0.56), _row("b", "f", 0.7581)])
    prose = Prose("toy.json", "{a} and {b} ({b:.2f}) at F1 {f} on {cores} cores of a {cpu}.",
                  {"a": ("a", "d", "per_s"), "b": ("b", "d", "per_s"), "f": ("b", "d", "f")})
    assert prose_text(prose, results) == "16,343 and 0.560 (0.56) at F1 0.758 on 4 cores of a Toy CPU.\n"


def test_rows_that_differ_only_in_their_notes_are_told_apart_by_a_word_of_them(tmp_path):
    results = _results(tmp_path, [_row("g", "words_per_s", 2047, "encoder float32"),
                                  _row("g", "words_per_s", 2806, "encoder bfloat16")])
    both = Prose("toy.json", "{x}", {"x": ("g", "d", "words_per_s")})
    with pytest.raises(KeyError, match=r"toy.json: 2 rows \(g, d, words_per_s\), not one, for \{x\}"):
        prose_text(both, results)
    one = Prose("toy.json", "{x}", {"x": ("g", "d", "words_per_s", "bfloat16")})
    assert prose_text(one, results) == "2,806\n"
    with pytest.raises(KeyError, match=r"0 rows \(g, d, f\)"):
        prose_text(Prose("toy.json", "{x}", {"x": ("g", "d", "f")}), results)


@pytest.mark.parametrize("name", sorted(PROSE))
def test_every_sentence_has_a_page_and_renders_from_the_results_as_they_are(name):
    assert name in PAGES
    text = prose_text(PROSE[name])
    assert "{" not in text and text.endswith("\n")

"""QID -> Wikipedia-title map (GUM wiki_map + ELEVANT/AIDA alignment) and ELEVANT docs with title kb_ids.

Unit tests use invented files written to tmp_path (invented words only, no Reuters text). The data test
reads ../shared/data and is skipped when it is absent.
"""

import json
from pathlib import Path

import pytest
import spacy

from spacy_el.corpora import CorpusFormatError
from spacy_el.corpora.qid_titles import (
    combine_qid_title_pairs,
    elevant_title_docs,
    qid_title_map,
)

from ..conftest import REPO_ROOT, SHARED_DATA

WIKI_MAP = """#FormattedTitle\tURLTitle\tWikidataID\tDateUpdated
Zorblat_%28band%29\tZorblat_(band)\tQ900001\t2025-03-13
Quimbo\tQuimbo\tQ900002\t2025-03-13
Nonesuch\tNonesuch\tNone\t2025-03-13
Plimsy_Tarn\tPlimsy_Tarn\tQ900005\t2025-03-13
"""

# Train document 1 is ignored (not in the ELEVANT files); dev = document 2, test = document 3.
AIDA_TSV = """-DOCSTART- (1 Flimwick)
0\tFlimwick_Town\thttp://en.wikipedia.org/wiki/Flimwick_Town\t1\t/m/0a

-DOCSTART- (2testa Vorpal)
0\tVorpal_Blade\thttp://en.wikipedia.org/wiki/Vorpal_Blade\t11\t/m/0b
3\t--NME--
5\tQuimbo_(city)\thttp://en.wikipedia.org/wiki/Quimbo_(city)\t12\t/m/0c
8\tQuimbo_(city)\thttp://en.wikipedia.org/wiki/Quimbo_(city)\t12\t/m/0c
-DOCSTART- (3testb Snark)
0\tSnark\\u0027s_Hunt\thttp://en.wikipedia.org/wiki/Snark%27s_Hunt\t13\t/m/0d
2\tPlimsy_Lake\thttp://en.wikipedia.org/wiki/Plimsy_Lake\t14\t/m/0e
"""


def _label(i, start, end, entity_id, name="Unknown", parent=None):
    return {"id": i, "span": [start, end], "entity_id": entity_id, "name": name, "parent": parent,
            "children": [], "type": "OTHER"}


def _write_jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf8")
    return path


def _aida_elevant_records():
    # "Vorpal blades met Glimmox near Quimbo and later Quimbo ." -- labels deliberately out of order.
    dev_text = "Vorpal blades met Glimmox near Quimbo and later Quimbo ."
    dev_labels = [
        _label(0, 31, 37, "Q900002", "Quimbo"),
        _label(1, 0, 6, "Q900010", "Vorpal blade"),
        _label(2, 48, 54, "Q900002", "Quimbo"),
        _label(3, 18, 25, "Unknown"),
    ]
    test_text = "Snark 's Plimsy went west ."
    test_labels = [_label(0, 0, 8, "Q900011", "The Snark Hunt"), _label(1, 9, 15, "Q900005", "Plimsy Tarn")]
    return (
        [{"id": -1, "title": "", "text": dev_text, "labels": dev_labels}],
        [{"id": -1, "title": "", "text": test_text, "labels": test_labels}],
    )


@pytest.fixture
def data_dir(tmp_path) -> Path:
    (tmp_path / "gum" / "coref").mkdir(parents=True)
    (tmp_path / "gum" / "coref" / "wiki_map.tab").write_text(WIKI_MAP, encoding="utf8")
    (tmp_path / "aida").mkdir()
    (tmp_path / "aida" / "AIDA-YAGO2-annotations.tsv").write_text(AIDA_TSV, encoding="utf8")
    dev, test = _aida_elevant_records()
    _write_jsonl(tmp_path / "elevant" / "benchmark_labels_conll-dev.jsonl", dev)
    _write_jsonl(tmp_path / "elevant" / "benchmark_labels_conll-test.jsonl", test)
    return tmp_path


def test_qid_title_map_combines_gum_and_aida(data_dir):
    mapping = qid_title_map(data_dir)
    assert mapping == {
        "Q900001": "Zorblat_(band)",  # GUM, percent-decoded
        "Q900002": "Quimbo_(city)",  # AIDA's 2 mentions outvote GUM's 1 row
        "Q900005": "Plimsy_Tarn",  # 1 GUM row vs 1 AIDA mention: tie -> GUM (first seen)
        "Q900010": "Vorpal_Blade",  # AIDA: labels sorted by span[0] align with annotation lines
        "Q900011": "Snark's_Hunt",  # \\u0027 decoded
    }
    assert "Flimwick_Town" not in mapping.values()  # train documents are not aligned


def test_combine_most_frequent_first_seen_on_ties():
    pairs = [("Q1", "A"), ("Q1", "B"), ("Q1", "B"), ("Q2", "C"), ("Q2", "D"), ("Q3", "")]
    assert combine_qid_title_pairs(pairs) == {"Q1": "B", "Q2": "C"}


def test_alignment_mismatch_raises(data_dir):
    dev, _ = _aida_elevant_records()
    dev[0]["labels"].pop()
    _write_jsonl(data_dir / "elevant" / "benchmark_labels_conll-dev.jsonl", dev)
    with pytest.raises(CorpusFormatError, match="E655"):
        qid_title_map(data_dir)


def test_missing_data_dir(tmp_path):
    with pytest.raises(FileNotFoundError):
        qid_title_map(tmp_path / "absent")


BENCH_TEXT = "Zorblat played in Grommet Hall near Quimbo and Wuzzle Bay for Fennick Norrow ."
#             0       8      15 18           31   36     43  47         58  62


@pytest.fixture
def bench(tmp_path) -> Path:
    labels = [
        _label(0, 0, 7, "Q900001", "Zorblat"),  # table
        _label(1, 18, 30, "Q900020", "Grommet Hall", None),  # name fallback (in the kb)
        _label(2, 18, 25, "Q900021", "Grommet", parent=1),  # nested: span group only
        _label(3, 36, 42, "<NIL>", "Unknown"),
        _label(4, 47, 57, "Q900022", "Wuzzle Bay"),  # name not in the kb -> unmapped
        _label(5, 62, 76, "<NO_MAPPING>", "UnknownNoMapping"),
    ]
    labels[1]["children"] = [2]
    record = {"id": 0, "title": "invented.txt", "text": BENCH_TEXT, "evaluation_span": [0, 78], "labels": labels}
    return _write_jsonl(tmp_path / "invented.benchmark.jsonl", [record])


def test_elevant_title_docs(bench):
    nlp = spacy.blank("en")
    qid_to_title = {"Q900001": "Zorblat_(band)", "Q900021": "Grommet"}
    docs, stats = elevant_title_docs(bench, nlp, qid_to_title, kb={"Grommet_Hall", "Wuzzle"})
    assert stats == {"n_labels": 5, "mapped_by_table": 1, "mapped_by_name": 1, "unmapped": 1, "nil": 2}
    doc = docs[0]
    assert [(e.text, e.label_, e.kb_id_, e._.qid) for e in doc.ents] == [
        ("Zorblat", "OTHER", "Zorblat_(band)", "Q900001"),
        ("Grommet Hall", "OTHER", "Grommet_Hall", "Q900020"),
        ("Quimbo", "OTHER", "NIL", None),
        ("Wuzzle Bay", "OTHER", "", "Q900022"),
        ("Fennick Norrow", "OTHER", "NIL", None),
    ]
    # The titles reach the tokens (doc.ents was reassigned, not edited in place).
    assert doc[0].ent_kb_id_ == "Zorblat_(band)" and doc[3].ent_kb_id_ == "Grommet_Hall"
    nested = [(s.text, s.kb_id_, s._.qid) for s in doc.spans["elevant_labels"]]
    assert ("Grommet", "Grommet", "Q900021") in nested


def test_elevant_title_docs_without_kb_has_no_name_fallback(bench):
    docs, stats = elevant_title_docs(bench, spacy.blank("en"), {"Q900001": "Zorblat_(band)"})
    assert stats == {"n_labels": 5, "mapped_by_table": 1, "mapped_by_name": 0, "unmapped": 2, "nil": 2}
    assert [e.kb_id_ for e in docs[0].ents] == ["Zorblat_(band)", "", "NIL", "", "NIL"]


ELEVANT = SHARED_DATA / "elevant"
EVAL_KB = REPO_ROOT / "kb" / "eval"


@pytest.mark.data
@pytest.mark.skipif(
    not (ELEVANT / "msnbc.benchmark.jsonl").is_file() or not (SHARED_DATA / "aida").is_dir(),
    reason="../shared/data not available",
)
def test_msnbc_ace_on_shared_data():
    mapping = qid_title_map(SHARED_DATA)
    assert 4000 < len(mapping) < 10000
    assert all(" " not in title for title in mapping.values())
    kb = None
    if (EVAL_KB / "manifest.json").is_file():
        from spacy_el.kb import ElKnowledgeBase

        kb = ElKnowledgeBase.load(str(EVAL_KB), mmap=True)
    nlp = spacy.blank("en")
    expected = {"msnbc": (745, 88), "ace": (306, 51)}  # doc.ents labels (nested excluded), NIL-like ones
    for name, (n_labels, nil) in expected.items():
        docs, stats = elevant_title_docs(ELEVANT / f"{name}.benchmark.jsonl", nlp, mapping, kb=kb)
        assert (stats["n_labels"], stats["nil"]) == (n_labels, nil)
        qid_labels = n_labels - nil
        assert stats["mapped_by_table"] + stats["mapped_by_name"] + stats["unmapped"] == qid_labels
        assert stats["mapped_by_table"] > 0.35 * qid_labels
        if kb is not None:
            table_titles = [e.kb_id_ for d in docs for e in d.ents if e._.qid in mapping]
            assert sum(title in kb for title in table_titles) >= 0.95 * len(table_titles)
            if name == "msnbc":
                assert stats["mapped_by_table"] + stats["mapped_by_name"] > 0.5 * qid_labels

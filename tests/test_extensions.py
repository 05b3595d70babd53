"""spacy_el.extensions and the coreference-cluster storage helpers."""

import pytest
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from spacy_el.extensions import cluster_keys, get_cluster_spans, get_clusters, set_clusters
from spacy_el.extensions import DOC_EXTENSIONS, SPAN_EXTENSIONS, register_extensions


def _doc(vocab=None):
    words = "Alice Smith said she likes Paris .".split()
    return Doc(vocab or Vocab(), words=words)


def _round_trip(doc):
    data = DocBin(docs=[doc], store_user_data=True).to_bytes()
    return list(DocBin().from_bytes(data).get_docs(Vocab()))[0]


def test_register_extensions_is_idempotent():
    register_extensions()
    register_extensions()
    for name in DOC_EXTENSIONS:
        assert Doc.has_extension(name)
    for name in SPAN_EXTENSIONS:
        assert Span.has_extension(name)
    assert Doc.has_extension("doc_id")


def test_defaults():
    register_extensions()
    doc = _doc()
    span = doc[0:2]
    assert doc._.coref_clusters == []
    assert doc._.doc_id is None
    assert span._.qid is None and span._.nil_prob is None and span._.candidate_scores is None
    assert span._.link_score is None and span._.cluster_id is None
    # mutable defaults are per Doc, not shared
    doc._.coref_clusters.append([[0, 2]])
    assert _doc()._.coref_clusters == []


def test_extensions_survive_docbin():
    register_extensions()
    doc = _doc()
    doc._.doc_id = "toy-1"
    doc.ents = [Span(doc, 0, 2, label="PER", kb_id="Alice_Smith"), Span(doc, 5, 6, label="LOC", kb_id="NIL")]
    ent = doc.ents[0]
    ent._.qid = "Q42"
    ent._.nil_prob = 0.25
    ent._.candidate_scores = [["Alice_Smith", 0.9], ["Alice_Smyth", 0.1]]
    ent._.link_score = 0.9
    ent._.cluster_id = 1
    set_clusters(doc, [[(0, 2), (3, 4)]])
    loaded = _round_trip(doc)
    assert loaded.user_data["doc_id"] == "toy-1" and loaded._.doc_id == "toy-1"
    assert [(e.label_, e.kb_id_) for e in loaded.ents] == [("PER", "Alice_Smith"), ("LOC", "NIL")]
    got = loaded.ents[0]
    assert got._.qid == "Q42" and got._.nil_prob == 0.25 and got._.link_score == 0.9 and got._.cluster_id == 1
    assert [list(x) for x in got._.candidate_scores] == [["Alice_Smith", 0.9], ["Alice_Smyth", 0.1]]
    assert loaded.ents[1]._.qid is None
    assert get_clusters(loaded) == [[(0, 2), (3, 4)]]
    assert [[list(m) for m in c] for c in loaded._.coref_clusters] == [[[0, 2], [3, 4]]]


def test_set_clusters_sorts_and_replaces():
    doc = _doc()
    set_clusters(doc, [[(5, 6)], [(3, 4), (0, 2)]])
    assert cluster_keys(doc) == ["coref_clusters_1", "coref_clusters_2"]
    assert get_clusters(doc) == [[(0, 2), (3, 4)], [(5, 6)]]
    assert [s.text for s in doc.spans["coref_clusters_1"]] == ["Alice Smith", "she"]
    assert doc._.coref_clusters == [[[0, 2], [3, 4]], [[5, 6]]]
    set_clusters(doc, [[(5, 6)]])
    assert cluster_keys(doc) == ["coref_clusters_1"]
    assert [[s.text for s in c] for c in get_cluster_spans(doc)] == [["Paris"]]
    set_clusters(doc, [])
    assert get_clusters(doc) == [] and doc._.coref_clusters == []


def test_get_clusters_reads_span_groups_or_extension():
    doc = _doc()
    doc.spans["coref_clusters_2"] = [doc[5:6]]
    doc.spans["coref_clusters_10"] = [doc[3:4]]
    doc.spans["coref_clusters_1"] = [doc[0:2]]
    assert get_clusters(doc) == [[(0, 2)], [(5, 6)], [(3, 4)]]
    other = _doc()
    other._.coref_clusters = [[[0, 2], [3, 4]]]
    assert get_clusters(other) == [[(0, 2), (3, 4)]]


@pytest.mark.parametrize("clusters", [[[]], [[(3, 3)]], [[(0, 99)]], [[(-1, 2)]], [[(0, 1, 2)]]])
def test_set_clusters_rejects_bad_input(clusters):
    with pytest.raises(ValueError):
        set_clusters(_doc(), clusters)


def test_qid_from_the_kb_record_and_from_the_span():
    from spacy_el.extensions import QIDS_KEY, record_qids

    register_extensions()
    doc = _doc()
    doc.ents = [Span(doc, 0, 2, label="PER", kb_id="Alice_Smith"), Span(doc, 5, 6, label="LOC", kb_id="NIL")]
    assert doc.ents[0]._.qid is None
    record_qids(doc, {"Alice_Smith": "Q1", "NIL": "Q666"}.get)
    assert doc.user_data[QIDS_KEY] == {"Alice_Smith": "Q1"}  # NIL is never looked up
    assert doc.ents[0]._.qid == "Q1" and doc.ents[1]._.qid is None
    doc.ents[0]._.qid = "Q2"  # a value set on the span wins (corpus annotations)
    assert doc.ents[0]._.qid == "Q2" and doc[0:2]._.qid == "Q2"
    loaded = _round_trip(doc)
    assert loaded.ents[0]._.qid == "Q2" and loaded.user_data[QIDS_KEY] == {"Alice_Smith": "Q1"}
    empty = _doc()
    record_qids(empty, lambda kb_id: None)
    assert QIDS_KEY not in empty.user_data

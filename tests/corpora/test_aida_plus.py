"""AIDA+ clusters from entity links (spacy_el.corpora.aida_plus) and its registered reader."""
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.util import registry

from spacy_el.corpora.aida_plus import entity_clusters, read_aida_plus
from spacy_el.extensions import get_clusters

WORDS = "Velda met Orlan Mercer in Lumen . Mercer later left Lumen , and Zorp stayed with Zorp .".split()


def invented_doc(vocab) -> Doc:
    doc = Doc(vocab, words=WORDS)
    doc.ents = [
        Span(doc, 0, 1, "PER", kb_id="Velda"), Span(doc, 2, 4, "PER", kb_id="Orlan_Mercer"),
        Span(doc, 5, 6, "LOC", kb_id="Lumen"), Span(doc, 7, 8, "PER", kb_id="Orlan_Mercer"),
        Span(doc, 10, 11, "LOC", kb_id="Lumen"), Span(doc, 13, 14, "ORG", kb_id="NIL"),
        Span(doc, 16, 17, "ORG", kb_id="NIL"),
    ]
    return doc


def test_same_entity_and_same_text_nil_mentions_form_clusters():
    doc = invented_doc(spacy.blank("en").vocab)
    assert sorted(entity_clusters(doc)) == [[(0, 1)], [(2, 4), (7, 8)], [(5, 6), (10, 11)], [(13, 14), (16, 17)]]


def test_reader_adds_clusters_and_keeps_links(tmp_path):
    nlp = spacy.blank("en")
    path = tmp_path / "train.spacy"
    DocBin(docs=[invented_doc(nlp.vocab)]).to_disk(path)
    examples = list(registry.readers.get("spacy-el.AidaPlusReader.v1")(path=path)(nlp))
    reference = examples[0].reference
    assert len(get_clusters(reference)) == 4
    assert [e.kb_id_ for e in reference.ents][:2] == ["Velda", "Orlan_Mercer"]
    assert examples[0].predicted.text == reference.text


def test_missing_file_names_the_command_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="E601"):
        read_aida_plus(tmp_path / "absent.spacy", spacy.blank("en"))

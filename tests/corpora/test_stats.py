"""Mention-width counts (what a span-enumerating model must cover); invented text."""
import spacy
from spacy.tokens import Doc, Span

from spacy_el.corpora import mention_widths, set_clusters, share_wider_than


def test_mention_widths_count_cluster_mentions_and_linked_ents_once():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="The tall keeper of Velda Lighthouse met Quill and Orrin .".split())
    set_clusters(doc, [[(0, 6), (7, 8)]])
    doc.ents = [
        Span(doc, 4, 6, "LOC", kb_id="Velda_Lighthouse"),  # linked: counted
        Span(doc, 7, 8, "PER", kb_id="Quill"),  # linked, and already a cluster mention: counted once
        Span(doc, 9, 10, "PER", kb_id="NIL"),  # NIL: not a mention to link
    ]
    widths = mention_widths([doc])
    assert widths == {6: 1, 2: 1, 1: 1}
    assert share_wider_than(widths, 2) == 1 / 3
    assert share_wider_than(widths, 6) == 0.0


def test_share_of_no_mentions_is_zero():
    assert share_wider_than(mention_widths([]), 8) == 0.0

"""benchmarks.common.generator_recall / linked_ents: the candidate recall every benchmark reports for a generator."""
from types import SimpleNamespace

import spacy
from spacy.tokens import Span

from benchmarks.common import generator_recall, linked_ents


class ListGenerator:
    """Ranks the ids it was given for each mention text, as a spacy_el generator's lists do."""

    def __init__(self, lists):
        self.lists = lists

    def __call__(self, kb, spans):
        return [SimpleNamespace(ids=lambda kb, ids=self.lists.get(span.text, []): ids) for span in spans]


def test_recall_counts_linked_mentions_whose_gold_id_is_ranked_within_k():
    doc = spacy.blank("en")("Paris met Quill and Orrin .")
    doc.ents = [Span(doc, 0, 1, "PER", kb_id="Paris_Hilton"), Span(doc, 2, 3, "PER", kb_id="Quill"),
                Span(doc, 4, 5, "PER", kb_id="NIL")]
    mentions = linked_ents([doc])
    assert [span.text for span in mentions] == ["Paris", "Quill"]  # the NIL entity is not a linked mention
    generator = ListGenerator({"Paris": ["Paris", "Paris_Hilton"], "Quill": ["Quill"]})
    ids = [span.kb_id_ for span in mentions]
    assert generator_recall(None, generator, mentions, ids, 1) == 0.5
    assert generator_recall(None, generator, mentions, ids, 2) == 1.0
    assert generator_recall(None, generator, [], [], 30) == 0.0

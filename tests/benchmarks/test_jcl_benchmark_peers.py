"""benchmarks.joint_coref_linker peers: spaCy's entity_linker sees the mentions on the doc's own tokens."""
import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span

from benchmarks.joint_coref_linker import spacy_el_links


@Language.component("test_text_linker")
def text_linker(doc: Doc) -> Doc:
    """Links every entity to its own text, so that a test can see which tokens it was given."""
    doc.ents = [Span(doc, e.start, e.end, label=e.label_, kb_id=e.text) for e in doc.ents]
    return doc


def test_spacy_el_links_keeps_the_docs_tokens():
    el_nlp = spacy.blank("en")
    el_nlp.add_pipe("sentencizer")
    el_nlp.add_pipe("test_text_linker", name="entity_linker")
    # English tokenisation would split "AL-AIN" and "al." and shift every later token
    doc = Doc(el_nlp.vocab, words=["AL-AIN", "et", "al.", "met", "Japan", "in", "Japan"],
              spaces=[True, True, True, True, True, True, False])
    # overlapping mentions go to different layers; each keeps its own offsets
    mentions = [doc[4:5], doc[4:7], doc[6:7], doc[0:1]]
    links = spacy_el_links(el_nlp)(doc, mentions)
    assert links == {(4, 5): "Japan", (4, 7): "Japan in Japan", (6, 7): "Japan", (0, 1): "AL-AIN"}

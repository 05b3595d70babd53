"""spacy_el.scoring.standalone: the resolver's clusters with the linker's links."""
import spacy
from spacy.tokens import Span

from spacy_el.extensions import get_clusters, set_clusters
from spacy_el.scoring.standalone import set_mention_links, standalone

TEXT = "Shahid Afridi scored . Afridi won . Lahore cheered ."


def predicted(clusters, links):
    doc = spacy.blank("en")(TEXT)
    set_clusters(doc, clusters, sort=False)
    set_mention_links(doc, lambda s: links[(s.start, s.end)])
    return doc


def linked(doc):
    return [[(s.start, s.end, s.kb_id_) for s in doc.spans[f"coref_clusters_{n}"]]
            for n in range(1, len(get_clusters(doc)) + 1)]


def test_cluster_mentions_take_the_linkers_links_and_its_other_mentions_become_singletons():
    coref = predicted([[(0, 2), (4, 5)]], {(0, 2): "", (4, 5): ""})
    link = predicted([[(0, 2)], [(4, 5)], [(7, 8)]], {(0, 2): "Shahid_Afridi", (4, 5): "Afridi_(surname)",
                                                      (7, 8): "Lahore"})
    [doc] = standalone([coref], [link])
    assert linked(doc) == [[(0, 2, "Shahid_Afridi"), (4, 5, "Afridi_(surname)")], [(7, 8, "Lahore")]]
    assert get_clusters(coref) == [[(0, 2), (4, 5)]]  # the resolver's docs are left as they were


def test_a_mention_the_linker_did_not_find_is_nil_and_its_nil_mentions_are_not_added():
    coref = predicted([[(0, 2), (4, 5)]], {(0, 2): "", (4, 5): ""})
    link = predicted([[(0, 2)], [(7, 8)]], {(0, 2): "Shahid_Afridi", (7, 8): "NIL"})
    [doc] = standalone([coref], [link])
    assert linked(doc) == [[(0, 2, "Shahid_Afridi"), (4, 5, "NIL")]]


def test_links_reach_the_span_groups():
    doc = predicted([[(0, 2)]], {(0, 2): ""})
    set_mention_links(doc, lambda s: "Shahid_Afridi")
    assert [s.kb_id_ for s in doc.spans["coref_clusters_1"]] == ["Shahid_Afridi"]
    assert isinstance(doc.spans["coref_clusters_1"][0], Span)

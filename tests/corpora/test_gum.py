"""GUM (WebAnno TSV and CoNLL) and OntoGUM converters on invented toy documents."""

import shutil
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_el.corpora import CorpusFormatError, corpus_stats, doc_annotations, get_clusters
from spacy_el.corpora.conll2012 import read_conll2012_dir
from spacy_el.corpora.gum import read_gum, read_gum_file
from spacy_el.corpora.gum_conll import gum_body, read_gum_conll
from spacy_el.corpora.splits import load_gum_splits
from spacy_el.corpora.titles import decode_url_title, load_wiki_map

from .conftest import replace_once

GUM = Path(__file__).parents[1] / "fixtures" / "corpora" / "gum"
TSV = GUM / "coref" / "gum" / "tsv"
SPLITS = ("train", "dev", "test")


@pytest.fixture
def gum_copy(tmp_path):
    target = tmp_path / "gum"
    shutil.copytree(GUM, target)
    return target


def test_splits_and_wiki_map():
    splits = load_gum_splits(GUM / "splits.md")
    assert splits == {
        "dev": ["GUM_toy_beta"],
        "test": ["GUM_toy_gamma"],
        "test2": ["GENTLE_toy_missing"],
        "train": ["GUM_toy_alpha"],
    }
    wiki_map = load_wiki_map(GUM / "coref" / "wiki_map.tab")
    assert wiki_map["Illinois"] == "Q1204"  # the row with WikidataID "None" gives no QID
    assert wiki_map["Alice_Smith_%28writer%29"] == "Q999999001"
    assert decode_url_title("Springfield%2C_Illinois") == "Springfield,_Illinois"
    assert decode_url_title("iPad") == "iPad"


def test_gum_tsv_document():
    doc = read_gum(GUM, "train")[0]
    assert doc.user_data["doc_id"] == "GUM_toy_alpha"
    assert doc.text == "Alice Smith visited Paris . She loved the city and its museums ."
    assert [t.is_sent_start for t in doc][:6] == [True, False, False, False, False, True]
    mentions = [(m.text, m.label_, m.kb_id_, m._.qid) for m in doc.spans["mentions"]]
    assert mentions == [
        ("Alice Smith", "person", "Alice_Smith_(writer)", "Q999999001"),
        ("Paris", "place", "Paris", "Q90"),
        ("She", "person", "Alice_Smith_(writer)", "Q999999001"),  # mention without [id]
        ("the city", "place", "Paris", "Q90"),
        ("its museums", "object", "", None),
        ("its", "place", "Paris", "Q90"),
    ]
    # identity chains incl. the id-less mention; bridging (the city -> its museums) excluded
    clusters = [[doc[s:e].text for s, e in c] for c in get_clusters(doc)]
    assert clusters == [["Alice Smith", "She"], ["Paris", "the city", "its"], ["its museums"]]
    assert [(e.text, e.label_) for e in doc.ents] == [
        ("Alice Smith", "person"),
        ("Paris", "place"),
        ("She", "person"),
        ("the city", "place"),
        ("its", "place"),
    ]


def test_gum_nested_links_and_padded_lines():
    beta = read_gum(GUM, "dev")[0]
    assert [(e.text, e.kb_id_, e._.qid) for e in beta.ents] == [
        ("Springfield , Illinois", "Springfield,_Illinois", "Q28515")
    ]
    linked = [m.text for m in beta.spans["mentions"] if m.kb_id_]
    assert linked == ["Springfield , Illinois", "Illinois"]  # nested link kept in the span group
    gamma = read_gum(GUM, "test")[0]  # has a line with extra "_" columns
    assert get_clusters(gamma) == [[(0, 1)], [(2, 3)]]


def test_gum_counts():
    stats = [corpus_stats(read_gum(GUM, split)) for split in SPLITS]
    keys = (
        "docs",
        "tokens",
        "mentions",
        "clusters",
        "clusters_2plus",
        "mentions_linked",
        "clusters_linked",
        "titles",
    )
    assert [tuple(s[k] for k in keys) for s in stats] == [
        (1, 13, 6, 3, 2, 5, 2, 2),
        (1, 13, 6, 4, 2, 2, 2, 2),
        (1, 4, 2, 2, 0, 0, 0, 0),
    ]


def test_gum_conll_matches_tsv():
    for split in SPLITS:
        for from_tsv, from_conll in zip(read_gum(GUM, split), read_gum_conll(GUM, split)):
            a, b = doc_annotations(from_tsv), doc_annotations(from_conll)
            assert b["sent_starts"] is None  # GUM CoNLL files have no sentence breaks
            for key in ("doc_id", "words", "ents", "spans", "clusters"):
                assert a[key] == b[key], key


def test_gum_body():
    assert gum_body("person-3-Lord_Byron") == ("3", "person", "Lord_Byron")
    assert gum_body("time-6") == ("6", "time", None)
    assert gum_body("person-9-Jean%2DPaul_Sartre") == ("9", "person", "Jean%2DPaul_Sartre")
    with pytest.raises(ValueError):
        gum_body("12")


def test_ontogum():
    docs = read_conll2012_dir(GUM / "coref" / "ontogum" / "conll", "train", splits_path=GUM / "splits.md")
    doc = docs[0]
    assert doc.user_data["doc_id"] == "GUM_toy_alpha"  # unnamed '# begin document' -> file stem
    assert get_clusters(doc) == [[(0, 2), (5, 6)], [(3, 4), (7, 9), (10, 11)]]
    assert corpus_stats(docs)["mentions"] == 5


def test_layouts_and_round_trip(tmp_path):
    # a directory of .tsv files with split subdirectories, no splits.md or wiki map around
    for split, name in zip(SPLITS, ("alpha", "beta", "gamma")):
        (tmp_path / split).mkdir()
        shutil.copy(TSV / f"GUM_toy_{name}.tsv", tmp_path / split)
    docs = read_gum(tmp_path, "dev")
    assert [d.user_data["doc_id"] for d in docs] == ["GUM_toy_beta"]
    assert [m._.qid for m in docs[0].spans["mentions"] if m.kb_id_] == [None, None]
    one = read_gum_file(TSV / "GUM_toy_alpha.tsv")
    data = DocBin(docs=[one], store_user_data=True).to_bytes()
    loaded = list(DocBin().from_bytes(data).get_docs(Vocab()))[0]
    assert doc_annotations(loaded) == doc_annotations(one)
    assert len(read_gum(GUM)) == 3  # all documents


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("ana|bridge:def\t2-6[5_3]|2-6[4_3]", "ana|bridge:def\t2-6[5_3]", "E640"),
        ("ana|bridge:def", "ana|frobnicate", "E643.*'frobnicate'"),
        ("coref\t2-3[3_2]", "coref\t2-3[9_2]", "E642.*'9'"),
        ("coref\t2-3[3_2]", "coref\t2-3{3_2}", "E641"),
        ("Paris[5]", "Paris[7]", "E638.*'Paris'"),
        ("1-5\t26-27\t.\t_", "1-5\t26-27\t.\tperson[1]", "E637"),
        (
            "1-5\t26-27\t.\t_\t_\t_\t_\t_\t_\t_\t",
            "1-5\t26-27\t.\t_\t_\t_\t_",
            "E632",
        ),
    ],
)
def test_tsv_errors_name_file_and_line(gum_copy, old, new, message):
    path = gum_copy / "coref" / "gum" / "tsv" / "GUM_toy_alpha.tsv"
    replace_once(path, old, new)
    with pytest.raises(CorpusFormatError, match=message) as err:
        read_gum(gum_copy, "train")
    assert err.value.path.name == "GUM_toy_alpha.tsv" and err.value.line is not None


def test_missing_split_documents(gum_copy):
    (gum_copy / "coref" / "gum" / "tsv" / "GUM_toy_beta.tsv").unlink()
    with pytest.raises(FileNotFoundError, match="E612.*GUM_toy_beta.tsv"):
        read_gum(gum_copy, "dev")
    with pytest.raises(FileNotFoundError, match="E612"):
        read_gum(gum_copy, "test2")
    with pytest.raises(ValueError, match="E021.*'valid'"):
        read_gum(gum_copy, "valid")

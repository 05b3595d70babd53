"""Converters on the real corpora in ../shared/data: the counts of its README, exactly.

Marked ``data``; skipped when ../shared/data is absent. Each corpus is converted once per session
(module-scoped fixtures). The corpora are only read from ../shared/data, never copied (README rule 1).
"""

import re
import warnings
from pathlib import Path

import pytest

from spacy_el.corpora import corpus_stats
from spacy_el.corpora.conll2003_aida import read_aida
from spacy_el.corpora.conll2012 import read_conll2012_dir
from spacy_el.corpora.elevant import read_elevant
from spacy_el.corpora.gap import read_gap
from spacy_el.corpora.gum import read_gum
from spacy_el.corpora.gum_conll import read_gum_conll
from spacy_el.corpora.litbank_entities import read_litbank_entities

REPO = Path(__file__).resolve().parents[2]
DATA = (Path(__file__).parents[2] / ".." / "shared" / "data").resolve()
SPLITS = ("train", "dev", "test")

pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data not available"),
]


def _no_warnings(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return func(*args, **kwargs)


# -- AIDA ----------------------------------------------------------------------------------------

AIDA_COUNTS = {
    # docs, tokens, NER entities, AIDA mentions, linked, NIL
    "train": (946, 203_621, 23_499, 23_396, 18_541, 4_855),
    "dev": (216, 51_362, 5_942, 5_917, 4_791, 1_126),
    "test": (231, 46_435, 5_648, 5_616, 4_485, 1_131),
}
AIDA_DOC_IDS = {"train": (1, 946), "dev": (947, 1162), "test": (1163, 1393)}


@pytest.fixture(scope="module")
def aida():
    return _no_warnings(read_aida, DATA / "aida")


@pytest.mark.parametrize("split", SPLITS)
def test_aida_counts(aida, split):
    stats = corpus_stats(aida[split])
    keys = ("docs", "tokens", "ents", "ents_annotated", "ents_linked", "ents_nil")
    assert tuple(stats[k] for k in keys) == AIDA_COUNTS[split]
    first, last = AIDA_DOC_IDS[split]
    assert [d.user_data["doc_id"] for d in aida[split]] == [str(i) for i in range(first, last + 1)]
    assert stats["sentences"] > stats["docs"]


def test_aida_titles_are_decoded(aida):
    titles = {e.kb_id_ for docs in aida.values() for d in docs for e in d.ents}
    assert not any("\\u" in t for t in titles)
    assert "People's_Republic_of_China" in titles


# -- ELEVANT -------------------------------------------------------------------------------------

ELEVANT_COUNTS = {
    # docs, labels, entity_id counts (QIDs together), nested labels
    "msnbc.benchmark.jsonl": (20, 755, {"QID": 666, "<NIL>": 8, "<NO_MAPPING>": 81}, 10),
    "msnbc-updated.benchmark.jsonl": (20, 739, {"QID": 653, "<NIL>": 83, "<NO_MAPPING>": 3}, 0),
    "ace.benchmark.jsonl": (57, 306, {"QID": 255, "Unknown": 51}, 0),
    "ace-original.benchmark.jsonl": (57, 306, {"QID": 253, "Unknown": 53}, 0),
    "benchmark_labels_conll-dev.jsonl": (216, 5_917, {"QID": 4_752, "Unknown": 1_165}, 0),
    "benchmark_labels_conll-test.jsonl": (231, 5_616, {"QID": 4_452, "Unknown": 1_164}, 0),
}


@pytest.fixture(scope="module")
def elevant(nlp):
    return {name: _no_warnings(read_elevant, DATA / "elevant" / name, nlp=nlp) for name in ELEVANT_COUNTS}


@pytest.mark.parametrize("name", list(ELEVANT_COUNTS))
def test_elevant_counts(elevant, name):
    docs = elevant[name]
    n_docs, n_labels, by_id, n_nested = ELEVANT_COUNTS[name]
    spans = [s for d in docs for s in d.spans["elevant_labels"]]
    raw = [label for d in docs for label in d.user_data["elevant_labels"]]
    assert (len(docs), len(spans)) == (n_docs, n_labels)
    counts = {}
    for label in raw:
        key = "QID" if label["entity_id"].startswith("Q") else label["entity_id"]
        counts[key] = counts.get(key, 0) + 1
    assert counts == by_id
    assert sum(s.kb_id_ == "NIL" for s in spans) == n_labels - by_id["QID"]
    assert sum(s._.qid is not None for s in spans) == by_id["QID"]
    assert sum(len(d.ents) for d in docs) == n_labels - n_nested
    for doc in docs:  # every label keeps its exact character offsets
        offsets = [(s.start_char, s.end_char) for s in doc.spans["elevant_labels"]]
        assert offsets == [tuple(label["span"]) for label in doc.user_data["elevant_labels"]]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_elevant_conll_aligns_with_aida(elevant, aida, split):
    """README: the k-th label (by start) is the k-th AIDA mention; first words agree."""
    for el_doc, aida_doc in zip(elevant[f"benchmark_labels_conll-{split}.jsonl"], aida[split], strict=True):
        labels = sorted(el_doc.spans["elevant_labels"], key=lambda s: s.start_char)
        mentions = [e for e in aida_doc.ents if e.kb_id_]
        assert len(labels) == len(mentions)
        assert [s.text.split()[0] for s in labels] == [m[0].text for m in mentions]


# -- GUM -----------------------------------------------------------------------------------------

GUM_COUNTS = {
    # docs, reddit docs, tokens, mentions, clusters, clusters >= 2, linked mentions, linked clusters, titles
    "train": (191, 14, 190_161, 53_199, 27_558, 7_581, 8_699, 2_862, 2_250),
    "dev": (32, 2, 29_874, 8_412, 4_214, 1_204, 1_336, 363, 316),
    "test": (32, 2, 30_255, 8_406, 4_546, 1_175, 1_415, 524, 460),
}
ONTOGUM_COUNTS = {"train": (25_134, 5_746), "dev": (4_082, 948), "test": (3_832, 925)}
GUM_KEYS = ("mentions", "clusters", "clusters_2plus", "mentions_linked", "clusters_linked", "titles")


def _gum_row(docs):
    stats = corpus_stats(docs)
    reddit = sum("_reddit_" in d.user_data["doc_id"] for d in docs)
    return (stats["docs"], reddit, stats["tokens"]) + tuple(stats[k] for k in GUM_KEYS)


@pytest.fixture(scope="module")
def gum():
    return {split: _no_warnings(read_gum, DATA / "gum", split) for split in SPLITS}


@pytest.mark.parametrize("split", SPLITS)
def test_gum_tsv_counts(gum, split):
    assert _gum_row(gum[split]) == GUM_COUNTS[split]
    linked = [m for d in gum[split] for m in d.spans["mentions"] if m.kb_id_]
    assert all(m._.qid is not None for m in linked)  # wiki_map.tab covers every title


@pytest.mark.parametrize("split", SPLITS)
def test_gum_conll_counts(split):
    docs = _no_warnings(read_gum_conll, DATA / "gum", split)
    assert _gum_row(docs) == GUM_COUNTS[split]


@pytest.mark.parametrize("split", SPLITS)
def test_ontogum_counts(split):
    path, splits_path = DATA / "gum" / "coref" / "ontogum" / "conll", DATA / "gum" / "splits.md"
    if split == "dev":  # GUM_news_iodine has one empty token (the "|" token): replaced by "_", warned
        with pytest.warns(UserWarning, match=r"W603.*GUM_news_iodine\.conll"):
            docs = read_conll2012_dir(path, split, splits_path=splits_path)
    else:
        docs = _no_warnings(read_conll2012_dir, path, split, splits_path=splits_path)
    stats = corpus_stats(docs)
    assert (stats["docs"], stats["tokens"]) == GUM_COUNTS[split][:1] + GUM_COUNTS[split][2:3]
    assert (stats["mentions"], stats["clusters"]) == ONTOGUM_COUNTS[split]


# -- LitBank -------------------------------------------------------------------------------------

LITBANK_COUNTS = {
    # docs, tokens, coref mentions, clusters, clusters >= 2, entity mentions
    "train": (80, 166_604, 23_182, 6_220, 1_739, 11_153),
    "dev": (10, 20_467, 2_752, 697, 186, 1_251),
    "test": (10, 23_461, 3_169, 1_010, 239, 1_508),
}


@pytest.mark.parametrize("split", SPLITS)
def test_litbank_counts(split):
    splits_path = DATA / "litbank" / "splits.json"
    coref = _no_warnings(
        read_conll2012_dir, DATA / "litbank" / "coref" / "conll", split, splits_path=splits_path
    )
    entities = _no_warnings(
        read_litbank_entities, DATA / "litbank" / "entities" / "tsv", split, splits_path=splits_path
    )
    stats = corpus_stats(coref)
    row = (stats["docs"], stats["tokens"], stats["mentions"], stats["clusters"], stats["clusters_2plus"])
    assert row + (sum(len(d.spans["entities"]) for d in entities),) == LITBANK_COUNTS[split]


# -- GAP -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,rows,a,b,neither,feminine",
    [("gap-development.tsv", 2_000, 874, 925, 201, 1_000), ("gap-validation.tsv", 454, 187, 205, 62, 227)],
)
def test_gap_counts(nlp, name, rows, a, b, neither, feminine):
    docs = _no_warnings(read_gap, DATA / "gap" / name, nlp=nlp)
    flags = [(d.user_data["gap"]["A-coref"], d.user_data["gap"]["B-coref"]) for d in docs]
    assert len(docs) == rows
    assert (flags.count((True, False)), flags.count((False, True)), flags.count((False, False))) == (
        a,
        b,
        neither,
    )
    pronouns = [d.spans["gap"][0].text.lower() for d in docs]
    assert sum(p in ("she", "her", "hers", "herself") for p in pronouns) == feminine


# -- Rule 1: no Reuters text in what this module ships --------------------------------------------


def _alnum(text):
    return re.findall(r"[A-Za-z0-9]+", text)


def _word_streams(text):
    """The whole text, and the k-th whitespace column of every line (token columns of CoNLL/TSV)."""
    yield _alnum(text)
    rows = [line.split() for line in text.splitlines()]
    for k in range(4):
        yield _alnum(" ".join(row[k] for row in rows if len(row) > k))


def test_no_aida_text_in_corpora_fixtures_or_code():
    n = 10
    grams = set()
    for path in sorted((DATA / "aida").glob("*.txt")):
        tokens = [line.split(" ")[0] for line in path.read_text(encoding="utf8").splitlines()]
        words = _alnum(" ".join(t for t in tokens if t != "-DOCSTART-"))
        grams.update(hash(tuple(words[i : i + n])) for i in range(len(words) - n + 1))
    assert len(grams) > 100_000
    shipped = [
        *(REPO / "tests" / "fixtures" / "corpora").rglob("*"),
        *(REPO / "spacy_el" / "corpora").glob("*.py"),
    ]
    shipped += [REPO / "spacy_el" / "extensions.py", REPO / "spacy_el" / "cli" / "convert.py"]
    shipped += sorted((REPO / "tests").glob("test_corpora_*.py"))
    checked = 0
    for path in (p for p in shipped if p.is_file()):
        for words in _word_streams(path.read_text(encoding="utf8", errors="replace")):
            for i in range(len(words) - n + 1):
                assert (
                    hash(tuple(words[i : i + n])) not in grams
                ), f"{path}: Reuters text near {words[i:i + n]}"
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("split", SPLITS)
def test_the_masked_gum_documents_are_the_reddit_ones(gum, split):
    from spacy_el.corpora.masked import is_text_masked

    masked = {d.user_data["doc_id"] for d in gum[split] if is_text_masked(d)}
    assert masked == {d.user_data["doc_id"] for d in gum[split] if d.user_data["doc_id"].startswith("GUM_reddit_")}
    assert len(masked) == GUM_COUNTS[split][1]
    if split == "dev":  # docs/joint_coref_linker.md: "GUM dev's two hold about 6% of its tokens"
        share = sum(len(d) for d in gum[split] if d.user_data["doc_id"] in masked) / GUM_COUNTS[split][2]
        assert 0.055 < share < 0.065

"""benchmarks.jcl_mention_budget: the gold mentions pruning keeps, the gold density, the table and the arguments."""
import pytest
import spacy
from spacy.tokens import Doc

from benchmarks.jcl_mention_budget import (budget_table, gold_mentions, gold_rows, kept_offsets, kept_recall, kind_scores,
                                           parse_models)
from benchmarks.results_io import row
from spacy_el.extensions import set_clusters

WORDS = "The old harbour master of the town said he and the harbour master were friends".split()


@pytest.fixture
def doc():
    doc = Doc(spacy.blank("en").vocab, words=WORDS)
    # {The old harbour master of the town, he}, {the harbour master}, {the town}: two singletons
    set_clusters(doc, [[(0, 7), (8, 9)], [(10, 13)], [(5, 7)]])
    return doc


def test_gold_mentions_leave_the_singletons_out_only_when_asked(doc):
    every = gold_mentions(doc, keep_singletons=True)
    assert len(every) == 4 and (doc[8:9].start_char, doc[8:9].end_char) in every
    assert gold_mentions(doc, keep_singletons=False) == [(0, len("The old harbour master of the town")),
                                                        (doc[8].idx, doc[8].idx + 2)]


class KeepingPipe:
    """A stand-in for the component: keeps the spans given, as token offsets of each doc it is given."""

    def __init__(self, kept):
        self.kept = kept

    def kept_spans(self, docs):
        return [[doc[start:end] for start, end in self.kept] for doc in docs]


class Pipeline:
    def __init__(self, pipe):
        self.pipe, self.blank = pipe, spacy.blank("en")

    def make_doc(self, text):
        return self.blank.make_doc(text)

    def get_pipe(self, name):
        assert name == "joint_coref_linker"
        return self.pipe


def test_kept_recall_is_the_share_of_gold_mentions_among_the_kept_spans(doc):
    # kept: the long mention, "he", and a span that is no gold mention; not "the harbour master", "the town"
    nlp = Pipeline(KeepingPipe([(0, 7), (8, 9), (1, 3)]))
    kept = kept_offsets(nlp, [doc])
    assert kept_recall([doc], kept, keep_singletons=True) == pytest.approx(2 / 4)
    assert kept_recall([doc], kept, keep_singletons=False) == 1.0
    assert kept_recall([doc], kept_offsets(Pipeline(KeepingPipe([])), [doc]), keep_singletons=True) == 0.0


def test_singletons_and_cluster_mentions_are_scored_apart(doc):
    # kept: the long mention and "the harbour master" (a singleton); written: the long mention and "he"
    kept = [{(doc[0:7].start_char, doc[0:7].end_char), (doc[10:13].start_char, doc[10:13].end_char)}]
    pred = Doc(doc.vocab, words=WORDS)
    set_clusters(pred, [[(0, 7), (8, 9)]])
    scores = kind_scores([doc], kept, [pred])
    assert scores == {"gold_share_singleton": 0.5, "mention_kept_r_singleton": 0.5, "coref_mention_r_singleton": 0.0,
                      "gold_share_clustered": 0.5, "mention_kept_r_clustered": 0.5, "coref_mention_r_clustered": 1.0}


def test_gold_rows_give_the_mentions_per_token_of_each_split(doc):
    rows = gold_rows("litbank", {"dev": [doc], "test": [doc, doc]})
    assert [(r["dataset"], r["value"]) for r in rows] == [("litbank-dev", round(4 / 15, 4)), ("litbank-test", round(4 / 15, 4))]
    assert rows[1]["notes"].startswith("2 docs, 30 tokens, 8 gold mentions")
    no_singletons = gold_rows("ontogum", {"dev": [doc]})  # OntoGUM's rows leave the singletons out
    assert no_singletons[0]["value"] == round(2 / 15, 4) and "(no singletons)" in no_singletons[0]["notes"]


def test_the_table_lists_each_dev_sweep_then_the_test_rows():
    rows = [row("gold", "toy-dev", "gold_mentions_per_token", 0.25), row("gold", "toy-test", "gold_mentions_per_token", 0.3)]
    for split in ("dev", "test"):
        rows.append(row("m", f"toy-{split}", "coref_mention_reachable", 0.9))
    sweeps = (("predict_span_ratio", 0.4, 0.5), ("predict_span_ratio", 0.6, 0.55), ("singleton_threshold", 0.5, 0.5),
              ("singleton_threshold", 0.3, 0.52))
    for setting, value, score in sweeps:
        suffix = f"_{setting}_{value:g}"
        rows += [row("m", "toy-dev", f"mention_kept_r{suffix}", value), row("m", "toy-dev", f"coref_mention_r{suffix}", 0.7),
                 row("m", "toy-dev", f"coref_mention_p{suffix}", 0.8), row("m", "toy-dev", f"coref_avg_f{suffix}", score)]
    for name, score in (("m", 0.51), ("m_predict_span_ratio", 0.56), ("m_singleton_threshold", 0.53)):
        rows += [row(name, "toy-test", metric, value) for metric, value in
                 (("mention_kept_r", 0.9), ("coref_mention_r", 0.7), ("coref_mention_p", 0.8), ("coref_avg_f", score))]
    table = budget_table(rows)
    assert "| toy-dev | 0.250 |" in table and "| toy-test | 0.300 |" in table
    lines = [line for line in table.splitlines() if line.startswith("| m")]
    assert [line.split(" | ")[2] for line in lines] == [
        "predict_span_ratio 0.4", "predict_span_ratio 0.6", "singleton_threshold 0.5", "singleton_threshold 0.3",
        "the model's", "predict_span_ratio best on dev", "singleton_threshold best on dev"]
    assert lines[1].endswith("| 0.550 (coref_avg_f) |") and lines[5].startswith("| m_predict_span_ratio | toy-test |")
    assert lines[6].endswith("| 0.530 (coref_avg_f) |")
    assert "apart" not in table  # no singleton rows: no third table


def test_the_singleton_rows_make_a_third_table():
    rows = [row("gold", "toy-test", "gold_mentions_per_token", 0.3), row("m", "toy-test", "coref_mention_reachable", 0.9)]
    rows += [row("m", "toy-test", metric, 0.5) for metric in ("mention_kept_r", "coref_mention_r", "coref_mention_p", "coref_avg_f")]
    for kind, share in (("singleton", 0.25), ("clustered", 0.75)):
        rows += [row("m", "toy-test", f"gold_share_{kind}", share), row("m", "toy-test", f"mention_kept_r_{kind}", 0.9),
                 row("m", "toy-test", f"coref_mention_r_{kind}", 0.6 if kind == "singleton" else 0.95)]
    table = budget_table(rows)
    assert "| m | toy-test | singleton | 0.250 | 0.900 | 0.600 |" in table
    assert "| m | toy-test | clustered | 0.750 | 0.900 | 0.950 |" in table


def test_models_are_system_and_folder_pairs(tmp_path):
    assert parse_models([f"m={tmp_path}"]) == [("m", tmp_path)]
    with pytest.raises(SystemExit, match="SYSTEM=PATH"):
        parse_models([str(tmp_path)])
    with pytest.raises(SystemExit, match="is not a folder"):
        parse_models([f"m={tmp_path / 'missing'}"])

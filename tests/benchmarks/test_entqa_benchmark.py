"""benchmarks.entqa: row names by reader mode, tables with one line per system, the speedups and the ents candidates."""
import json
from pathlib import Path

import pytest
import spacy

from benchmarks.entqa import system_of
from benchmarks.tables import suffix_table
from benchmarks.results_io import row


def test_rows_are_named_by_reader_mode():
    for mode, system in (("per_candidate", "entqa_reader"), ("joint", "entqa_joint")):
        nlp = spacy.blank("en")
        nlp.add_pipe("entqa_reader", config={"reader_mode": mode})
        assert system_of(nlp) == system


def test_suffix_tables_keep_the_systems_apart(tmp_path: Path):
    rows = [row(system, "aida-test[:30]", f"{metric}@K={k}", value, "")
            for system, value in (("entqa_reader", 0.6), ("entqa_joint", 0.7))
            for k in (10, 20) for metric in ("el_micro_f", "docs_per_s")]
    results = tmp_path / "entqa.json"
    results.write_text(json.dumps({"rows": rows}), encoding="utf8")
    table = suffix_table(results, "@K=", "K", ("el_micro_f", "docs_per_s")).splitlines()
    assert table[0] == "| system | dataset | K | el_micro_f | docs_per_s |"
    assert len(table) == 2 + 4
    assert table[2].startswith("| entqa_reader | aida-test[:30] | 10 |") and table[4].startswith("| entqa_joint | aida-test[:30] | 10 |")


def test_a_learning_curve_becomes_rows(tmp_path: Path):
    from benchmarks.common import curve_rows

    evaluations = tmp_path / "evaluations.json"
    records = [{"step": step, "epoch": 0, "seconds": seconds, "score": f, "scores": {"el_micro_f": f}}
               for step, seconds, f in ((250, 300, 0.41234), (0, 3, 0.0))]
    evaluations.write_text(json.dumps(records), encoding="utf8")
    rows = curve_rows(evaluations, "entqa_joint", "aida-dev[:30]", "el_micro_f")
    assert [(r["metric"], r["value"]) for r in rows] == [
        ("el_micro_f@step=0", 0.0), ("train_minutes@step=0", 0.1), ("el_micro_f@step=250", 0.4123),
        ("train_minutes@step=250", 5.0), ("train_minutes", 5.0)]
    assert curve_rows(tmp_path / "missing.json", "entqa_joint", "aida-dev[:30]", "el_micro_f") == []
    evaluations.write_text('{"step": 0}', encoding="utf8")
    with pytest.raises(ValueError, match="not a list of evaluations"):
        curve_rows(evaluations, "entqa_joint", "aida-dev[:30]", "el_micro_f")


def test_the_joint_speedup_is_a_ratio_of_the_same_run():
    from benchmarks.entqa import speedup_rows

    rows = [row("entqa_reader", "aida-test", "docs_per_s", 0.5), row("entqa_joint", "aida-test", "docs_per_s", 6.0),
            row("entqa_joint", "msnbc", "docs_per_s", 2.0), row("entqa_reader", "aida-test", "el_micro_f", 0.6),
            row("entqa_joint_ents_alias", "aida-test", "docs_per_s", 5.0),
            row("entqa_reader_ents_alias", "aida-test", "docs_per_s", 0.4)]
    speedups = {(r["system"], r["dataset"]): r["value"] for r in speedup_rows(rows)}
    # each joint system against the bare per-candidate pipeline; no per-candidate system gets one
    assert speedups == {("entqa_joint", "aida-test"): 12.0, ("entqa_joint_ents_alias", "aida-test"): 10.0}


def test_the_main_table_keeps_the_metric_order_it_is_given(tmp_path: Path):
    from benchmarks.tables import results_to_markdown

    rows = [row("entqa_joint", "aida-train", "train_minutes", 40.1), row("entqa_joint", "aida-test", "docs_per_s", 7.0),
            row("entqa_joint", "aida-test", "el_micro_f", 0.6)]
    results = tmp_path / "entqa.json"
    results.write_text(json.dumps({"rows": rows}), encoding="utf8")
    header = results_to_markdown(results, pivot=True, notes=False, column_order=("el_micro_f", "docs_per_s")).splitlines()[0]
    assert header == "| system | dataset | el_micro_f | docs_per_s | train_minutes |"
    unordered = results_to_markdown(results, pivot=True, notes=False).splitlines()[0]
    assert unordered == "| system | dataset | train_minutes | docs_per_s | el_micro_f |", "first appearance without an order"


def test_ents_candidates_rows_run_each_pipeline_on_the_ner_mentions(tiny_encoder, tmp_path):
    """--ents-candidates: the pipeline reads docs with the given mentions (unlinked) and its retriever merges the
    generator's candidates of them; the generator is taken back off after."""
    pytest.importorskip("faiss")
    from benchmarks.entqa import ents_candidates_rows, ents_generators, with_mentions
    from spacy_el.candidates import AliasCandidates, CandidateGenerator, MentionCandidates
    from tests.pipeline.test_entqa import TRAIN, make_nlp, reference

    nlp = make_nlp(tiny_encoder, tmp_path)
    gold = [reference(nlp, text, links) for text, links in TRAIN[:2]]
    mentions = [[(e.start_char, e.end_char, "ENT") for e in g.ents] for g in gold]
    docs = with_mentions(nlp, gold, mentions)
    assert [[(e.text, e.kb_id_) for e in d.ents] for d in docs] == [[(e.text, "") for e in g.ents] for g in gold]
    assert set(ents_generators(["alias", "hybrid"], tmp_path / "no-encoder")) == {"alias"}
    rows = ents_candidates_rows([nlp], {"alias": AliasCandidates(top_k=3)}, "aida-test", gold, mentions, 10.0, "speed")
    assert {(r["system"], r["metric"]) for r in rows} >= {
        ("entqa_reader_ents_alias", "el_micro_f"), ("entqa_reader_ents_alias", "docs_per_s"),
        ("entity_retriever_ents_alias", "recall_at_10")}
    # ner's 10 seconds are counted: 2 docs in over 10 s
    assert 0 < next(r["value"] for r in rows if r["metric"] == "docs_per_s") <= 0.2
    # every passage's list holds its mentions' alias candidates: each gold entity is retrieved, which the
    # untrained retriever alone does not do
    assert next(r["value"] for r in rows if r["metric"] == "recall_at_10") == 1.0

    class NoCandidates(CandidateGenerator):
        def __call__(self, kb, spans):
            return [MentionCandidates.empty() for _ in spans]

    alone = ents_candidates_rows([nlp], {"none": NoCandidates()}, "aida-test", gold, mentions, 0.0, "speed")
    assert next(r["value"] for r in alone if r["metric"] == "recall_at_10") < 1.0
    assert nlp.get_pipe("entity_retriever").ents_candidates is None

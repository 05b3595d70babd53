"""The linkers' benchmarks with hybrid candidates (issue 26): which models a hybrid-only rerun measures, the
hard cases as a generator defines them, the soft-decoding weight a rerun takes from the results file, and
the recall of the lists a linker scores."""
import json
from pathlib import Path
from types import SimpleNamespace
from typing import List

import spacy
from spacy.tokens import Span

from benchmarks import joint_coref_linker, ner_constrained_linker, ner_stack_lstm
from benchmarks.joint_coref_linker import HardCase, find_hard_cases
from benchmarks.results_io import row
from spacy_el.candidates import MentionCandidates

from .test_jcl_hard_cases import AliasOnlyKB, clustered


class ListsKB(AliasOnlyKB):
    """The alias table of test_jcl_hard_cases plus entity ids by row, as a generator's lists need them."""

    class entities:
        ids = ["Shahid_Afridi", "Other"]


class FakeGenerator:
    """Finds Shahid_Afridi for every mention whose text contains "Afridi" at or after character 23 (the
    second and third mentions), and nothing for the others; records its calls."""

    top_k, name = 16, "hybrid"

    def __init__(self):
        self.calls: List[List[str]] = []

    def __call__(self, kb, mentions):
        self.calls.append([m.text for m in mentions])
        return [MentionCandidates.from_lists([0] if m.start_char >= 23 else [], *([[0.0]] * 4 if m.start_char >= 23 else [[]] * 4))
                for m in mentions]


def test_hard_cases_of_a_generator_are_asked_once_per_document_and_differ_from_the_alias_ones():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    generator = FakeGenerator()
    own = find_hard_cases(ListsKB(), [gold], 16, generator)
    # its own lists miss the gold for the first mention only, which the alias table found
    assert own == [[HardCase((0, 13), "Shahid_Afridi", frozenset({(23, 29), (36, 42)}))]]
    assert generator.calls == [["Shahid Afridi", "Afridi", "Afridi"]]
    alias = find_hard_cases(ListsKB(), [gold], 16)
    assert [c.mention for c in alias[0]] == [(23, 29), (36, 42)]
    assert find_hard_cases(ListsKB(), [spacy.blank("en")("No clusters here .")], 16, generator) == [[]]


def test_a_variants_rerun_scores_only_the_variant_folders(tmp_path: Path, monkeypatch):
    (tmp_path / "aida-hybrid").mkdir()
    (tmp_path / "aida-long").mkdir()
    calls = []

    def fake_model_set_rows(args, folder, suffix, trained, dataset, gold, peers):
        calls.append((folder, suffix, peers))
        return [row(f"global{suffix}", dataset, "elh_f", 0.2, trained)]

    monkeypatch.setattr(joint_coref_linker, "model_set_rows", fake_model_set_rows)
    rows = joint_coref_linker.joint_rows(SimpleNamespace(models=str(tmp_path), variants=["hybrid"]), "aida", "aida-test", [])
    assert calls == [("aida-hybrid", "_hybrid", False)] and [r["system"] for r in rows] == ["global_hybrid"]
    calls.clear()
    joint_coref_linker.joint_rows(SimpleNamespace(models=str(tmp_path)), "aida", "aida-test", [])
    assert [c[0] for c in calls] == ["aida", "aida-long", "aida-hybrid"]


def test_the_soft_weight_of_a_rerun_is_the_recorded_dev_sweep_best(tmp_path: Path):
    out = tmp_path / "ner_constrained_linker.json"
    assert ner_constrained_linker.recorded_soft_weight(out) is None
    sweep = [row("ner4el_decoding", "aida-dev", f"ed_accuracy_soft_weight_{w}", acc, "")
             for w, acc in ((0.25, 0.86), (0.5, 0.8637), (1.0, 0.8637), (2.0, 0.84))]
    out.write_text(json.dumps({"rows": sweep + [row("ner4el_all", "aida-dev", "ed_accuracy", 0.9, "")]}))
    assert ner_constrained_linker.recorded_soft_weight(out) == 0.5  # the first of equal ones, as the sweep picks


def test_only_picks_the_systems_and_skips_a_missing_hybrid_model(tmp_path: Path, capsys):
    args = SimpleNamespace(models=tmp_path, only=["ner4el_all", "ner4el_all_hybrid"])
    assert [s for s, _, _ in ner_constrained_linker.variants_to_run(args)] == ["ner4el_all"]
    assert "skipped ner4el_all_hybrid" in capsys.readouterr().out
    (tmp_path / "all_hybrid" / "model-best").mkdir(parents=True)
    assert [s for s, _, _ in ner_constrained_linker.variants_to_run(args)] == ["ner4el_all", "ner4el_all_hybrid"]
    args.only = None
    # no _dense model (which _similarity reads), no _held_out one and none of the three _long systems' two models
    assert len(ner_constrained_linker.variants_to_run(args)) == len(ner_constrained_linker.VARIANTS) - 6
    for folder in ("all_hybrid_dense", "all_hybrid_held_out", "all_long", "all_hybrid_dense_long"):
        (tmp_path / folder / "model-best").mkdir(parents=True)
    assert len(ner_constrained_linker.variants_to_run(args)) == len(ner_constrained_linker.VARIANTS)


def test_nsl_generator_variants_follow_only_and_skip_missing_models(tmp_path: Path, capsys):
    assert ner_stack_lstm.generator_variants(tmp_path, None) == {}
    assert "skipped ner_stack_lstm_hybrid" in capsys.readouterr().out
    assert ner_stack_lstm.generator_variants(tmp_path, ["ner_stack_lstm"]) == {}
    assert capsys.readouterr().out == ""


def test_ner4el_recall_rows_read_the_linker_lists(tiny_encoder, tmp_path):
    """The recall of what the linker scores: its generator's list of each gold mention, cut to k."""
    from tests.pipeline.conftest import build_ner_constrained_linker

    nlp = build_ner_constrained_linker(tiny_encoder, tmp_path)
    doc = nlp.make_doc("Mercer met Lumen in Velda .")
    doc.ents = [Span(doc, 0, 1, "PER", kb_id="Ada_Mercer"), Span(doc, 2, 3, "ORG", kb_id="Lumen_(band)"),
                Span(doc, 4, 5, "LOC", kb_id="Velda")]
    rows = {(r["system"], r["metric"]): r["value"] for r in ner_constrained_linker.recall_rows(nlp, [doc])}
    # Mercer's alias list ranks the town first (PER is compatible only with Ada_Mercer), Lumen's the unit
    assert rows[("alias_table_top_k", "cand_recall_at_1")] == round(1 / 3, 4)
    assert rows[("type_aware_selection", "cand_recall_at_1")] == 1.0
    assert rows[("alias_table_top_k", "cand_recall_at_30")] == 1.0
    assert nlp.get_pipe("ner_constrained_linker").settings.top_k == 30  # the benchmark's settings are put back


class WeightedPipe:
    """A joint_coref_linker stand-in that records the similarity_weight it is configured with."""

    def __init__(self, own_weight: float = 0.0):
        self.weights: List[float] = [own_weight]

    @property
    def settings(self):
        return SimpleNamespace(similarity_weight=self.weights[-1])

    def configure(self, similarity_weight):
        self.weights.append(similarity_weight)


def test_similarity_rows_take_the_dev_best_weight_for_test_and_reset_it(tmp_path: Path, monkeypatch):
    pipe = WeightedPipe(own_weight=1.0)
    nlp = SimpleNamespace(get_pipe=lambda name: pipe)
    dev_elh = {0.0: 0.57, 0.5: 0.50, 1.0: 0.55, 2.0: 0.58, 4.0: 0.58, 8.0: 0.52, 16.0: 0.40}  # ties: the smaller weight
    predicted_with = []

    def fake_predict(nlp_, docs, batch_size):
        predicted_with.append((docs[0], pipe.weights[-1]))
        return docs, 1.0

    (tmp_path / "dev.spacy").write_bytes(b"")
    monkeypatch.setattr(joint_coref_linker, "AIDA_CORPUS", tmp_path)
    monkeypatch.setattr(joint_coref_linker, "read_corpus", lambda reader, nlp_, path: ["dev-doc"])
    monkeypatch.setattr(joint_coref_linker, "predict", fake_predict)
    monkeypatch.setattr(joint_coref_linker, "cluster_el_scores", lambda pairs: {"elh_f": dev_elh[pipe.weights[-1]]})
    monkeypatch.setattr(joint_coref_linker, "doc_linked_clusters", lambda doc: [])
    monkeypatch.setattr(joint_coref_linker, "score_rows",
                        lambda system, dataset, gold, pred, note, hard: [row(system, dataset, "elh_f", 0.6, note)])
    rows = joint_coref_linker.similarity_rows(SimpleNamespace(limit=0, batch_size=8), nlp, "global_hybrid",
                                              ["test-doc"], ["own-pred"], "trained on aida", [[]])
    sweep = [r for r in rows if r["dataset"] == "aida-dev"]
    assert [r["metric"] for r in sweep] == [f"elh_f_similarity_weight_{w}" for w in joint_coref_linker.SIMILARITY_WEIGHTS]
    assert predicted_with[-1] == ("test-doc", 2.0) and pipe.weights[-1] == 1.0  # its own weight back
    (test_row,) = [r for r in rows if r["dataset"] == "aida-test"]
    assert test_row["system"] == "global_hybrid_similarity" and "similarity_weight 2 (best on AIDA dev)" in test_row["notes"]
    # a sweep that picks the model's own weight reuses its test predictions instead of predicting again
    dev_elh[1.0] = 0.9
    predicted_with.clear()
    rows = joint_coref_linker.similarity_rows(SimpleNamespace(limit=0, batch_size=8), nlp, "global_hybrid",
                                              ["test-doc"], ["own-pred"], "trained on aida", [[]])
    assert all(doc == "dev-doc" for doc, _ in predicted_with) and pipe.weights[-1] == 1.0
    monkeypatch.setattr(joint_coref_linker, "AIDA_CORPUS", tmp_path / "missing")
    assert joint_coref_linker.similarity_rows(SimpleNamespace(limit=0, batch_size=8), nlp, "global_hybrid", [], [], "",
                                              []) == []


def test_configure_starts_every_variant_from_the_defaults():
    """Two variants may share one loaded model (``_dense`` and ``_similarity``): the second's settings must not
    carry over to the first when it is configured again (its end-to-end row once did)."""
    pipe = SimpleNamespace(cfg={}, _selector=object())
    nlp = SimpleNamespace(get_pipe=lambda name: pipe)
    ner_constrained_linker.configure(nlp, decoding="soft", similarity_weight=8.0)
    assert pipe.cfg["similarity_weight"] == 8.0 and pipe._selector is None
    ner_constrained_linker.configure(nlp, decoding="soft")
    assert pipe.cfg["similarity_weight"] == 0.0 and pipe.cfg["decoding"] == "soft"

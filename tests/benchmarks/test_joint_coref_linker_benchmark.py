"""benchmarks.joint_coref_linker: its scoring of a test set, the models it finds, and a run on the fixtures."""
import json
from types import SimpleNamespace
from typing import Dict, List

import spacy
from spacy.tokens import Doc, Span

from benchmarks import joint_coref_linker
from benchmarks.joint_coref_linker import (NO_SINGLETONS_METRIC, alias_hard_cases, coref_only_rows, model_path,
                                           reachable_share, score_rows)
from spacy_el.extensions import set_clusters

from .conftest import FIXTURES

TEXT = "Shahid Afridi scored . Afridi won . Afridi left ."
CANDIDATES: Dict[str, List[str]] = {"Shahid Afridi": ["Shahid_Afridi"], "Afridi": []}


class AliasOnlyKB:
    """The alias table of a KB, as the hard cases read it."""

    def lookup(self, text: str, top_k: int, fuzzy: bool) -> List[SimpleNamespace]:
        return [SimpleNamespace(entity_id=e) for e in CANDIDATES.get(text, [])[:top_k]]


def clustered(clusters: List[List[tuple]], links: List[str]) -> Doc:
    doc = spacy.blank("en")(TEXT)
    set_clusters(doc, [[(s, e) for s, e in c] for c in clusters], sort=False)
    for n, (cluster, kb_id) in enumerate(zip(clusters, links), start=1):
        doc.spans[f"coref_clusters_{n}"] = [Span(doc, s, e, kb_id=kb_id) for s, e in cluster]
    return doc


GOLD = clustered([[(0, 2), (4, 5)], [(7, 8)]], ["Shahid_Afridi", "NIL"])  # a pair and a singleton
MISSES_THE_SINGLETON = clustered([[(0, 2), (4, 5)]], ["Shahid_Afridi"])


def test_the_hard_cases_are_the_mentions_without_their_own_alias_candidate():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    assert [[c.mention for c in doc] for doc in alias_hard_cases(AliasOnlyKB(), [gold], top_k=16)] == [[(23, 29), (36, 42)]]
    assert alias_hard_cases(AliasOnlyKB(), [gold], top_k=0) == [[]]  # no mention has a candidate: no mate


def test_hard_case_rows_count_what_a_system_found_of_them():
    gold = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
    pred = clustered([[(0, 2), (4, 5)], [(7, 8)]], ["Shahid_Afridi", "NIL"])
    hard = alias_hard_cases(AliasOnlyKB(), [gold], top_k=16)
    rows = {r["metric"]: r["value"] for r in score_rows("global", "gum-test", [gold], [pred], "note", hard)}
    assert (rows["hard_case_found"], rows["hard_case_with_mate"], rows["hard_case_accuracy"]) == (1.0, 0.5, 0.5)
    assert rows["cluster_accuracy_multi"] == 0.0 and rows["elh_f"] < 1.0


def test_reachable_share_is_the_share_of_gold_mentions_no_wider_than_the_model_reads():
    gold = clustered([[(0, 2), (4, 5), (7, 8)], [(3, 4)]], ["Shahid_Afridi", "NIL"])
    assert reachable_share([gold], 1) == 0.75
    assert reachable_share([gold], 1, keep_singletons=False) == 0.6667  # the singleton is not counted
    assert reachable_share([gold], 2) == 1.0
    rows = score_rows("global", "gum-test", [gold], [gold], "note", max_span_width=1)
    assert [r["value"] for r in rows if r["metric"] == "coref_mention_reachable"] == [0.75]


def test_litbank_counts_the_singletons_and_adds_the_average_without_them():
    rows = {r["metric"]: r["value"] for r in coref_only_rows("coref_none", "litbank-test", [GOLD], [MISSES_THE_SINGLETON],
                                                             "trained", max_span_width=8)}
    assert rows["coref_avg_f"] < 1.0  # the missed singleton costs B3 and CEAF-e
    assert rows[NO_SINGLETONS_METRIC] == 1.0


def test_ontogum_leaves_the_singletons_out():
    rows = {r["metric"]: r["value"] for r in coref_only_rows("coref_none", "ontogum-test", [GOLD], [MISSES_THE_SINGLETON],
                                                             "trained", max_span_width=8)}
    assert rows["coref_avg_f"] == 1.0
    assert NO_SINGLETONS_METRIC not in rows


def test_masked_documents_are_left_out_of_the_unmasked_rows_only():
    masked = spacy.blank("en")("____ __ ____ _")
    set_clusters(masked, [[(0, 1), (2, 3)]])
    nothing = spacy.blank("en")(masked.text)  # the model found nothing on the underscores
    rows = {r["metric"]: r["value"] for r in score_rows("coref_none", "ontogum-test", [GOLD, masked], [GOLD, nothing],
                                                        "trained", keep_singletons=False)}
    assert rows["coref_avg_f"] < 1.0 and rows["coref_avg_f_unmasked"] == 1.0
    assert "elh_f_unmasked" not in rows  # a coreference-only row has no links
    joint = {r["metric"]: r["value"] for r in score_rows("global", "gum-test", [GOLD, masked], [GOLD, nothing],
                                                         "trained", hard=[[], []])}
    assert joint["elh_f_unmasked"] == 1.0
    plain = score_rows("coref_none", "ontogum-test", [GOLD], [GOLD], "trained", keep_singletons=False)
    assert not [r for r in plain if r["metric"].endswith("_unmasked")]


def test_an_unfinished_training_is_not_scored_and_a_variant_has_its_own_folder(tmp_path, capsys):
    run = tmp_path / "litbank" / "none"
    (run / "model-best").mkdir(parents=True)
    (run / "checkpoints").mkdir()
    args = SimpleNamespace(models=str(tmp_path))
    assert model_path(args, "litbank", "none") is None
    assert "has not finished" in capsys.readouterr().out
    (run / "checkpoints" / "finished.json").write_text("{}", encoding="utf8")
    assert model_path(args, "litbank", "none") == run / "model-best"
    variant = tmp_path / "gum-converged-coarse" / "global" / "model-best"
    variant.mkdir(parents=True)
    assert model_path(SimpleNamespace(models=str(tmp_path), variant="converged_coarse"), "gum", "global") == variant
    assert model_path(SimpleNamespace(models=str(tmp_path), variant="long"), "gum", "global") is None


def test_a_run_on_the_fixtures_writes_the_systems_and_their_peer(tiny_jcl_models, tmp_path, one_torch_thread):
    out = tmp_path / "joint_coref_linker.json"
    out.write_text(json.dumps({"command": "x", "created": "T", "rows": [
        {"system": "global_seed1", "dataset": "gum-test", "metric": "elh_f", "value": 0.3, "notes": ""}]}))
    joint_coref_linker.main(["--data", str(FIXTURES), "--models", str(tiny_jcl_models), "--datasets", "gum-test",
                             "litbank-test", "--threads", "1", "--out", str(out)])
    rows = json.loads(out.read_text(encoding="utf8"))["rows"]
    systems = {(r["system"], r["dataset"]) for r in rows}
    assert {("global", "gum-test"), ("standalone", "gum-test"), ("prior_only", "gum-test"),
            ("coref_none", "litbank-test"), ("global_seed1", "gum-test")} <= systems  # an earlier row stays
    metrics = {r["metric"] for r in rows if r["system"] == "global"}
    assert {"coref_avg_f", "elm_f", "elh_f", "cluster_accuracy_multi", "hard_case_accuracy"} <= metrics
    assert all(0.0 <= r["value"] <= 1.0 for r in rows)

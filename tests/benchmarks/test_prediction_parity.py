"""benchmarks.prediction_parity: a pipeline compared with its own recorded predictions is identical."""
import json

from benchmarks.prediction_parity import decisions, largest_difference, main


def test_a_pipeline_predicts_what_it_recorded(tiny_jcl_models, tmp_path, one_torch_thread):
    pipeline = str(tiny_jcl_models / "gum" / "global" / "model-best")
    reference, out = tmp_path / "reference.json", tmp_path / "parity.json"
    main(["write", pipeline, "--out", str(reference)])
    recorded = json.loads(reference.read_text(encoding="utf8"))
    assert recorded["texts"] == len(recorded["pipelines"][pipeline]) > 0
    main(["compare", str(reference), "--out", str(out)])
    rows = {r["metric"]: r["value"] for r in json.loads(out.read_text(encoding="utf8"))["rows"]}
    assert rows == {"identical_docs": 1.0, "same_decisions": 1.0, "max_abs_score_diff": 0.0}


def test_a_changed_score_is_a_difference_and_a_changed_link_a_different_decision():
    ent = {"start": 0, "end": 5, "label": "PER", "kb_id": "Q1", "nil_prob": 0.25}
    old = {"ents": [ent], "spans": {}, "passages": []}
    rescored = {"ents": [{**ent, "nil_prob": 0.5}], "spans": {}, "passages": []}
    relinked = {"ents": [{**ent, "kb_id": "Q2"}], "spans": {}, "passages": []}
    assert largest_difference(old, rescored) == 0.25 and decisions(old) == decisions(rescored)
    assert decisions(old) != decisions(relinked)
    assert largest_difference(old, {"ents": [], "spans": {}, "passages": []}) == float("inf")

"""benchmarks.gpu: the parity rows it reads off the predictions on the GPU and on the CPU."""


def test_parity_rows_tell_decisions_from_scores():
    from benchmarks.gpu import compare_rows

    path = "training/test/joint_coref_linker/model-best"
    ent = {"start": 0, "end": 5, "label": "PER", "kb_id": "Q1", "nil_prob": 0.25, "candidate_scores": [0.5], "link_score": 0.5}
    doc = {"ents": [ent], "spans": {"coref_clusters_1": [ent]}, "passages": [[0, 10, ["Q1"], [0.7]]]}
    noisy = {"ents": [{**ent, "nil_prob": 0.2500001}], "spans": {"coref_clusters_1": [ent]}, "passages": [[0, 10, ["Q1"], [0.7000001]]]}
    other = {**doc, "ents": [{**ent, "kb_id": "Q2"}]}
    rows = compare_rows({"pipelines": {path: [doc, doc, doc]}, "on_gpu": {path: 1.0}},
                        {"pipelines": {path: [doc, noisy, other]}, "on_gpu": {}}, gpu_id=0)
    values = {r["metric"]: r["value"] for r in rows}
    assert values["gpu_params_on_gpu"] == 1.0
    assert values["gpu_cpu_same_decisions"] == round(2 / 3, 4)
    assert values["gpu_cpu_identical_docs"] == round(1 / 3, 4)
    assert 0 < values["gpu_cpu_max_score_diff"] < 1e-5

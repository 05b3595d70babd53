"""benchmarks/joint_coref_linker.py: --sweep-antecedents (predict_max_antecedents chosen on the dev split by the
score the model was selected by, and the test rows of the model predicting with it), and which trained models are
scored at all (no model runs)."""
from types import SimpleNamespace

from benchmarks import joint_coref_linker
from benchmarks.joint_coref_linker import ANTECEDENT_SWEEP, antecedent_sweep

from .test_jcl_hard_cases import clustered

GOLD = clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])
#: What the stub model predicts with each budget: the gold cluster from 100 antecedents on (150: linked NIL).
PREDICTIONS = {50: clustered([[(0, 2), (4, 5)]], ["Shahid_Afridi"]),
               100: clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"]),
               150: clustered([[(0, 2), (4, 5), (7, 8)]], ["NIL"]),
               250: clustered([[(0, 2), (4, 5), (7, 8)]], ["Shahid_Afridi"])}


class StubPipe:
    def __init__(self):
        self.settings = SimpleNamespace(predict_max_antecedents=0)

    def configure(self, predict_max_antecedents):
        self.settings = SimpleNamespace(predict_max_antecedents=predict_max_antecedents)


def stub(monkeypatch, dev):
    pipe = StubPipe()
    nlp = SimpleNamespace(get_pipe=lambda name: pipe)
    monkeypatch.setattr(joint_coref_linker, "dev_docs", lambda args, corpus: dev)
    monkeypatch.setattr(joint_coref_linker, "predict",
                        lambda nlp, docs, batch: ([PREDICTIONS[pipe.settings.predict_max_antecedents]] * len(docs), 0.0))
    return nlp, pipe


def test_the_sweep_keeps_the_best_dev_value_and_leaves_the_model_predicting_with_it(monkeypatch):
    nlp, pipe = stub(monkeypatch, [GOLD])
    args = SimpleNamespace(batch_size=8)
    k, rows = antecedent_sweep(args, nlp, "coref_none_converged_coarse", "litbank", "litbank-test", joint=False)
    assert k == 100  # 100, 150 and 250 tie on coreference: the first of them
    assert pipe.settings.predict_max_antecedents == 100
    assert [r["metric"] for r in rows] == [f"coref_avg_f_predict_max_antecedents_{v}" for v in ANTECEDENT_SWEEP]
    assert {r["dataset"] for r in rows} == {"litbank-dev"} and rows[1]["value"] == 1.0 > rows[0]["value"]


def test_a_joint_model_is_chosen_by_its_coreference_and_elh_mean(monkeypatch):
    nlp, pipe = stub(monkeypatch, [GOLD])
    k, rows = antecedent_sweep(SimpleNamespace(batch_size=8), nlp, "global_converged", "gum", "gum-test", joint=True)
    by = {r["metric"]: r["value"] for r in rows}
    assert by["coref_elh_mean_predict_max_antecedents_150"] < by["coref_elh_mean_predict_max_antecedents_100"] == 1.0
    assert k == 100


def test_without_a_dev_split_nothing_is_swept(monkeypatch):
    nlp, pipe = stub(monkeypatch, [])
    assert antecedent_sweep(SimpleNamespace(batch_size=8), nlp, "x", "aida", "aida-test", joint=True) == (None, [])
    assert pipe.settings.predict_max_antecedents == 0


def test_an_unfinished_training_is_not_scored(tmp_path, capsys):
    from benchmarks.joint_coref_linker import model_path

    args = SimpleNamespace(models=str(tmp_path))
    run = tmp_path / "litbank-converged-coarse-seed1" / "none"
    (run / "model-best").mkdir(parents=True)
    (run / "checkpoints").mkdir()
    assert model_path(args, "litbank-converged-coarse-seed1", "none", report_missing=False) is None
    assert "has not finished" in capsys.readouterr().out
    (run / "checkpoints" / "finished.json").write_text("{}", encoding="utf8")
    assert model_path(args, "litbank-converged-coarse-seed1", "none") == run / "model-best"
    plain = tmp_path / "gum" / "global" / "model-best"  # trained without checkpoints (spacy train)
    plain.mkdir(parents=True)
    assert model_path(args, "gum", "global") == plain


def test_an_unfinished_trainings_learning_curve_is_left_out(tmp_path):
    from benchmarks.joint_coref_linker import learning_curve_rows

    run = tmp_path / "gum-converged-coarse" / "global"
    (run / "checkpoints").mkdir(parents=True)
    (run / "evaluations.json").write_text('[{"step": 0, "epoch": 0, "seconds": 30, "score": 0.1, '
                                          '"scores": {"coref_avg_f": 0.1, "elh_f": 0.1}}]', encoding="utf8")
    args = SimpleNamespace(models=str(tmp_path))
    curve = lambda: learning_curve_rows(args, "gum-converged-coarse", {"global": "global_converged_coarse"}, "gum",  # noqa: E731
                                        ("coref_avg_f",))
    assert curve() == []
    (run / "checkpoints" / "finished.json").write_text("{}", encoding="utf8")
    assert {r["metric"] for r in curve()} == {"coref_avg_f@step=0", "train_minutes@step=0", "train_minutes"}


def test_a_dev_split_is_read_once_per_run_for_every_model(monkeypatch, tmp_path):
    from benchmarks import joint_coref_linker

    reads = []
    monkeypatch.setattr(joint_coref_linker, "read_split",
                        lambda data, corpus, split, nlp: reads.append((corpus, split)) or [nlp(f"{corpus} {i}.") for i in range(3)])
    joint_coref_linker._dev_split.cache_clear()
    args = SimpleNamespace(data=tmp_path, limit=2)
    first, second = joint_coref_linker.dev_docs(args, "litbank"), joint_coref_linker.dev_docs(args, "litbank")
    assert [d.text for d in first] == ["litbank 0.", "litbank 1."] and first == second and first is not second
    joint_coref_linker.dev_docs(args, "gum")
    assert reads == [("litbank", "dev"), ("gum", "dev")]
    joint_coref_linker._dev_split.cache_clear()

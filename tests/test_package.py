"""`spacy package` works for a trained pipeline with a spacy_el component and its KB: the built package,
installed into a fresh virtual environment, loads with `spacy.load` from outside the repository and
predicts what the pipeline did before packaging.

The fresh environment reuses this interpreter's installed dependencies (torch, spaCy, spacy_el) through
a `.pth` file instead of downloading them again; the package itself is built and installed there,
without network access (`--no-index`).
"""
import json
import os
import subprocess
import sys
import sysconfig

import pytest

from .pipeline.test_ner_stack_lstm import TRAIN, make_nlp, train

pytestmark = pytest.mark.slow

PREDICT = """
import json, spacy
nlp = spacy.load("en_el_test")
pipe = nlp.get_pipe("ner_stack_lstm")
docs = [nlp(text) for text in json.loads(input())]
print(json.dumps({"module": __import__("en_el_test").__file__, "n_entities": pipe.kb.n_entities,
                  "ents": [[[e.start, e.end, e.label_, e.kb_id_] for e in d.ents] for d in docs]}))
"""


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{args[:4]} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_spacy_package_loads_in_a_fresh_environment(tmp_path):
    nlp, _ = make_nlp(tmp_path)
    train(nlp, steps=40)
    texts = [text for text, _ in TRAIN]
    expected = [[[e.start, e.end, e.label_, e.kb_id_] for e in nlp(text).ents] for text in texts]
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "packages").mkdir()
    run([sys.executable, "-m", "spacy", "package", str(tmp_path / "pipeline"), str(tmp_path / "packages"),
         "--name", "el_test", "--version", "0.0.1", "--build", "sdist"])
    package_dir = tmp_path / "packages" / "en_el_test-0.0.1"
    assert "spacy_el" in " ".join(json.loads((package_dir / "meta.json").read_text())["requirements"])
    sdist = package_dir / "dist" / "en_el_test-0.0.1.tar.gz"

    venv = tmp_path / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    fresh_site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    shared = sysconfig.get_paths()["purelib"]
    with open(os.path.join(fresh_site, "_shared_dependencies.pth"), "w", encoding="utf8") as f:
        f.write(f"import site; site.addsitedir({shared!r})\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", str(sdist)])

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = json.loads(run([str(python), "-c", PREDICT], input=json.dumps(texts), cwd=outside, env=env))
    assert result["module"].startswith(str(venv)), "the package is the one installed in the fresh environment"
    assert result["n_entities"] == 6, "the KB travels with the package"
    assert result["ents"] == expected

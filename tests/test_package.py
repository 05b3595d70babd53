"""`spacy package` works for a trained pipeline with a spacy_el component and its KB: the built package,
installed into a fresh virtual environment, loads with `spacy.load` from outside the repository and
predicts what the pipeline did before packaging. Two pipelines: a ner_stack_lstm packaged by `spacy
package`, and a joint_coref_linker with an open-data KB packaged by `python -m spacy_el package` as the
`pretrained` workflow packages en_spacy_el_coref, alone and after another pipeline.

The fresh environment reuses this interpreter's installed dependencies (torch, spaCy, spacy_el) through
a `.pth` file instead of downloading them again; the package itself is built and installed there,
without network access (`--no-index`), and run offline.
"""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from .pipeline import conftest as builders
from .pipeline.test_ner_stack_lstm import TRAIN, make_nlp, train
from .recipes.invented_data import alias_dict, build_open_kb, gold_docs, invented_data_dir

pytestmark = pytest.mark.slow

PREDICT = """
import json, spacy
nlp = spacy.load("en_el_test")
pipe = nlp.get_pipe("ner_stack_lstm")
docs = [nlp(text) for text in json.loads(input())]
print(json.dumps({"module": __import__("en_el_test").__file__, "n_entities": pipe.kb.n_entities,
                  "ents": [[[e.start, e.end, e.label_, e.kb_id_] for e in d.ents] for d in docs]}))
"""
#: In the fresh environment: en_spacy_el_coref alone, and sourced after another pipeline (a sentencizer)
#: with its linked mentions written to doc.ents, as docs/pretrained.md shows.
PREDICT_COREF = """
import json, spacy, torch
torch.set_num_threads(1)  # as in the test process: bit-stable float results
from spacy_el.package.distribute import predictions
texts = json.loads(input())
alone = spacy.load("en_spacy_el_coref")
nlp = spacy.blank("en")
nlp.add_pipe("sentencizer")
nlp.add_pipe("joint_coref_linker", source=spacy.load("en_spacy_el_coref"))
nlp.get_pipe("joint_coref_linker").configure(write_ents=True)
print(json.dumps({"module": __import__("en_spacy_el_coref").__file__, "alone": predictions(alone, texts),
                  "after": predictions(nlp, texts), "kb": alone.get_pipe("joint_coref_linker").kb.entity_sources}))
"""
COREF_TEXTS = [
    "Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .",
    "Brisk winds reached Velda where Quill waited , and Quill left Velda at noon .",
    "Mercer saw Lumen play in Velda . Mercer liked Lumen .",
]


def run(args: List[str], **kwargs: Any) -> str:
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{args[:4]} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def install_in_fresh_environment(sdist: Path, tmp_path: Path) -> Path:
    """A new virtual environment under ``tmp_path`` that sees this interpreter's installed packages, with the
    package ``sdist`` built and installed offline. RETURNS: its python."""
    venv = tmp_path / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    fresh_site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    shared = sysconfig.get_paths()["purelib"]
    with open(os.path.join(fresh_site, "_shared_dependencies.pth"), "w", encoding="utf8") as f:
        f.write(f"import site; site.addsitedir({shared!r})\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", str(sdist)])
    return python


def run_offline(python: Path, code: str, payload: Any, tmp_path: Path) -> Any:
    """``code`` run by ``python`` from a folder outside the repository, without PYTHONPATH and with the Hugging
    Face hub offline, given ``payload`` as JSON on stdin. RETURNS: what it prints, read as JSON."""
    outside = tmp_path / "elsewhere"
    outside.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return json.loads(run([str(python), "-c", code], input=json.dumps(payload), cwd=outside, env=env))


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

    python = install_in_fresh_environment(package_dir / "dist" / "en_el_test-0.0.1.tar.gz", tmp_path)
    result = run_offline(python, PREDICT, texts, tmp_path)
    assert result["module"].startswith(str(tmp_path / "fresh")), "the package is the one installed in the fresh environment"
    assert result["n_entities"] == 6, "the KB travels with the package"
    assert result["ents"] == expected


def tiny_open_kb(tmp_path: Path) -> Any:
    """The `pretrained` KB recipe over invented data, with GUM train docs that link Velda (so that it is an
    entity, a GUM gold title) and random 8-d vectors, as the tiny joint_coref_linker builder expects."""
    _, gum = gold_docs()
    velda = Doc(Vocab(), words=["He", "left", "Velda", "."])
    velda.spans["mentions"] = [Span(velda, 0, 1, "person", kb_id="Ada_Mercer"), Span(velda, 2, 3, "place", kb_id="Velda")]
    kb = build_open_kb(invented_data_dir(tmp_path / "data"), gum + [velda])
    kb.set_vectors(np.random.default_rng(0).normal(size=(kb.n_entities, 8)).astype(np.float32))
    return kb


def test_pretrained_coref_package_predicts_the_same_in_a_fresh_environment(tmp_path, monkeypatch, tiny_encoder, one_torch_thread):
    import spacy

    from spacy_el.package.distribute import predictions

    spacy.util.fix_random_seed(0)  # the suite's earlier tests move the global random state
    kb = tiny_open_kb(tmp_path)
    assert sorted(kb.entities.ids) == ["Ada_Mercer", "Lumen_(band)", "Velda"] and "He" not in alias_dict(kb)
    monkeypatch.setattr(builders, "build_invented_kb", lambda *args, **kwargs: kb)
    nlp = builders.build_joint_coref_linker(tiny_encoder, tmp_path)
    alone = predictions(nlp, COREF_TEXTS)
    assert any(doc["spans"] for doc in alone), "the tiny pipeline predicts clusters"
    nlp.to_disk(tmp_path / "pipeline")
    after = spacy.blank("en")
    after.add_pipe("sentencizer")
    after.add_pipe("joint_coref_linker", source=spacy.load(tmp_path / "pipeline"))
    after.get_pipe("joint_coref_linker").configure(write_ents=True)
    composed = predictions(after, COREF_TEXTS)
    # write_ents puts the clusters' linked mentions in doc.ents, as they are in the span groups (a tiny model
    # trained for 4 steps may link none: the package check below compares the clusters either way).
    for doc in composed:
        linked = {(s[0], s[1], s[3]) for group in doc["spans"].values() for s in group if s[3] in kb}
        assert {(e[0], e[1], e[3]) for e in doc["ents"] if e[3] in kb} == linked

    (tmp_path / "packages").mkdir()
    run([sys.executable, "-m", "spacy_el", "package", str(tmp_path / "pipeline"), str(tmp_path / "packages"),
         "--name", "spacy_el_coref", "--version", "0.0.1", "--trained-on", "gum", "--build", "sdist"])
    package_dir = tmp_path / "packages" / "en_spacy_el_coref-0.0.1"
    meta = json.loads((package_dir / "meta.json").read_text(encoding="utf8"))
    assert "spacy_el" in " ".join(meta["requirements"])
    assert meta["spacy_el"] == {"alias_sources": ["titles", "gum", "dwie"], "entity_sources": ["summaries", "gum"],
                                "trained_on": ["gum"]}
    licences = " ".join(f"{s['name']}: {s['license']}" for s in meta["sources"])
    for licence in ("CC BY 4.0", "CC BY-SA 4.0", "GPL-3.0", "Training data: GUM train"):
        assert licence in licences
    assert "AIDA" not in licences and "PPRforNED" not in licences, "no source of AIDA or PPRforNED origin"

    python = install_in_fresh_environment(package_dir / "dist" / "en_spacy_el_coref-0.0.1.tar.gz", tmp_path)
    result = run_offline(python, PREDICT_COREF, COREF_TEXTS, tmp_path)
    assert result["module"].startswith(str(tmp_path / "fresh")), "the package is the one installed in the fresh environment"
    assert result["kb"] == ["summaries", "gum"], "the open KB travels with the package"
    assert result["alone"] == json.loads(json.dumps(alone))
    assert result["after"] == json.loads(json.dumps(composed))

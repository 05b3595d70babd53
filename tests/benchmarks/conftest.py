"""What the benchmarks' smoke runs share: the fixture corpora and a tiny trained joint_coref_linker."""
from pathlib import Path

import pytest

from ..conftest import REPO_ROOT

#: Corpora in the shared data's layout (gum/, litbank/, aida/, elevant/), a few documents each.
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "corpora"


@pytest.fixture(scope="session")
def tiny_jcl_models(tiny_encoder, tmp_path_factory) -> Path:
    """A tiny trained joint_coref_linker saved as every model the joint_coref_linker benchmark reads on GUM and
    LitBank (``<models>/<corpus>/<system>/model-best``)."""
    from tests.pipeline.conftest import build_joint_coref_linker

    tmp = tmp_path_factory.mktemp("jcl_models")
    nlp = build_joint_coref_linker(tiny_encoder, tmp / "build")
    for corpus, system in (("gum", "global"), ("gum", "coref"), ("gum", "link"), ("litbank", "none")):
        (tmp / "models" / corpus / system).mkdir(parents=True)
        nlp.to_disk(tmp / "models" / corpus / system / "model-best")
    return tmp / "models"

"""Joint coreference resolution + entity linking, the model of the ``joint_coref_linker`` component
(``spacy-el.JointCorefLinker.v1``; Zaporojets et al. 2022, with Kantor & Globerson's Entity Equalization).

* ``model``: the Thinc glue (the registered architecture, the lazily built torch layer, numpy predictions).
* ``inputs``: the numpy inputs (encoder windows, enumerated spans, candidate look-up, gold clusters).
* ``modules``: the PyTorch module (encoder -> token vectors -> spans -> pruning -> scorer -> loss).
* ``span_representations``: span enumeration, Lee et al. span embeddings and pruning.
* ``scorer``: the scorer of eqs. (1)-(6) and its scores; ``entity_equalization``: its optional refinement.
* ``losses``: the Local, Global, coref and link losses; ``matrix_tree``: the Matrix-Tree-Theorem
  partition functions behind the Global loss.
* ``decoding``: clusters and links from the scores (maximum spanning arborescence for Global).
"""
from .decoding import JointDecoding, decode
from .entity_equalization import REFINEMENTS
from .inputs import DocInputs, JointCorefBatch, make_doc_inputs
from .losses import GoldMentionCluster, compute_loss
from .model import DocPrediction, build_joint_coref_linker, build_torch_layer
from .modules import DocOutput, JointCorefModule
from .scorer import MODES, JointCorefScorer, JointScores

__all__ = [
    "MODES", "REFINEMENTS", "DocInputs", "DocOutput", "DocPrediction", "GoldMentionCluster", "JointCorefBatch",
    "JointCorefModule", "JointCorefScorer", "JointDecoding", "JointScores", "build_joint_coref_linker",
    "build_torch_layer", "compute_loss", "decode", "make_doc_inputs",
]

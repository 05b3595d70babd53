"""Tiny training configs for the resumable-training tests: a spaCy ``tok2vec`` + ``ner`` (Thinc parameters, a
batcher whose size schedule runs across epochs, a learning-rate schedule, parameter averages) and a
``joint_coref_linker`` on the tiny encoder (torch parameters through a shim, uniform dropout masks with the attention
eager in training, numpy draws of ``gold_candidate_dropout``). All texts and entities are invented."""
from pathlib import Path
from typing import Any, Dict

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from thinc.api import Config

from ..conftest import REPO_ROOT, build_invented_kb, linked_cluster_doc
from ..pipeline.conftest import LABELS, texts

NER_TRAIN_DOCS = 7
NER_DEV_DOCS = 3


def _ner_doc(nlp: Any, text: str) -> Doc:
    doc = nlp.make_doc(text)
    spans = []
    for name in sorted(LABELS, key=len, reverse=True):
        start = text.find(name)
        while start >= 0:
            span = doc.char_span(start, start + len(name), label=LABELS[name])
            if span is not None and not any(s.start < span.end and span.start < s.end for s in spans):
                spans.append(span)
            start = text.find(name, start + 1)
    doc.ents = sorted(spans, key=lambda s: s.start)
    return doc


def _set(config: Config, dotted: str, value: Any) -> None:
    *sections, key = dotted.split(".")
    target = config
    for section in sections:
        target = target[section]
    target[key] = value


@pytest.fixture(scope="session")
def ner_config(tmp_path_factory) -> Path:
    """configs/test/ner.cfg on invented sentences: 7 train docs (3 batches an epoch), eval every 2 steps,
    warmup_linear learning rate, averages on, 11 steps."""
    tmp = tmp_path_factory.mktemp("ner_config")
    nlp = spacy.blank("en")
    all_texts = texts(NER_TRAIN_DOCS + NER_DEV_DOCS)
    for name, part in (("train", all_texts[:NER_TRAIN_DOCS]), ("dev", all_texts[NER_TRAIN_DOCS:])):
        DocBin(docs=[_ner_doc(nlp, t) for t in part]).to_disk(tmp / f"{name}.spacy")
    config = Config().from_disk(REPO_ROOT / "configs" / "test" / "ner.cfg", interpolate=False)
    for key, value in {
        "paths.train": str(tmp / "train.spacy"), "paths.dev": str(tmp / "dev.spacy"), "training.max_steps": 11,
        "training.eval_frequency": 2, "training.optimizer.use_averages": True,
        "training.batcher.size.start": 25, "training.batcher.size.stop": 60, "training.batcher.size.compound": 1.2,
        "components.tok2vec.model.encode.depth": 1,
    }.items():
        _set(config, key, value)
    config["training"]["optimizer"]["learn_rate"] = {
        "@schedules": "warmup_linear.v1", "warmup_steps": 3, "total_steps": 40, "initial_rate": 0.01,
    }
    path = tmp / "ner.cfg"
    config.to_disk(path)
    return path


JCL_TRAIN = [
    ("Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .",
     [([(0, 1), (9, 10)], "Ada_Mercer"), ([(11, 12), (13, 14)], "NIL")]),
    ("Brisk winds reached Velda where Quill waited , and Quill left Velda at noon .",
     [([(3, 4), (12, 13)], "Velda"), ([(5, 6), (9, 10)], "NIL")]),
    ("Lumen played in Mercer ; Mercer was loud and Lumen was tired .",
     [([(0, 1), (9, 10)], "Lumen_(band)"), ([(3, 4), (5, 6)], "Mercer_(town)")]),
    ("Tobin sailed from Velda to Mercer , then Tobin painted Mercer .",
     [([(0, 1), (8, 9)], "NIL"), ([(5, 6), (10, 11)], "Mercer_(town)"), ([(3, 4)], "Velda")]),
]
JCL_DEV = [
    ("Ada Mercer left Velda ; Mercer returned to Velda in May .",
     [([(0, 2), (5, 6)], "Ada_Mercer"), ([(3, 4), (8, 9)], "Velda")]),
]


@pytest.fixture(scope="session")
def jcl_config(tmp_path_factory, tiny_encoder) -> Path:
    """configs/test/joint_coref_linker.cfg on the tiny encoder and the invented KB: 4 train docs, one per
    step, eval every 2 steps, dropout and gold-candidate dropout on, 9 steps."""
    tmp = tmp_path_factory.mktemp("jcl_config")
    build_invented_kb(True, dim=8).to_disk(tmp / "kb")
    nlp = spacy.blank("en")
    for name, part in (("train", JCL_TRAIN), ("dev", JCL_DEV)):
        DocBin(docs=[linked_cluster_doc(nlp.vocab, t, c) for t, c in part]).to_disk(tmp / f"{name}.spacy")
    config = Config().from_disk(REPO_ROOT / "configs" / "test" / "joint_coref_linker.cfg", interpolate=False)
    settings: Dict[str, Any] = {
        "paths.train": str(tmp / "train.spacy"), "paths.dev": str(tmp / "dev.spacy"), "paths.kb": str(tmp / "kb"),
        "training.max_steps": 9, "training.eval_frequency": 2,
        "components.joint_coref_linker.gold_candidate_dropout": 0.5,
        "components.joint_coref_linker.model.encoder": tiny_encoder,
        "components.joint_coref_linker.model.window": 16, "components.joint_coref_linker.model.stride": 8,
        "components.joint_coref_linker.model.ffnn": 16, "components.joint_coref_linker.model.entity_proj": 16,
        "components.joint_coref_linker.model.max_span_width": 3, "components.joint_coref_linker.model.encoder_batch": 8,
        "initialize.components.joint_coref_linker.kb_loader.mmap": False,
    }
    for key, value in settings.items():
        _set(config, key, value)
    for split in ("train", "dev"):
        config["corpora"][split] = {"@readers": "spacy.Corpus.v1", "path": f"${{paths.{split}}}", "gold_preproc": False,
                                    "max_length": 0, "limit": 0, "augmenter": None}
    path = tmp / "jcl.cfg"
    config.to_disk(path)
    return path


@pytest.fixture(scope="session")
def jcl_frozen_config(tmp_path_factory, jcl_config, two_layer_encoder) -> Path:
    """:func:`jcl_config` as ``train-jcl-gum-converged-coarse-frozen3`` trains: coarse-to-fine antecedents and the
    encoder's lower layer frozen with its outputs cached (here 1 of the 2 layers of ``two_layer_encoder``)."""
    config = Config().from_disk(jcl_config, interpolate=False)
    for key, value in {"components.joint_coref_linker.model.encoder": two_layer_encoder,
                       "components.joint_coref_linker.model.antecedent_pruning": "coarse",
                       "components.joint_coref_linker.frozen_encoder_layers": 1,
                       "components.joint_coref_linker.encoder_cache_mb": 16}.items():
        _set(config, key, value)
    path = tmp_path_factory.mktemp("jcl_frozen_config") / "jcl_frozen.cfg"
    config.to_disk(path)
    return path

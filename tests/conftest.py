import os
from pathlib import Path
from typing import Any, List, Sequence, Tuple

import pytest

# Tests never reach a model hub: a hub name that is not in the local cache gives E270 at once.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from spacy_el.kb import ElKnowledgeBase, KBBuilder

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def build_toy_kb(vectors: bool = False, fuzzy: bool = True) -> ElKnowledgeBase:
    """Four entities, two ambiguous aliases; small enough to reason about by hand."""
    builder = KBBuilder()
    entities = [
        ("Paris", "Paris", "Capital of France", ["LOC", "topic:Geography"], 100.0),
        ("Paris_Hilton", "Paris Hilton", "American media personality", ["PER"], 20.0),
        ("Paris,_Texas", "Paris, Texas", "City in Texas", ["LOC"], 5.0),
        ("The_Beatles", "The Beatles", "English rock band", ["ORG"], 50.0),
    ]
    for i, (entity_id, name, description, types, freq) in enumerate(entities):
        vector = [float(i == j) for j in range(4)] if vectors else None
        builder.add_entity(entity_id, name, description, types, freq, vector=vector)
    builder.add_alias("Paris", ["Paris", "Paris_Hilton", "Paris,_Texas"], [0.8, 0.15, 0.05])
    builder.add_alias("Hilton", ["Paris_Hilton"], [0.7])
    builder.add_alias("The Beatles", ["The_Beatles"], [1.0])
    builder.add_alias("Fab Four", ["The_Beatles"], [0.9])
    return builder.build(fuzzy=fuzzy)


def build_invented_kb(with_vectors: bool = True, dim: int = 8) -> ElKnowledgeBase:
    """Invented entities for the component tests: "Mercer" is a painter, a town and a company; "Lumen" a
    band and a unit (a KB topic that the coarse type inventory maps to MISC); random ``dim``-d vectors."""
    import numpy as np

    rng = np.random.default_rng(0)
    builder = KBBuilder()
    entities = [
        ("Ada_Mercer", "Ada Mercer", "Invented painter", ["PER"]),
        ("Mercer_(town)", "Mercer", "Invented river town", ["LOC"]),
        ("Mercer_Corp", "Mercer Corp", "Invented shipping company", ["ORG"]),
        ("Lumen_(band)", "Lumen", "Invented rock band", ["ORG"]),
        ("Lumen_(unit)", "Lumen", "Unit of light", ["topic:Physical sciences"]),
        ("Velda", "Velda", "Invented country", ["LOC"]),
    ]
    for entity_id, name, description, types in entities:
        vector = rng.normal(size=dim).tolist() if with_vectors else None
        builder.add_entity(entity_id, name, description, types, 10.0, vector=vector)
    builder.add_alias("Mercer", ["Mercer_(town)", "Ada_Mercer", "Mercer_Corp"], [0.6, 0.3, 0.1])
    builder.add_alias("Lumen", ["Lumen_(unit)", "Lumen_(band)"], [0.7, 0.3])
    builder.add_alias("Velda", ["Velda"], [1.0])
    return builder.build()


@pytest.fixture
def toy_kb() -> ElKnowledgeBase:
    return build_toy_kb()


@pytest.fixture
def toy_kb_with_vectors() -> ElKnowledgeBase:
    return build_toy_kb(vectors=True)


#: Two toy documents of ``joint_coref_linker``'s tests: per document its words (space-separated) and its
#: coreference clusters, each as its mentions' token offsets and the KB id (or NIL) of the cluster.
LINKED_CLUSTER_DOCS: List[Tuple[str, List[Tuple[List[Tuple[int, int]], str]]]] = [
    ("Mercer painted the harbour at dawn , and later Mercer met Tobin because Tobin sold paint .",
     [([(0, 1), (9, 10)], "Ada_Mercer"), ([(11, 12), (13, 14)], "NIL")]),
    ("Brisk winds reached Velda where Quill waited , and Quill left Velda at noon .",
     [([(3, 4), (12, 13)], "Velda"), ([(5, 6), (9, 10)], "NIL")]),
]


def linked_cluster_doc(vocab: Any, text: str, clusters: Sequence[Tuple[Sequence[Tuple[int, int]], str]]) -> Any:
    """The reference ``Doc`` of ``text`` (words separated by spaces) with ``clusters`` in ``doc.spans``, every
    mention's span carrying its cluster's KB id (as the GUM converter's links would)."""
    from spacy.tokens import Doc, Span

    from spacy_el.extensions import set_clusters

    doc = Doc(vocab, words=text.split())
    set_clusters(doc, [mentions for mentions, _ in clusters])
    for key in [k for k in doc.spans if k.startswith("coref_clusters_")]:
        spans = list(doc.spans[key])
        kb_id = next(kb for mentions, kb in clusters if (spans[0].start, spans[0].end) in mentions)
        doc.spans[key] = [Span(doc, s.start, s.end, kb_id=kb_id) for s in spans]
    return doc


def linked_cluster_examples(nlp: Any, docs: Sequence[Tuple[str, Any]] = LINKED_CLUSTER_DOCS) -> List[Any]:
    """Training examples of ``docs`` (:data:`LINKED_CLUSTER_DOCS`), references by :func:`linked_cluster_doc`."""
    from spacy.tokens import Doc
    from spacy.training import Example

    return [Example(Doc(nlp.vocab, words=text.split()), linked_cluster_doc(nlp.vocab, text, clusters))
            for text, clusters in docs]


def save_tiny_bert(path: Path, layers: int) -> str:
    """A randomly initialised (seed 0) BERT of ``layers`` layers of width 32 with the packaged MiniLM's tokenizer,
    saved at ``path``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from spacy_el.kb.encoder import default_model_path

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> str:
    """A 1-layer :func:`save_tiny_bert`: a stand-in encoder that the torch-backed components' tests train in
    seconds."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), layers=1)


@pytest.fixture(scope="session")
def two_layer_encoder(tmp_path_factory) -> str:
    """A 2-layer :func:`save_tiny_bert` (one layer to freeze, one to train)."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert_2"), layers=2)


@pytest.fixture
def one_torch_thread():
    """Run a test with one torch thread (bit-stable float results), then restore the setting."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)

"""Shared builders of small trained pipelines, one per torch-backed component, for the contract tests
(``test_contract.py``). Each is trained for a few steps only: the contract tests compare a pipeline's
outputs with themselves (threads, batches, save/load), so they need a deterministic model with
non-trivial outputs, not a good one. Dropout is on (as in real configs), so that a forward pass that
runs in train mode is visible in the outputs.

All names and entities are invented (as in the components' own test modules).
"""
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.kb import KBBuilder
from spacy_el.kb.dense_index import DenseIndex
from spacy_el.kb.loaders import kb_from_disk

from ..conftest import build_invented_kb, linked_cluster_examples

#: The components under contract, in the order the tests are parametrised (each is also the pipe's name in its
#: pipeline; ``entqa_reader_joint`` is the entqa_reader factory with ``reader_mode = "joint"``).
COMPONENTS = ("ner_stack_lstm", "entity_retriever", "entqa_reader", "entqa_reader_joint", "joint_coref_linker",
              "joint_coref_linker_heads", "ner_constrained_linker")
#: ``joint_coref_linker_heads``: the whole (1-layer) encoder frozen, saved as a reference, not as weights.
HEADS_ONLY = {"save_encoder": False, "frozen_encoder_layers": 1}
#: Pipe name -> (factory, settings) where the two differ.
FACTORIES = {
    "entqa_reader_joint": ("entqa_reader", {"reader_mode": "joint"}),
    "joint_coref_linker_heads": ("joint_coref_linker", HEADS_ONLY),
}
#: The joint reader's test settings: windows of 12 wordpieces (stride 6), so the contract's longer texts span
#: several windows.
JOINT_READER = {"reader_mode": "joint", "window_length": 12, "window_stride": 6, "candidate_length": 4}
ENCODER_WIDTH = 32  # the tiny encoder's hidden size (tests/conftest.py)
NAMES = ["Mercer", "Lumen", "Velda", "Ada Mercer", "Quill Tobin", "Orvik", "Tamsin Hale"]
LABELS = {"Mercer": "LOC", "Lumen": "ORG", "Velda": "LOC", "Ada Mercer": "PER", "Quill Tobin": "PER", "Orvik": "LOC",
          "Tamsin Hale": "PER"}
TEMPLATES = [
    "{a} painted the harbour of {b} at dawn .",
    "{a} met {b} in {c} , and later {a} left {c} .",
    "Brisk winds reached {c} where {a} waited for {b} .",
    "{a} played a concert in {b} ; {b} was loud .",
    "{a} said that {b} sold paint near {c} .",
]


def texts(n: int) -> List[str]:
    """``n`` different invented sentences that mention the toy KB's names."""
    out = []
    i = 0
    while len(out) < n:
        a, b, c = NAMES[i % 7], NAMES[(i * 3 + 1) % 7], NAMES[(i * 5 + 2) % 7]
        text = TEMPLATES[i % len(TEMPLATES)].format(a=a, b=b, c=c)
        if text not in out:
            out.append(text)
        i += 1
    return out


def _set_num_threads_one() -> None:
    import torch

    torch.set_num_threads(1)


def _ents_reference(nlp: Language, text: str, links: List[Tuple[str, str]]) -> Doc:
    doc = nlp.make_doc(text)
    spans = []
    for mention, kb_id in links:
        start = text.index(mention)
        spans.append(doc.char_span(start, start + len(mention), label=LABELS.get(mention, "ENT"), kb_id=kb_id))
    doc.ents = spans
    return doc


def _ents_examples(nlp: Language, texts_and_links: List[Tuple[str, List[Tuple[str, str]]]]) -> List[Example]:
    """Examples whose predicted docs have the reference's entities without their links (what a linker after
    an NER component gets)."""
    examples = []
    for text, links in texts_and_links:
        reference = _ents_reference(nlp, text, links)
        predicted = nlp.make_doc(text)
        predicted.ents = [Span(predicted, e.start, e.end, e.label_) for e in reference.ents]
        examples.append(Example(predicted, reference))
    return examples


TRAIN_LINKS = [
    ("Ada Mercer painted the harbour of Orvik at dawn .", [("Ada Mercer", "Ada_Mercer"), ("Orvik", "Orvik")]),
    ("Lumen played a concert in Mercer ; Mercer was loud .", [("Lumen", "Lumen_(band)"), ("Mercer", "Mercer_(town)")]),
    ("Brisk winds reached Velda where Tamsin Hale waited .", [("Velda", "Velda"), ("Tamsin Hale", "Tamsin_Hale")]),
]


def _train(nlp: Language, examples: List[Example], steps: int, learn_rate: float, **update: Any) -> None:
    import torch

    torch.manual_seed(0)
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = learn_rate
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, **update)


def _invented_kb_dir(tmp: Path, tiny_encoder: str, mention_encoder: bool = False) -> Path:
    """The invented KB (8-d random vectors, a Flat index) saved under ``tmp``; with ``mention_encoder``
    it carries an untrained mention encoder over the test BERT, projecting to 8-d (dense candidates)."""
    kb = build_invented_kb(True, dim=8)
    if mention_encoder:
        from spacy_el.candidates import attach_mention_encoder
        from spacy_el.kb.build_steps import attach_dense_index
        from spacy_el.candidates.mention_encoder import MentionEncoder

        attach_dense_index(kb, "Flat")
        attach_mention_encoder(kb, MentionEncoder.from_base(tiny_encoder, dim=8, entity_encoder={}))
    kb.to_disk(tmp / "kb")
    return tmp / "kb"


# -- one builder per component -------------------------------------------------------------------------


def build_ner_stack_lstm(tiny_encoder: str, tmp: Path, candidates: Optional[Dict[str, Any]] = None,
                         candidate_evidence: bool = False) -> Language:
    """``candidates``: a generator config (default: the component's); a dense or hybrid one gets a KB
    carrying a mention encoder. ``candidate_evidence``: the model's setting."""
    kb_dir = _invented_kb_dir(tmp, tiny_encoder, mention_encoder=candidates is not None)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    model = {
        "hidden_width": 16, "attention_width": 8, "el_hidden_width": 16, "nil_hidden_width": 8, "action_width": 8,
        "dropout": 0.3, "candidate_evidence": candidate_evidence,
        # The default tok2vec architecture, small: CharacterEmbed + MaxoutWindowEncoder is the one that
        # failed on a batch without tokens.
        "tok2vec": {
            "@architectures": "spacy.Tok2Vec.v2",
            "embed": {"@architectures": "spacy.CharacterEmbed.v2", "width": 16, "rows": 500, "nM": 8, "nC": 4,
                      "include_static_vectors": False},
            "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 16, "depth": 1, "window_size": 1,
                       "maxout_pieces": 2},
        },
    }
    nlp.add_pipe("ner_stack_lstm", config={"model": model, **({"candidates": candidates} if candidates else {})})
    nlp.config["initialize"]["components"]["ner_stack_lstm"] = {"kb_loader": {"@misc": "spacy-el.KBFromDisk.v1", "path": str(kb_dir)}}
    links = [
        ("Mercer painted the harbour at dawn .", [("Mercer", "Ada_Mercer")]),
        ("Lumen played in Mercer last night .", [("Lumen", "Lumen_(band)"), ("Mercer", "Mercer_(town)")]),
        ("Brisk winds reached Velda where Quill Tobin waited .", [("Velda", "Velda"), ("Quill Tobin", "NIL")]),
    ]
    examples = [Example(nlp.make_doc(text), _ents_reference(nlp, text, ls)) for text, ls in links]
    nlp.initialize(lambda: examples)
    _train(nlp, examples, steps=25, learn_rate=0.01)
    return nlp


def build_joint_coref_linker(
    tiny_encoder: str, tmp: Path, candidates: Optional[Dict[str, Any]] = None, name: str = "joint_coref_linker",
) -> Language:
    """``candidates`` as for :func:`build_ner_stack_lstm`; ``name``: the pipe's name, whose settings are
    ``FACTORIES``'."""
    kb_dir = _invented_kb_dir(tmp, tiny_encoder, mention_encoder=candidates is not None)
    nlp = spacy.blank("en")
    model = {
        "encoder": tiny_encoder, "max_span_width": 3, "window": 16, "stride": 8, "ffnn": 32, "ffnn_depth": 1,
        "width_emb": 8, "distance_width": 8, "entity_proj": 16, "dropout": 0.1, "encoder_batch": 8, "encoder_dtype": "float32",
    }
    settings = FACTORIES.get(name, ("joint_coref_linker", {}))[1]
    nlp.add_pipe("joint_coref_linker", name=name,
                 config={"model": model, **settings, **({"candidates": candidates} if candidates else {})})
    examples = linked_cluster_examples(nlp)
    torch.manual_seed(0)  # the heads' first weights: the same pipeline whichever tests ran before
    nlp.get_pipe(name).initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    _train(nlp, examples, steps=4, learn_rate=0.005)
    return nlp


def _entity_ruler(nlp: Language) -> None:
    ruler = nlp.add_pipe("entity_ruler")
    # Token patterns: phrase patterns do not survive nlp.from_bytes into a new pipeline (spaCy 3.8).
    ruler.add_patterns([{"label": LABELS[name], "pattern": [{"ORTH": w} for w in name.split()]} for name in NAMES])


def build_ner_constrained_linker(tiny_encoder: str, tmp: Path, candidates: Optional[Dict[str, Any]] = None,
                                 dense_feature: bool = False) -> Language:
    """``candidates`` as for :func:`build_ner_stack_lstm`; ``dense_feature``: the scorer's setting."""
    kb_dir = _invented_kb_dir(tmp, tiny_encoder, mention_encoder=candidates is not None)
    nlp = spacy.blank("en")
    _entity_ruler(nlp)
    nlp.add_pipe("ner_constrained_linker", config={
        "model": {"encoder": tiny_encoder, "hidden_width": 16, "max_length": 24, "encoder_dtype": "float32",
                  "dense_feature": dense_feature},
        **({"candidates": candidates} if candidates else {}),
    })
    train = [
        ("Mercer painted the harbour at dawn .", [("Mercer", "Ada_Mercer")]),
        ("We drove to Mercer along the river .", [("Mercer", "Mercer_(town)")]),
        ("Lumen played three encores in Velda .", [("Lumen", "Lumen_(band)"), ("Velda", "Velda")]),
    ]
    examples = _ents_examples(nlp, train)
    nlp.get_pipe("ner_constrained_linker").initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    with nlp.select_pipes(enable=["ner_constrained_linker"]):
        _train(nlp, examples, steps=4, learn_rate=0.001)
    return nlp


def _entqa_kb() -> Any:
    rng = np.random.default_rng(0)
    entities = [
        ("Ada_Mercer", "Ada Mercer", "Invented painter"), ("Mercer_(town)", "Mercer", "Invented river town"),
        ("Velda", "Velda", "Invented country"), ("Lumen_(band)", "Lumen", "Invented rock band"),
        ("Orvik", "Orvik", "Invented harbour city"), ("Tamsin_Hale", "Tamsin Hale", "Invented sprinter"),
    ]
    vectors = rng.normal(size=(len(entities), ENCODER_WIDTH)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    builder = KBBuilder()
    for (entity_id, name, description), vector in zip(entities, vectors):
        builder.add_entity(entity_id, name, description, ["ENT"], 1.0, vector=vector.tolist())
        builder.add_alias(name, [entity_id], [1.0])
    kb = builder.build()
    index = DenseIndex(ENCODER_WIDTH, "Flat")
    index.add(vectors)
    kb.set_dense_index(index)
    return kb


def build_entqa(tiny_encoder: str, tmp: Path, *, name: str = "entqa_reader", steps: int = 4, **reader_settings: Any) -> Language:
    """entity_retriever + entqa_reader (pipe ``name``, with ``reader_settings``), trained together for ``steps``
    steps (annotating retriever)."""
    kb_dir = tmp / "kb"
    _entqa_kb().to_disk(kb_dir)
    nlp = spacy.blank("en")
    retriever = {"encoder": tiny_encoder, "passage_length": 16, "stride": 8, "encoder_batch": 16, "encoder_dtype": "float32"}
    nlp.add_pipe("entity_retriever", config={"model": retriever, "entities_per_passage": 4, "negatives": 4, "hard_negative_ratio": 0.5,
                                             "max_train_passages": 0})
    # A low min_span_score: the briefly trained reader must still write spans (the tests compare them).
    nlp.add_pipe("entqa_reader", name=name,
                 config={"model": {"encoder": tiny_encoder, "encoder_batch": 16, "encoder_dtype": "float32"}, "entities_per_passage": 4,
                         "min_span_score": 0.01, "train_candidates": 4, "max_train_passages": 0, **reader_settings})
    examples = [Example(nlp.make_doc(text), _ents_reference(nlp, text, ls)) for text, ls in TRAIN_LINKS]
    for pipe in ("entity_retriever", name):
        nlp.get_pipe(pipe).initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    _train(nlp, examples, steps=steps, learn_rate=0.003, annotates=["entity_retriever"])
    return nlp


def build_entqa_joint(tiny_encoder: str, tmp: Path) -> Language:
    """entity_retriever + entqa_reader in the joint mode (pipe ``entqa_reader_joint``), trained together; 10 steps:
    after 4 the new heads still put every span below the "no mention" one."""
    return build_entqa(tiny_encoder, tmp, name="entqa_reader_joint", steps=10, **JOINT_READER)


def retriever_only(entqa: Language) -> Language:
    """A pipeline of the trained retriever alone (sourced from the EntQA pipeline)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_retriever", source=entqa)
    return nlp


class TrainedPipelines:
    """Builds each component's pipeline on first use and keeps it for the session."""

    def __init__(self, tiny_encoder: str, tmp_path_factory: Any) -> None:
        self.tiny_encoder = tiny_encoder
        self.tmp_path_factory = tmp_path_factory
        self._built: Dict[str, Language] = {}

    def _build(self, name: str) -> Language:
        _set_num_threads_one()
        if name in ("entqa_reader", "entity_retriever"):
            entqa = self.get("entqa")
            return retriever_only(entqa) if name == "entity_retriever" else entqa
        builders: Dict[str, Callable[[str, Path], Language]] = {
            "ner_stack_lstm": build_ner_stack_lstm, "joint_coref_linker": build_joint_coref_linker,
            "ner_constrained_linker": build_ner_constrained_linker,
            "joint_coref_linker_heads": lambda encoder, tmp: build_joint_coref_linker(encoder, tmp, name="joint_coref_linker_heads"),
        }
        tmp = self.tmp_path_factory.mktemp(name)
        if name == "entqa":
            return build_entqa(self.tiny_encoder, tmp)
        if name == "entqa_reader_joint":
            return build_entqa_joint(self.tiny_encoder, tmp)
        return builders[name](self.tiny_encoder, tmp)

    def get(self, name: str) -> Language:
        if name == "entqa_reader":
            name = "entqa"
        if name not in self._built:
            self._built[name] = self._build(name)
        return self._built[name]


@pytest.fixture(scope="session")
def trained_pipelines(tiny_encoder: str, tmp_path_factory: Any) -> TrainedPipelines:
    """``trained_pipelines.get(component)``: a small trained pipeline whose last pipe is ``component``
    (built once per session; torch runs on one thread, so that outputs are bit-stable)."""
    import torch

    previous = torch.get_num_threads()
    yield TrainedPipelines(tiny_encoder, tmp_path_factory)
    torch.set_num_threads(previous)

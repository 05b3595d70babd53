"""``span._.qid`` on linked spans, and components initialised from a KB built by ``kb from-dumps``.

The invented KB of the component builders (tests/pipeline/conftest.py) is replaced by the same entities
read from hand-written Wikidata and Wikipedia dumps, with random vectors as ``kb vectors`` would add.
"""
import numpy as np
import pytest

pytest.importorskip("mwparserfromhell")

from spacy_el.extensions import is_linked
from spacy_el.kb.dumps import DumpsSettings, build_kb_from_dumps

from ..kb.dumps.conftest import item, page_xml, wikidata_bytes, wikipedia_bytes, write_bz2
from . import conftest as builders

ENTITIES = [
    ("Q101", "Ada Mercer", "Ada Mercer", ["Q5"], "Invented painter"),
    ("Q102", "Mercer", "Mercer (town)", ["Q515"], "Invented river town"),
    ("Q103", "Mercer Corp", "Mercer Corp", ["Q4830453"], "Invented shipping company"),
    ("Q104", "Lumen", "Lumen (band)", ["Q215380"], "Invented rock band"),
    ("Q105", "Lumen", "Lumen (unit)", ["Q1"], "Unit of light"),
    ("Q106", "Velda", "Velda", ["Q6256"], "Invented country"),
]
TEXT = (
    "[[Mercer (town)|Mercer]] [[Mercer (town)|Mercer]] [[Ada Mercer|Mercer]] [[Mercer Corp|Mercer]] "
    "[[Lumen (unit)|Lumen]] [[Lumen (band)|Lumen]] [[Velda]] [[Ada Mercer]]"
)


def dumps_kb(tmp_path, dim: int = 8):
    wikidata = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes([item(q, label, title, p31, d) for q, label, title, p31, d in ENTITIES]))
    wikipedia = write_bz2(tmp_path / "wp.xml.bz2", wikipedia_bytes([page_xml("Notes", TEXT, 1)]))
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False))
    kb.set_vectors(np.random.default_rng(0).normal(size=(kb.n_entities, dim)).astype(np.float32))
    return kb


@pytest.mark.slow
@pytest.mark.parametrize("component", ["ner_stack_lstm", "joint_coref_linker", "ner_constrained_linker"])
def test_components_initialise_from_a_dumps_kb_and_set_qids(tmp_path, monkeypatch, tiny_encoder, component):
    kb = dumps_kb(tmp_path)
    assert kb.entities.ids.to_list() == ["Ada_Mercer", "Mercer_(town)", "Mercer_Corp", "Lumen_(band)", "Lumen_(unit)", "Velda"]
    monkeypatch.setattr(builders, "build_invented_kb", lambda *args, **kwargs: kb)
    nlp = getattr(builders, f"build_{component}")(tiny_encoder, tmp_path)
    docs = list(nlp.pipe(["Mercer painted the harbour of Velda at dawn .", "Lumen played in Mercer ."]))
    spans = [s for doc in docs for s in [*doc.ents, *(x for g in doc.spans.values() for x in g)]]
    linked = [s for s in spans if is_linked(s.kb_id_)]
    assert linked, "the pipeline linked nothing"
    for span in linked:
        assert span._.qid == kb.qid_of(span.kb_id_) and span._.qid.startswith("Q10")
    assert all(s._.qid is None for s in spans if not is_linked(s.kb_id_))


ENTQA_ENTITIES = [  # the EntQA builder's invented entities (tests/pipeline/conftest.py::_entqa_kb)
    ("Q201", "Ada Mercer", "Ada Mercer", ["Q5"], "Invented painter"),
    ("Q202", "Mercer", "Mercer (town)", ["Q515"], "Invented river town"),
    ("Q203", "Velda", "Velda", ["Q6256"], "Invented country"),
    ("Q204", "Lumen", "Lumen (band)", ["Q215380"], "Invented rock band"),
    ("Q205", "Orvik", "Orvik", ["Q515"], "Invented harbour city"),
    ("Q206", "Tamsin Hale", "Tamsin Hale", ["Q5"], "Invented sprinter"),
]


def entqa_dumps_kb(tmp_path):
    """The EntQA builder's entities from dumps, with the builder's vectors for them and a Flat index."""
    from spacy_el.kb.dense_index import DenseIndex

    text = " ".join(f"[[{title}]]" for _, _, title, _, _ in ENTQA_ENTITIES)
    wikidata = write_bz2(tmp_path / "wd.json.bz2", wikidata_bytes([item(*e) for e in ENTQA_ENTITIES]))
    wikipedia = write_bz2(tmp_path / "wp.xml.bz2", wikipedia_bytes([page_xml("Notes", text, 1)]))
    kb, _ = build_kb_from_dumps(wikidata, wikipedia, None, DumpsSettings(progress=False))
    invented = builders._entqa_kb()  # the same vector for the same entity, whatever the row order
    vectors = np.stack([invented.entities.vectors[invented.entities.row_of(kb.entities.ids[i])] for i in range(kb.n_entities)])
    kb.set_vectors(vectors)
    index = DenseIndex(builders.ENCODER_WIDTH, "Flat")
    index.add(vectors)
    kb.set_dense_index(index)
    return kb


@pytest.mark.slow
def test_entqa_initialises_from_a_dumps_kb_and_sets_qids(tmp_path, monkeypatch, tiny_encoder):
    kb = entqa_dumps_kb(tmp_path)
    monkeypatch.setattr(builders, "_entqa_kb", lambda: kb)
    nlp = builders.build_entqa_joint(tiny_encoder, tmp_path)  # the EntQA builder that trains long enough to link
    docs = list(nlp.pipe([text for text, _ in builders.TRAIN_LINKS]))
    spans = [s for doc in docs for s in [*doc.ents, *(x for g in doc.spans.values() for x in g)]]
    linked = [s for s in spans if is_linked(s.kb_id_)]
    assert linked, "the pipeline linked nothing"
    for span in linked:
        assert span._.qid == kb.qid_of(span.kb_id_) and span._.qid.startswith("Q20")

"""entqa_reader with ``reader_mode = "joint"`` (issue 29): settings, training to gold, the mode fixed once
trained, and candidate spans mapped back to the right characters across window boundaries of long documents.

(The contract suite, reloads with identical predictions included, runs it as ``entqa_reader_joint``.)
"""
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("faiss")

import spacy  # noqa: E402

from spacy_el.algorithms.passages import make_passages  # noqa: E402
from spacy_el.kb.loaders import kb_from_disk  # noqa: E402
from spacy_el.ml.torch_io import tokenizer_of  # noqa: E402

from ..torch_modules import torch_module  # noqa: E402
from .test_entqa import ENTITIES, TRAIN, build_kb, examples, gold_links, links  # noqa: E402

JOINT = {"reader_mode": "joint", "window_length": 12, "window_stride": 6, "candidate_length": 4}
TINY_MODEL = {"encoder_batch": 16, "encoder_dtype": "float32"}


def make_joint_nlp(tiny_encoder: str, tmp_path, reader: Dict[str, Any] = None):
    kb_dir = tmp_path / "kb"
    build_kb().to_disk(kb_dir)
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_retriever", config={"model": {"encoder": tiny_encoder, "passage_length": 16, "stride": 8, **TINY_MODEL},
                                             "entities_per_passage": 4, "negatives": 4, "hard_negative_ratio": 0.5, "max_train_passages": 0})
    nlp.add_pipe("entqa_reader", config={"model": {"encoder": tiny_encoder, **TINY_MODEL}, "entities_per_passage": 6, "min_span_score": 0.05,
                                         "train_candidates": 6, "max_train_passages": 0, **JOINT, **(reader or {})})
    egs = examples(nlp)
    for name in ("entity_retriever", "entqa_reader"):
        nlp.get_pipe(name).initialize(lambda: egs, nlp=nlp, kb_loader=kb_from_disk(kb_dir))
    return nlp


# -- settings ------------------------------------------------------------------------------------


def test_the_default_mode_is_the_papers():
    reader = spacy.blank("en").add_pipe("entqa_reader")
    assert reader.settings.reader_mode == "per_candidate"
    assert reader.settings.window_length == 128 and reader.settings.window_stride == 64


@pytest.mark.parametrize("config, option", [
    ({"reader_mode": "both"}, "reader_mode"),
    ({"window_length": 16, "window_stride": 32}, "window_stride"),
    ({"window_length": 1}, "window_length"),
    ({"candidate_length": 0}, "candidate_length"),
])
def test_bad_joint_settings_name_the_option(config, option):
    with pytest.raises(ValueError, match=option):
        spacy.blank("en").add_pipe("entqa_reader", config=config)


def test_the_mode_is_fixed_once_trained(tiny_encoder, tmp_path):
    nlp = make_joint_nlp(tiny_encoder, tmp_path)
    reader = nlp.get_pipe("entqa_reader")
    assert type(torch_module(reader)).__name__ == "JointReaderModule"
    with pytest.raises(ValueError, match="E816"):
        reader.configure(reader_mode="per_candidate")
    reader.configure(window_length=16, window_stride=8)  # the windows may change


def test_a_per_candidate_model_keeps_its_attrs(tiny_encoder, tmp_path):
    """The per-candidate model gets no new attr: its saved bytes are what they were before the joint mode."""
    from .test_entqa import make_nlp

    nlp = make_nlp(tiny_encoder, tmp_path)
    reader = nlp.get_pipe("entqa_reader")
    assert "reader_mode" not in reader.model.attrs
    assert type(torch_module(reader)).__name__ == "ReaderModule"


def test_an_unknown_marker_token_is_refused(tiny_encoder, tmp_path):
    nlp = make_joint_nlp(tiny_encoder, tmp_path, reader={"marker_token": "[no such token]"})
    nlp.get_pipe("entqa_reader").configure(min_span_score=0.0)
    with pytest.raises(ValueError, match="E919"):
        nlp(TRAIN[0][0])


# -- training ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained_joint(tiny_encoder, tmp_path_factory):
    """Retriever and joint reader trained together until the reader predicts the training gold."""
    torch.manual_seed(0)
    nlp = make_joint_nlp(tiny_encoder, tmp_path_factory.mktemp("entqa_joint"))
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.003
    egs = examples(nlp)
    history = []
    for step in range(400):
        losses: Dict[str, float] = {}
        nlp.update(egs, sgd=optimizer, losses=losses, annotates=["entity_retriever"])
        history.append(losses)
        if step >= 30 and step % 10 == 0 and [links(nlp(t)) for t, _ in TRAIN] == gold_links():
            break
    return nlp, history


def test_joint_training_learns_to_predict_gold(trained_joint):
    nlp, history = trained_joint
    assert history[-1]["entqa_reader"] < history[0]["entqa_reader"] / 2
    assert [links(nlp(text)) for text, _ in TRAIN] == gold_links()


def test_joint_reads_long_documents_across_windows(trained_joint):
    """Several windows of 12 wordpieces per document: every gold mention is found, with its characters."""
    nlp, _ = trained_joint
    text, gold = TRAIN[-1]
    doc = nlp(text)
    assert len(make_passages(text, tokenizer_of(nlp.get_pipe("entqa_reader").model), 12, 6)) >= 4
    assert links(doc) == sorted(gold)
    assert len({(s.start, s.end, s.kb_id_) for s in doc.spans["entqa"]}) == len(doc.spans["entqa"])


def test_prediction_reads_each_windows_first_k_candidates(trained_joint):
    """Prediction looks up only a window's first K candidates: the same rows, in the same order, as the
    whole list cut to K (training reads the whole list)."""
    nlp, _ = trained_joint
    reader = nlp.get_pipe("entqa_reader")
    doc = nlp(TRAIN[-1][0])
    whole, cores = reader._windows(doc)
    for k in (1, 2, reader.settings.entities_per_passage):
        cut, cut_cores = reader._windows(doc, limit=k)
        assert cut_cores == cores
        assert [rows for _, rows in cut] == [rows[:k] for _, rows in whole]


# -- window boundaries with a reader that reads names exactly -------------------------------------


class ExactNameReader:
    """Stands in for the joint reader's model: for each candidate, its name's wordpieces wherever they occur
    whole in the window, and also where they are cut by the window's edges (the first wordpieces of a
    window that end a name, the last that begin one), as a real reader may; elsewhere "no mention"."""

    def __init__(self, model: Any) -> None:
        self.attrs = dict(model.attrs)
        self.name = model.name
        self.layers = model.layers  # the reader checks a new setting against its built mode
        self.calls = 0

    def __call__(self, batch: Any, is_train: bool = False) -> Tuple[Tuple[None, Tuple[np.ndarray, ...]], None]:
        self.calls += 1
        a = batch.arrays
        b, k = a.shape
        width = a.span_mask.shape[2]
        start = np.full((b, k, width), -30.0, dtype=np.float32)
        end = np.full((b, k, width), -30.0, dtype=np.float32)
        start[:, :, 0] = end[:, :, 0] = 0.0
        per_row = a.marker_positions.shape[1]
        for i in range(b):
            n = int(a.span_mask[i, 0].sum())
            for c in range(k):
                if not a.candidate_mask[i, c]:
                    continue
                row = i * a.rows_per_window + c // per_row
                first, after = a.marker_positions[row, c % per_row], a.candidate_ends[row, c % per_row]
                name = list(a.input_ids[row, first + 1:after])
                window = list(a.input_ids[row, 1:1 + n])
                for s, t in _occurrences(window, name):
                    start[i, c, 1 + s] = end[i, c, 1 + t] = 10.0
        return (None, (start, end, np.zeros((b, k), dtype=np.float32))), None


def _occurrences(window: List[int], name: List[int]) -> List[Tuple[int, int]]:
    """Inclusive ``(s, t)`` of the name in the window, whole or cut by an edge."""
    found = [(s, s + len(name) - 1) for s in range(len(window) - len(name) + 1) if window[s:s + len(name)] == name]
    for cut in range(1, len(name)):
        if window[:cut] == name[-cut:]:
            found.append((0, cut - 1))
        if window[-cut:] == name[:cut]:
            found.append((len(window) - cut, len(window) - 1))
    return found


#: The entities of the long text: not Mercer_(town), whose name "Mercer" is inside "Ada Mercer".
NAMED = [e for e in ENTITIES if e[0] != "Mercer_(town)"]


def long_text() -> Tuple[str, List[Tuple[int, int, str]]]:
    """Invented names separated by filler, so that a window never holds two mentions of one entity; about 60
    windows of 12 wordpieces, many names crossing window edges."""
    filler = ["waited near the old mill", "sold paint at noon", "sang for the crowd", "walked to the river bank"]
    parts, gold, position = [], [], 0
    for i in range(48):
        entity_id, name, _ = NAMED[i % len(NAMED)]
        gold.append((position, position + len(name), entity_id))
        piece = f"{name} {filler[i % len(filler)]} ."
        parts.append(piece)
        position += len(piece) + 1
    return " ".join(parts), gold


def test_candidate_spans_map_back_to_characters_across_window_boundaries(tiny_encoder, tmp_path):
    nlp = make_joint_nlp(tiny_encoder, tmp_path)
    reader = nlp.get_pipe("entqa_reader")
    reader.configure(min_span_score=0.0)
    text, gold = long_text()
    tokenizer = tokenizer_of(reader.model)
    doc = nlp.make_doc(text)
    ids = [e[0] for e in NAMED]
    # The retriever's passages (6 wordpieces, inside the reader's windows), each with every entity.
    doc._.entqa_passages = [[p.start_char, p.end_char, ids, [0.5] * len(ids)] for p in make_passages(text, tokenizer, 6, 3)]
    windows = make_passages(text, tokenizer, 12, 6)
    crossing = [g for g in gold if any(w.start_char < g[0] < w.end_char < g[1] for w in windows)]
    assert len(windows) > 40 and len(crossing) > 5, "names must cross window edges"
    fake = ExactNameReader(reader.model)
    reader.model = fake
    raw = reader.raw_predictions(doc)
    assert sorted((s, e, k) for s, e, k, _ in raw) == sorted(gold)
    assert all(text[s:e] == dict((e_[0], e_[1]) for e_ in NAMED)[k] for s, e, k, _ in raw)
    # Batched across documents: the same predictions for the doc alone and beside another one.
    reader.configure(passages_per_batch=5)
    short = nlp.make_doc(TRAIN[0][0])
    short._.entqa_passages = [[0, len(short.text), ids, [0.5] * len(ids)]]
    both = reader._joint_raw([short, doc], 0.0)
    assert both[1] == raw and {(s, e) for s, e, _, _ in both[0]} == {(0, 10), (34, 39)}
    # ... and as spans of the doc, through the component's annotation.
    reader.set_annotations([doc], [reader._by_tokens(doc, raw)])
    assert sorted((s.start_char, s.end_char, s.kb_id_) for s in doc.spans["entqa"]) == sorted(gold)
    assert len(doc.ents) == len(gold)


# -- spacy train with configs/entqa_reader_joint.cfg ----------------------------------------------


def test_spacy_train_with_the_joint_config(trained_pipelines, tiny_encoder, tmp_path):
    """The project's joint config trains (a few steps, on invented documents, with the tiny encoder and the
    contract suite's trained retriever) and the saved pipeline reloads with the same predictions."""
    from pathlib import Path

    from spacy.cli.train import train
    from spacy.tokens import DocBin

    from .conftest import TRAIN_LINKS, _ents_reference, _entqa_kb

    retriever = trained_pipelines.get("entity_retriever")
    retriever.to_disk(tmp_path / "retriever")
    _entqa_kb().to_disk(tmp_path / "kb")
    blank = spacy.blank("en")
    DocBin(docs=[_ents_reference(blank, text, ls) for text, ls in TRAIN_LINKS]).to_disk(tmp_path / "train.spacy")
    config = Path(__file__).resolve().parents[2] / "configs" / "entqa_reader_joint.cfg"
    overrides = {
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "train.spacy"),
        "paths.kb": str(tmp_path / "kb"), "paths.encoder": tiny_encoder, "paths.retriever": str(tmp_path / "retriever"),
        "training.max_steps": 4, "training.eval_frequency": 2, "training.optimizer.learn_rate.warmup_steps": 1,
        "training.optimizer.learn_rate.total_steps": 4, "components.entqa_reader.model.encoder_dtype": "float32",
    }
    train(config, tmp_path / "out", overrides=overrides)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    reader = nlp.get_pipe("entqa_reader")
    assert reader.settings.reader_mode == "joint" and reader.settings.window_length == 128
    assert type(torch_module(reader)).__name__ == "JointReaderModule"
    reader.configure(min_span_score=0.0)
    text = TRAIN_LINKS[0][0]
    first = nlp(text)
    nlp.to_disk(tmp_path / "again")
    reloaded = spacy.load(tmp_path / "again")
    # Four steps may leave every candidate's best span the null one (no prediction), so the weights are compared
    # too; the contract suite checks the joint reader's non-empty predictions across round trips.
    assert reloaded.get_pipe("entqa_reader").model.to_bytes() == reader.model.to_bytes()
    again = reloaded(text)
    assert [(s.start, s.end, s.kb_id_, s._.link_score) for s in again.spans["entqa"]] == \
        [(s.start, s.end, s.kb_id_, s._.link_score) for s in first.spans["entqa"]]

"""The contract every torch-backed component keeps, tested once over all of them (the five components,
entqa_reader in both reader modes, and joint_coref_linker also saved as heads only, ``save_encoder = false``;
builders: ``conftest.py``).

* threads: one ``nlp`` called from two threads at once gives exactly the sequential outputs;
* serialisation depends only on the state: save -> load -> save is byte-identical (``to_bytes`` and
  ``to_disk``), whether or not the pipeline has run before;
* empty, whitespace-only and wordpiece-less documents give an empty result in any batch composition;
* corrupted weights and settings files are refused with an error that names the file.
"""
import hashlib
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_el.extensions import set_clusters
from spacy_el.kb.serialization import is_memory_mapped

from ..torch_modules import torch_module
from .conftest import COMPONENTS, FACTORIES, texts

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("faiss")

EMPTY_TEXTS = ["", " ", "\n\n", " \t "]
# Not blank to Python (str.strip keeps them), but the encoders' tokenizers give no wordpiece.
NO_WORDPIECE_TEXTS = ["\x00", "\ufeff", "\u200b", "\u0301"]


def _span(span: Span) -> tuple:
    x = span._
    return (span.start, span.end, span.label_, span.kb_id_, x.candidate_scores, x.link_score, x.nil_prob, x.nil_reason,
            x.cluster_id)


def outputs(doc: Doc) -> Dict[str, Any]:
    """Everything the components write: entities and span groups with their extensions, passages, clusters."""
    return {
        "ents": [_span(e) for e in doc.ents],
        "spans": {key: [_span(s) for s in group] for key, group in sorted(doc.spans.items())},
        "passages": doc._.entqa_passages,
        "clusters": doc._.coref_clusters,
    }


def assert_empty(doc: Doc) -> None:
    assert list(doc.ents) == []
    assert all(len(group) == 0 for group in doc.spans.values()), dict(doc.spans)
    assert not doc._.entqa_passages and not doc._.coref_clusters


def copy_of(nlp: Language, data: Optional[bytes] = None) -> Language:
    """A new pipeline with ``nlp``'s components, read from ``data`` (default: ``nlp.to_bytes()``)."""
    other = spacy.blank("en")
    for name in nlp.pipe_names:
        config = {k: v for k, v in nlp.config["components"][name].items() if k != "factory"}
        other.add_pipe(nlp.get_pipe_meta(name).factory, name=name, config=config)
    return other.from_bytes(nlp.to_bytes() if data is None else data)


# spaCy's sentencizer saves its punctuation set in set order, which a reloaded set need not repeat: its
# bytes are left out of the comparisons (it is not under contract here).
NOT_COMPARED = ["sentencizer"]


def files_of(path: Path) -> Dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*")) if p.is_file() and p.relative_to(path).parts[0].split(".")[0] not in NOT_COMPARED
    }


# -- threads -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("component", COMPONENTS)
def test_two_threads_give_the_sequential_outputs(trained_pipelines, component):
    """Two threads x 15 calls on different texts, started together, give exactly (floats included)
    what the same calls give one after the other: no call sees another's mode, dropout or tokenizer."""
    nlp = trained_pipelines.get(component)
    batch = texts(30)
    expected = [outputs(nlp(text)) for text in batch]
    assert any(out["ents"] or out["spans"] or out["passages"] for out in expected), "the pipeline writes nothing"
    got: List[Any] = [None] * len(batch)
    errors: List[BaseException] = []
    start = threading.Barrier(2)

    def work(offset: int) -> None:
        try:
            start.wait()
            for i in range(offset, len(batch), 2):
                got[i] = outputs(nlp(batch[i]))
        except BaseException as err:  # noqa: BLE001 - re-raised in the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(offset,)) for offset in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    wrong = [i for i in range(len(batch)) if got[i] != expected[i]]
    assert not wrong, f"{len(wrong)}/{len(batch)} calls differ from the sequential ones"


def test_training_still_uses_dropout_after_prediction(trained_pipelines):
    """Prediction leaves the torch module in eval mode; an update switches it back to train mode."""
    nlp = copy_of(trained_pipelines.get("joint_coref_linker"))
    module = torch_module(nlp.get_pipe("joint_coref_linker"))
    nlp("Mercer painted the harbour at dawn .")
    assert not module.training
    modes: List[bool] = []
    reference = Doc(nlp.vocab, words="Mercer met Mercer .".split())
    set_clusters(reference, [[(0, 1), (2, 3)]])
    handle = module.register_forward_pre_hook(lambda m, args: modes.append(m.training))
    try:
        nlp.update([Example(Doc(nlp.vocab, words="Mercer met Mercer .".split()), reference)])
        nlp("Mercer painted the harbour at dawn .")
    finally:
        handle.remove()
    assert modes == [True, False]


# -- serialisation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("component", COMPONENTS)
def test_save_load_save_is_byte_identical(trained_pipelines, component, tmp_path):
    fresh = copy_of(trained_pipelines.get(component))  # has never run
    data = fresh.to_bytes()
    assert copy_of(fresh, data).to_bytes(exclude=NOT_COMPARED) == fresh.to_bytes(exclude=NOT_COMPARED)
    pipe_bytes = fresh.get_pipe(component).to_bytes(exclude=["vocab"])
    fresh("Mercer met Lumen in Velda .")
    assert fresh.get_pipe(component).to_bytes(exclude=["vocab"]) == pipe_bytes, "running the pipeline changed its state"
    data = fresh.to_bytes()
    loaded = copy_of(fresh, data)
    assert loaded.to_bytes(exclude=NOT_COMPARED) == fresh.to_bytes(exclude=NOT_COMPARED)
    loaded("Quill Tobin met Ada Mercer .")
    assert loaded.get_pipe(component).to_bytes(exclude=["vocab"]) == pipe_bytes
    fresh.to_disk(tmp_path / "a")
    spacy.load(tmp_path / "a").to_disk(tmp_path / "b")
    assert files_of(tmp_path / "a") == files_of(tmp_path / "b")


@pytest.mark.hostile("writing outside the folder")
@pytest.mark.parametrize("component", COMPONENTS)
def test_to_disk_never_writes_through_a_planted_symlink(trained_pipelines, component, tmp_path):
    """Each component's own files (``model``, ``cfg``) are written to a new name and renamed into place: a
    symlink planted at their place is replaced, and the file it points to stays as it was."""
    nlp = trained_pipelines.get(component)
    saved = tmp_path / "pipeline"
    nlp.to_disk(saved)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("model", "cfg"):
        (outside / name).write_bytes(b"not yours")
        (saved / component / name).unlink()
        (saved / component / name).symlink_to(outside / name)
    nlp.to_disk(saved)
    for name in ("model", "cfg"):
        assert (outside / name).read_bytes() == b"not yours"
        assert not (saved / component / name).is_symlink()
    assert [outputs(doc) for doc in spacy.load(saved).pipe(texts(2))] == [outputs(doc) for doc in nlp.pipe(texts(2))]


# -- empty documents ---------------------------------------------------------------------------------


@pytest.mark.parametrize("component", COMPONENTS)
def test_empty_and_whitespace_docs_give_empty_results_in_any_batch(trained_pipelines, component):
    nlp = trained_pipelines.get(component)
    assert_empty(nlp(""))
    for doc in nlp.pipe(EMPTY_TEXTS):
        assert_empty(doc)
    for doc in nlp.pipe(EMPTY_TEXTS, batch_size=1):
        assert_empty(doc)
    normal = texts(2)
    mixed = [EMPTY_TEXTS[0], normal[0], EMPTY_TEXTS[1], EMPTY_TEXTS[2], normal[1], EMPTY_TEXTS[3]]
    alone = {text: outputs(nlp(text)) for text in normal}
    for batch_size in (2, 3, len(mixed)):
        for text, doc in zip(mixed, nlp.pipe(mixed, batch_size=batch_size)):
            if text in alone:
                assert [o[:4] for o in outputs(doc)["ents"]] == [o[:4] for o in alone[text]["ents"]]
            else:
                assert_empty(doc)


def test_ner_stack_lstm_trains_on_a_batch_of_empty_docs(trained_pipelines):
    """The tok2vec (CharacterEmbed + MaxoutWindowEncoder) is not called on a batch without tokens."""
    nlp = copy_of(trained_pipelines.get("ner_stack_lstm"))
    examples = [Example(nlp.make_doc(text), nlp.make_doc(text)) for text in ("", "")]
    losses = nlp.update(examples, sgd=nlp.create_optimizer())
    assert losses["ner_stack_lstm"] == 0.0


# ner_stack_lstm reads spaCy tokens through a character tok2vec, not wordpieces: such a token is a word to it.
@pytest.mark.parametrize("component", [c for c in COMPONENTS if c != "ner_stack_lstm"])
def test_docs_without_wordpieces_give_empty_results(trained_pipelines, component):
    """Text the encoder's tokenizer reads as nothing (NUL, BOM, zero-width space, a lone combining mark)."""
    nlp = trained_pipelines.get(component)
    for text in NO_WORDPIECE_TEXTS:
        assert_empty(nlp(text))
    for doc in nlp.pipe(NO_WORDPIECE_TEXTS + EMPTY_TEXTS):
        assert_empty(doc)
    mixed = [NO_WORDPIECE_TEXTS[0], texts(1)[0], NO_WORDPIECE_TEXTS[1]]
    docs = list(nlp.pipe(mixed))
    assert_empty(docs[0])
    assert_empty(docs[2])


# -- corrupted files ---------------------------------------------------------------------------------


def _flip_deep_byte(data: bytes) -> bytes:
    """One bit flipped three quarters into ``data``: inside the tensor data of a weights file, so the
    file still parses (the safetensors header and the msgpack frame are intact)."""
    flipped = bytearray(data)
    flipped[len(data) * 3 // 4] ^= 0x01
    return bytes(flipped)


@pytest.mark.parametrize("component", COMPONENTS)
def test_flipped_weight_bytes_are_refused(trained_pipelines, component, tmp_path):
    nlp = trained_pipelines.get(component)
    nlp.to_disk(tmp_path / "pipeline")
    model_file = tmp_path / "pipeline" / component / "model"
    model_file.write_bytes(_flip_deep_byte(model_file.read_bytes()))
    with pytest.raises(ValueError, match=r"\[spacy_el E812\]") as info:
        spacy.load(tmp_path / "pipeline")
    assert str(model_file) in str(info.value)
    # The same through bytes: the component's model entry with one bit flipped.
    pipe = nlp.get_pipe(component)
    msg = srsly.msgpack_loads(pipe.to_bytes(exclude=["vocab"]))
    msg["model"] = _flip_deep_byte(msg["model"])
    with pytest.raises(ValueError, match=r"\[spacy_el E812\]"):
        copy_of(nlp).get_pipe(component).from_bytes(srsly.msgpack_dumps(msg), exclude=["vocab"])


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"dims": "wide"}', '{"a_setting": "many"}'])
def test_corrupted_cfg_file_is_refused_naming_the_file(trained_pipelines, component, content, tmp_path):
    nlp = trained_pipelines.get(component)
    nlp.to_disk(tmp_path / "pipeline")
    cfg_file = tmp_path / "pipeline" / component / "cfg"
    if content.startswith("{\"a_setting"):  # a valid file with one setting of the wrong type
        cfg = srsly.read_json(cfg_file)
        setting = {"joint_coref_linker": "mentions_from", "joint_coref_linker_heads": "mentions_from",
                   "ner_stack_lstm": "max_sentence_length", "ner_constrained_linker": "candidates_per_mention"}.get(component, "entities_per_passage")
        cfg[setting] = "many"
        content = srsly.json_dumps(cfg)
    cfg_file.write_text(content, encoding="utf8")
    with pytest.raises(ValueError, match=r"\[spacy_el E80[789]\]") as info:
        spacy.load(tmp_path / "pipeline")
    assert str(cfg_file) in str(info.value)


@pytest.mark.parametrize("component", COMPONENTS)
def test_an_unknown_key_in_the_cfg_file_is_refused_naming_it(trained_pipelines, component, tmp_path):
    nlp = trained_pipelines.get(component)
    nlp.to_disk(tmp_path / "pipeline")
    cfg_file = tmp_path / "pipeline" / component / "cfg"
    cfg = srsly.read_json(cfg_file)
    cfg["top_kk"] = 3  # a typo, or a key from another component: never merged silently
    srsly.write_json(cfg_file, cfg)
    with pytest.raises(ValueError, match=r"\[spacy_el E810\].*'top_kk'") as info:
        spacy.load(tmp_path / "pipeline")
    assert str(cfg_file) in str(info.value)


# -- the rest of the contract: uninitialised, pipe = call, round trips ------------------------------


def uninitialised_pipeline(component: str) -> Language:
    """A blank pipeline with ``component`` added and not initialised."""
    nlp = spacy.blank("en")
    factory, config = FACTORIES.get(component, (component, {}))
    if factory == "entqa_reader":
        nlp.add_pipe("entity_retriever")  # the reader reads the retriever's passages
    nlp.add_pipe(factory, name=component, config=config)
    return nlp


def assert_says_uninitialised(nlp: Language) -> None:
    doc = nlp.make_doc("Ada Mercer painted Velda .")
    doc.ents = [Span(doc, 0, 2, "PER")]  # ner_constrained_linker links given entities
    with pytest.raises(ValueError, match=r"\[spacy_el (E805|E824)\]"):
        nlp(doc)


@pytest.mark.parametrize("component", COMPONENTS)
def test_an_uninitialised_component_says_so(component):
    assert_says_uninitialised(uninitialised_pipeline(component))


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("via", ["bytes", "disk"])
def test_an_uninitialised_component_round_trips_and_still_says_so(component, via, tmp_path):
    nlp = uninitialised_pipeline(component)
    if via == "disk":
        nlp.to_disk(tmp_path / "pipeline")
        assert_says_uninitialised(spacy.load(tmp_path / "pipeline"))
    else:
        assert_says_uninitialised(copy_of(nlp))


def split_floats(value: Any) -> tuple:
    """(``value`` with every float replaced by a marker, the floats in order): batching changes scores in
    their last bits, so batched and single outputs are compared exactly but for their floats."""
    floats: List[float] = []

    def skeleton(item: Any) -> Any:
        if isinstance(item, float):
            floats.append(item)
            return "<float>"
        if isinstance(item, dict):
            return {key: skeleton(v) for key, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [skeleton(v) for v in item]
        return item

    return skeleton(value), floats


@pytest.mark.parametrize("component", COMPONENTS)
def test_pipe_equals_call(trained_pipelines, component):
    nlp = trained_pipelines.get(component)
    inputs = texts(6)
    batched, batched_floats = split_floats([outputs(doc) for doc in nlp.pipe(inputs, batch_size=4)])
    single, single_floats = split_floats([outputs(nlp(text)) for text in inputs])
    assert batched == single
    assert batched_floats == pytest.approx(single_floats, abs=1e-5)


def pipe_within(nlp: Language, inputs: List[str], seconds: float, **kwargs: Any) -> List[Doc]:
    """``list(nlp.pipe(inputs, **kwargs))``, failing the test when it has not finished after ``seconds``: the
    worker processes it started are then ended, which ends spaCy's wait for them (a signal would not: another
    thread may take it while the main one waits in a read)."""
    import multiprocessing

    before = set(multiprocessing.active_children())
    expired = threading.Event()

    def end_workers() -> None:
        expired.set()
        for process in set(multiprocessing.active_children()) - before:
            process.kill()

    timer = threading.Timer(seconds, end_workers)
    timer.start()
    try:
        docs = list(nlp.pipe(inputs, **kwargs))
    except Exception:  # noqa: BLE001 - an ended worker breaks spaCy's pipe
        if not expired.is_set():
            raise
    finally:
        timer.cancel()
    if expired.is_set():
        pytest.fail(f"nlp.pipe({kwargs}) had not finished after {seconds} s: its workers hung")
    return docs


@pytest.mark.hostile("resources")
@pytest.mark.parametrize("component", COMPONENTS)
def test_n_process_2_gives_the_outputs_of_one_process(trained_pipelines, component):
    """spaCy's ``nlp.pipe(n_process=2)`` forks workers from a process whose torch has used several threads: a
    worker that inherits torch's OpenMP pool of several threads hung in its first parallel torch call."""
    import torch

    nlp = trained_pipelines.get(component)
    inputs = texts(4)
    single, single_floats = split_floats([outputs(doc) for doc in nlp.pipe(inputs)])
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # the default on a 2-core machine
    try:
        # The tiny test models are too small for torch to split their work over threads: one large op starts
        # the thread pool, as a real model's forward pass does.
        torch.ones(1 << 22).add_(1.0).sum()
        docs = pipe_within(nlp, inputs, 60, n_process=2, batch_size=2)
    finally:
        torch.set_num_threads(threads)
    forked, forked_floats = split_floats([outputs(doc) for doc in docs])
    assert forked == single
    assert forked_floats == pytest.approx(single_floats, abs=1e-5)


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("via", ["bytes", "disk"])
def test_round_trips_give_identical_predictions(trained_pipelines, component, via, tmp_path):
    nlp = trained_pipelines.get(component)
    inputs = texts(4)
    before = [outputs(doc) for doc in nlp.pipe(inputs)]
    if via == "disk":
        nlp.to_disk(tmp_path / "pipeline")
        other = spacy.load(tmp_path / "pipeline")
    else:
        other = copy_of(nlp)
    assert [outputs(doc) for doc in other.pipe(inputs)] == before


@pytest.mark.parametrize("component", COMPONENTS)
def test_truncated_weights_are_refused(trained_pipelines, component, tmp_path):
    nlp = trained_pipelines.get(component)
    nlp.to_disk(tmp_path / "pipeline")
    model_file = tmp_path / "pipeline" / component / "model"
    model_file.write_bytes(model_file.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"\[spacy_el E812\]") as info:
        spacy.load(tmp_path / "pipeline")
    assert str(model_file) in str(info.value)


@pytest.mark.parametrize("component", ["joint_coref_linker", "ner_constrained_linker", "entity_retriever"])
def test_initialize_needs_a_kb_with_vectors(component, tmp_path):
    from spacy_el.kb.loaders import kb_from_disk

    from ..conftest import build_invented_kb

    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(component)
    doc = nlp.make_doc("Ada Mercer painted Velda .")
    doc.ents = [Span(doc, 0, 2, "PER", kb_id="Ada_Mercer")]
    examples = [Example(nlp.make_doc(doc.text), doc)]
    with pytest.raises(ValueError, match=r"\[spacy_el E803\]"):
        pipe.initialize(lambda: examples, nlp=nlp)
    build_invented_kb(with_vectors=False).to_disk(tmp_path / "kb")
    with pytest.raises(ValueError, match=r"\[spacy_el E804\]"):
        pipe.initialize(lambda: examples, nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))


@pytest.mark.parametrize("component", ["joint_coref_linker", "ner_constrained_linker", "entity_retriever"])
def test_a_loaded_pipeline_memory_maps_its_kb(trained_pipelines, component, tmp_path):
    nlp = trained_pipelines.get(component)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    vectors = loaded.get_pipe(component).kb.entities.vectors
    assert is_memory_mapped(vectors), "processes loading one pipeline share the KB's pages"
    loaded.to_disk(tmp_path / "pipeline")  # saving onto the folder it maps (atomic renames keep the map valid)
    again = spacy.load(tmp_path / "pipeline")
    text = texts(1)[0]
    assert outputs(again(text)) == outputs(loaded(text))

"""Resumable chunked vector encoding (spacy_el/kb/vector_chunks.py): an interrupted encoding continues from
its finished chunks and gives the same arrays as an uninterrupted one; a work folder of another run is refused."""
import hashlib
import json

import numpy as np
import pytest

from spacy_el.kb.build_steps import compute_entity_vectors, entity_texts
from spacy_el.kb.encoder import TextEncoder, encoder_fingerprint
from spacy_el.kb.vector_chunks import (
    META_FILE, VECTORS_FILE, chunk_file, encode_in_chunks, remove_work_dir, texts_sha256,
)

from ..conftest import build_invented_kb


ENCODE = TextEncoder.encode


class Interrupted(Exception):
    pass


def interrupt_after(monkeypatch, calls: int) -> list:
    """Make TextEncoder.encode stop the run (as Ctrl-C or a kill would) once it has been called ``calls``
    times. RETURNS: the list of the lengths it was called with."""
    seen = []

    def encode(self, texts, progress=True, bar=None):
        if len(seen) == calls:
            raise Interrupted
        seen.append(len(texts))
        return ENCODE(self, texts, progress=progress, bar=bar)

    monkeypatch.setattr(TextEncoder, "encode", encode)
    return seen


def test_an_interrupted_encoding_continues_with_the_same_result(tmp_path, monkeypatch, tiny_encoder, one_torch_thread):
    kb = build_invented_kb(with_vectors=False)  # 6 entities: chunks of 2, 2 and 2 rows
    whole = compute_entity_vectors(kb, encoder=tiny_encoder, resume_dir=tmp_path / "whole", chunk_size=2, progress=False)

    work = tmp_path / "work"
    seen = interrupt_after(monkeypatch, 1)
    with pytest.raises(Interrupted):
        compute_entity_vectors(kb, encoder=tiny_encoder, resume_dir=work, chunk_size=2, progress=False)
    assert seen == [2]
    assert chunk_file(work, 0).is_file() and not chunk_file(work, 1).exists() and not (work / VECTORS_FILE).exists()
    (work / ".chunk-00001.npy.0123456789abcdef.tmp").write_bytes(b"\x93NUMPY half-written")  # killed mid-write

    seen = interrupt_after(monkeypatch, 10)
    resumed = compute_entity_vectors(kb, encoder=tiny_encoder, resume_dir=work, chunk_size=2, progress=False)
    assert seen == [2, 2], "only the two unfinished chunks are encoded"
    assert resumed.dtype == np.float32 and resumed.shape == (6, 32)
    assert np.array_equal(np.asarray(resumed), np.asarray(whole))
    # The chunks hold what an encoding of all rows at once gives (up to float rounding of other batches).
    at_once = compute_entity_vectors(kb, encoder=tiny_encoder, progress=False)
    np.testing.assert_allclose(np.asarray(resumed), at_once, atol=1e-5)
    meta = json.loads((work / META_FILE).read_text())
    assert (meta["n"], meta["dim"], meta["chunk_size"]) == (6, 32, 2)
    assert meta["encoder"] == encoder_fingerprint(tiny_encoder)

    remove_work_dir(work)
    assert not work.exists()


class HashEncoder:
    """A fake encoder: each text's vector is drawn from a generator seeded by its hash."""

    def __init__(self, dim=4):
        self.dim, self.max_length, self.batch_size, self.device = dim, 128, 8, "cpu"
        self.calls = 0

    def encode(self, texts, progress=False, bar=None):
        self.calls += 1
        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little") for t in texts]
        return np.stack([np.random.default_rng(s).normal(size=self.dim) for s in seeds]).astype(np.float32)


FINGERPRINT = {"name": "hash", "sha256": "0" * 64}


def texts_of(texts):
    return lambda start, end: texts[start:end]


def test_chunks_are_stitched_in_order_and_a_finished_run_is_reused(tmp_path):
    texts = [f"entity {i}" for i in range(7)]
    encoder = HashEncoder()
    vectors = encode_in_chunks(texts_of(texts), 7, encoder, FINGERPRINT, tmp_path / "w", chunk_size=3, progress=False)
    assert encoder.calls == 3
    assert isinstance(vectors, np.memmap)
    assert np.array_equal(vectors, HashEncoder().encode(texts))
    again = encode_in_chunks(texts_of(texts), 7, encoder, FINGERPRINT, tmp_path / "w", chunk_size=3, progress=False)
    assert encoder.calls == 3 and np.array_equal(again, vectors)


@pytest.mark.parametrize("change, field", [
    ({"chunk_size": 2}, "chunk_size"),
    ({"texts": [f"entity {i}" for i in range(6)] + ["changed"]}, "texts_sha256"),
    ({"texts": [f"entity {i}" for i in range(8)]}, "n"),
    ({"fingerprint": {"name": "other", "sha256": "1" * 64}}, "encoder"),
    ({"dim": 5}, "dim"),
])
def test_a_work_folder_of_another_encoding_is_refused(tmp_path, change, field):
    texts = [f"entity {i}" for i in range(7)]
    encode_in_chunks(texts_of(texts), 7, HashEncoder(), FINGERPRINT, tmp_path / "w", chunk_size=3, progress=False)
    other = change.get("texts", texts)
    with pytest.raises(ValueError, match=rf"E251.*its {field} is"):
        encode_in_chunks(texts_of(other), len(other), HashEncoder(change.get("dim", 4)), change.get("fingerprint", FINGERPRINT),
                         tmp_path / "w", chunk_size=change.get("chunk_size", 3), progress=False)


def test_a_folder_that_is_not_a_work_folder_is_refused_and_kept(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="E249"):
        encode_in_chunks(texts_of(["a"]), 1, HashEncoder(), FINGERPRINT, tmp_path, progress=False)
    remove_work_dir(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_damaged_chunk_is_named(tmp_path):
    texts = [f"entity {i}" for i in range(4)]
    encode_in_chunks(texts_of(texts), 4, HashEncoder(), FINGERPRINT, tmp_path, chunk_size=2, progress=False)
    (tmp_path / VECTORS_FILE).unlink()
    np.save(chunk_file(tmp_path, 1), np.zeros((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match=r"E247.*chunk-00001\.npy"):
        encode_in_chunks(texts_of(texts), 4, HashEncoder(), FINGERPRINT, tmp_path, chunk_size=2, progress=False)


def test_texts_hash_does_not_depend_on_the_block_size():
    texts = ["a", "bc", "", "d"]
    assert texts_sha256(texts_of(texts), 4, block=1) == texts_sha256(texts_of(texts), 4, block=3)
    assert texts_sha256(texts_of(["ab", "c"]), 2) != texts_sha256(texts_of(["a", "bc"]), 2)


def test_entity_texts_of_a_row_range():
    kb = build_invented_kb(with_vectors=False)
    assert entity_texts(kb, 2, 4) == entity_texts(kb)[2:4]
    assert entity_texts(kb, 5, 99) == entity_texts(kb)[5:]

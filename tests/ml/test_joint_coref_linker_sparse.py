"""Sparse prediction of joint_coref_linker: the scorer's coreference edges without the (M, M) matrix, and their
decoding, give the dense scores' clusters and links (issue 70, book-length documents)."""
import numpy as np
import pytest
import torch

from spacy_el.ml.joint_coref_linker.decoding import decode
from spacy_el.ml.joint_coref_linker.scorer import MODES, JointCorefScorer

D, E = 16, 8


def mentions(m: int, c: int, seed: int):
    """Random inputs of ``m`` mentions with up to ``c`` candidates drawn from 12 entities (no repeats per mention)."""
    gen = torch.Generator().manual_seed(seed)
    span_embs = torch.randn(m, D, generator=gen)
    vectors = torch.randn(m, c, E, generator=gen)
    ids = torch.stack([torch.randperm(12, generator=gen)[:c] for _ in range(m)])
    ids = ids.masked_fill(torch.rand(m, c, generator=gen) < 0.4, -1)
    starts = torch.sort(torch.randint(0, 4 * m, (m,), generator=gen)).values
    return span_embs, starts, vectors, ids >= 0, ids


def scorer(seed: int, **kwargs) -> JointCorefScorer:
    torch.manual_seed(seed)
    model = JointCorefScorer(D, E, ffnn=24, entity_proj=12, distance_width=6, **kwargs)
    # Untrained heads score everything near 0: widen them, so that coreference edges beat the root often
    # and the decodings have long chains, cycles to contract and many clusters.
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "coref" in name or "mention" in name:
                parameter.mul_(4.0)
    return model.eval()


CASES = [
    dict(max_antecedents=3),
    dict(max_antecedents=5, antecedent_pruning="coarse"),
    dict(max_antecedents=4, refinement="antecedent_averaging"),
    dict(max_antecedents=4, antecedent_pruning="coarse", refinement="antecedent_averaging", distance="tokens"),
    dict(max_antecedents=6, score_bound=None),
    dict(max_antecedents=None),
    dict(max_antecedents=4, refinement="entity_equalization_mean"),
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_sparse_edges_are_the_finite_entries_of_the_dense_scores(case):
    model = scorer(0, **case)
    with torch.no_grad():
        for seed in range(3):
            inputs = mentions(40, 3, seed)
            dense, sparse = model(*inputs), model(*inputs, sparse=True)
            assert sparse.is_sparse and not dense.is_sparse
            rebuilt = sparse.dense().coref_scores
            assert torch.equal(torch.isfinite(rebuilt), torch.isfinite(dense.coref_scores))
            finite = torch.isfinite(rebuilt)
            # The same pairs; antecedent averaging sums the same terms in another order (float rounding).
            torch.testing.assert_close(rebuilt[finite], dense.coref_scores[finite], rtol=1e-5, atol=1e-5)
            for name in ("mention_scores", "link_scores", "nil_scores"):
                assert torch.equal(getattr(sparse, name), getattr(dense, name))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_sparse_decoding_gives_the_dense_clusters_and_links(mode, case):
    model = scorer(1, **case)
    with torch.no_grad():
        for seed in range(4):
            inputs = mentions(int(np.random.default_rng(seed).integers(1, 60)), 4, seed)
            dense = model(*inputs)
            expected = decode(dense, mode)
            for sparse in (model(*inputs, sparse=True), dense.sparse()):
                got = decode(sparse, mode)
                assert got.clusters == expected.clusters
                assert got.links == expected.links
                np.testing.assert_array_equal(got.parents, expected.parents)


def test_ties_decode_as_the_dense_argmax():
    """Equal scores: the sparse Local/Coref argmax takes the root, then the candidates, then the earliest mention,
    as the dense argmax's first maximum does."""
    model = scorer(2, max_antecedents=4)
    with torch.no_grad():
        scores = model(*mentions(12, 2, 5))
    scores.nil_scores[:] = 1.0
    scores.link_scores[:] = torch.where(scores.candidate_mask, torch.tensor(1.0), torch.tensor(float("-inf")))
    scores.coref_scores[torch.isfinite(scores.coref_scores)] = 1.0
    scores.coref_scores[5, 3] = scores.coref_scores[5, 2] = 2.0
    for mode in MODES:
        expected, got = decode(scores, mode), decode(scores.sparse(), mode)
        assert (got.clusters, got.links) == (expected.clusters, expected.links), mode
        np.testing.assert_array_equal(got.parents, expected.parents)


def test_the_windowed_sparse_scores_build_no_square_matrix(monkeypatch):
    """With a window of K antecedents nothing (M, M) is built at prediction: the edges are O(M K)."""
    m, k = 300, 4
    model = scorer(3, max_antecedents=k, refinement="antecedent_averaging")
    inputs = mentions(m, 2, 0)
    real_full, real_eye = torch.full, torch.eye
    sizes = []

    def full(size, *args, **kwargs):
        sizes.append(tuple(size))
        return real_full(size, *args, **kwargs)

    def eye(n, *args, **kwargs):
        sizes.append((n, n))
        return real_eye(n, *args, **kwargs)

    monkeypatch.setattr(torch, "full", full)
    monkeypatch.setattr(torch, "eye", eye)
    with torch.no_grad():
        scores = model(*inputs, sparse=True)
        decoding = decode(scores, "global")
    assert scores.coref_edges.values.numel() <= 2 * m * k
    assert all(int(np.prod(size)) < m * m for size in sizes)
    assert sum(len(c) for c in decoding.clusters) == m


@pytest.mark.parametrize("mode", ["global", "local"])
def test_a_pipeline_predicts_the_same_sparse_and_dense(tiny_encoder, tmp_path, mode, monkeypatch):
    """End to end, untrained heads (the hardest case for the decoding: scores with no pattern): the streamed encoder,
    the candidates read in blocks of mentions, the sparse scores and their decoding write what today's dense
    prediction writes, on documents of many encoder windows and several blocks of mentions."""
    import spacy

    from spacy_el.extensions import get_cluster_spans
    from spacy_el.kb.loaders import kb_from_disk
    from spacy_el.ml.joint_coref_linker import modules

    from ..conftest import build_invented_kb, linked_cluster_examples

    build_invented_kb(True, dim=8).to_disk(tmp_path / "kb")
    nlp = spacy.blank("en")
    model = {"encoder": tiny_encoder, "max_span_width": 3, "window": 8, "stride": 3, "ffnn": 16, "ffnn_depth": 1,
             "width_emb": 4, "distance_width": 4, "entity_proj": 8, "encoder_batch": 3, "encoder_dtype": "float32",
             "max_antecedents": 3, "mode": mode, "refinement": "antecedent_averaging", "span_ratio": 0.6}
    pipe = nlp.add_pipe("joint_coref_linker", config={"model": model})
    torch.manual_seed(0)
    pipe.initialize(lambda: linked_cluster_examples(nlp), nlp=nlp, kb_loader=kb_from_disk(tmp_path / "kb"))
    monkeypatch.setattr(modules, "LINK_BLOCK", 7)
    texts = [" ".join(["Mercer met Lumen in Velda , and Mercer left ."] * repeat) for repeat in (1, 4, 9)]
    make_batch = pipe._batch

    def written(dense):
        def batch(docs, golds=None):
            made = make_batch(docs, golds)
            made.dense_scores = dense
            return made

        monkeypatch.setattr(pipe, "_batch", batch)
        docs = [nlp(text) for text in texts]
        return [[[(s.start, s.end, s.kb_id_) for s in cluster] for cluster in get_cluster_spans(doc)] for doc in docs]

    dense, sparse = written(True), written(False)
    assert sparse == dense
    assert any(len(cluster) > 1 for doc in dense for cluster in doc)  # coreference edges were decoded

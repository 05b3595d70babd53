"""The look-up's fast path and its batch API give exactly the general path's candidates (issue 70, section 3).

Every text is looked up four ways: ``kb._general_matches`` (the three tiers, for every mention), ``kb.matches``
and ``kb.lookup`` (fast path first), ``kb.matches_batch`` and ``kb.lookup_batch`` (all texts in one call), with
several ``top_k`` and ``fuzzy`` settings, on the toy KBs, on KBs built to hit each of the fast path's exceptions
(shared normalised forms, equal priors, an entity named twice by an alias, colliding hash slots) and on the
evaluation KB ``kb/eval`` when it is built.
"""
from pathlib import Path
from typing import List, Sequence

import numpy as np
import pytest

from spacy_el.kb import ElKnowledgeBase, KBBuilder
from spacy_el.kb.alias_table import AliasTable, CandidateHit
from spacy_el.kb.fast_lookup import hash_slots

from ..conftest import REPO_ROOT, build_invented_kb, build_toy_kb

SETTINGS = [(None, True), (1, True), (2, False), (30, True)]


def general_hits(kb: ElKnowledgeBase, text: str, top_k, fuzzy) -> List[CandidateHit]:
    ids, aliases = kb.entities.ids, kb.aliases.aliases
    return [
        CandidateHit(ids[m.entity_row], m.entity_row, m.prior, aliases[m.alias_row], m.match, m.score)
        for m in kb._general_matches(text, top_k, fuzzy)
    ]


def assert_same_everywhere(kb: ElKnowledgeBase, texts: Sequence[str]) -> None:
    texts = list(texts)
    for top_k, fuzzy in SETTINGS:
        expected = [kb._general_matches(text, top_k, fuzzy) for text in texts]
        assert [kb.matches(text, top_k, fuzzy) for text in texts] == expected
        batch = kb.matches_batch(texts, top_k, fuzzy)
        assert [batch.matches(i) for i in range(len(texts))] == expected
        expected_hits = [general_hits(kb, text, top_k, fuzzy) for text in texts]
        assert [kb.lookup(text, top_k, fuzzy) for text in texts] == expected_hits
        assert kb.lookup_batch(texts, top_k, fuzzy) == expected_hits


def variants(aliases: Sequence[str]) -> List[str]:
    """Each alias, its upper-case and "The ..." forms, a typo, and texts no alias matches."""
    out = []
    for alias in aliases:
        out += [alias, alias.upper(), f"The {alias}", alias[:-1] + ("x" if alias[-1] != "x" else "q"), f"{alias}'s"]
    return out + ["", "   ", "qqzzxq", "!!!", "\u00e9", "Zürich", "Paris" * 3]


@pytest.mark.parametrize("build", [build_toy_kb, build_invented_kb, lambda: build_toy_kb(fuzzy=False)])
def test_toy_kbs(build):
    kb = build()
    assert_same_everywhere(kb, variants(kb.aliases.aliases.to_list()))


def ambiguous_kb() -> ElKnowledgeBase:
    """Aliases that share normalised forms ("Mercer", "MERCER", "The Mercer"), equal priors broken by frequency
    then row, an alias with many candidates, and single-candidate aliases."""
    builder = KBBuilder()
    for i in range(40):
        builder.add_entity(f"E{i}", f"Entity {i}", frequency=float(i % 7))
    builder.add_alias("Mercer", ["E1", "E2", "E3"], [0.5, 0.3, 0.2])
    builder.add_alias("MERCER", ["E4", "E1"], [0.6, 0.4])
    builder.add_alias("The Mercer", ["E5"], [1.0])
    builder.add_alias("Tie", ["E6", "E7", "E8", "E9"], [0.25, 0.25, 0.25, 0.25])
    builder.add_alias("Half tie", ["E10", "E11", "E12"], [0.5, 0.2, 0.2])
    builder.add_alias("Many", [f"E{i}" for i in range(40)], list(np.linspace(1.0, 0.0, 40)))
    for i in range(13, 40):
        builder.add_alias(f"Solo {i}", [f"E{i}"], [0.9])
    builder.add_alias("Zero", ["E13", "E14"], [0.0, 0.0])
    # Two aliases of one normalised form naming the same entities with equal priors: the first one met is kept.
    builder.add_alias("Twin A.", ["E15", "E16"], [0.5, 0.5])
    builder.add_alias("twin-a", ["E16", "E15"], [0.5, 0.5])
    return builder.build()


def test_shared_normalised_forms_ties_and_long_lists():
    kb = ambiguous_kb()
    assert_same_everywhere(kb, variants(kb.aliases.aliases.to_list()) + ["TWIN A", "the twin a"])


def test_an_alias_naming_an_entity_twice_keeps_its_best_prior():
    # The builder merges such candidates; a table made elsewhere (e.g. from dumps) may not.
    kb = build_toy_kb()
    table = AliasTable.build(
        ["Twice", "Once"], np.array([0, 3, 4]), np.array([1, 0, 1, 1], dtype=np.int32),
        np.array([0.3, 0.5, 0.2, 0.2], dtype=np.float32),
    )
    kb.set_aliases(table)
    assert_same_everywhere(kb, ["Twice", "Once", "twice", "ONCE"])
    assert [(h.entity_id, h.prior) for h in kb.lookup("Twice")] == [("Paris", 0.5), ("Paris_Hilton", pytest.approx(0.3))]


def test_colliding_slots_and_many_aliases():
    """Thousands of aliases in a small table: keys share home slots and probe past each other."""
    rng = np.random.default_rng(0)
    builder = KBBuilder()
    for i in range(300):
        builder.add_entity(f"E{i}", frequency=float(rng.integers(0, 5)))
    for i in range(3000):
        ids = [f"E{int(j)}" for j in rng.choice(300, size=int(rng.integers(1, 5)), replace=False)]
        priors = np.round(rng.uniform(0, 1, size=len(ids)), 1).tolist()  # rounded: many equal priors
        builder.add_alias(f"alias {i} {'ABC'[i % 3]}", ids, priors)
    kb = builder.build()
    mask, slots = hash_slots(kb.aliases)
    assert (slots != np.uint64(2**32 - 1)).sum() == kb.n_aliases
    texts = [kb.aliases.aliases[i] for i in range(0, kb.n_aliases, 7)]
    assert_same_everywhere(kb, texts + [t.lower() for t in texts[:50]] + [t + "?" for t in texts[:50]])


def test_fingerprints_shared_by_other_aliases(monkeypatch):
    """With 2-bit fingerprints most probes meet another alias with the text's fingerprint first: the single and
    the batch look-up must still check the bytes, and answer through the general path or probe on."""
    from spacy_el.kb import fast_lookup

    monkeypatch.setattr(fast_lookup, "_FINGERPRINT_SHIFT", 62)
    builder = KBBuilder()
    for i in range(50):
        builder.add_entity(f"E{i}", frequency=float(i % 3))
    for i in range(400):
        builder.add_alias(f"name {i}", [f"E{i % 50}", f"E{(i * 7) % 50}"] if i % 4 else [f"E{i % 50}"], [0.6, 0.4] if i % 4 else [1.0])
    kb = builder.build()
    texts = kb.aliases.aliases.to_list()
    assert_same_everywhere(kb, texts + [t.upper() for t in texts[:40]] + ["name 4000", "name"])
    exact, _, resolved = fast_lookup._exact_rows(kb.aliases, texts, [True] * len(texts))
    assert not resolved.all()  # some probes met another alias's fingerprint first
    assert (exact[exact >= 0] == np.flatnonzero(exact >= 0)).all()


def test_batch_keeps_order_and_repeats_and_takes_held_out_counts():
    kb = build_toy_kb()
    texts = ["Paris", "Hilton", "Paris", "nothing", "paris", "Paris"]
    batch = kb.lookup_batch(texts, top_k=2)
    assert batch == [kb.lookup(t, top_k=2) for t in texts]
    with pytest.raises(ValueError, match="E281"):
        kb.matches_batch(texts, held_out=[None])
    with pytest.raises(ValueError, match="E101"):
        kb.matches_batch(texts, top_k=0)
    assert kb.lookup_batch([]) == []


def test_held_out_counts_take_the_general_path_in_a_batch():
    builder = KBBuilder()
    builder.add_entity("A")
    builder.add_entity("B")
    builder.add_alias("X", ["A", "B"], [0.75, 0.25], count=4)
    kb = builder.build()
    own = {"X": {"A": 3.0}}
    found = kb.matches_batch(["X", "X", "X"], held_out=[own, None, own])
    assert [found.matches(i) for i in range(3)] == [
        kb.matches("X", held_out=own), kb.matches("X"), kb.matches("X", held_out=own)
    ]
    assert [m.entity_row for m in found.matches(0)] == [1]


def test_the_fast_path_follows_a_replaced_alias_table():
    kb = build_toy_kb()
    assert [h.entity_id for h in kb.lookup("Hilton")] == ["Paris_Hilton"]
    kb.add_entities([{"id": "Conrad_Hilton", "name": "Conrad Hilton", "aliases": [["Hilton", 0.9]]}])
    assert [h.entity_id for h in kb.lookup("Hilton")] == ["Conrad_Hilton", "Paris_Hilton"]
    assert_same_everywhere(kb, ["Hilton", "Conrad Hilton", "Paris"])


def test_spacy_get_candidates_batch_is_get_candidates_of_each():
    import spacy

    kb = build_toy_kb()
    doc = spacy.blank("en")("Paris met Hilton and the Beatles in paris .")
    mentions = [doc[0:1], doc[2:3], doc[4:6], doc[7:8], doc[8:9]]
    batch = kb.get_candidates_batch(mentions)
    single = [kb.get_candidates(span) for span in mentions]
    assert [[(c.entity_, c.alias_, c.prior_prob) for c in cands] for cands in batch] == [
        [(c.entity_, c.alias_, c.prior_prob) for c in cands] for cands in single
    ]


EVAL_KB = REPO_ROOT / "kb" / "eval"


@pytest.mark.data
@pytest.mark.skipif(not (EVAL_KB / "manifest.json").is_file(), reason="kb/eval is not built (python -m spacy project run kb-eval)")
def test_evaluation_kb():
    kb = ElKnowledgeBase.load(EVAL_KB)
    rng = np.random.default_rng(0)
    rows = rng.choice(kb.n_aliases, size=min(kb.n_aliases, 1500), replace=False)
    aliases = [kb.aliases.aliases[int(r)] for r in rows]
    assert_same_everywhere(kb, variants(aliases[:300]) + aliases[300:])


def test_paths_are_deterministic_for_a_loaded_kb(tmp_path: Path):
    kb = ambiguous_kb()
    kb.to_disk(tmp_path / "kb")
    loaded = ElKnowledgeBase.load(tmp_path / "kb", mmap=True)
    texts = variants(kb.aliases.aliases.to_list())
    assert loaded.lookup_batch(texts, top_k=5) == kb.lookup_batch(texts, top_k=5)
    assert_same_everywhere(loaded, texts)

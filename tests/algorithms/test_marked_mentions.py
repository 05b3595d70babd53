"""Marked windows for NER4EL's mention encoder (pure algorithm)."""
import pytest

from spacy_el.algorithms.marked_mentions import marked_windows, wordpiece_range, wordpiece_ranges

CLS, SEP, OPEN, CLOSE = 101, 102, 1, 2
PIECES = list(range(1000, 1040))


def windows_for(ranges, max_length):
    return marked_windows(PIECES, ranges, max_length=max_length, cls_id=CLS, sep_id=SEP, open_id=OPEN, close_id=CLOSE)


def test_every_mention_is_marked_in_its_window():
    ranges = [(2, 4), (10, 11), (30, 33)]
    windows, slots = windows_for(ranges, max_length=16)
    for (first, end), slot in zip(ranges, slots):
        ids = windows[slot.window].input_ids
        assert ids[slot.marker] == OPEN
        assert ids[slot.start:slot.end] == PIECES[first:end]
        assert ids[slot.end] == CLOSE
    assert all(len(w.input_ids) <= 16 and w.input_ids[0] == CLS and w.input_ids[-1] == SEP for w in windows)


def test_close_mentions_share_a_window_and_context_fills_it():
    windows, slots = windows_for([(5, 6), (7, 8)], max_length=20)
    assert len(windows) == 1 and slots[0].window == slots[1].window == 0
    assert len(windows[0].input_ids) == 20  # 14 pieces of context + 2 mentions x 2 markers + CLS/SEP


def test_nested_mentions_interleave_markers():
    windows, slots = windows_for([(3, 6), (4, 5)], max_length=20)
    outer, inner = slots
    ids = windows[0].input_ids
    assert ids[outer.marker] == OPEN and ids[inner.marker] == OPEN
    assert outer.marker < inner.marker < inner.end < outer.end
    assert [i for i in ids[inner.start:inner.end]] == [PIECES[4]]


def test_mention_longer_than_a_window_is_cut():
    windows, slots = windows_for([(0, 30)], max_length=10)
    slot = slots[0]
    assert slot.end - slot.start == 6 and len(windows[0].input_ids) == 10


def test_no_pieces_still_gives_one_slot_per_mention():
    windows, slots = marked_windows([], [(0, 0), (0, 0)], max_length=8, cls_id=CLS, sep_id=SEP, open_id=OPEN, close_id=CLOSE)
    assert len(slots) == 2 and windows[0].input_ids == [CLS, OPEN, CLOSE, SEP]


def test_too_short_windows_are_refused():
    with pytest.raises(ValueError, match="E005"):
        windows_for([(0, 1)], max_length=4)


@pytest.mark.parametrize(
    "span,expected",
    [((0, 5), (0, 1)), ((6, 11), (1, 3)), ((8, 9), (2, 3)), ((5, 6), (1, 2)), ((40, 45), (3, 4))],
)
def test_wordpiece_range(span, expected):
    offsets = [(0, 5), (6, 8), (8, 11), (12, 20)]  # "Hello Mer##cer wanderer"
    assert wordpiece_range(offsets, *span) == expected
    assert wordpiece_range([], *span) == (0, 0)


def test_wordpiece_ranges_of_many_spans_equal_one_at_a_time():
    offsets = [(0, 5), (6, 8), (8, 11), (12, 20)]
    spans = [(0, 5), (6, 11), (8, 9), (5, 6), (40, 45), (0, 20)]
    assert wordpiece_ranges(offsets, spans) == [wordpiece_range(offsets, *span) for span in spans]
    assert wordpiece_ranges([], spans[:2]) == [(0, 0), (0, 0)]
    assert wordpiece_ranges(offsets, []) == []

"""Context windows of the dense mention encoder: the grid, the stride and the choice of window."""
import random

import pytest

from spacy_el.algorithms.mention_windows import assign_windows, grid_windows


def most_central_by_scan(grid, start, end):
    """The definition, by a scan of every window (what the bisected search must agree with)."""
    best, best_margin = None, -1
    for w_start, w_end in grid:
        if w_start <= start and end <= w_end and min(start - w_start, w_end - end) > best_margin:
            best, best_margin = (w_start, w_end), min(start - w_start, w_end - end)
    return best


def test_default_grid_overlaps_by_half_and_ends_at_the_last_token():
    assert grid_windows(10, 4) == [(0, 4), (2, 6), (4, 8), (6, 10)]
    assert grid_windows(3, 4) == [(0, 3)]


def test_a_stride_of_one_window_reads_each_token_once():
    assert grid_windows(12, 4, stride=4) == [(0, 4), (4, 8), (8, 12)]
    # The last window ends at the document's end, so it may overlap the one before.
    assert grid_windows(10, 4, stride=4) == [(0, 4), (4, 8), (6, 10)]


def test_a_mention_across_a_boundary_gets_a_window_centred_on_it():
    windows, assignment = assign_windows(12, [(3, 5)], 4, stride=4)
    assert windows == [(2, 6)] and assignment == [0]


@pytest.mark.parametrize("stride", [None, 1, 3, 8])
def test_the_chosen_window_is_the_most_central_one(stride):
    rng = random.Random(stride or 0)
    for _ in range(200):
        n_tokens = rng.randint(1, 60)
        start = rng.randrange(n_tokens)
        end = rng.randint(start + 1, min(n_tokens, start + 6))
        grid = grid_windows(n_tokens, 8, stride)
        windows, assignment = assign_windows(n_tokens, [(start, end)], 8, stride)
        expected = most_central_by_scan(grid, start, end)
        chosen = windows[assignment[0]]
        assert chosen[0] <= start and end <= chosen[1]
        if expected is not None:
            assert chosen == expected


@pytest.mark.parametrize("window, stride, message", [(1, None, "E006"), (4, 0, "E007"), (4, 5, "E007")])
def test_bad_windows_are_refused(window, stride, message):
    with pytest.raises(ValueError, match=message):
        grid_windows(10, window, stride)

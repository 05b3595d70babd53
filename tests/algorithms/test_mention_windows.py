"""Context windows of the dense mention encoder: the grid, the stride and the choice of window."""
import random

import pytest

import numpy as np

from spacy_el.algorithms.mention_windows import assign_windows, grid_windows, most_central_windows


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


def central_by_scan(windows, start, end, n_total=None):
    """The definition of :func:`most_central_windows`, window by window (the edge rule with ``n_total``)."""
    best, best_margin = -1, -1.0
    for index, (w_start, w_end) in enumerate(windows):
        if w_start <= start and end <= w_end:
            left = np.inf if n_total is not None and w_start == 0 else start - w_start
            right = np.inf if n_total is not None and w_end == n_total else w_end - end
            if min(left, right) > best_margin:
                best, best_margin = index, min(left, right)
    return best


@pytest.mark.parametrize("edge_rule", [False, True])
def test_the_vectorised_choice_is_the_scan(edge_rule):
    """One function for both callers: the mention encoder's windows (no edge rule) and joint_coref_linker's
    wordpieces (document edges infinitely far), each the first of the most central windows."""
    from spacy_el.ml.joint_coref_linker.inputs import encoder_windows, most_central_window
    rng = random.Random(int(edge_rule))
    for _ in range(150):
        n = rng.randint(1, 80)
        if edge_rule:
            windows = encoder_windows(n, 12, rng.randint(1, 10))
        else:
            windows = grid_windows(n, rng.randint(2, 12), None)
        spans = [(s, rng.randint(s + 1, min(n, s + 4))) for s in (rng.randrange(n) for _ in range(20))]
        which, _ = most_central_windows(windows, np.array(spans), n if edge_rule else None)
        assert which.tolist() == [central_by_scan(windows, s, e, n if edge_rule else None) for s, e in spans]
        if edge_rule:
            chosen, offset = most_central_window(windows, n)
            expected = [central_by_scan(windows, p, p + 1, n) for p in range(n)]
            assert chosen.tolist() == expected
            assert offset.tolist() == [p - windows[w][0] for p, w in zip(range(n), expected)]

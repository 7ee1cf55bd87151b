"""Distances between float32 arrays in representable steps, for the vector-variant tests."""

import numpy as np


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element, how many float32 steps apart `got` and `want` are (inf is one step past
    the largest float); NaN against NaN is 0, NaN against a number is huge."""
    def ordered(a):
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(ordered(got) - ordered(want))
    d[np.isnan(got) & np.isnan(want)] = 0
    d[np.isnan(got) ^ np.isnan(want)] = 1 << 40
    return d


def run_with_planted_lanes(fn, x: np.ndarray, planted, first: int, step: int, last):
    """Runs `fn` on `x` and on a copy with `planted` values (cycled) at every `step`-th
    element from `first` and `last` in the final, partial vector; asserts the other
    elements' bits are the same in both runs. Returns (the copy, fn(x), fn(copy))."""
    y = x.copy()
    spots = np.arange(first, x.size, step)
    y[spots] = np.resize(planted, spots.size)
    y[-1] = last
    fx, fy = fn([x])[0], fn([y])[0]
    kept = np.ones(x.size, bool)
    kept[spots] = kept[-1] = False
    assert np.array_equal(fx[kept].view(np.int32), fy[kept].view(np.int32))
    return y, fx, fy

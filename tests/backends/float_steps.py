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

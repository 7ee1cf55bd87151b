"""Ember called with numpy arrays, the commonest input (case A only: bench/run.py): the
same programs as ember_cases.py, without converting the inputs to em.Tensor first.

Issue 10's target compares these calls with em.Tensor inputs. Two processes minutes apart
(this one and ember_cases.py's) see different machine load, so `settle` also times the
same function on both kinds of input here, in alternating blocks, and reports the median
of the pairs' ratios (bench/report.py judges the target by it)."""
import statistics

import common  # first: starts the import clock
import ember as em
import ember_cases

compile = ember_cases.compile  # noqa: A001 - the interface common.main expects
run = ember_cases.run
to_numpy = ember_cases.to_numpy

PAIRS = 9


def convert(arrays):
    return list(arrays)


def settle(call, mode, fn=None, args=None):
    """ember_cases.settle (the tiers), then, in steady mode, the paired figures: median
    per-call times with numpy and with em.Tensor inputs, and the median ratio of pairs of
    blocks timed one right after the other."""
    out = ember_cases.settle(call, mode, fn, args)
    if mode != "steady" or fn is None:
        return out
    tensors = ember_cases.convert(args)
    ember_cases.settle(lambda: fn(*tensors), mode)  # (its first call counts as one)
    pairs = []
    for _ in range(PAIRS):
        with_numpy = common.measure(call, min_repeats=3, max_repeats=3)["median"]
        with_tensors = common.measure(lambda: fn(*tensors), min_repeats=3,
                                      max_repeats=3)["median"]
        pairs.append((with_numpy, with_tensors))
    out["paired_numpy"] = statistics.median(n for n, _ in pairs)
    out["paired_tensor"] = statistics.median(t for _, t in pairs)
    out["paired_ratio"] = statistics.median(n / t for n, t in pairs)
    out["pairs"] = len(pairs)
    return out


if __name__ == "__main__":
    common.main(__import__(__name__), "ember_numpy", em.__version__)

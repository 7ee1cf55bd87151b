"""numpy eager: the anchor every figure is divided by (run with OPENBLAS_CORETYPE unset)."""
import common  # first: starts the import clock
import numpy as np

PROGRAMS = common.NUMPY_PROGRAMS


def convert(arrays):
    return arrays


def compile(case):
    return PROGRAMS[case]


def run(fn, args):
    return fn(*args)


def train_step(arrays):
    x, labels, *params = [a.copy() for a in arrays]
    return (lambda: common.numpy_train_step(x, labels, *params)), (lambda: params)


def to_numpy(out):
    return out


if __name__ == "__main__":
    common.main(__import__(__name__), "numpy", np.__version__)

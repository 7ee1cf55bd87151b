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


def to_numpy(out):
    return out


if __name__ == "__main__":
    common.main(__import__(__name__), "numpy", np.__version__)

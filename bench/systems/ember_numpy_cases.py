"""Ember called with numpy arrays, the commonest input (case A only: bench/run.py): the
same programs as ember_cases.py, without converting the inputs to em.Tensor first."""
import common  # first: starts the import clock
import ember as em
import ember_cases

compile = ember_cases.compile  # noqa: A001 - the interface common.main expects
run = ember_cases.run
to_numpy = ember_cases.to_numpy


def convert(arrays):
    return list(arrays)


if __name__ == "__main__":
    common.main(__import__(__name__), "ember_numpy", em.__version__)

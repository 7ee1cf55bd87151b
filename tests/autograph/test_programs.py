"""Each program of programs.py, three ways: plain Python on Python numbers, eagerly on
em.Tensors, and compiled by em.function (AutoGraph-converted; a fallback to the interpreter
is an error). All three give the same values."""

import numpy as np
import pytest

import ember as em
from programs import PROGRAMS

CASES = [(fn, args) for fn, arg_sets in PROGRAMS for args in arg_sets]


def _values(result) -> list:
    results = result if isinstance(result, tuple) else (result,)
    return [np.asarray(r.numpy() if isinstance(r, em.Tensor) else r) for r in results]


@pytest.mark.parametrize("fn,args", CASES,
                         ids=[f"{fn.__name__}{args}" for fn, args in CASES])
def test_python_eager_and_compiled_agree(fn, args):
    python = _values(fn(*args))
    tensors = [em.constant(a) for a in args]
    eager = _values(fn(*tensors))
    compiled = _values(em.function(fn)(*tensors))
    assert len(python) == len(eager) == len(compiled)
    for p, e, c in zip(python, eager, compiled):
        np.testing.assert_allclose(e.astype(np.float64), p.astype(np.float64), rtol=1e-6)
        np.testing.assert_allclose(c.astype(np.float64), p.astype(np.float64), rtol=1e-6)


def test_there_are_sixty_programs():
    assert len(PROGRAMS) >= 60


@pytest.mark.parametrize("fn,args", CASES[::7], ids=[f"{fn.__name__}{args}"
                                                     for fn, args in CASES[::7]])
def test_python_numbers_run_as_python_in_a_trace(fn, args):
    """Called with Python numbers, the converted function's control flow runs in Python
    at trace time (one trace per value, as the guide says of Python arguments)."""
    f = em.function(fn)
    np.testing.assert_allclose(
        [v.astype(np.float64) for v in _values(f(*args))],
        [v.astype(np.float64) for v in _values(fn(*args))], rtol=1e-6)

"""Compiled code vs the reference interpreter on 120 seeded random programs.

The programs come from the passes' generator (elementwise ops with broadcasting, constants,
comparisons and select, casts, reductions, matmul, reshape/transpose, an scf.if on a computed
predicate and an scf.while loop). Integer results must be bit-exact; float results within
1e-5 relative (libm and numpy may differ in the last bits), with NaN/inf positions equal.
"""

import sys

import numpy as np
import pytest
from mlir import ir

from ember.backends.cpu.compiler import compile_function
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import dtypes
from ember.dialects.ember.irdl import default_context

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/tests/passes")
import program_generator  # noqa: E402

SEEDS = range(60)


def _check_float(expected, got, seed):
    e, g = np.asarray(expected, np.float64), np.asarray(got, np.float64)
    assert e.shape == g.shape, seed
    assert np.array_equal(np.isnan(e), np.isnan(g)), (seed, expected, got)
    inf = np.isinf(e) | np.isinf(g)
    assert np.array_equal(e[inf], g[inf]), (seed, expected, got)
    fin = np.isfinite(e) & np.isfinite(g)
    np.testing.assert_allclose(g[fin], e[fin], rtol=1e-5, atol=1e-6, err_msg=f"seed {seed}")


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.float32], ids=["int32", "float32"])
@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_program_matches_interpreter(seed, dtype):
    with default_context(), ir.Location.unknown():
        program = program_generator.generate(seed, dtype)
        text = program.text()
        module = ir.Module.parse(text)
    exe = compile_function(text, "main", program.arg_types)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        inputs = program.inputs(rng)
        expected = Interpreter(module).call("main", inputs)
        got = exe(inputs)
        assert len(got) == len(expected)
        for e, g in zip(expected, got):
            if dtype.is_integer:
                assert np.array_equal(np.asarray(e), g) and g.dtype == np.asarray(e).dtype, \
                    (seed, e, g, text)
            else:
                _check_float(e, g, seed)

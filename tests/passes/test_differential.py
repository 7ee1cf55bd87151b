"""Differential tests of `ember-optimize`: random programs give the same results before and after.

Each program comes from `program_generator.generate(seed, dtype)` and runs in the reference
interpreter on random inputs, once as generated and once after the pipeline. Integer programs
must agree bit for bit; float programs to a relative error of 1e-6, with NaNs and infinities
in the same places. A failure prints the seed and both modules.
"""

import numpy as np
import pytest
from mlir import ir

import ember as em
import program_generator
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import dtypes
from ember.dialects.ember.irdl import make_context
from ember.passes import registry
from ember.passes.ir_utils import count_ops
from ember.passes.pipeline import run_pipeline

PROGRAMS_PER_DTYPE = 40
INPUT_SETS = 3
PIPELINE = "ember-optimize"
# What em.function is expected to run: inline nested Functions, optimise (folding makes
# shape operands constant), refine shapes, optimise again with the static types.
FULL_PIPELINE = "builtin.module(ember-inline,ember-optimize,ember-shape-refine,ember-optimize)"


@pytest.fixture(scope="module")
def mlir_context():
    context = make_context()
    with context, ir.Location.unknown():
        yield context


def _run_all(module: ir.Module, inputs: list, name: str = "main") -> list:
    interpreter = Interpreter(module)
    return [interpreter.call(name, args) for args in inputs]


def _optimised(seed: int, dtype: dtypes.DType):
    """(program, the IR before, results before, results after) for program `seed`."""
    program = program_generator.generate(seed, dtype)
    rng = np.random.default_rng(seed)
    inputs = [program.inputs(rng) for _ in range(INPUT_SETS)]
    before_text = program.text()
    before = _run_all(program.module, inputs)
    run_pipeline(program.module, PIPELINE)
    return program, before_text, before, _run_all(program.module, inputs)


def _explain(seed, before_text, program, detail) -> str:
    return (f"program {seed} ({program.dtype.name}) differs after {PIPELINE}: {detail}\n"
            f"--- before:\n{before_text}\n--- after:\n{program.text()}")


def _float_mismatch(expected: np.ndarray, got: np.ndarray) -> str | None:
    if expected.shape != got.shape or expected.dtype != got.dtype:
        return f"{got.dtype}{got.shape} instead of {expected.dtype}{expected.shape}"
    e, g = expected.astype(np.float64), got.astype(np.float64)
    if not np.array_equal(np.isnan(e), np.isnan(g)):
        return f"NaN positions differ: {expected} vs {got}"
    infinite = np.isinf(e) | np.isinf(g)
    if not np.array_equal(e[infinite], g[infinite]):
        return f"infinities differ: {expected} vs {got}"
    finite = np.isfinite(e) & np.isfinite(g)
    scale = np.maximum(np.abs(e[finite]), np.abs(g[finite]))
    error = np.abs(e[finite] - g[finite])
    if np.any(error > 1e-6 * scale):
        return f"relative error {np.max(error / np.where(scale == 0, 1, scale)):.3g}: " \
               f"{expected} vs {got}"
    return None


@pytest.mark.parametrize("seed", range(PROGRAMS_PER_DTYPE))
def test_optimize_keeps_int32_programs_bit_exact(mlir_context, seed):
    program, before_text, before, after = _optimised(seed, dtypes.int32)
    for expected_results, got_results in zip(before, after):
        assert len(expected_results) == len(got_results)
        for expected, got in zip(expected_results, got_results):
            same = expected.dtype == got.dtype and np.array_equal(expected, got)
            assert same, _explain(seed, before_text, program, f"{expected!r} vs {got!r}")


@pytest.mark.parametrize("seed", range(PROGRAMS_PER_DTYPE))
def test_optimize_keeps_float32_programs_within_1e6(mlir_context, seed):
    program, before_text, before, after = _optimised(seed, dtypes.float32)
    for expected_results, got_results in zip(before, after):
        assert len(expected_results) == len(got_results)
        for expected, got in zip(expected_results, got_results):
            problem = _float_mismatch(np.asarray(expected), np.asarray(got))
            assert problem is None, _explain(seed, before_text, program, problem)


def test_optimize_shrinks_generated_programs(mlir_context):
    """The differential tests are not vacuous: the pipeline rewrites these programs."""
    before = after = 0
    for seed in range(8):
        for dtype in (dtypes.int32, dtypes.float32):
            program = program_generator.generate(seed, dtype)
            before += count_ops(program.module)
            run_pipeline(program.module, PIPELINE)
            after += count_ops(program.module)
    assert after < 0.8 * before, f"{PIPELINE} took {before} ops only down to {after}"


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.float32], ids=lambda d: d.name)
def test_generator_is_deterministic_and_covers_control_flow(mlir_context, dtype):
    texts = [program_generator.generate(3, dtype).text() for _ in range(2)]
    assert texts[0] == texts[1]
    assert "scf.if" in texts[0] and "scf.while" in texts[0]


@em.function
def _scale(x, k):
    return x * k + em.reduce_sum(x)


@em.function
def _traced(x):
    ones = em.fill(em.constant([1, 2]) + 1, 0.5)  # a shape known only after folding
    y = _scale(x, 2.0) + _scale(x, 3.0)
    r = em.cast(em.range(0, em.constant(6) // 2, 1), em.float32)
    z = em.cond(em.reduce_sum(y) > 0.0, lambda: y * ones, lambda: y - ones)
    _, acc = em.while_loop(lambda i, a: i < 3,
                           lambda i, a: (i + 1, a * 0.5 + em.reduce_sum(ones)),
                           (em.constant(0), z))
    return acc, r


@pytest.mark.parametrize("pipeline", [FULL_PIPELINE, *sorted(registry.PIPELINES)])
def test_pipelines_keep_traced_nested_functions(mlir_context, pipeline):
    text = _traced.get_concrete_function(em.TensorSpec([2, 3], em.float32)).mlir()
    module = ir.Module.parse(text)
    rng = np.random.default_rng(0)
    inputs = [[rng.uniform(-2, 2, (2, 3)).astype(np.float32)] for _ in range(INPUT_SETS)]
    before = _run_all(module, inputs, "_traced")
    run_pipeline(module, pipeline)
    after = _run_all(module, inputs, "_traced")
    optimised = str(module)
    if pipeline == FULL_PIPELINE:
        body = optimised.split("func.func @_traced(", 1)[1].split("func.func", 1)[0]
        assert "call @" not in body, optimised
        assert "ember.fill" not in body and "tensor<?x?xf32>" not in body, optimised
    for expected_results, got_results in zip(before, after):
        for expected, got in zip(expected_results, got_results):
            assert _float_mismatch(np.asarray(expected), np.asarray(got)) is None, optimised

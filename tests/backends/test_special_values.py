"""Special values agree bit for bit between the three implementations of every op: (a) the
reference kernel (eager dispatch), (b) the constant folder (`ember-constant-fold` on a module
whose operands are constants) and (c) compiled code (arguments, so nothing folds).

Inputs are built from each dtype's special values: +-0, +-inf, NaN, the smallest denormal,
the largest finite values, +-1 and a few ordinary numbers for floats; 0, +-1, INT_MIN and
INT_MAX for integers. Binary ops take all ordered pairs, reductions all ordered triples (one
row each; numpy sums rows that short in order, as the compiled loop does), casts every
source and destination dtype. One compiled function per op and dtype.

Comparison: bit patterns, except that NaNs only need to be NaN. The transcendentals are
approximations (fastmath.py, within a few ulp of numpy; erf/erfc are libm's erff/erfcf
against the float64 function rounded once; tan, the inverse and hyperbolic functions and
atan2 are libm's, against numpy's, which on AVX-512 machines are its own SIMD kernels and
differ from libm's in the last bit): they must agree exactly where either side is NaN, an
infinity or a zero, and within 4 ulp elsewhere (sin/cos of the largest floats included).
lgamma is libm's lgamma/lgammaf on both sides; digamma's compiled code takes fastmath's log.
"""

import sys
import warnings

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember import REGISTRY, creation, dtypes
from ember.dialects.ember.base import Trait
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.convert import known_value
from ember.dialects.ember.irdl import default_context
from ember.passes.pipeline import run_pipeline

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from test_compiled_ops import _module, _reference, _type  # noqa: E402

DTYPES = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int8,
          dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.bool_]
APPROXIMATE = {"ember.exp", "ember.expm1", "ember.log", "ember.log1p", "ember.tanh",
               "ember.sigmoid", "ember.sin", "ember.cos", "ember.pow", "ember.erf",
               "ember.erfc", "ember.lgamma", "ember.digamma", "ember.tan", "ember.asin",
               "ember.acos", "ember.atan", "ember.sinh", "ember.cosh", "ember.asinh",
               "ember.acosh", "ember.atanh", "ember.atan2"}
ULPS = 4


def specials(dtype) -> np.ndarray:
    np_dtype = dtype.np_dtype
    if dtype.is_floating:
        info = ml_dtypes.finfo(np_dtype) if dtype is dtypes.bfloat16 else np.finfo(np_dtype)
        tiny, big = float(info.smallest_subnormal), float(info.max)
        values = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, big, -big, 1.0, -1.0,
                  0.5, -2.5, 3.0]
    elif dtype.is_bool:
        values = [False, True]
    else:
        info = np.iinfo(np_dtype)
        values = [0, 1, 2, 7, info.max] if info.min == 0 else \
            [0, 1, -1, 2, -7, info.min, info.max]
    return np.array(values, dtype=np_dtype)


def _pairs(values: np.ndarray) -> list:
    a, b = np.meshgrid(values, values, indexing="ij")
    return [a.ravel(), b.ravel()]


def _triples(values: np.ndarray) -> np.ndarray:
    grids = np.meshgrid(values, values, values, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


def _supports(name: str, arrays: list, attrs: dict) -> bool:
    try:
        REGISTRY[name].infer(*[_type(a, False) for a in arrays], **attrs)
    except Exception:  # the op's type rules reject this dtype
        return False
    return True


def _keep_defined(name: str, arrays: list) -> list:
    """Drops the integer input pairs on which eager raises: division by zero and negative
    exponents (compiled code raises there too: tests/backends/test_native_errors.py)."""
    x, y = arrays
    if x.dtype.kind not in "iu":
        return arrays
    keep = np.ones(x.shape, bool)
    if name in ("ember.floordiv", "ember.mod"):
        keep = y != 0
    elif name == "ember.pow":
        keep = y >= 0
    return [x[keep], y[keep]]


def _elementwise_cases():
    for name in sorted(REGISTRY):
        spec = REGISTRY[name]
        if not spec.has(Trait.ELEMENTWISE) or spec.family not in ("unary", "binary",
                                                                  "compare", "select"):
            continue
        for dtype in DTYPES:
            values = specials(dtype)
            if spec.family == "unary":
                arrays = [values]
            elif spec.family == "select":
                x, y = _pairs(values)
                arrays = [np.arange(x.size) % 3 == 0, x, y]
            else:
                arrays = _keep_defined(name, _pairs(values))
            if _supports(name, arrays, {}):
                yield pytest.param(name, arrays, {}, id=f"{name[6:]}-{dtype.name}")


def _reduction_cases():
    for name in sorted(n for n in REGISTRY if REGISTRY[n].family == "reduction"):
        attrs = {"axis": 1, "dtype": dtypes.int64} if "arg" in name else \
            {"axes": (1,), "keepdims": False}
        for dtype in DTYPES:
            arrays = [_triples(specials(dtype))]
            if _supports(name, arrays, attrs):
                yield pytest.param(name, arrays, attrs, id=f"{name[6:]}-{dtype.name}")


def _cast_cases():
    for src in DTYPES:
        for dst in DTYPES:
            yield pytest.param("ember.cast", [specials(src)], {"dtype": dst},
                               id=f"{src.name}-to-{dst.name}")


def _folded(name: str, arrays: list, attrs: dict) -> np.ndarray:
    """The op run by ember-constant-fold on constant operands."""
    with default_context(), ir.Location.unknown():
        module = ir.Module.create()

        def body():
            operands = [emit(creation.ConstantOp, (), {"value": a}) for a in arrays]
            return emit(REGISTRY[name], operands, attrs)
        build_function(module, "f", [], body)
        run_pipeline(module, "builtin.module(ember-constant-fold)")
        fn = module.body.operations[0]
        ret = list(fn.regions[0].blocks[0].operations)[-1]
        value = known_value(ret.operands[0])
    assert value is not None, f"{name} did not fold:\n{module}"
    return value


def _compiled(name: str, arrays: list, attrs: dict) -> np.ndarray:
    text, args = _module(name, arrays, attrs, dynamic=False)
    exe = compile_function(text, "f", [_type(a, False) for a in args])
    return exe([np.ascontiguousarray(a) for a in args])[0]


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns as unsigned integers in the order of the values (adjacent floats
    differ by 1; -0.0 and +0.0 are the same)."""
    size = a.dtype.itemsize
    signed = a.view(f"i{size}").astype(np.int64)
    magnitude = signed & np.int64((1 << (8 * size - 1)) - 1)
    key = np.where(signed < 0, -magnitude, magnitude)
    return key.astype(np.uint64) ^ np.uint64(1 << 63)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ka, kb = _ordered(a), _ordered(b)
    return np.where(ka > kb, ka - kb, kb - ka)


def _mismatches(name: str, arrays: list, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """A mask of the elements where `got` does not agree with `want` (see module doc)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind not in "fV":
        return got != want
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(g) | np.isnan(w)
    bits_differ = got.view(f"u{got.dtype.itemsize}") != want.view(f"u{want.dtype.itemsize}")
    bad = np.where(nan, ~(np.isnan(g) & np.isnan(w)), bits_differ)
    if name not in APPROXIMATE:
        return bad
    special = nan | np.isinf(g) | np.isinf(w) | (g == 0) | (w == 0)
    far = _ulps(got, want) > ULPS
    bad = np.where(special, bad, far)
    return bad


def _assert_agree(name: str, arrays: list, attrs: dict, got: np.ndarray, want: np.ndarray,
                  what: str) -> None:
    bad = _mismatches(name, arrays, got, want).reshape(-1)
    if bad.any():
        rows = [a.reshape(bad.size, -1) for a in arrays]
        shown = [(tuple(r[i].tolist() for r in rows), want.reshape(-1)[i],
                  got.reshape(-1)[i]) for i in np.flatnonzero(bad)[:6]]
        pytest.fail(f"{what} {name} {attrs} disagrees with the reference on {bad.sum()} "
                    f"of {bad.size} inputs; (inputs, reference, {what}): {shown}")


def _check(name: str, arrays: list, attrs: dict) -> None:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = _reference(name, arrays, attrs)[0]
        folded = _folded(name, arrays, attrs)
    _assert_agree(name, arrays, attrs, folded, want, "constant folder")
    _assert_agree(name, arrays, attrs, _compiled(name, arrays, attrs), want, "compiled")


@pytest.mark.parametrize("name, arrays, attrs", list(_elementwise_cases()))
def test_elementwise_special_values_agree(name, arrays, attrs):
    _check(name, arrays, attrs)


@pytest.mark.parametrize("name, arrays, attrs", list(_reduction_cases()))
def test_reduction_special_values_agree(name, arrays, attrs):
    _check(name, arrays, attrs)


@pytest.mark.parametrize("name, arrays, attrs", list(_cast_cases()))
def test_cast_special_values_agree(name, arrays, attrs):
    _check(name, arrays, attrs)


def test_sweep_covers_every_elementwise_op_and_reduction():
    swept = {p.values[0] for p in _elementwise_cases()} | \
        {p.values[0] for p in _reduction_cases()} | {"ember.cast"}
    wanted = {n for n, s in REGISTRY.items() if s.family in ("unary", "binary", "compare",
                                                             "select", "reduction")}
    assert wanted <= swept and "ember.cast" in REGISTRY


def test_unsigned_pow_with_exponents_past_the_signed_range():
    """uint8 (Ember's one unsigned type) exponents of 128 and more are not negative."""
    arrays = [np.array([0, 7, 2, 3, 1], np.uint8), np.array([255, 255, 128, 5, 255], np.uint8)]
    _check("ember.pow", arrays, {})


# -- the issue's examples, through em.function: eager, folded (constants), compiled --------

def _three_ways(fn, *arrays):
    """fn eagerly, as a Function of constants (folded) and of tensor arguments (compiled)."""
    import ember as em
    eager = fn(*[em.constant(a) for a in arrays]).numpy()
    folded = em.function(lambda: fn(*[em.constant(a) for a in arrays]))().numpy()
    compiled = em.function(fn)(*[em.constant(a) for a in arrays]).numpy()
    return eager, folded, compiled


def _same_bits(*values):
    """Equal values with equal signs (of zeros and infinities); NaN matches any NaN."""
    first = values[0]
    for v in values[1:]:
        assert v.dtype == first.dtype and not _mismatches("", [], v, first).any(), values


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_floordiv_is_numpys_divmod(dtype):
    import ember as em
    x = np.array([np.inf, 0.5, -np.inf, 7.0, -7.0, 1.0], dtype)
    y = np.array([3.0, 1e-8 if dtype != np.float16 else 1e-4, 3.0, np.inf, np.inf, 0.1],
                 dtype)
    results = _three_ways(em.floordiv, x, y)
    _same_bits(*results)
    with np.errstate(all="ignore"):
        assert np.array_equal(results[0], np.floor_divide(x, y), equal_nan=True)
    assert np.isnan(results[2][0]) and results[2][1] == np.floor_divide(x[1], y[1])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_floordiv_and_mod_agree_on_random_quotients(dtype):
    """Quotients within rounding of an integer are where floor(a / b) and numpy's snapped
    (a - fmod(a, b)) / b part."""
    import ember as em
    rng = np.random.default_rng(7)
    scale = 2 if dtype == np.float16 else 6
    y = rng.standard_normal(2000) * 10.0 ** rng.integers(-scale, scale, 2000)
    x = y * rng.integers(-50, 50, 2000) + y * rng.choice([0, 1e-7, -1e-7, 0.5], 2000)
    x, y = x.astype(dtype), y.astype(dtype)
    for op in (em.floordiv, em.mod):
        eager, _, compiled = _three_ways(op, x[:8], y[:8])
        _same_bits(eager, compiled)
        _same_bits(op(em.constant(x), em.constant(y)).numpy(),
                   em.function(op)(em.constant(x), em.constant(y)).numpy())


def test_signed_zeros_of_the_issue():
    import ember as em
    four, minus_two = np.array([4.0]), np.array([-2.0])
    for result in _three_ways(lambda a, b: 1 / em.mod(a, b), four, minus_two):
        assert result[0] == -np.inf
    for result in _three_ways(lambda a: 1 / em.sign(a), np.array([-0.0])):
        assert result[0] == np.inf
    for result in _three_ways(em.relu, np.array([-0.0], np.float16)):
        assert result[0] == 0 and not np.signbit(result[0])
    for zeros in ([-0.0, 0.0], [0.0, -0.0]):
        for dtype in (np.float16, np.float32):
            for result in _three_ways(em.reduce_max, np.array(zeros, dtype)):
                assert result == 0 and not np.signbit(result)
            for result in _three_ways(em.reduce_min, np.array(zeros, dtype)):
                assert result == 0 and np.signbit(result)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op, constant, folds", [
    ("add", 0.0, False), ("add", -0.0, True), ("sub", 0.0, True), ("sub", -0.0, False),
    ("mul", 1.0, True), ("mul", -1.0, False), ("div", 1.0, True)])
def test_canonicalize_identities_keep_special_values(dtype, op, constant, folds):
    """x + -0.0, x - 0.0, x * 1 and x / 1 are rewritten to x; x + 0.0 and x - -0.0 are not
    (they turn -0.0 into +0.0). Compiled with the constant in the function, as traced."""
    import ember as em
    x = specials(dtypes.as_dtype(np.dtype(dtype)))
    c = np.array(constant, dtype)
    fn = {"add": em.add, "sub": em.subtract, "mul": em.multiply, "div": em.divide}[op]
    for order in ((lambda t: fn(t, em.constant(c))), (lambda t: fn(em.constant(c), t))):
        compiled = em.function(order)
        got = compiled(em.constant(x)).numpy()
        _same_bits(order(em.constant(x)).numpy(), got)
    concrete = em.function(lambda t: fn(t, em.constant(c))).get_concrete_function(
        em.constant(x))
    assert (f"ember.{op}" not in concrete.mlir("optimized")) == folds


def test_compiled_code_has_no_fast_math_or_denormal_flushing():
    """Every float op rounds as IEEE says: no fast-math flags and no denormal-fp-math
    function attributes (flush-to-zero) in the LLVM IR, for every float dtype."""
    import ember as em
    from ember.backends.cpu.backend import CpuBackend
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64):
        x = em.constant(np.ones(64, dtype))
        fn = em.function(lambda a: em.reduce_sum(em.tanh(a) * a + a / a, axis=0))
        text = fn.get_concrete_function(x).mlir("optimized")
        with default_context():
            llvm_ir = CpuBackend().lower(ir.Module.parse(text), "llvmir")
        assert "fadd" in llvm_ir or "fmul" in llvm_ir
        for flag in (" fast ", " nnan ", " ninf ", " nsz ", " arcp ", " contract ", " afn ",
                     " reassoc ", "denormal-fp-math", "unsafe-fp-math"):
            assert flag not in llvm_ir, (dtype, flag)

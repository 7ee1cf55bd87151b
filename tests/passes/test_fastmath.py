"""Accuracy of the vectorisable elementary functions (passes/conversions/ember_to_linalg/
fastmath.py) through the real compiled path: small ember modules compiled by the CPU
backend's `compile_function`, run on dense sweeps and compared with numpy.

Float32 error is the distance in ulps (adjacent floats, counted on the ordered bit
patterns) to the float64 numpy result rounded to float32; the bounds asserted are the
brief's (2 ulp, 3 for sin/cos); fastmath's docstrings give the measured maxima, which
were also checked exhaustively over all 2**32 inputs (sin and cos: |x| < 2**28; beyond,
every 50th float).
Special values (NaN, +-inf, +-0, denormals, overflow and underflow) must match numpy
bit for bit, sign of zero included. The float64 kernels (all but sin and cos, which keep
libm) are compared with numpy's extended-precision long double.
"""

import functools

import numpy as np
import pytest

from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember import dtypes
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import parse_type
from ember.passes.conversions.ember_to_linalg import fastmath
from lowering_harness import lower

N = 1 << 20
F32 = np.float32


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


REFERENCE = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
             "tanh": np.tanh, "sigmoid": _sigmoid, "sin": np.sin, "cos": np.cos}
BOUND = {"exp": 2, "expm1": 2, "log": 2, "log1p": 2, "tanh": 2, "sigmoid": 2, "sin": 3,
         "cos": 3}


def _text(name: str, t: str) -> str:
    return (f'func.func @main(%x: {t}) -> {t} {{\n'
            f'  %0 = "ember.{name}"(%x) : ({t}) -> {t}\n'
            f'  return %0 : {t}\n}}\n')


@functools.lru_cache(maxsize=None)
def _compiled(name: str, n: int, element: str):
    t = f"tensor<{n}x{element}>"
    with default_context():
        arg = parse_type(t)
    return compile_function(_text(name, t), "main", [arg])


def run(name: str, x: np.ndarray, element: str = "f32") -> np.ndarray:
    """The compiled `ember.<name>` of the 1-D array x (padded to a fixed size, so each
    function compiles once)."""
    size = N if x.size <= N else x.size
    padded = np.zeros(size, x.dtype)
    padded[:x.size] = x
    return _compiled(name, size, element)([padded])[0][:x.size]


def reference(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return REFERENCE[name](x.astype(np.float64)).astype(F32)


def _ordered(a: np.ndarray) -> np.ndarray:
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (inf is one step past the largest float); NaN against
    NaN is 0, NaN against a number is huge."""
    d = np.abs(_ordered(got) - _ordered(want))
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    d[nan_got & nan_want] = 0
    d[nan_got ^ nan_want] = 1 << 40
    return d


def assert_within(name: str, x: np.ndarray, bound: int | None = None):
    x = np.asarray(x, F32)
    got, want = run(name, x), reference(name, x)
    d = ulps(got, want)
    i = int(np.argmax(d))
    bound = BOUND[name] if bound is None else bound
    assert d[i] <= bound, (f"{name}({x[i]!r}) = {got[i]!r}, numpy {want[i]!r}: "
                           f"{d[i]} ulp > {bound}")
    return int(d.max())


def linear(lo: float, hi: float, n: int = N) -> np.ndarray:
    return np.linspace(lo, hi, n, dtype=np.float64).astype(F32)


def magnitudes(lo: float, hi: float, n: int = N // 2) -> np.ndarray:
    """Log-spaced magnitudes from lo to hi, both signs."""
    m = np.exp(np.linspace(np.log(lo), np.log(hi), n)).astype(F32)
    return np.concatenate([m, -m])


def every_float(lo: float, hi: float, limit: int = 1 << 22) -> np.ndarray:
    """Every float32 in [lo, hi] (both > 0), evenly thinned to at most `limit`."""
    a, b = np.array([lo, hi], F32).view(np.int32)
    bits = np.arange(a, b + 1, max(1, (b - a + 1) // limit), dtype=np.int64)
    return bits.astype(np.int32).view(F32)


def random_bits(n: int = N, seed: int = 0) -> np.ndarray:
    """Uniformly random float32 bit patterns: every exponent, NaNs and infs included."""
    return np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64) \
        .astype(np.uint32).view(F32)


SWEEPS = {
    "exp": [linear(-100, 100), linear(-104, 89), linear(-1, 1), linear(-88, -87),
            magnitudes(1e-45, 1e3), random_bits()],
    "expm1": [linear(-100, 100), linear(-1, 1), linear(-1e-3, 1e-3), linear(0.3, 1.1),
              linear(-1.1, -0.3), magnitudes(1e-45, 1e3), random_bits()],
    "log": [linear(0, 1e30), linear(0.5, 2), linear(0.9, 1.1), every_float(1e-45, 1e-37),
            every_float(1e-30, 1e30), magnitudes(1e-45, 3.4e38), random_bits()],
    "log1p": [linear(-1, 1e30), linear(-1, 1), linear(-1e-3, 1e-3),
              every_float(1e-45, 1e30), -every_float(1e-45, 1.0), random_bits()],
    "tanh": [linear(-100, 100), linear(-10, 10), linear(-1, 1), linear(0.6, 0.65),
             magnitudes(1e-45, 1e3), random_bits()],
    "sigmoid": [linear(-110, 110), linear(-20, 20), linear(-1, 1),
                magnitudes(1e-45, 1e3), random_bits()],
    "sin": [linear(-1e4, 1e4), linear(-10, 10), linear(-1e5, 1e5), magnitudes(1e-45, 1e4)],
    "cos": [linear(-1e4, 1e4), linear(-10, 10), linear(-1e5, 1e5), magnitudes(1e-45, 1e4)],
}


@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_float32_error_within_bound_on_dense_sweeps(name):
    for x in SWEEPS[name]:
        assert_within(name, x)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_accurate_over_the_whole_float32_range(name):
    # Cody-Waite below 2**28, Payne-Hanek above (fastmath.py, sincos_reduction.py): numpy
    # reduces every float exactly, and compiled code must agree with it.
    assert_within(name, linear(-8.4e8, 8.4e8), bound=2)
    assert_within(name, every_float(1e4, 2.0 ** 30), bound=2)
    assert_within(name, magnitudes(2.0 ** 27, 3.4028235e38, 1 << 18), bound=2)
    assert_within(name, random_bits(), bound=2)


def _inputs_near_multiples_of_pi_over_2(count: int = 200_000) -> np.ndarray:
    """Floats nearest to k*pi/2, where sin or cos is close to 0 (relative error is
    hardest there)."""
    k = np.arange(1, count, dtype=np.float64)
    base = (k * (np.pi / 2)).astype(F32)
    return np.concatenate([base, np.nextafter(base, F32(np.inf)),
                           np.nextafter(base, F32(0))])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_near_their_zeros(name):
    x = _inputs_near_multiples_of_pi_over_2()
    assert_within(name, np.concatenate([x, -x]), bound=2)


NAN, INF = np.float32(np.nan), np.float32(np.inf)
DENORMALS = [1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, -1.1754942e-38]
EXACT = {  # inputs whose results numpy gives exactly (specials, saturation)
    "exp": [NAN, INF, -INF, 0.0, -0.0, 89.0, 100.0, 1e30, -104.0, -200.0, -1e30,
            *DENORMALS],
    "expm1": [NAN, INF, -INF, 0.0, -0.0, 89.0, 1e30, -18.0, -100.0, -1e30, *DENORMALS],
    "log": [NAN, INF, -INF, 0.0, -0.0, -1e-45, -1.0, -1e30, 1.0],
    "log1p": [NAN, INF, -INF, 0.0, -0.0, -1.0, -1.5, -1e30, *DENORMALS],
    "tanh": [NAN, INF, -INF, 0.0, -0.0, 10.0, -10.0, 20.0, -20.0, 1e30, -1e30,
             *DENORMALS],
    "sigmoid": [NAN, INF, -INF, 0.0, -0.0, 20.0, 100.0, 1e30, -200.0, -1e30,
                *DENORMALS],
    "sin": [NAN, INF, -INF, 0.0, -0.0, *DENORMALS],
    "cos": [NAN, INF, -INF, 0.0, -0.0, *DENORMALS],
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_special_values_match_numpy_exactly(name):
    x = np.array(EXACT[name], F32)
    got, want = run(name, x), reference(name, x)
    for xi, g, w in zip(x, got, want):
        assert (np.isnan(g) and np.isnan(w)) or \
            (g == w and np.signbit(g) == np.signbit(w)), f"{name}({xi!r}) = {g!r}, numpy {w!r}"


BOUNDARIES = {  # overflow / underflow / domain edges: within the bound, inf placed right
    "exp": [88.72283, 88.722839, 88.72284, -87.33654, -87.33655, -103.27893, -103.97207,
            -103.972084, 3.4028235e38, -3.4028235e38],
    "expm1": [88.72283, 88.722839, 88.72284, -17.3, -17.4, 3.4028235e38, -3.4028235e38],
    "log": [1.1754944e-38, 1.1754942e-38, 3.4028235e38, 0.99999994, 1.0000001],
    "log1p": [-0.99999994, -0.5, 1.1754944e-38, 3.4028235e38, 2.0**-29, -2.0**-29,
              2.0**-30, 1.0, -1e-7, 1e-7],
    "tanh": [0.625, 0.62499994, 9.0, 9.01, 9.5, 3.4028235e38],
    "sigmoid": [-87.33655, -88.72284, -103.27893, -103.97208, -104.0, 3.4028235e38,
                -3.4028235e38],
    "sin": [np.pi / 4, 3.1415927, 1e4, -1e4, 3.4028235e38],
    "cos": [np.pi / 4, 1.5707964, 1e4, -1e4, 3.4028235e38],
}


@pytest.mark.parametrize("name", sorted(BOUNDARIES))
def test_boundaries(name):
    x = np.array(BOUNDARIES[name], F32)
    with np.errstate(over="ignore"):
        x = np.concatenate([x, np.nextafter(x, INF), np.nextafter(x, -INF)])
    assert_within(name, x)
    got, want = run(name, x), reference(name, x)
    # Overflow to inf where numpy overflows, unless the true value is within an ulp of it.
    finite_ulp = ulps(got, want) == 0
    assert np.array_equal(np.isinf(got)[finite_ulp], np.isinf(want)[finite_ulp])


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("element,np_dtype", [("f16", np.float16),
                                              ("bf16", dtypes.bfloat16.np_dtype)],
                         ids=["f16", "bf16"])
def test_half_floats_compute_through_float32(name, element, np_dtype):
    x32 = np.concatenate([linear(-12, 12, 4096), magnitudes(1e-7, 6e4, 1024),
                          np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], F32)])
    if name in ("log", "log1p"):
        x32 = np.abs(x32)
    x = x32.astype(np_dtype)
    got = _compiled(name, x.size, element)([x])[0]
    with np.errstate(over="ignore"):
        want = reference(name, x.astype(F32)).astype(np_dtype)
    g, w = got.view(np.int16).astype(np.int32), want.view(np.int16).astype(np.int32)
    g, w = np.where(g < 0, -(g & 0x7FFF), g), np.where(w < 0, -(w & 0x7FFF), w)
    nan_g, nan_w = np.isnan(got.astype(F32)), np.isnan(want.astype(F32))
    assert np.array_equal(nan_g, nan_w)
    checked = ~nan_g
    if element == "bf16":  # the backend's f32 -> bf16 conversion flushes denormals to 0
        checked &= ~(np.abs(want.astype(F32)) < np.finfo(F32).tiny)
    assert np.max(np.abs(g - w)[checked]) <= 1  # one rounding step of the half type


# ---- float64 --------------------------------------------------------------------------

LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63
# In ulps against long double (fdlibm's bounds; tanh 2 ulp as glibc's, sigmoid about 2.2).
F64_BOUND = {"exp": 1.0, "expm1": 1.0, "log": 1.0, "log1p": 1.0, "tanh": 2.5, "sigmoid": 2.5}


def _f64_error(name: str, x: np.ndarray) -> np.ndarray:
    got = run(name, x, "f64")
    with np.errstate(all="ignore"):
        exact = REFERENCE[name](x.astype(np.longdouble))
        want = exact.astype(np.float64)
        step = np.spacing(np.abs(want))
        step = np.where(step == 0, np.float64(5e-324), step).astype(np.longdouble)
        err = (np.abs(got.astype(np.longdouble) - exact) / step).astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err[same] = 0
    err[np.isnan(got) ^ np.isnan(want)] = np.inf
    return err


@pytest.mark.skipif(not LONG_DOUBLE, reason="needs an extended-precision long double")
@pytest.mark.parametrize("name", sorted(F64_BOUND))
def test_float64_error_within_bound(name):
    rng = np.random.default_rng(3)
    sweeps = {"exp": [np.linspace(-746, 710, N), np.linspace(-1, 1, N)],
              "expm1": [np.linspace(-50, 720, N), np.linspace(-3, 3, N),
                        np.linspace(-1e-3, 1e-3, N)],
              "log": [np.linspace(0, 1e300, N), np.linspace(0.5, 2, N),
                      np.linspace(0, 1e-300, N)],
              "log1p": [np.linspace(-1, 1e300, N), np.linspace(-1, 1, N),
                        np.linspace(-1e-6, 1e-6, N)],
              "tanh": [np.linspace(-30, 30, N), np.linspace(-1.5, 1.5, N),
                       np.linspace(-1e-5, 1e-5, N)],
              "sigmoid": [np.linspace(-800, 800, N), np.linspace(-40, 40, N)]}[name]
    m = np.exp(np.linspace(np.log(5e-324), np.log(1.7e308), N // 2))
    sweeps += [np.concatenate([m, -m]),
               rng.integers(0, 2**64, N, dtype=np.uint64).view(np.float64)]
    for x in sweeps:
        err = _f64_error(name, x)
        i = int(np.argmax(err))
        assert err[i] <= F64_BOUND[name], f"{name}({x[i]!r}): {err[i]:.2f} ulp"


@pytest.mark.parametrize("name", sorted(F64_BOUND))
def test_float64_special_values(name):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308,
                  709.79, 710.0, -745.2, -746.0, 2.2250738585072014e-308], np.float64)
    got = run(name, x, "f64")
    with np.errstate(all="ignore"):
        want = REFERENCE[name](x)
    for xi, g, w in zip(x, got, want):
        if np.isnan(w) or np.isinf(w) or w in (0.0, 1.0, -1.0):
            assert (np.isnan(g) and np.isnan(w)) or \
                (g == w and np.signbit(g) == np.signbit(w)), f"{name}({xi!r}) = {g!r}"
        else:
            assert abs(g - w) <= 2 * np.spacing(abs(w)), f"{name}({xi!r}) = {g!r}, {w!r}"


# ---- what the lowering emits ----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_float32_lowering_has_no_math_calls(name):
    # math.fma (sin and cos's f32 reduction) is an LLVM intrinsic, not a libm function
    text = str(lower(_text(name, "tensor<8xf32>")))
    assert "math." not in text.replace("math.fma", ""), text
    assert ("math.fma" in text) == (name in ("sin", "cos")), text
    assert "arith.bitcast" in text


def test_float64_keeps_libm_where_fastmath_has_no_kernel():
    assert {n for n in REFERENCE if not fastmath.supports(n, "f64")} == {"sin", "cos"}
    for name in REFERENCE:
        text = str(lower(_text(name, "tensor<8xf64>")))
        assert ("math." in text) != fastmath.supports(name, "f64"), (name, text)

"""Every registered op, run eagerly through `dispatch.execute` on its spec, against an
independent numpy/Python oracle — one table row per op, so a new op without a row fails.

The rows use small random inputs with edge values mixed in; the oracles are written without
calling the op's reference kernel (float64 numpy, Python ints, explicit loops). State ops,
whose first operand is a resource, compare their reference state transition instead.
"""

import cmath
import math

import ml_dtypes
import numpy as np
import pytest

from ember.dialects.ember import REGISTRY, ResourceType, TensorType, dtypes
from ember.frontend.dispatch import execute
from ember.frontend.tensor import Tensor

RNG = np.random.default_rng(1234)
F = RNG.standard_normal((3, 4)).astype(np.float32)
F[0, :3] = [np.nan, np.inf, -0.0]
P = np.abs(RNG.standard_normal((3, 4))).astype(np.float32) + 0.1   # positive
I = np.array([[7, -7, 0, 100], [-128, 127, 5, -1], [2, -3, 64, 9]], np.int8)
J = np.array([-2, 2, 3, -5], np.int8)                              # non-zero divisors
SHIFTS = np.array([-2, 9, 3, 7], np.int8)  # shift amounts: below, above and inside [0, 7]
B = np.array([[True, False, True, False]])
C = np.array([[True], [False], [True]])
S = np.array([[1.0, -0.0, np.nan, 0.0, 2.0, -np.inf, 1.0, np.nan, 0.0, -1.0],
              [3.0, 3.0, 3.0, -2.0, np.inf, 0.5, 0.5, -0.0, 7.0, -2.0]], np.float32)
IMG = RNG.standard_normal((1, 5, 4, 2)).astype(np.float32)
FLT = RNG.standard_normal((3, 2, 2, 3)).astype(np.float32)


def f64(fn):
    """An oracle evaluated in float64 and rounded once to the first operand's dtype."""
    def oracle(*arrays, **_):
        with np.errstate(all="ignore"):
            out = fn(*(a.astype(np.float64) for a in arrays))
        return np.asarray(out).astype(arrays[0].dtype)
    return oracle


def py_ints(fn, dtype=np.int8):
    """An oracle on Python ints (elementwise, broadcast), wrapped to `dtype`."""
    def oracle(x, y):
        info = np.iinfo(dtype)
        span = int(info.max) - int(info.min) + 1
        xb, yb = np.broadcast_arrays(x.astype(object), y.astype(object))
        out = [(fn(int(a), int(b)) - int(info.min)) % span + int(info.min)
               for a, b in zip(xb.ravel(), yb.ravel())]
        return np.array(out, dtype=np.int64).reshape(xb.shape).astype(dtype)
    return oracle


def py_cmp(fn):
    """A comparison oracle on Python numbers (IEEE for floats, no numpy scalars)."""
    def oracle(x, y):
        xb, yb = np.broadcast_arrays(x, y)
        return np.array([fn(a, b) for a, b in zip(xb.ravel().tolist(), yb.ravel().tolist())],
                        bool).reshape(xb.shape)
    return oracle


def sorted_rows(x, descending=False):
    """Stable sort of each row with Python's `sorted` (NaN above every number), returning
    (values, int32 indices)."""
    def key(v):
        nan = v != v
        if descending:
            return (0 if nan else 1, 0.0 if nan else -v)
        return (1 if nan else 0, 0.0 if nan else v)
    order = [sorted(range(len(row)), key=lambda i: key(row[i])) for row in x.tolist()]
    index = np.array(order, np.int32).reshape(x.shape)
    values = np.array([[row[i] for i in o] for row, o in zip(x.tolist(), order)], x.dtype)
    return values.reshape(x.shape), index


def unique_loop(x):
    """tf.unique with a Python dict (NaN keys never match: each NaN is its own value)."""
    seen, y, idx = {}, [], []
    for v in x.tolist():
        if v not in seen:
            seen[v] = len(y)
            y.append(v)
        idx.append(seen[v])
    return np.array(y, x.dtype), np.array(idx, np.int64)


Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4)))  # complex128


def dft(z, sign):
    """The DFT of the last axis as the textbook sum, in Python complex arithmetic."""
    n = z.shape[-1]
    rows = [[sum(v * cmath.exp(sign * 2j * math.pi * j * k / n) for j, v in enumerate(r))
             for k in range(n)] for r in z.reshape(-1, n).tolist()]
    return np.array(rows, np.complex128).reshape(z.shape).astype(z.dtype)


def irdft(z, n):
    """irfft as the DFT of the Hermitian-completed spectrum (imaginary parts of the zero
    and Nyquist frequencies dropped), real part, scaled by 1/n."""
    half = np.zeros(z.shape[:-1] + (n // 2 + 1,), np.complex128)
    half[..., :min(z.shape[-1], n // 2 + 1)] = z[..., :n // 2 + 1]
    half[..., 0] = half[..., 0].real
    if n % 2 == 0:
        half[..., -1] = half[..., -1].real
    full = np.concatenate([half, np.conj(half[..., 1:(n + 1) // 2][..., ::-1])], axis=-1)
    return (dft(full, 1).real / n).astype(z.real.dtype)


def conv_loops(x, f, *, strides, dilations, padding):
    n, h, w, _ = x.shape
    kh, kw, _, co = f.shape
    def geo(size, k, s, d):
        eff = (k - 1) * d + 1
        if padding == "VALID":
            return max(math.ceil((size - eff + 1) / s), 0), 0
        out = math.ceil(size / s)
        return out, max((out - 1) * s + eff - size, 0) // 2
    (oh, ph), (ow, pw) = geo(h, kh, strides[0], dilations[0]), geo(w, kw, strides[1], dilations[1])
    out = np.zeros((n, oh, ow, co))
    for i, j, a, b in np.ndindex(oh, ow, kh, kw):
        r, c = i * strides[0] + a * dilations[0] - ph, j * strides[1] + b * dilations[1] - pw
        if 0 <= r < h and 0 <= c < w:
            out[:, i, j] += x[:, r, c].astype(np.float64) @ f[a, b].astype(np.float64)
    return out.astype(x.dtype)


def scatter_loops(t, indices, updates, *, mode):
    """tensor_scatter on Python ints, one row after another, wrapped to t's dtype."""
    info = np.iinfo(t.dtype)
    span = int(info.max) - int(info.min) + 1
    out = t.astype(object).copy()
    combine = {"update": lambda a, b: b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
               "mul": lambda a, b: a * b, "max": max, "min": min}[mode]
    for row, update in zip(indices.reshape(-1, indices.shape[-1]).tolist(),
                           updates.reshape((-1,) + t.shape[indices.shape[-1]:])):
        out[tuple(row)] = [(combine(int(a), int(b)) - int(info.min)) % span + int(info.min)
                           for a, b in zip(np.ravel(out[tuple(row)]), np.ravel(update))]
    return out.astype(t.dtype)


def depthwise_loops(x, f, *, strides, dilations, padding):
    """Depthwise conv as per-channel conv_loops: channel c with filter [:, :, c, m] gives
    output channel c * M + m."""
    c, m = f.shape[2], f.shape[3]
    cols = [conv_loops(x[..., ch:ch + 1], f[:, :, ch:ch + 1, k:k + 1], strides=strides,
                       dilations=dilations, padding=padding)
            for ch in range(c) for k in range(m)]
    return np.concatenate(cols, axis=-1)


def pool_loops(x, reduce, *, ksize, strides, padding):
    n, h, w, ch = x.shape
    def geo(size, k, s):
        if padding == "VALID":
            return max(math.ceil((size - k + 1) / s), 0), 0
        out = math.ceil(size / s)
        return out, max((out - 1) * s + k - size, 0) // 2
    (oh, ph), (ow, pw) = geo(h, ksize[0], strides[0]), geo(w, ksize[1], strides[1])
    out = np.zeros((n, oh, ow, ch))
    for i, j in np.ndindex(oh, ow):
        r, c = i * strides[0] - ph, j * strides[1] - pw
        win = x[:, max(r, 0):r + ksize[0], max(c, 0):c + ksize[1]].astype(np.float64)
        out[:, i, j] = reduce(win.reshape(n, -1, ch), axis=1)
    return out.astype(x.dtype)


def softmax64(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def one_hot_loops(idx, on, off, *, depth, axis):
    out = np.empty(idx.shape + (depth,), on.dtype)
    for pos in np.ndindex(*out.shape):
        out[pos] = on if idx[pos[:-1]] == pos[-1] else off
    return np.moveaxis(out, -1, axis)


def sat_trunc(x, dtype):
    info = np.iinfo(dtype)
    return np.array([0 if math.isnan(v) else min(max(math.trunc(v) if math.isfinite(v) else
                     (info.max if v > 0 else info.min), info.min), info.max)
                     for v in x.astype(np.float64).ravel()]).reshape(x.shape).astype(dtype)


def static_random(name, seed, shape, attrs):
    """The attribute form's numbers (what the forms with a shape operand must give)."""
    out = execute(REGISTRY[name], [Tensor(seed)], attrs | {"shape": shape.tolist()})
    return out.numpy()


def philox_py(counter: list, key: list) -> list:
    """Philox-4x32-10 on Python ints (Random123's philox4x32_R with R = 10)."""
    mask = 0xFFFFFFFF
    c, k = list(counter), list(key)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & mask, (p0 >> 32) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + 0x9E3779B9) & mask, (k[1] + 0xBB67AE85) & mask]
    return c


def philox_state(counter: list, key: list) -> np.ndarray:
    """TensorFlow's [3] int64 Philox state for 32-bit counter and key words."""
    words = [counter[0] | counter[1] << 32, counter[2] | counter[3] << 32, key[0] | key[1] << 32]
    return np.array([w - (1 << 64) if w >> 63 else w for w in words], np.int64)


def philox_words(state: np.ndarray, blocks: int) -> list:
    """The words of blocks 0, 1, ... after the state's 128-bit counter."""
    u = [int(v) & (1 << 64) - 1 for v in state]
    out = []
    for b in range(blocks):
        c = (u[0] | u[1] << 64) + b
        out.append(philox_py([c >> s & 0xFFFFFFFF for s in (0, 32, 64, 96)],
                             [u[2] & 0xFFFFFFFF, u[2] >> 32]))
    return out


# Random123's known-answer counter and key (the digits of pi)
PI_STATE = philox_state([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
                        [0xA4093822, 0x299F31D0])


def philox_int_oracle(state, shape, low, high):
    words = philox_words(state, (int(np.prod(shape)) + 1) // 2)
    bits = [w[i] | w[i + 1] << 32 for w in words for i in (0, 2)][:int(np.prod(shape))]
    return np.array([int(low) + b % (int(high) - int(low)) for b in bits],
                    np.int64).reshape(shape)


def scan_loops(x, *, axis, exclusive, reverse, step, identity, dtype):
    """A scan by explicit loops over Python numbers: `step(acc, v)` along `axis` of a 2-D x,
    each partial result converted to `dtype` (integers wrap, floats round each step)."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty(x.shape, dtype)
    for i in range(x.shape[0]):
        order = range(x.shape[1])[::-1] if reverse else range(x.shape[1])
        acc = dtype(identity)
        for j in order:
            nxt = dtype(step(acc, x[i, j]))
            out[i, j] = acc if exclusive else nxt
            acc = nxt
    return np.moveaxis(out, -1, axis)


def wrap8(v: int) -> int:
    return (int(v) + 128) % 256 - 128


def lgamma_py(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # the poles
        return math.inf


# Bernoulli numbers B2, B4, ..., B16 for the asymptotic series of digamma
BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def digamma_py(v: float) -> float:
    """psi(v): NaN at the poles (TensorFlow's choice); reflection below 1/2; shift to >= 20
    (math.fsum); 8 terms of the asymptotic series."""
    if math.isnan(v) or (v <= 0 and v == math.floor(v)):
        return math.nan
    if v == math.inf:
        return math.inf
    if v < 0.5:
        r = v - round(v)
        return digamma_py(1 - v) - math.pi / math.tan(math.pi * r)
    terms = []
    while v < 20:
        terms.append(-1 / v)
        v += 1
    terms += [math.log(v), -0.5 / v]
    terms += [-b / (2 * k) / v ** (2 * k) for k, b in enumerate(BERNOULLI, 1)]
    return math.fsum(terms)


def search_py(seq, values, *, side, out_type):
    import bisect
    find = bisect.bisect_left if side == "left" else bisect.bisect_right
    return np.array([[find(list(s), v) for v in row] for s, row in zip(seq.tolist(),
                                                                        values.tolist())],
                    out_type.np_dtype)


# op -> (operands, attrs, oracle(*operands, **attrs))
ROWS = {
    # unary
    "ember.neg": ([I], {}, lambda x: py_ints(lambda a, _: -a)(x, x)),
    "ember.abs": ([I], {}, lambda x: py_ints(lambda a, _: abs(a))(x, x)),
    "ember.sign": ([F], {}, f64(np.sign)),
    "ember.square": ([I], {}, lambda x: py_ints(lambda a, _: a * a)(x, x)),
    "ember.relu": ([F], {}, f64(lambda x: np.where(x > 0, x, np.where(np.isnan(x), x, 0.0)))),
    "ember.exp": ([F], {}, f64(np.exp)),
    "ember.expm1": ([F], {}, f64(np.expm1)),
    "ember.log": ([F], {}, f64(np.log)),
    "ember.log1p": ([F], {}, f64(np.log1p)),
    "ember.sqrt": ([F], {}, f64(np.sqrt)),
    "ember.rsqrt": ([P], {}, f64(lambda x: 1 / np.sqrt(x))),
    "ember.tanh": ([F], {}, f64(np.tanh)),
    "ember.erf": ([F], {}, f64(np.vectorize(math.erf, otypes=[np.float64]))),
    "ember.erfc": ([F], {}, f64(np.vectorize(math.erfc, otypes=[np.float64]))),
    "ember.sigmoid": ([F], {}, f64(lambda x: 1 / (1 + np.exp(-x)))),
    "ember.sin": ([F], {}, f64(np.sin)),
    "ember.cos": ([F], {}, f64(np.cos)),
    "ember.tan": ([F], {}, f64(np.tan)),
    "ember.asin": ([np.clip(F, -1.5, 1.5)], {}, f64(np.arcsin)),  # NaN outside [-1, 1]
    "ember.acos": ([np.clip(F, -1.5, 1.5)], {}, f64(np.arccos)),
    "ember.atan": ([F], {}, f64(np.arctan)),
    "ember.sinh": ([F], {}, f64(np.sinh)),
    "ember.cosh": ([F], {}, f64(np.cosh)),
    "ember.asinh": ([F], {}, f64(np.arcsinh)),
    "ember.acosh": ([F + 1.5], {}, f64(np.arccosh)),
    "ember.atanh": ([np.clip(F, -1.5, 1.5)], {}, f64(np.arctanh)),
    "ember.atan2": ([F, F[::-1, ::-1].copy()], {}, f64(np.arctan2)),
    "ember.floor": ([F * 3], {}, f64(np.floor)),
    "ember.ceil": ([F * 3], {}, f64(np.ceil)),
    "ember.round": ([np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32)], {},
                    lambda x: np.array([0.0, 2.0, 2.0, -0.0, -2.0], np.float32)),
    "ember.logical_not": ([B], {}, lambda x: np.array([[not v for v in x[0]]])),
    "ember.is_nan": ([F], {}, lambda x: np.array([list(map(math.isnan, r)) for r in x.tolist()])),
    "ember.is_finite": ([F], {}, lambda x: np.array([list(map(math.isfinite, r))
                                                     for r in x.tolist()])),
    # binary (int8 inputs wrap; floordiv/mod floor toward -inf like Python)
    "ember.add": ([I, J], {}, py_ints(lambda a, b: a + b)),
    "ember.sub": ([I, J], {}, py_ints(lambda a, b: a - b)),
    "ember.mul": ([I, J], {}, py_ints(lambda a, b: a * b)),
    "ember.div": ([I, J], {}, lambda x, y: (x.astype(np.float64) / y).astype(np.float32)),
    "ember.floordiv": ([I, J], {}, py_ints(lambda a, b: a // b)),
    "ember.mod": ([I, J], {}, py_ints(lambda a, b: a % b)),
    "ember.pow": ([I, np.abs(J)], {}, py_ints(lambda a, b: a ** b)),
    "ember.maximum": ([F, P[0]], {}, f64(np.maximum)),
    "ember.minimum": ([F, P[0]], {}, f64(np.minimum)),
    "ember.equal": ([I, J], {}, py_cmp(lambda a, b: a == b)),
    "ember.not_equal": ([F, F[::-1]], {}, py_cmp(lambda a, b: a != b)),
    "ember.less": ([F, P[0]], {}, py_cmp(lambda a, b: a < b)),
    "ember.less_equal": ([I, J], {}, py_cmp(lambda a, b: a <= b)),
    "ember.greater": ([F, P[0]], {}, py_cmp(lambda a, b: a > b)),
    "ember.greater_equal": ([I, J], {}, py_cmp(lambda a, b: a >= b)),
    # bits (Python's ints: two's complement; shift amounts clamped to [0, 7], as TensorFlow)
    "ember.bitwise_and": ([I, J], {}, py_ints(lambda a, b: a & b)),
    "ember.bitwise_or": ([I, J], {}, py_ints(lambda a, b: a | b)),
    "ember.bitwise_xor": ([I, J], {}, py_ints(lambda a, b: a ^ b)),
    "ember.left_shift": ([I, SHIFTS], {}, py_ints(lambda a, b: a << min(max(b, 0), 7))),
    "ember.right_shift": ([I, SHIFTS], {}, py_ints(lambda a, b: a >> min(max(b, 0), 7))),
    "ember.invert": ([I], {}, lambda x: np.array([[~v for v in r] for r in x.tolist()], np.int8)),
    "ember.logical_and": ([C, B], {}, py_cmp(lambda a, b: a and b)),
    "ember.logical_or": ([C, B], {}, py_cmp(lambda a, b: a or b)),
    "ember.select": ([C, F, np.float32(-1)], {},
                     lambda c, x, y: np.array([[x[i, j] if c[i, 0] else y for j in range(4)]
                                               for i in range(3)], np.float32)),
    # creation
    "ember.constant": ([], {"value": I}, lambda **kw: I),
    "ember.fill": ([np.array([2, 0, 3]), np.float32(1.5)], {},
                   lambda d, v: np.full((2, 0, 3), 1.5, np.float32)),
    "ember.range": ([np.int32(10), np.int32(-3), np.int32(-4)], {},
                    lambda *_: np.array(list(range(10, -3, -4)), np.int32)),
    "ember.shape": ([np.zeros((2, 0, 5))], {"dtype": "int64"},
                    lambda x, **_: np.array([2, 0, 5], np.int64)),
    "ember.cast": ([np.array([1.9, -1.9, np.nan, 1e10, -1e10], ml_dtypes.bfloat16)],
                   {"dtype": "int32"}, lambda x, **_: sat_trunc(x, np.int32)),
    "ember.random_uniform": ([np.array([1, 2])], {"shape": [2000], "minval": -1.0, "maxval": 3.0},
                             None),
    "ember.random_normal": ([np.array([3, 4])], {"shape": [4000], "mean": 2.0, "stddev": 0.5},
                            None),
    # the shape as an operand: the same numbers as the attribute form
    "ember.dynamic_random_uniform": (
        [np.array([1, 2]), np.array([20, 3], np.int32)], {"minval": -1.0, "maxval": 3.0},
        lambda seed, shape, **a: static_random("ember.random_uniform", seed, shape, a)),
    "ember.dynamic_random_normal": (
        [np.array([3, 4]), np.array([7], np.int64)], {"mean": 2.0, "stddev": 0.5},
        lambda seed, shape, **a: static_random("ember.random_normal", seed, shape, a)),
    # Philox: raw words of consecutive counters; integers by unsigned remainder
    "ember.philox_random": (
        [PI_STATE, np.array([3, 4], np.int64)], {"distribution": "bits", "dtype": "int32"},
        lambda state, shape, **_: np.array(philox_words(state, 3), np.uint32).view(np.int32)),
    "ember.philox_uniform_int": (
        [PI_STATE, np.array([9], np.int32), np.int64(-5), np.int64(1 << 40)], {},
        lambda state, shape, low, high: philox_int_oracle(state, (9,), low, high)),
    # reductions
    "ember.reduce_sum": ([I], {"axes": [1]}, lambda x, **_: py_ints(lambda a, _: a)(
        np.array([sum(int(v) for v in r) for r in x]), np.zeros(3))),
    "ember.reduce_prod": ([F], {"axes": [0], "keepdims": True},
                          f64(lambda x: np.prod(x, axis=0, keepdims=True))),
    "ember.reduce_mean": ([I], {"axes": [0, 1]}, lambda x, **_: np.array(
        int(sum(int(v) for v in x.ravel()) / x.size), np.int8)),   # truncates toward zero
    "ember.reduce_max": ([np.zeros((2, 0), np.float32)], {"axes": [1]},
                         lambda x, **_: np.full(2, -np.inf, np.float32)),
    "ember.reduce_min": ([F], {"axes": [0, 1]}, lambda x, **_: np.array(np.nan, np.float32)),
    "ember.reduce_any": ([B], {"axes": [1]}, lambda x, **_: np.array([any(x[0])])),
    "ember.reduce_all": ([np.zeros((0, 2), bool)], {"axes": [0]},
                         lambda x, **_: np.array([True, True])),
    "ember.argmax": ([np.array([[1, 3, 3], [2, 2, 0]], np.int32)], {"axis": 1},
                     lambda x, **_: np.array([1, 0], np.int64)),
    "ember.argmin": ([np.array([[1, 3, 3], [0, 2, 0]], np.int32)], {"axis": 0, "dtype": "int32"},
                     lambda x, **_: np.array([1, 1, 1], np.int32)),
    # structure
    "ember.matmul": ([F[1:], P], {"transpose_b": True},
                     f64(lambda a, b: a @ b.T)),
    "ember.transpose": ([I], {"perm": [1, 0]},
                        lambda x, **_: np.array([[x[i, j] for i in range(3)] for j in range(4)],
                                                np.int8)),
    "ember.reshape": ([I], {"shape": [2, -1]}, lambda x, **_: np.array(x.ravel().tolist(),
                                                                       np.int8).reshape(2, 6)),
    "ember.broadcast_to": ([J], {"shape": [2, 4]}, lambda x, **_: np.array([J.tolist()] * 2,
                                                                           np.int8)),
    "ember.dynamic_reshape": ([I, np.array([2, -1], np.int32)], {},
                              lambda x, s: np.array(x.ravel().tolist(), np.int8).reshape(2, 6)),
    "ember.dynamic_broadcast_to": ([J, np.array([3, 1, 4], np.int64)], {},
                                   lambda x, s: np.array([[J.tolist()]] * 3, np.int8)),
    "ember.expand_dims": ([J], {"axis": -1}, lambda x, **_: np.array([[v] for v in J], np.int8)),
    "ember.squeeze": ([C.reshape(1, 3, 1)], {}, lambda x, **_: np.array([True, False, True])),
    "tensor.concat": ([I, J.reshape(1, 4), np.zeros((0, 4), np.int8)], {"dim": 0},
                      lambda *xs, **_: np.array(I.tolist() + [J.tolist()], np.int8)),
    # indexing
    "ember.strided_slice": ([I], {"begin": [-1, 0], "end": [0, 0], "strides": [-2, 3],
                                  "end_mask": 3},
                            lambda x, **_: np.array([[x[i, j] for j in (0, 3)] for i in (2, 0)],
                                                    np.int8)),
    # x[1, -3:10:2] with bounds as operands: -3 wraps, 10 clamps to the size 4
    "ember.dynamic_strided_slice": (
        [I, np.array([1, -3], np.int32), np.array([0, 10], np.int32),
         np.array([1, 2], np.int32)], {"shrink_axis_mask": 1},
        lambda x, *_, **__: np.array([I[1, j] for j in (1, 3)], np.int8)),
    # tf.slice: rows 1.. (size -1), columns 1:3
    "ember.slice": ([I, np.array([1, 1], np.int64), np.array([-1, 2], np.int64)], {},
                    lambda *_, **__: np.array([[I[i, j] for j in (1, 2)] for i in (1, 2)],
                                              np.int8)),
    "ember.gather": ([I, np.array([[2], [0]], np.int32)], {"axis": 0},
                     lambda p, i, **_: np.array([[I[2].tolist()], [I[0].tolist()]], np.int8)),
    "ember.one_hot": ([np.array([[0, 3], [-1, 2]], np.int64), np.float32(5), np.float32(-1)],
                      {"depth": 3, "axis": 1}, one_hot_loops),
    "ember.pad": ([np.array([[1, 2, 3]], np.int8), np.int8(0)],
                  {"paddings": [0, 0, 2, 1], "mode": "REFLECT"},
                  lambda *_, **__: np.array([[3, 2, 1, 2, 3, 2]], np.int8)),
    # rows 2 and 0 of I: duplicates of row 2 accumulate (wrapping int8: 2 + 100 + 64)
    "ember.tensor_scatter": ([I, np.array([[2], [0], [2]], np.int64),
                              np.array([[1, 1, 1, 1], [0, 0, 0, 0], [100, -3, 64, 9]], np.int8)],
                             {"mode": "add"}, scatter_loops),
    "ember.where_indices": ([F], {}, lambda x: np.array(
        [[i, j] for i in range(3) for j in range(4) if x[i, j] != 0 or x[i, j] != x[i, j]],
        np.int64)),
    # nn
    "ember.conv2d": ([IMG, FLT[:, :, :, :2].transpose(0, 1, 3, 2).copy()],
                     {"strides": [2, 1], "dilations": [1, 2], "padding": "SAME"}, conv_loops),
    "ember.depthwise_conv2d": ([IMG, FLT[:, :, :, :2].copy()],
                               {"strides": [1, 2], "dilations": [2, 1], "padding": "SAME"},
                               depthwise_loops),
    "ember.max_pool2d": ([IMG], {"ksize": [3, 2], "strides": [2, 2], "padding": "SAME"},
                         lambda x, **kw: pool_loops(x, np.max, **kw)),
    "ember.avg_pool2d": ([IMG], {"ksize": [3, 3], "strides": [1, 2], "padding": "SAME"},
                         lambda x, **kw: pool_loops(x, np.mean, **kw)),
    "ember.softmax": ([P], {"axis": 0}, lambda x, axis: softmax64(x.astype(np.float64),
                                                                  axis).astype(np.float32)),
    "ember.log_softmax": ([P], {}, lambda x, axis: np.log(softmax64(x.astype(np.float64),
                                                                    axis)).astype(np.float32)),
    # scans, sorted search and special functions
    "ember.cumsum": ([I], {"axis": 1, "exclusive": True, "reverse": True},
                     lambda x, **kw: scan_loops(x, **kw, step=lambda a, v: wrap8(int(a) + int(v)),
                                                identity=0, dtype=np.int8)),
    "ember.cumprod": ([F], {"axis": -2},
                      lambda x, **kw: scan_loops(x, **kw, step=lambda a, v: float(a) * float(v),
                                                 identity=1, dtype=np.float32)),
    "ember.searchsorted": ([np.array([[1, 3, 3, 7], [-2, 0, 0, 0]], np.int8),
                            np.array([[3, 0, 8], [0, -5, 1]], np.int8)],
                           {"side": "right", "out_type": "int64"}, search_py),
    "ember.lgamma": ([np.array([[0.5, 1.0, 2.0, 3.5], [-0.5, -2.5, 1e-3, 30.0],
                                [0.0, -3.0, np.inf, np.nan]], np.float32)], {},
                     f64(np.vectorize(lgamma_py, otypes=[np.float64]))),
    "ember.digamma": ([np.array([[0.5, 1.0, 2.0, 3.5], [-0.5, -2.5, 1e-3, 30.0],
                                 [0.0, -3.0, np.inf, np.nan]], np.float32)], {},
                      f64(np.vectorize(digamma_py, otypes=[np.float64]))),
    # sorting: ties, -0.0 == 0.0 (a tie) and NaNs (first, descending) in one row
    "ember.sort": ([S], {"descending": True}, lambda x, **_: sorted_rows(x, descending=True)),
    # tf.unique: first-occurrence order, -0.0 joins 0.0, each NaN its own value
    "ember.unique": ([S[0]], {"out_idx": "int64"}, lambda x, **_: unique_loop(x)),
    # complex (issue 13): oracles on Python complex numbers and an explicit O(n^2) DFT
    "ember.complex": ([F, P[0]], {}, lambda re, im: np.array(
        [[complex(a, b) for a, b in zip(r, im.tolist())] for r in re.tolist()], np.complex64)),
    "ember.real": ([Z], {}, lambda z: np.array([[v.real for v in r] for r in z.tolist()])),
    "ember.imag": ([Z], {}, lambda z: np.array([[v.imag for v in r] for r in z.tolist()])),
    "ember.angle": ([Z], {}, lambda z: np.array([[cmath.phase(v) for v in r] for r in z.tolist()])),
    "ember.conj": ([Z], {}, lambda z: np.array([[v.conjugate() for v in r] for r in z.tolist()])),
    "ember.fft": ([Z], {}, lambda z: dft(z, -1)),
    "ember.ifft": ([Z], {}, lambda z: dft(z, 1) / z.shape[-1]),
    "ember.rfft": ([F[1:]], {"fft_length": 6},
                   lambda x, **_: dft(np.pad(x.astype(np.complex128), [(0, 0), (0, 2)]),
                                      -1)[:, :4].astype(np.complex64)),
    "ember.irfft": ([Z], {}, lambda z, **_: irdft(z, 6)),
    # print (no results): its kernel renders the text
    "ember.print": ([np.array([1, 2], np.int32)], {"format": "x={}"}, None),
    # assert (no results): its kernel says whether the condition holds
    "ember.assert": ([np.array([True, True])], {"message": "fine"}, None),
}

# ops whose first result dim depends on operand values
DATA_DEPENDENT_FIRST_DIM = {"ember.where_indices", "ember.unique"}

# state ops: operands after the resource, (old value, *operands) -> new state
STATE_ROWS = {
    "ember.read_variable": ([], lambda old: old),
    "ember.assign_variable": ([np.array([5.0, 6.0], np.float32)], lambda old, new: new),
    "ember.assign_add_variable": ([np.array([5.0, -6.0], np.float32)],
                                  lambda old, d: (old.astype(np.float64) + d).astype(np.float32)),
    "ember.assign_sub_variable": ([np.array([5.0, -6.0], np.float32)],
                                  lambda old, d: (old.astype(np.float64) - d).astype(np.float32)),
}


def test_every_registered_op_has_a_row():
    assert sorted(set(REGISTRY) - set(ROWS) - set(STATE_ROWS)) == []
    assert sorted((set(ROWS) | set(STATE_ROWS)) - set(REGISTRY)) == []


def run(name):
    operands, attrs, _ = ROWS[name]
    tensors = [Tensor(np.asarray(a)) for a in operands]
    return execute(REGISTRY[name], tensors, attrs), [np.asarray(a) for a in operands], attrs


@pytest.mark.parametrize("name", sorted(n for n, row in ROWS.items() if row[2] is not None))
def test_eager_op_matches_numpy_oracle(name):
    out, arrays, attrs = run(name)
    spec = REGISTRY[name]
    wants = ROWS[name][2](*arrays, **spec.normalize_attrs(attrs))
    wants = wants if isinstance(wants, tuple) else (wants,)  # ops with several results
    outs = out if isinstance(out, tuple) else (out,)
    # the results also have the types the spec infers for these operands
    types = tuple(TensorType(t.dtype, a.shape) for t, a in
                  zip([Tensor(a) for a in arrays], arrays))
    inferred = spec.infer_types(types, spec.normalize_attrs(attrs),
                                arrays if spec.uses_values else None)
    assert len(outs) == len(wants) == len(inferred)
    for out, want, inferred_type in zip(outs, map(np.asarray, wants), inferred):
        assert isinstance(out, Tensor)
        assert out.numpy().dtype == want.dtype, (out.dtype, want.dtype)
        assert out.numpy().shape == want.shape
        shape = out.numpy().shape
        if name in DATA_DEPENDENT_FIRST_DIM:  # a size no type can know: `?`
            shape = tuple(None if d is None else n for d, n in zip(inferred_type.shape, shape))
        assert inferred_type == TensorType(out.dtype, shape)
        got = out.numpy()
        if got.dtype.kind == "c":
            tol = 1e-12 if got.dtype == np.complex128 else 2e-6
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        elif got.dtype.kind in "fV":
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=2e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,low,high,mean,std", [
    ("ember.random_uniform", -1.0, 3.0, 1.0, 4 / math.sqrt(12)),
    ("ember.random_normal", -np.inf, np.inf, 2.0, 0.5),
])
def test_eager_random_op_matches_distribution(name, low, high, mean, std):
    out, _, attrs = run(name)
    x = out.numpy().astype(np.float64)
    assert out.numpy().dtype == np.float32 and x.shape == tuple(attrs["shape"])
    assert low <= x.min() and x.max() < high
    assert abs(x.mean() - mean) < 4 * std / math.sqrt(len(x))  # four standard errors
    assert abs(x.std() - std) < 0.05 * std
    again, _, _ = run(name)
    np.testing.assert_array_equal(again.numpy(), out.numpy())


def test_eager_print_renders_its_format():
    out, arrays, attrs = run("ember.print")
    assert out is None
    spec = REGISTRY["ember.print"]
    assert spec.reference(*arrays, **spec.normalize_attrs(attrs)) == "x=[1 2]\n"


def test_assert_kernel_says_whether_every_element_holds():
    spec = REGISTRY["ember.assert"]
    assert spec.reference(np.array([True, True]), message="m") is True
    assert spec.reference(np.array([True, False]), message="m") is False
    assert spec.reference(np.zeros((0,), bool), message="m") is True  # nothing to fail


@pytest.mark.parametrize("name", sorted(STATE_ROWS))
def test_state_op_transition_matches_numpy(name):
    spec = REGISTRY[name]
    old = np.array([1.5, 2.5], np.float32)
    operands, oracle = STATE_ROWS[name]
    held = TensorType(dtypes.float32, (2,))
    types = (ResourceType(held),) + tuple(TensorType(held.dtype, a.shape) for a in operands)
    results = spec.infer_types(types, spec.normalize_attrs({}))
    assert results == ((held,) if name == "ember.read_variable" else ())
    new = np.asarray(spec.reference(old, *operands))
    want = oracle(old, *operands)
    assert new.dtype == want.dtype
    np.testing.assert_array_equal(new, want)

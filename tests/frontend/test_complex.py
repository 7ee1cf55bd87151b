"""complex64/complex128 end to end: eager against numpy, compiled (no interpreter fallback)
against eager on static, dynamic and empty shapes, TensorFlow's rules for real inputs and
casts, the ops that refuse complex (ordering, floor, relu, ...) with a clear error at trace
time, and the Fourier transforms against numpy.fft."""

import warnings

import numpy as np
import pytest

import ember as em

RNG = np.random.default_rng(7)
DTYPES = [em.complex64, em.complex128]


def rand(shape, dtype):
    re, im = RNG.standard_normal(shape), RNG.standard_normal(shape)
    return (re + 1j * im).astype(dtype.np_dtype)


def close(got, want, dtype):
    """Complex64 within a few float32 ulps of the magnitude, complex128 of float64 ones."""
    tol = 2e-5 if dtype in (em.complex64, em.float32) else 1e-10
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield


# name -> (ember function, numpy oracle, number of complex operands)
UNARY = {
    "negative": (em.negative, np.negative), "abs": (em.abs, np.abs),
    "sign": (em.sign, lambda z: z / np.abs(z)), "square": (em.square, np.square),
    "exp": (em.exp, np.exp), "expm1": (em.expm1, np.expm1), "log": (em.log, np.log),
    "log1p": (em.math.log1p, np.log1p), "sqrt": (em.sqrt, np.sqrt),
    "rsqrt": (em.rsqrt, lambda z: 1 / np.sqrt(z)), "tanh": (em.tanh, np.tanh),
    "sin": (em.sin, np.sin), "cos": (em.cos, np.cos),
    "real": (em.math.real, np.real), "imag": (em.math.imag, np.imag),
    "conj": (em.math.conj, np.conj), "angle": (em.math.angle, np.angle),
    "reduce_sum": (lambda z: em.reduce_sum(z, axis=-1), lambda z: np.sum(z, axis=-1)),
    "reduce_mean": (lambda z: em.reduce_mean(z, axis=0), lambda z: np.mean(z, axis=0)),
    "reduce_prod": (lambda z: em.reduce_prod(z, axis=-1), lambda z: np.prod(z, axis=-1)),
    "to_int32": (lambda z: em.cast(z, em.int32), lambda z: np.real(z).astype(np.int32)),
    "to_float64": (lambda z: em.cast(z, em.float64), lambda z: np.real(z).astype(np.float64)),
    "to_bool": (lambda z: em.cast(z, em.bool), lambda z: np.real(z) != 0),
    "to_other_complex": (lambda z: em.cast(z, em.complex128 if z.dtype == em.complex64
                                           else em.complex64),
                         lambda z: z.astype(np.complex128 if z.dtype == np.complex64
                                            else np.complex64)),
    "fft": (em.signal.fft, np.fft.fft), "ifft": (em.signal.ifft, np.fft.ifft),
    "irfft": (em.signal.irfft, lambda z: np.fft.irfft(z, n=2 * (z.shape[-1] - 1))),
}
BINARY = {
    "add": (em.add, np.add), "subtract": (em.subtract, np.subtract),
    "multiply": (em.multiply, np.multiply), "divide": (em.divide, np.divide),
    "pow": (em.pow, np.power), "equal": (em.equal, np.equal),
    "not_equal": (em.not_equal, np.not_equal),
    "matmul": (lambda a, b: em.matmul(a, b, transpose_b=True), lambda a, b: a @ b.T),
}


def _oracle(fn, *arrays, like):
    """numpy's answer, computed in complex128 and cast to the dtype ember gives."""
    wide = [a.astype(np.complex128) for a in arrays]
    with np.errstate(all="ignore"):
        return np.asarray(fn(*wide)).astype(like.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_eager_matches_numpy(name, dtype):
    fn, oracle = UNARY[name]
    z = rand((3, 5), dtype)
    got = fn(em.constant(z)).numpy()
    close(got, _oracle(oracle, z, like=got), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_eager_matches_numpy(name, dtype):
    fn, oracle = BINARY[name]
    a, b = rand((3, 5), dtype), rand((5,) if name != "matmul" else (4, 5), dtype)
    got = fn(em.constant(a), em.constant(b)).numpy()
    close(got, _oracle(oracle, a, b, like=got), dtype)


SHAPES = {"static": (3, 5), "dynamic": (3, 5), "empty": (0, 5)}


def _signature(shape, dtype, how, count):
    if how != "dynamic":
        return None
    return [em.TensorSpec([None] * len(shape), dtype)] * count


@pytest.mark.parametrize("how", sorted(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_compiled_matches_eager(name, dtype, how):
    fn, _ = UNARY[name]
    z = rand(SHAPES[how], dtype)
    want = fn(em.constant(z)).numpy()
    compiled = em.function(lambda x: fn(x), input_signature=_signature(z.shape, dtype, how, 1))
    got = compiled(em.constant(z)).numpy()
    if want.dtype.kind == "b" or want.dtype.kind == "i":
        np.testing.assert_array_equal(got, want)
    else:
        close(got, want, dtype)


@pytest.mark.parametrize("how", sorted(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_compiled_matches_eager(name, dtype, how):
    fn, _ = BINARY[name]
    a = rand(SHAPES[how], dtype)
    b = rand((4, 5) if name == "matmul" else (5,), dtype)
    want = fn(em.constant(a), em.constant(b)).numpy()
    sig = None if how != "dynamic" else [em.TensorSpec([None, None], dtype),
                                         em.TensorSpec([None] * b.ndim, dtype)]
    got = em.function(lambda x, y: fn(x, y), input_signature=sig)(em.constant(a),
                                                                   em.constant(b)).numpy()
    if want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
    else:
        close(got, want, dtype)


@pytest.mark.parametrize("dtype,part", [(em.complex64, em.float32),
                                        (em.complex128, em.float64)], ids=["c64", "c128"])
def test_complex_from_parts_compiled_and_eager(dtype, part):
    re = RNG.standard_normal((2, 3)).astype(part.np_dtype)
    im = RNG.standard_normal((3,)).astype(part.np_dtype)
    want = re + 1j * im
    eager = em.complex(em.constant(re), em.constant(im))
    sig = [em.TensorSpec([None, None], part), em.TensorSpec([None], part)]
    compiled = em.function(em.complex, input_signature=sig)(em.constant(re), em.constant(im))
    for got in (eager, compiled):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), want.astype(dtype.np_dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_abs_of_infinite_parts_is_inf_compiled_and_eager(dtype):
    parts = (0.0, -2.5, np.inf, -np.inf, np.nan)
    z = np.array([complex(a, b) for a in parts for b in parts], dtype.np_dtype)
    want = np.abs(z.astype(np.complex128)).astype(dtype.real_dtype.np_dtype)  # C99 cabs
    for fn in (em.abs, em.function(em.abs)):
        np.testing.assert_array_equal(fn(em.constant(z)).numpy(), want)


def test_mean_of_nothing_is_nan_compiled_and_eager():
    z = np.zeros((0, 2), np.complex64)
    eager = em.reduce_mean(em.constant(z), axis=0).numpy()
    compiled = em.function(lambda x: em.reduce_mean(x, axis=0))(em.constant(z)).numpy()
    for got in (eager, compiled):
        assert got.dtype == np.complex64
        assert np.isnan(got.real).all() and np.isnan(got.imag).all()


def test_python_complex_scalars_take_the_tensor_dtype():
    z = em.constant(np.array([1 + 1j, 2], np.complex64))
    out = em.function(lambda x: x * 2j + 1)(z)
    assert out.dtype is em.complex64
    np.testing.assert_array_equal(out.numpy(), np.array([-1 + 2j, 1 + 4j], np.complex64))
    assert em.constant(1j).dtype is em.complex128  # as tf.constant(1j)


def test_real_inputs_follow_tensorflow():
    x = em.constant([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(em.math.real(x).numpy(), [-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(em.math.imag(x).numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(em.math.conj(x).numpy(), [-2.0, 0.0, 3.0])
    np.testing.assert_allclose(em.math.angle(x).numpy(), [np.pi, 0.0, 0.0])
    assert em.math.angle(x).dtype is em.float32


def test_cast_real_to_complex_has_zero_imaginary_part_compiled_and_eager():
    x = np.array([1.5, -2.0, np.inf], np.float32)
    want = np.array([1.5, -2.0, np.inf], np.complex64)
    for fn in (lambda v: em.cast(v, em.complex64),
               em.function(lambda v: em.cast(v, em.complex64))):
        got = fn(em.constant(x)).numpy()
        assert got.dtype == np.complex64
        np.testing.assert_array_equal(got, want)


REFUSED = {
    "less": lambda z: z < z, "greater_equal": lambda z: z >= z,
    "maximum": lambda z: em.maximum(z, z), "minimum": lambda z: em.minimum(z, z),
    "floordiv": lambda z: z // z, "floormod": lambda z: z % z, "floor": em.floor,
    "round": em.round, "relu": em.nn.relu, "sigmoid": em.sigmoid, "is_nan": em.math.is_nan,
    "reduce_max": em.reduce_max, "argmax": lambda z: em.argmax(z, axis=0),
    "softmax": em.nn.softmax, "erf": em.math.erf,
}


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_ops_without_complex_kernels_refuse_it_clearly(name, traced):
    fn = REFUSED[name]
    if traced:
        fn = em.function(fn)
    with pytest.raises(em.OpTypeError, match=r"of type tensor<2xcomplex<f32>> must have "
                                              r".*elements"):
        fn(em.constant(np.array([1j, 2], np.complex64)))


def test_complex_with_a_float_operand_names_the_cast():
    with pytest.raises(em.OpTypeError, match="different element types.*em.cast"):
        em.add(em.constant(np.array([1j], np.complex64)), em.constant([1.0]))
    with pytest.raises(em.OpTypeError, match="float32 or float64"):
        em.complex(em.constant([1], em.int32), em.constant([2], em.int32))


# -- Fourier transforms against numpy.fft -------------------------------------------------

@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("n", [1, 2, 7, 16, 33])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_fft_and_ifft_match_numpy(dtype, n, compiled):
    z = rand((2, 3, n), dtype)
    fft, ifft = em.signal.fft, em.signal.ifft
    if compiled:
        sig = [em.TensorSpec([None, None, None], dtype)]
        fft, ifft = (em.function(f, input_signature=sig) for f in (fft, ifft))
    wide = z.astype(np.complex128)
    close(fft(em.constant(z)).numpy(), np.fft.fft(wide).astype(dtype.np_dtype), dtype)
    close(ifft(em.constant(z)).numpy(), np.fft.ifft(wide).astype(dtype.np_dtype), dtype)
    close(ifft(fft(em.constant(z))).numpy(), z, dtype)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("fft_length", [None, 4, 5, 8, 12])
@pytest.mark.parametrize("part", [em.float32, em.float64], ids=lambda d: d.name)
def test_rfft_and_irfft_match_numpy(part, fft_length, compiled):
    x = RNG.standard_normal((3, 8)).astype(part.np_dtype)
    n = 8 if fft_length is None else fft_length
    dtype = em.complex64 if part is em.float32 else em.complex128
    rfft = lambda v: em.signal.rfft(v, fft_length)  # noqa: E731
    irfft = lambda v: em.signal.irfft(v, fft_length)  # noqa: E731
    if compiled:
        rfft = em.function(rfft, input_signature=[em.TensorSpec([None, None], part)])
        irfft = em.function(irfft, input_signature=[em.TensorSpec([None, None], dtype)])
    spectrum = rfft(em.constant(x))
    want = np.fft.rfft(x.astype(np.float64), n=n).astype(dtype.np_dtype)
    close(spectrum.numpy(), want, dtype)
    z = rand((3, 5), dtype)
    back = irfft(em.constant(z)).numpy()
    close(back, np.fft.irfft(z.astype(np.complex128), n=fft_length or 8).astype(part.np_dtype),
          part)
    if fft_length in (None, 8):  # irfft(rfft(x)) is x
        close(irfft(spectrum).numpy(), x, part)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_transforms_of_empty_signals(compiled):
    wrap = em.function if compiled else (lambda f: f)
    z = np.zeros((2, 0), np.complex64)
    assert wrap(em.signal.fft)(em.constant(z)).shape == (2, 0)
    spectrum = wrap(lambda x: em.signal.rfft(x, [4]))(em.constant(np.zeros((2, 0), np.float32)))
    np.testing.assert_array_equal(spectrum.numpy(), np.zeros((2, 3), np.complex64))
    assert wrap(em.signal.irfft)(em.constant(np.zeros((3, 1), np.complex64))).shape == (3, 0)
    # no rows: cropping 3 samples to 2 reads nothing (was an invalid slice at offset 0)
    rows = wrap(lambda x: em.signal.rfft(x, [2]))(em.constant(np.zeros((0, 3), np.float32)))
    assert rows.shape == (0, 2) and rows.dtype is em.complex64
    back = wrap(lambda x: em.signal.irfft(x, [2]))(em.constant(np.zeros((0, 3), np.complex128)))
    assert back.shape == (0, 2) and back.dtype is em.float64


def test_transform_errors_say_what_to_pass():
    with pytest.raises(em.OpTypeError, match="must have complex"):
        em.signal.fft(em.constant([1.0, 2.0]))
    with pytest.raises(em.OpTypeError, match="float32 or float64"):
        em.signal.rfft(em.constant(np.array([1j], np.complex64)))
    with pytest.raises(em.OpShapeError, match="rank >= 1"):
        em.signal.fft(em.constant(1j))
    with pytest.raises(ValueError, match="fft_length must be >= 0"):
        em.signal.rfft(em.constant([1.0]), -3)
    with pytest.raises(TypeError, match="fft_length must be an int"):
        em.signal.irfft(em.constant(np.array([1j], np.complex64)), [2, 3])


def test_adjoint_and_conjugate_transpose_conjugate_complex_eager_and_compiled():
    a = (np.arange(6).reshape(2, 3) + 1j * np.arange(6, 12).reshape(2, 3)).astype(np.complex64)
    b = (np.ones((2, 2)) - 2j).astype(np.complex64)
    cases = [(lambda x, y: em.linalg.adjoint(x), a.conj().T),
             (lambda x, y: em.transpose(x, conjugate=True), a.conj().T),
             (lambda x, y: em.linalg.matrix_transpose(x, conjugate=True), a.conj().T),
             (lambda x, y: em.matmul(x, y, adjoint_a=True), a.conj().T @ b),
             (lambda x, y: em.matmul(y, y, adjoint_b=True), b @ b.conj().T)]
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        for fn, want in cases:
            np.testing.assert_allclose(fn(a, b).numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(em.function(fn)(a, b).numpy(), want, rtol=1e-6)
    finally:
        em.config.set_fallback(previous)

"""The CUDA backend's mapped loop nests, run on the CPU (backend="cuda-emulated"), against
the reference interpreter for every op family: elementwise ops on every dtype with
broadcasting, reductions over each axis at sizes around the block sizes, softmax,
products with ragged edges, convolutions and pooling, layout ops, control flow; and
launches that need more blocks than the grid allows (grid-stride loops).

The emulation runs every tile, guard and delinearised index of the GPU's nests: a wrong
bound or index reads or writes the wrong element, and the transposed, broadcast and
ragged cases below make that visible in the results (a guard off by one writes a row's
neighbour). Interpreter fallback is an error here, so every case is compiled.
"""

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.backends.cpu.backend import CpuOptions
from ember.backends.cpu.compiler import compile_function
from ember.backends.cuda import backend as cuda_backend
from ember.backends.cuda.emulated import EmulatedBackend, EmulatedCompiler, EmulatedOptions
from ember.dialects.ember import TensorType
from ember.dialects.ember.dtypes import bfloat16
from ember.dialects.ember.irdl import default_context

RNG = np.random.default_rng(17)


@pytest.fixture(autouse=True)
def _compiled_only():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


def _agree(f, *args, rtol=2e-5, atol=1e-5):
    """Runs `f` emulated and on the interpreter; the results must agree."""
    got = em.function(f, backend="cuda-emulated")(*args)
    want = em.function(f, backend="interpreter")(*args)
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind == "f" or w.dtype == bfloat16.np_dtype:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=f"result {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {i}")


def _array(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-50, 50, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_elementwise_with_broadcasting(dtype):
    x, y, z = _array((5, 1, 33), dtype), _array((7, 1), dtype), _array((), dtype)

    def f(x, y, z):
        s = x * y + z - x
        return s, em.maximum(x, y), em.where(x > y, x, z), em.abs(-s), em.transpose(s)
    _agree(f, x, y, z)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_vectorized_elementwise(dtype):
    """Inner dims of multiples of 4 (f32, i32): 4 elements per thread, broadcast operands
    (a row, a column, a scalar) splat, a select on a vector of comparisons."""
    x, row, col = _array((6, 64), dtype), _array((64,), dtype), _array((6, 1), dtype)
    z = _array((), dtype)
    _agree(lambda x, r, c, z: (x * r + c, em.where(x > r, x - z, c), em.maximum(x, z)),
           x, row, col, z)


def test_elementwise_bool_and_bf16():
    a, b = _array((3, 31), "bool"), _array((31,), "bool")
    _agree(lambda a, b: (em.logical_and(a, b), em.logical_or(a, em.logical_not(b)),
                         em.logical_xor(a, b)), a, b)
    x = _array((4, 33), "float32").astype(bfloat16.np_dtype)
    _agree(lambda x: x * x + em.cast(1.5, em.bfloat16), x, rtol=1e-2, atol=1e-2)


def test_unary_transcendentals():
    x = _array((9, 257), "float32")
    _agree(lambda x: (em.exp(x / 4.0), em.tanh(x), em.sqrt(em.abs(x)), em.sigmoid(x),
                      em.log1p(em.abs(x))), x)


def _reductions(x, ints):
    out = [em.reduce_sum(x, axis=1, keepdims=True), em.argmax(x, axis=0),
           em.argmax(x, axis=1)]
    for axis in (0, 1, None):
        out += [em.reduce_sum(x, axis=axis), em.reduce_max(x, axis=axis),
                em.reduce_min(x, axis=axis)]
        if ints:
            out.append(em.reduce_prod(em.where(x > 0, 1, -1), axis=axis))
        else:
            out += [em.reduce_mean(x, axis=axis),
                    em.reduce_prod(1.0 + x / 1000.0, axis=axis),
                    em.reduce_any(x > 0, axis=axis), em.reduce_all(x > -4, axis=axis)]
    return tuple(out)


@pytest.mark.parametrize("n", [1, 33, 257, pytest.param(31, marks=pytest.mark.slow),
                               pytest.param(1000, marks=pytest.mark.slow)])
def test_reductions_over_each_axis(n):
    """Axis 1 of (3, n) and axis 0 of (n, 3) reduce n elements, in parallel over a
    block's threads from n = 17 on; the other axes reduce 3 (a loop per output)."""
    x = _array((3, n), "float32")
    _agree(lambda x: _reductions(x, False), x, rtol=1e-4)
    _agree(lambda x: _reductions(x, False), np.ascontiguousarray(x.T), rtol=1e-4)
    i = _array((n, 5), "int64")
    _agree(lambda i: _reductions(i, True), i)


def test_reductions_of_f64_and_i32_full():
    x, i = _array((1000,), "float64"), _array((33, 31), "int32")
    _agree(lambda x, i: (em.reduce_sum(x), em.reduce_max(x), em.reduce_sum(i),
                         em.reduce_min(i, axis=0), em.argmax(x, axis=0)), x, i)


def test_softmax_and_log_softmax():
    x = _array((7, 257), "float32")
    _agree(lambda x: (em.softmax(x), em.log_softmax(x), em.softmax(x, axis=0)), x)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 65), (100, 3, 257)])
def test_matmul_ragged(m, k, n):
    a, b = _array((m, k), "float32"), _array((k, n), "float32")
    _agree(lambda a, b: (em.matmul(a, b), em.matmul(a, b, transpose_a=False) * 2.0), a, b,
           rtol=1e-4, atol=1e-4)


def test_batch_matmul_and_other_dtypes():
    a, b = _array((3, 17, 33), "float32"), _array((3, 33, 65), "float32")
    _agree(lambda a, b: em.matmul(a, b), a, b, rtol=1e-4, atol=1e-4)
    c, d = _array((5, 7), "float64"), _array((9, 7), "float64")
    _agree(lambda c, d: em.matmul(c, d, transpose_b=True), c, d)
    i, j = _array((4, 33), "int32"), _array((33, 3), "int32")
    _agree(lambda i, j: em.matmul(i, j), i, j)


def test_conv2d_and_pooling():
    x, w = _array((2, 9, 11, 3), "float32"), _array((3, 3, 3, 5), "float32")
    _agree(lambda x, w: (em.conv2d(x, w, strides=1, padding="SAME"),
                         em.conv2d(x, w, strides=2, padding="VALID"),
                         em.max_pool2d(x, 2, 2), em.avg_pool2d(x, 3, 1, padding="SAME")),
           x, w, rtol=1e-4, atol=1e-4)


def test_layout_ops():
    x, idx = _array((6, 35), "float32"), np.array([5, 0, 3, 3], np.int32)

    def f(x, idx):
        return (em.reshape(em.transpose(x), (5, 42)), em.slice(x, [1, 2], [4, 31]),
                em.concat([x, x * 2.0], axis=1), em.pad(x, [[1, 2], [0, 3]]),
                em.gather(x, idx), em.gather(x, idx, axis=1), em.cast(x, em.int32),
                em.cumsum(x, axis=1), em.sort(x, axis=1), em.reverse(x, [0]))
    _agree(f, x, idx)


def test_control_flow():
    def f(x):
        s = em.reduce_sum(x)
        while s < 1000.0:
            s = s * 2.0 + 1.0
            x = x * 2.0
        if em.reduce_max(x) > 50.0:
            y = x - 1.0
        else:
            y = x + 1.0
        return y, s, em.cond(s > 2000.0, lambda: x * 3.0, lambda: -x)
    _agree(f, np.abs(_array((3, 33), "float32")) + 0.01)
    _agree(f, np.full((3, 33), 10.0, np.float32))


GRIDS = """
func.func @f(%r: tensor<70000x33xf32>, %o: tensor<70000x1x3xf32>)
    -> (tensor<70000x33xf32>, tensor<70000x1x3xf32>) {
  %0 = "ember.add"(%r, %r) : (tensor<70000x33xf32>, tensor<70000x33xf32>) -> tensor<70000x33xf32>
  %1 = "ember.neg"(%o) : (tensor<70000x1x3xf32>) -> tensor<70000x1x3xf32>
  return %0, %1 : tensor<70000x33xf32>, tensor<70000x1x3xf32>
}
"""


def test_grids_larger_than_a_launch_allows():
    """y and z hold 65535 blocks: with one thread along y, 70000 rows need a grid-stride
    loop in y, and 70000 outer indices one in z (x is ragged: 33 columns)."""
    options = EmulatedOptions(cuda=cuda_backend.CudaOptions(tiles=(1, 32)))
    types = [TensorType(em.float32, (70000, 33)), TensorType(em.float32, (70000, 1, 3))]
    with default_context():
        module = ir.Module.parse(GRIDS)
    with module.context:
        mapped = str(EmulatedBackend(options).lower(module, stop="bufferized"))
    assert mapped.count("step %c65535") == 2, mapped
    r, o = _array((70000, 33), "float32"), _array((70000, 1, 3), "float32")
    got = compile_function(GRIDS, "f", types, EmulatedBackend(options))([r, o])
    np.testing.assert_array_equal(got[0], r + r)
    np.testing.assert_array_equal(got[1], -o)


def test_tile_sizes_are_an_option():
    lowering = EmulatedCompiler().stages(tiles=(2, 16), cpu=None)
    assert lowering.options.cuda.tiles == (2, 16)
    assert cuda_backend.mapped_pipeline(lowering.options.cuda).count("threads-x=16")
    with pytest.raises(em.backends.NotCompilable, match="no option gemm, threads"):
        EmulatedCompiler().stages(gemm="ember", threads=4)


def test_options_key_differs_from_the_cpus_and_checks_its_options():
    emulated = EmulatedOptions()
    assert emulated.key()[0] == "cuda-emulated" and emulated.key() != CpuOptions().key()
    assert emulated.resolved().gemm == "loops" and emulated.resolved().threads == 1
    with pytest.raises(TypeError, match="EmulatedOptions"):
        EmulatedBackend(CpuOptions())
    with pytest.raises(ValueError, match="at most 1024 threads"):
        cuda_backend.CudaOptions(tiles=(64, 32))


def test_the_mapped_stage_runs(monkeypatch):
    calls = []
    original = cuda_backend.CudaBackend.make_mapped
    monkeypatch.setattr(cuda_backend.CudaBackend, "make_mapped",
                        lambda self, m: calls.append(1) or original(self, m))
    x = _array((4, 45), "float32")
    _agree(lambda x: em.reduce_sum(x * 3.0, axis=1) + 0.25, x)
    assert calls


def test_dumped_compiles_map_too(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_DUMP_DIR", str(tmp_path))
    x = _array((3, 37), "float32")
    _agree(lambda x: em.reduce_max(x, axis=1) * 2.0, x)
    dumped = "".join(p.read_text() for p in tmp_path.rglob("*-bufferized.mlir"))
    assert "processor = thread_x" in dumped and "scf.reduce(" in dumped


_COMBINE = {"arith.addf": np.add, "arith.mulf": np.multiply, "arith.maximumf": np.maximum,
            "arith.minimumf": np.minimum, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
            "arith.addi": np.add, "arith.muli": np.multiply, "arith.maxsi": np.maximum,
            "arith.minsi": np.minimum, "arith.andi": np.bitwise_and,
            "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor}


@pytest.mark.parametrize("name", sorted(_COMBINE) + ["arith.maxui", "arith.minui"])
def test_each_threads_partial_starts_at_the_combiners_identity(name):
    """combine(identity, x) == x for every x, NaN, infinities, -0.0 and the extremes
    included (a thread with nothing to reduce contributes the identity)."""
    from ember.passes.transforms.gpu_map_common import identity
    floats = name.endswith("f")
    types = ["f32", "f64"] if floats else ["i32", "i64"]
    for text in types:
        with ir.Context(), ir.Location.unknown():
            element = ir.Type.parse(text)
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                attr = identity(name, element).owner.attributes["value"]
            value = ir.FloatAttr(attr).value if floats else ir.IntegerAttr(attr).value
        dtype = np.dtype({"f32": "float32", "f64": "float64", "i32": "int32",
                          "i64": "int64"}[text])
        if floats:
            x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], dtype)
        else:
            info = np.iinfo(dtype)
            x = np.array([0, 1, -1, 7, info.min, info.max], dtype)
        if name in ("arith.maxui", "arith.minui"):
            x, identity_value = x.view(f"u{dtype.itemsize}"), np.array(value, dtype).view(
                f"u{dtype.itemsize}")
            combined = (np.maximum if name == "arith.maxui" else np.minimum)(identity_value, x)
        else:
            combined = _COMBINE[name](np.array(value, dtype), x)
        np.testing.assert_array_equal(combined, x, err_msg=f"{name} {text}")
        if floats:
            assert np.signbit(combined[1]) == np.signbit(x[1]), name  # -0.0 stays -0.0


def test_sums_into_many_columns_run_a_thread_per_column():
    """Over the outer axis into 4100 outputs: a thread per column (loads coalesce along
    the kept inner dim), not a block per column; over the inner axis: a block per row."""
    text = """
func.func @f(%x: tensor<37x4100xf32>) -> (tensor<4100xf32>, tensor<37xf32>) {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>, keepdims = false}
      : (tensor<37x4100xf32>) -> tensor<4100xf32>
  %1 = "ember.reduce_max"(%x) {axes = array<i64: 1>, keepdims = false}
      : (tensor<37x4100xf32>) -> tensor<37xf32>
  return %0, %1 : tensor<4100xf32>, tensor<37xf32>
}
"""
    with default_context():
        module = ir.Module.parse(text)
    with module.context:
        mapped = str(EmulatedBackend().lower(module, stop="bufferized"))
    assert mapped.count("scf.reduce(") == 1 and "arith.maximumf" in mapped.split(
        "scf.reduce(")[1].split("}")[0], mapped
    x = _array((37, 4100), "float32")
    got = compile_function(text, "f", [TensorType(em.float32, (37, 4100))],
                           EmulatedBackend())([x])
    np.testing.assert_allclose(got[0], x.sum(0), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(got[1], x.max(1))


def test_tensor_core_products_run_emulated():
    """f16 products of multiples of 16 are ember-gpu-mma's tensor-core launches in the
    mapped stage; emulated, ember-gpu-mma-emulate runs them as loops."""
    a = RNG.integers(-4, 5, (2, 32, 48)).astype(np.float16)
    b = RNG.integers(-4, 5, (2, 48, 16)).astype(np.float16)
    text = """
func.func @f(%a: tensor<2x32x48xf16>, %b: tensor<2x48x16xf16>) -> tensor<2x32x16xf16> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false}
      : (tensor<2x32x48xf16>, tensor<2x48x16xf16>) -> tensor<2x32x16xf16>
  return %0 : tensor<2x32x16xf16>
}
"""
    with default_context():
        module = ir.Module.parse(text)
    with module.context:
        assert "gpu.subgroup_mma_compute" in str(
            cuda_backend.CudaBackend().lower(module, stop="mapped"))
    _agree(lambda a, b: em.matmul(a, b), a, b, rtol=0, atol=0)

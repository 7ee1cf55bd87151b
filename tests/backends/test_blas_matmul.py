"""Float matrix products in compiled code call a GEMM (`ember-linalg-to-blas`): Ember's own
kernels (backends/cpu/kernels/) or numpy's OpenBLAS (backends/cpu/blas_library.py), as
`EMBER_BLAS` says.

Differential: compiled products (BLAS forced for every size) against a float64 numpy
reference and the interpreter on seeded random shapes: 1xN, Nx1, K=1, batched, broadcast
batch dims, 2-D against batched, transposes. Error bound per element: rtol * (|A| @ |B|)
(the GEMM error bound; an elementwise relative error is meaningless where sums cancel) with
rtol 1e-5 for float32 and 1e-12 for float64. Also: the plan for given strides, the IR (a
call, transposes folded, integer and small products left as loops), loops with
EMBER_BLAS=loops, and Ember's own kernels when numpy has no OpenBLAS, each with its own
cache key.
"""

import itertools
import re
import zlib

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.backends.cpu import blas_library
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.backends.cpu.compiler import check_compilable, compile_function, specialize
from ember.backends.cpu.jit import Executable, JitError, entry_wrapper, jit_compile
from ember.backends.interpreter import Interpreter
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import parse_type
from ember.passes.transforms import linalg_to_blas

needs_blas = pytest.mark.skipif(blas_library._find() is None,
                                reason="no ILP64 OpenBLAS found next to numpy")


@pytest.fixture
def blas_on(monkeypatch):
    """Products call Ember's own kernels (the IR names @ember_sgemm/@ember_dgemm)."""
    monkeypatch.setenv("EMBER_BLAS", "off")


POLICIES = [("off", "ember_{}gemm"),
            pytest.param("openblas", "ember_openblas_{}gemm", marks=needs_blas)]


def _matmul_text(a_shape, b_shape, out_shape, dtype, ta=False, tb=False) -> tuple:
    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    ta_, tb_, tc = t(a_shape), t(b_shape), t(out_shape)
    text = (f"func.func @f(%a: {ta_}, %b: {tb_}) -> {tc} {{\n"
            f'  %0 = "ember.matmul"(%a, %b) {{transpose_a = {str(ta).lower()}, '
            f"transpose_b = {str(tb).lower()}}} : ({ta_}, {tb_}) -> {tc}\n"
            f"  return %0 : {tc}\n}}\n")
    return text, [parse_type(ta_), parse_type(tb_)]


def _compile(text, arg_types, backend=None):
    """Compiles without the caches (a test may change the threshold); returns the
    executable and its LLVM IR."""
    backend = backend or CpuBackend()
    module = specialize(text, "f", arg_types)
    result_types = check_compilable(module, "f")
    llvm_ir = backend.lower(module, "llvmir") + entry_wrapper("f", list(arg_types) +
                                                             result_types)
    return Executable(jit_compile(backend, llvm_ir), "f", arg_types, result_types), llvm_ir


def _bufferized(text, arg_types, backend=None) -> str:
    # the traced function's symbol: "f", or "f_<n>" when another "f" was traced before
    symbol = re.search(r"func\.func @(f(_\d+)?)\(", text).group(1)
    module = specialize(text, symbol, arg_types)
    return str((backend or CpuBackend()).lower(module, "bufferized"))


def _swap(x):
    return np.swapaxes(x, -1, -2)


def _case(batch_a, batch_b, m, k, n, ta, tb, dtype, rng):
    a_shape = batch_a + ((k, m) if ta else (m, k))
    b_shape = batch_b + ((n, k) if tb else (k, n))
    batch = np.broadcast_shapes(batch_a, batch_b)
    text, types = _matmul_text(a_shape, b_shape, batch + (m, n), dtype, ta, tb)
    np_type = np.float32 if dtype == "f32" else np.float64
    a = rng.standard_normal(a_shape).astype(np_type)
    b = rng.standard_normal(b_shape).astype(np_type)
    return text, types, a, b


def _check(got, a, b, ta, tb, rtol):
    a64 = _swap(a.astype(np.float64)) if ta else a.astype(np.float64)
    b64 = _swap(b.astype(np.float64)) if tb else b.astype(np.float64)
    want = np.matmul(a64, b64)
    bound = rtol * np.matmul(np.abs(a64), np.abs(b64)) + 1e-300
    assert got.shape == want.shape
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= bound), float(np.max(err / bound))


# (batch of a, batch of b, m, k, n)
SHAPES = [((), (), 1, 37, 29), ((), (), 29, 37, 1), ((), (), 1, 64, 1), ((), (), 33, 1, 17),
          ((), (), 40, 50, 60), ((3,), (3,), 7, 9, 11), ((4,), (), 5, 6, 7),
          ((), (4,), 5, 6, 7), ((1,), (3,), 8, 5, 6), ((3,), (1,), 8, 5, 6),
          ((2, 1), (1, 3), 4, 5, 6), ((2, 3), (2, 3), 1, 8, 9), ((2, 3), (3,), 9, 8, 1)]


def _random_shapes(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        nb = int(rng.integers(0, 3))
        batch = tuple(int(d) for d in rng.integers(1, 4, nb))
        batch_a, batch_b = (tuple(d if rng.random() < 0.7 else 1 for d in batch)
                            [int(rng.integers(0, nb + 1)):] for _ in range(2))
        m, k, n = (int(d) for d in rng.choice([1, 2, 5, 16, 31, 70], 3))
        out.append((batch_a, batch_b, m, k, n))
    return out


CASES = [(s, ta, tb) for s in SHAPES + _random_shapes(12, 7)
         for ta, tb in itertools.product([False, True], repeat=2)]


@pytest.mark.parametrize("policy,symbol", POLICIES)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("shape,ta,tb", CASES,
                         ids=[f"{s}-{'T' if ta else 'N'}{'T' if tb else 'N'}"
                              for s, ta, tb in CASES])
def test_blas_products_match_reference_and_interpreter(shape, ta, tb, dtype, policy, symbol,
                                                       monkeypatch):
    monkeypatch.setenv("EMBER_BLAS", policy)
    monkeypatch.setattr(linalg_to_blas, "MIN_MACS", 0)  # every product a GEMM call
    rng = np.random.default_rng(zlib.crc32(repr((shape, ta, tb, dtype)).encode()))
    text, types, a, b = _case(*shape, ta, tb, dtype, rng)
    exe, llvm_ir = _compile(text, types)
    symbol = symbol.format("s" if dtype == "f32" else "d")
    m, k, n = shape[2:]
    assert f"call void @{symbol}(" in llvm_ir, "the product did not become a BLAS call"
    (got,) = exe([a, b])
    rtol = 1e-5 if dtype == "f32" else 1e-12
    _check(got, a, b, ta, tb, rtol)
    with default_context():
        module = ir.Module.parse(text)
    (expected,) = Interpreter(module).call("f", [a, b])
    expected = np.asarray(expected)
    assert expected.dtype == got.dtype
    bound = rtol * np.matmul(np.abs(_swap(a) if ta else a).astype(np.float64),
                             np.abs(_swap(b) if tb else b).astype(np.float64))
    assert np.all(np.abs(got.astype(np.float64) - expected) <= 2 * bound + 1e-300)


def test_mlp_forward_calls_blas_and_matches_numpy(blas_on):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 784), dtype=np.float32)
    ws = [rng.standard_normal(s, dtype=np.float32) * np.float32(s[0] ** -0.5)
          for s in ((784, 1024), (1024, 1024), (1024, 10))]
    bs = [rng.standard_normal(s[1], dtype=np.float32) * np.float32(0.1) for s in
          ((784, 1024), (1024, 1024), (1024, 10))]

    @em.function
    def mlp(x, w1, b1, w2, b2, w3, b3):
        h = em.relu(em.matmul(x, w1) + b1)
        h = em.relu(em.matmul(h, w2) + b2)
        return em.matmul(h, w3) + b3
    args = [x, ws[0], bs[0], ws[1], bs[1], ws[2], bs[2]]
    got = mlp(*[em.constant(v) for v in args]).numpy()
    h = np.maximum(x @ ws[0] + bs[0], 0)
    h = np.maximum(h @ ws[1] + bs[1], 0)
    np.testing.assert_allclose(got, h @ ws[2] + bs[2], rtol=1e-4, atol=1e-4)
    text = mlp.get_concrete_function(*[em.constant(v) for v in args]).mlir()
    ir_text = _bufferized(text.replace("@mlp", "@f"), [parse_type(
        f"tensor<{'x'.join(map(str, v.shape))}xf32>") for v in args])
    assert ir_text.count("call @ember_sgemm(") == 3
    assert "linalg.matmul" not in ir_text


# -- the IR --------------------------------------------------------------------------------


def test_transposes_fold_into_the_call_flags(blas_on):
    text, types = _matmul_text((64, 32), (48, 64), (32, 48), "f32", ta=True, tb=True)
    out = _bufferized(text, types)
    assert "linalg.transpose" not in out and "memref.alloc" not in out
    assert "call @ember_sgemm(" in out
    assert out.count("arith.constant 112 : i32") == 1  # both flags are TRANS: one constant


def test_batch_with_a_matrix_is_one_call(blas_on):
    """Batch dims of `a` against a 2-D `b` fold into the rows: no loop around the call."""
    text, types = _matmul_text((4, 3, 32, 40), (40, 24), (4, 3, 32, 24), "f32")
    out = _bufferized(text, types)
    assert out.count("call @ember_sgemm(") == 1 and "scf.for" not in out
    assert "arith.constant 384 : i64" in out  # m = 4 * 3 * 32


def test_batched_product_loops_around_the_call(blas_on):
    text, types = _matmul_text((5, 32, 40), (5, 40, 24), (5, 32, 24), "f64")
    out = _bufferized(text, types)
    assert "scf.for" in out and "call @ember_dgemm(" in out
    assert "linalg.batch_matmul" not in out


@pytest.mark.parametrize("dtype", ["i32", "f16"])
def test_integer_and_half_products_stay_loops(dtype, blas_on):
    text, types = _matmul_text((64, 64), (64, 64), (64, 64), dtype)
    out = _bufferized(text, types)
    assert "ember_sgemm" not in out and "ember_dgemm" not in out


def test_small_products_stay_loops(blas_on):
    text, types = _matmul_text((8, 8), (8, 8), (8, 8), "f32")
    assert "linalg.matmul" in _bufferized(text, types)
    text, types = _matmul_text((64, 64), (64, 64), (64, 64), "f32")
    assert "call @ember_sgemm(" in _bufferized(text, types)


@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_small_transposed_products_are_loops_over_the_folded_maps(ta, tb, blas_on):
    """Below MIN_MACS the transposes are folded (no copy) but the product stays loops."""
    rng = np.random.default_rng(5)
    text, types, a, b = _case((2,), (), 3, 7, 5, ta, tb, "f32", rng)
    out = _bufferized(text, types)
    assert "ember_sgemm" not in out and "linalg.transpose" not in out
    exe, _ = _compile(text, types)
    _check(exe([a, b])[0], a, b, ta, tb, 1e-5)


# -- the plan ------------------------------------------------------------------------------


def test_plan_of_row_major_and_transposed_operands():
    # loop dims (m, n, k) = (4, 5, 3); a: 4x3, b: 3x5, c: 4x5, all row-major
    g = linalg_to_blas.plan([4, 5, 3], 2, [3, 0, 1], [0, 1, 5], [5, 1, 0])
    assert (g.swap, g.trans_l, g.trans_r, g.m, g.n, g.k, g.ldl, g.ldr, g.ldc, g.batch) == \
        (False, False, False, 4, 5, 3, 3, 5, 5, ())
    # a stored 3x4 (transposed), b stored 5x3 (transposed)
    g = linalg_to_blas.plan([4, 5, 3], 2, [1, 0, 4], [0, 3, 1], [5, 1, 0])
    assert (g.trans_l, g.trans_r, g.ldl, g.ldr) == (True, True, 4, 3)


def test_plan_of_degenerate_sizes():
    g = linalg_to_blas.plan([1, 5, 3], 2, [3, 0, 1], [0, 1, 5], [5, 1, 0])  # m = 1
    assert (g.m, g.n, g.k, g.ldl, g.ldc) == (1, 5, 3, 3, 5)
    g = linalg_to_blas.plan([4, 1, 3], 2, [3, 0, 1], [0, 1, 1], [1, 1, 0])  # n = 1
    assert (g.m, g.n, g.k, g.ldr, g.ldc) == (4, 1, 3, 1, 1)
    g = linalg_to_blas.plan([4, 5, 1], 2, [1, 0, 1], [0, 1, 5], [5, 1, 0])  # k = 1
    assert (g.m, g.n, g.k, g.ldl, g.ldr) == (4, 5, 1, 1, 5)
    assert linalg_to_blas.plan([4, 0, 3], 2, [3, 0, 1], [0, 1, 0], [0, 1, 0]) is None  # empty


def test_plan_merges_contiguous_dims_and_loops_over_the_others():
    # (b, m, n, k) = (2, 4, 5, 3): a 2x4x3, b 3x5 (shared): b and m merge into 8 rows
    g = linalg_to_blas.plan([2, 4, 5, 3], 3, [12, 3, 0, 1], [0, 0, 1, 5], [20, 5, 1, 0])
    assert (g.m, g.batch) == (8, ())
    # a 2x4x3, b 2x3x5: a batch loop with each operand's stride
    g = linalg_to_blas.plan([2, 4, 5, 3], 3, [12, 3, 0, 1], [15, 0, 1, 5], [20, 5, 1, 0])
    assert (g.m, g.batch) == (4, ((2, 12, 15, 20),))
    # a 1x4x3 broadcast against b 2x3x5: stride 0 in the loop
    g = linalg_to_blas.plan([2, 4, 5, 3], 3, [0, 3, 0, 1], [15, 0, 1, 5], [20, 5, 1, 0])
    assert g.batch == ((2, 0, 15, 20),)


def test_plan_of_a_column_major_output_swaps_the_operands():
    g = linalg_to_blas.plan([4, 5, 3], 2, [3, 0, 1], [0, 1, 5], [1, 4, 0])  # c stored 5x4
    assert (g.swap, g.m, g.n, g.ldc) == (True, 5, 4, 4)
    assert (g.trans_l, g.trans_r) == (True, True)  # b^T and a^T read transposed


def test_plan_refuses_what_no_gemm_expresses():
    assert linalg_to_blas.plan([4, 5, 3], 2, [6, 0, 2], [0, 1, 5], [5, 1, 0]) is None  # a stride 2
    assert linalg_to_blas.plan([4, 5, 3], 2, [3, 0, 1], [0, 1, 5], [5, 0, 0]) is None  # c overlaps


# -- without the library -------------------------------------------------------------------


def _compile_and_check_a_product() -> str:
    """Compiles and runs a 64x48x32 float32 product under the environment's policy, checks
    its result; returns the bufferized IR."""
    text, types = _matmul_text((64, 48), (48, 32), (64, 32), "f32")
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(t.shape).astype(np.float32) for t in types)
    (got,) = compile_function(text, "f", types)([a, b])
    _check(got, a, b, False, False, 1e-5)
    return _bufferized(text, types)


def test_loops_policy_keeps_loops_and_its_own_cache_key(monkeypatch):
    monkeypatch.setenv("EMBER_BLAS", "off")
    key_own = CpuOptions().key()
    monkeypatch.setenv("EMBER_BLAS", "loops")
    assert CpuBackend().options.gemm == "loops"
    key_loops = CpuOptions().key()
    assert "gemm=loops" in key_loops and "gemm=ember" in key_own
    out = _compile_and_check_a_product()
    assert "linalg.matmul" in out and "ember_sgemm" not in out


def test_without_openblas_products_call_embers_own_kernels(monkeypatch):
    monkeypatch.setattr(blas_library, "library", lambda: None)
    for policy in ("auto", "openblas", "off"):
        monkeypatch.setenv("EMBER_BLAS", policy)
        assert CpuBackend().options.gemm == "ember"  # no error
    monkeypatch.delenv("EMBER_BLAS")
    out = _compile_and_check_a_product()
    assert "call @ember_sgemm(" in out and "openblas" not in out


def test_an_unknown_policy_is_an_error_naming_the_choices(monkeypatch):
    monkeypatch.setenv("EMBER_BLAS", "mkl")
    with pytest.raises(ValueError, match="EMBER_BLAS='mkl'.*auto.*off.*openblas.*loops"):
        CpuBackend()


@needs_blas
def test_code_calling_openblas_is_refused_not_aborted_without_the_library(monkeypatch):
    monkeypatch.setenv("EMBER_BLAS", "openblas")
    text, types = _matmul_text((64, 48), (48, 32), (64, 32), "f32")
    backend = CpuBackend()
    llvm_ir = backend.lower(specialize(text, "f", types), "llvmir")
    assert "@ember_openblas_sgemm" in llvm_ir
    monkeypatch.setattr(blas_library, "library", lambda: None)
    with pytest.raises(JitError, match="OpenBLAS.*EMBER_BLAS=off"):
        jit_compile(backend, llvm_ir)


@needs_blas
def test_the_library_is_numpys():
    lib = blas_library._find()
    assert "blas" in lib.path.lower() and all(lib.addresses)
    assert lib.names in blas_library.CANDIDATES


# -- views: offsets and leading dimensions --------------------------------------------------


def test_slices_are_read_in_place_with_their_offset_and_leading_dimension(blas_on):
    @em.function
    def f(x, w):
        return em.matmul(x[1:65, 2:50], w[3:51, :]), em.matmul(x[:, 5:40], w[1:36, 3:40])
    rng = np.random.default_rng(3)
    x = rng.standard_normal((80, 60)).astype(np.float32)
    w = rng.standard_normal((60, 40)).astype(np.float32)
    a, b = f(em.constant(x), em.constant(w))
    _check(a.numpy(), x[1:65, 2:50], w[3:51, :], False, False, 1e-5)
    _check(b.numpy(), x[:, 5:40], w[1:36, 3:40], False, False, 1e-5)
    text = f.get_concrete_function(em.constant(x), em.constant(w)).mlir()
    out = _bufferized(text, [parse_type("tensor<80x60xf32>"),
                             parse_type("tensor<60x40xf32>")])
    assert out.count("call @ember_sgemm(") == 2
    assert "memref.copy" not in out and "memref.alloc" not in out  # no copies of the slices


def test_a_dynamic_offset_is_added_at_run_time(blas_on):
    """A view whose offset is only known at run time (not produced by ember today, but the
    rewrite takes any static-strided memref): the call reads from base + offset."""
    import ctypes

    text = """
    func.func @g(%x: memref<80x60xf32>, %w: memref<48x40xf32>, %o: memref<64x40xf32>,
                 %i: index) {
      %c2 = arith.constant 2 : index
      %s = memref.subview %x[%i, %c2] [64, 48] [1, 1]
          : memref<80x60xf32> to memref<64x48xf32, strided<[60, 1], offset: ?>>
      linalg.matmul ins(%s, %w : memref<64x48xf32, strided<[60, 1], offset: ?>>,
                                 memref<48x40xf32>) outs(%o : memref<64x40xf32>)
      return
    }"""
    backend = CpuBackend()
    with default_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        assert linalg_to_blas.call_blas(module) == 1
        assert "memref.extract_strided_metadata" in str(module)
    llvm_ir = backend.make_llvmir(backend.make_llvm(module))
    engine = jit_compile(backend, llvm_ir)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((80, 60)).astype(np.float32)
    w = rng.standard_normal((48, 40)).astype(np.float32)
    o = np.zeros((64, 40), np.float32)
    i64, ptr = ctypes.c_int64, ctypes.c_void_p

    def memref(a):
        return [a.ctypes.data, a.ctypes.data, 0, *a.shape, *(s // a.itemsize for s in a.strides)]
    args = memref(x) + memref(w) + memref(o) + [7]
    types = [ptr, ptr, i64, i64, i64, i64, i64] * 3 + [i64]
    ctypes.CFUNCTYPE(None, *types)(engine.get_function_address("g"))(*args)
    _check(o, x[7:71, 2:50], w, False, False, 1e-5)


# -- products the fusion pass reshaped or fused into ---------------------------------------


def test_plan_merges_reduction_dims_contiguous_in_both_operands():
    # out[n, o] += x[n, h, c] * w[h, c, o]: loop dims (n, o, h, c), k = h * c
    g = linalg_to_blas.plan([4, 5, 3, 2], (2, 3), [6, 0, 2, 1], [0, 1, 10, 5], [5, 1, 0, 0])
    assert (g.m, g.n, g.k, g.trans_l, g.trans_r) == (4, 5, 6, False, False)
    # not contiguous in w (its h and c are swapped): no single K
    assert linalg_to_blas.plan([4, 5, 3, 2], (2, 3), [6, 0, 2, 1], [0, 1, 5, 15],
                               [5, 1, 0, 0]) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_an_activation_then_flatten_then_dense_is_one_gemm(dtype, blas_on):
    """relu, reshape to rows, matmul: the fusion pass fuses the relu into the product and
    the reshape makes three reduction dims; the product must still call the GEMM."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 5, 5, 8)).astype(dtype)
    w = rng.standard_normal((5 * 5 * 8, 24)).astype(np.float32 if dtype == np.float16
                                                     else dtype)

    @em.function
    def dense(x, w):
        h = em.nn.relu(x)
        if x.dtype == em.float16:
            h = em.cast(h, em.float32)
        return em.matmul(em.reshape(h, [16, -1]), w)
    got = dense(em.constant(x), em.constant(w)).numpy()
    want = np.maximum(x, 0).astype(np.float64).reshape(16, -1) @ w.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype != np.float64 else 1e-12,
                               atol=1e-4)
    text = dense.get_concrete_function(em.constant(x), em.constant(w)).mlir()
    names = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}
    product = "f64" if dtype == np.float64 else "f32"
    ir_text = _bufferized(text.replace("@dense", "@f"), [
        parse_type(f"tensor<16x5x5x8x{names[dtype]}>"), parse_type(f"tensor<200x24x{product}>")])
    assert ("call @ember_dgemm(" if product == "f64" else "call @ember_sgemm(") in ir_text

"""Matrix products on the CUDA path: ember-gpu-tile-matmul's register-tiled nests (ragged
edges, batches, broadcast batches, transposes, integer and bf16 products, conv-as-GEMM)
and ember-gpu-mma's tensor-core kernels (f16, multiples of 16).

`check_products(run)` is the numeric check of the nests: `run(module_text, arrays)` compiles
`@f` of the module through a lowering that executes the CUDA mapped stage (the
cuda-emulated backend runs those nests on the CPU, the tensor-core launches through
ember-gpu-mma-emulate) and returns its results, which must match numpy's product in
float64 within the dtype's tolerance.
"""

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from ember.backends.cuda.backend import CudaBackend
from ember.dialects.ember.irdl import default_context
from ember.passes.pipeline_syntax import PipelineError
from ember.passes.transforms.gpu_tile_matmul import GpuTileMatmulPass
from ember.passes.transforms.gpu_mma import GpuMmaPass
from ember.passes.transforms.gpu_mma_emulate import GpuMmaEmulatePass

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "bf16": ml_dtypes.bfloat16,
          "f16": np.float16}
TOLERANCE = {"f32": 1e-5, "f64": 1e-12, "i32": 0, "bf16": 1e-2, "f16": 2e-3}

# (M, K, N, dtype, transpose_a, transpose_b, batch): ragged in M, N and K against the 4x4
# register tiles and the 8x32 thread blocks, one-row and one-column products, batches; f16
# ones of multiples of 16 for the tensor cores (a warp's 1x1 to 2x2 fragments, 1 to 4 warps
# a block).
CASES = [(70, 33, 50, "f32", False, False, ()), (1, 7, 1, "f32", False, False, ()),
         (5, 3, 130, "f32", True, False, ()), (16, 16, 16, "f32", False, True, ()),
         (9, 13, 6, "i32", False, False, ()), (17, 8, 19, "f64", False, False, (3,)),
         (6, 5, 7, "f32", True, True, (2, 3)), (37, 29, 41, "bf16", False, False, ()),
         (32, 48, 16, "f16", False, False, (2,)), (33, 16, 18, "f16", False, True, ()),
         (64, 32, 96, "f16", False, False, ()),
         (64, 160, 128, "f16", False, True, (2,))]


def _tensor(shape, dtype) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def product_module(m, k, n, dtype, ta, tb, batch) -> tuple[str, list]:
    """`@f(a, b) = matmul(a, b)` of those shapes, with operands (small integers as floats,
    so every dtype's products are exact and only the summation order rounds)."""
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a_shape = batch + ((k, m) if ta else (m, k))
    b_shape = batch + ((n, k) if tb else (k, n))
    a = rng.integers(-4, 5, a_shape).astype(DTYPES[dtype])
    b = rng.integers(-4, 5, b_shape).astype(DTYPES[dtype])
    ta_, tb_ = _tensor(a_shape, dtype), _tensor(b_shape, dtype)
    out = _tensor(batch + (m, n), dtype)
    text = (f"func.func @f(%a: {ta_}, %b: {tb_}) -> {out} {{\n"
            f'  %0 = "ember.matmul"(%a, %b) {{transpose_a = {str(ta).lower()}, '
            f"transpose_b = {str(tb).lower()}}} : ({ta_}, {tb_}) -> {out}\n"
            f"  return %0 : {out}\n}}\n")
    return text, [a, b]


def conv_module() -> tuple[str, list]:
    """A strided NHWC conv2d (Ember lowers it to an im2col copy and a product)."""
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 4, (2, 9, 10, 3)).astype(np.float32)
    w = rng.integers(-3, 4, (3, 3, 3, 5)).astype(np.float32)
    text = ("func.func @f(%x: tensor<2x9x10x3xf32>, %w: tensor<3x3x3x5xf32>) -> "
            "tensor<2x4x8x5xf32> {\n"
            '  %0 = "ember.conv2d"(%x, %w) {strides = array<i64: 2, 1>, '
            'dilations = array<i64: 1, 1>, padding = "VALID"} : (tensor<2x9x10x3xf32>, '
            "tensor<3x3x3x5xf32>) -> tensor<2x4x8x5xf32>\n"
            "  return %0 : tensor<2x4x8x5xf32>\n}\n")
    return text, [x, w]


def broadcast_module() -> tuple[str, list]:
    """A batch of matrices times one matrix (a linalg.generic with a broadcast operand)."""
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 5, (3, 5, 7)).astype(np.float32)
    w = rng.integers(-4, 5, (7, 9)).astype(np.float32)
    text = ("func.func @f(%x: tensor<3x5x7xf32>, %w: tensor<7x9xf32>) -> tensor<3x5x9xf32> {\n"
            '  %0 = "ember.matmul"(%x, %w) {transpose_a = false, transpose_b = false} : '
            "(tensor<3x5x7xf32>, tensor<7x9xf32>) -> tensor<3x5x9xf32>\n"
            "  return %0 : tensor<3x5x9xf32>\n}\n")
    return text, [x, w]


def _conv_reference(x, w):
    out = np.zeros((2, 4, 8, 5))
    for i in range(4):
        for j in range(8):
            patch = x[:, 2 * i:2 * i + 3, j:j + 3, :].astype(np.float64)
            out[:, i, j, :] = np.tensordot(patch, w.astype(np.float64), axes=3)
    return out


def check_products(run) -> None:
    """Every product of CASES and the conv through `run(module_text, arrays) -> results`
    against numpy (see the module docstring)."""
    for case in CASES:
        text, (a, b) = product_module(*case)
        got = np.asarray(run(text, [a, b])[0], np.float64)
        ta, tb = case[4], case[5]
        want = (np.swapaxes(a, -1, -2) if ta else a).astype(np.float64) @ \
            (np.swapaxes(b, -1, -2) if tb else b).astype(np.float64)
        scale = max(1.0, float(np.abs(want).max()))
        assert got.shape == want.shape, f"{case}: shape {got.shape}, not {want.shape}"
        err = float(np.abs(got - want).max())
        assert err <= TOLERANCE[case[3]] * scale, f"{case}: off by {err}"
    text, (x, w) = conv_module()
    got = np.asarray(run(text, [x, w])[0], np.float64)
    np.testing.assert_allclose(got, _conv_reference(x, w), rtol=1e-5, atol=1e-4)
    text, (x, w) = broadcast_module()
    np.testing.assert_array_equal(run(text, [x, w])[0], x @ w)  # small integers: exact


def _bufferized(text: str) -> ir.Module:
    module = ir.Module.parse(text)
    return CudaBackend().lower(module, "bufferized")


def _names(module: ir.Module) -> list[str]:
    found = []
    module.operation.walk(lambda op: found.append(op.name) or ir.WalkResult.ADVANCE)
    return found


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_product_becomes_one_tiled_nest(case):
    with default_context():
        module = _bufferized(product_module(*case)[0])
        if case[3] == "f16" and not any(d % 16 for d in case[:3]):
            assert GpuMmaPass().apply(module)["products"] == 1
            assert "gpu.subgroup_mma_compute" in _names(module)
            assert GpuMmaEmulatePass().apply(module)["launches"] == 1  # for the CPU
            assert not [n for n in _names(module) if n.startswith("gpu.")]
            return
        stats = GpuTileMatmulPass().apply(module)
        names = _names(module)
    assert stats["tiled"] == 1 and stats["skipped"] == 0
    assert not {"linalg.matmul", "linalg.batch_matmul"} & set(names)
    assert names.count("scf.parallel") == 1 and "scf.for" in names
    # ragged tiles (a row or column of the 4x4 tile past the edge): the rows and columns
    # that can pass it are clamped for the loads and their stores checked
    m, _, n = case[:3]
    ragged = _ragged(m) or _ragged(n)
    assert ("scf.if" in names) == ragged and ("arith.minsi" in names) == ragged


def _ragged(size: int, tile: int = 4) -> bool:
    tile = min(tile, size)
    return tile * -(-size // tile) > size


@pytest.mark.parametrize("make", [conv_module, broadcast_module])
def test_conv_and_broadcast_products_are_tiled(make):
    with default_context():
        module = _bufferized(make()[0])
        assert GpuTileMatmulPass().apply(module)["tiled"] == 1
        assert "linalg.generic" not in str(module) or "reduction" not in str(module)


def test_accumulators_start_from_the_output():
    """linalg.matmul accumulates into its output: the nest loads it before the K loop."""
    with default_context():
        module = _bufferized(product_module(8, 4, 8, "f32", False, False, ())[0])
        GpuTileMatmulPass(tile_m=2, tile_n=2).apply(module)
        text = str(module)
    head = text[:text.index("scf.for")]
    assert head.count("memref.load %arg2") == 4  # the 2x2 tile of C


@pytest.mark.parametrize("case", [(16, 16, 16, "bf16"), (16, 24, 16, "f16"),
                                  (20, 16, 16, "f16"), (16, 16, 16, "f32")])
def test_tensor_cores_only_for_f16_multiples_of_16(case):
    with default_context():
        module = _bufferized(product_module(*case, False, False, ())[0])
        assert GpuMmaPass().apply(module)["products"] == 0


def test_a_bad_tile_size_is_refused():
    with pytest.raises(PipelineError, match="'tile-m' and 'tile-n' of ember-gpu-tile-matmul "
                                            "must be 1..16 .*got 0 and 4"):
        GpuTileMatmulPass(tile_m=0)


def _emulated(text: str, arrays: list) -> list:
    """`@f` of `text` compiled by backend="cuda-emulated" (the CUDA mapped stage on the CPU,
    tensor-core launches through ember-gpu-mma-emulate) and called on `arrays`."""
    from ember import backends
    from ember.dialects.ember import dtypes
    from ember.dialects.ember.types import TensorType
    types = [TensorType(dtypes.as_dtype(a.dtype), a.shape) for a in arrays]
    exe = backends.get("cuda-emulated").compile(text, "f", types)
    return exe([np.ascontiguousarray(a) for a in arrays])


def test_the_products_nests_compute_numpys_products_on_the_cpu():
    check_products(_emulated)

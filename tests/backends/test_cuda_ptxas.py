"""Every op family lowered by the CUDA backend to PTX, and NVIDIA's ptxas assembling it.

The ops are those of the eager-vs-numpy table (tests/dialects/test_eager_vs_numpy.py, built
into functions as tests/backends/test_compiled_ops.py does), plus what that table does not
cover: elementwise ops over every dtype Ember has (bf16 and f16 included), the math
functions on f16/f64, reductions over each axis and in full, softmax over each axis,
products of f32, bf16 and f16 (batched too, with ragged shapes), and control flow (em.cond,
em.while_loop). Each is lowered for sm_80 and sm_90 (CudaBackend.lower(..., "binary")) and
the PTX of each kernel module goes through ptxas; a family the backend cannot lower fails
with the op named and the backend's or ptxas's message.

`test_host_code_touches_no_buffer` checks the other half of a correct lowering: after the
gpu stage, no loop or load is left on the host (every buffer is device memory).
"""

import sys

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from ember.backends.cpu.backend import BackendError
from ember.backends.cuda import ptxas
from ember.backends.cuda.backend import CudaBackend, CudaOptions, kernel_ptx
from ember.dialects.ember.irdl import default_context

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/tests/backends")
from test_compiled_ops import NAMES, ROWS, _module  # noqa: E402

RNG = np.random.default_rng(17)
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
          "bool": np.bool_, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def _array(shape, dtype):
    return (RNG.standard_normal(shape) * 4).astype(DTYPES[dtype])


def _extra() -> dict:
    """name -> (op, arrays, attrs): the families the eager table leaves out."""
    extra = {}
    for dtype in DTYPES:
        op = "logical_and" if dtype == "bool" else "add"  # broadcast along rows
        extra[f"{op}[{dtype}]"] = (f"ember.{op}", [_array((33, 65), dtype),
                                                   _array((65,), dtype)], {})
        if dtype != "bool":
            extra[f"mul[{dtype}]"] = ("ember.mul", [_array((7, 9), dtype),
                                                    _array((7, 9), dtype)], {})
            extra[f"maximum[{dtype}]"] = ("ember.maximum", [_array((5, 1), dtype),
                                                            _array((1, 6), dtype)], {})
    for dtype in ("f16", "bf16", "f64"):
        for op in ("tanh", "exp", "log", "sin", "erf", "sigmoid", "rsqrt"):
            extra[f"{op}[{dtype}]"] = (f"ember.{op}", [_array((40, 3), dtype)], {})
        extra[f"pow[{dtype}]"] = ("ember.pow", [np.abs(_array((4, 5), dtype)),
                                                _array((5,), dtype)], {})
    for axes in ([0], [1], [0, 1]):
        for op in ("reduce_sum", "reduce_max"):
            extra[f"{op}{axes}"] = (f"ember.{op}", [_array((70, 45), "f32")], {"axes": axes})
    for axis in (0, 1):
        extra[f"softmax[axis={axis}]"] = ("ember.softmax", [_array((37, 50), "f32")],
                                          {"axis": axis})
    for dtype in ("f32", "bf16", "f16"):
        extra[f"matmul[{dtype}]"] = ("ember.matmul", [_array((70, 33), dtype),
                                                      _array((33, 50), dtype)], {})
        extra[f"matmul16[{dtype}]"] = ("ember.matmul", [_array((32, 160), dtype),
                                                        _array((64, 160), dtype)],
                                       {"transpose_b": True})
        extra[f"batch_matmul[{dtype}]"] = ("ember.matmul", [_array((3, 20, 16), dtype),
                                                            _array((3, 16, 24), dtype)], {})
        extra[f"batch_matmul16[{dtype}]"] = ("ember.matmul", [_array((2, 32, 16), dtype),
                                                              _array((2, 16, 48), dtype)], {})
    return extra


EXTRA = _extra()
CONTROL_FLOW = "control_flow"
FAMILIES = [n for n in NAMES] + sorted(EXTRA) + [CONTROL_FLOW]


def _control_flow() -> str:
    import ember as em

    @em.function
    def f(x, n):
        y = em.cond(n > 0, lambda: em.tanh(x), lambda: x * 2.0)
        return em.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + y),
                             (em.constant(0), y))[1]
    return f.get_concrete_function(em.TensorSpec((40, 50), em.float32),
                                   em.TensorSpec((), em.int32)).mlir()


def family_module(family: str) -> str:
    """The module text of `@f` computing `family`."""
    if family == CONTROL_FLOW:
        return _control_flow()
    if family in EXTRA:
        name, arrays, attrs = EXTRA[family]
        attrs = {"transpose_a": False, "transpose_b": False, **attrs} \
            if name == "ember.matmul" else attrs
    else:
        name, arrays, attrs = family, ROWS[family][0], ROWS[family][1]
    return _module(name, [np.asarray(a) for a in arrays], attrs, False)[0]


def lower(family: str, chip: str, stop: str):
    with default_context():
        module = ir.Module.parse(family_module(family))
        try:
            return CudaBackend(CudaOptions(chip=chip)).lower(module, stop)
        except Exception as e:  # the op named, the backend's own message kept
            pytest.fail(f"{family}: the CUDA backend cannot lower it for {chip}: {e}",
                        pytrace=False)


# The long tail runs on sm_80 only unless slow tests run; sm_90 takes the products, the
# math functions and the reductions (its PTX ISA 8.0 path differs in what it may use).
SM90 = [f for f in FAMILIES if f.startswith(("matmul", "batch_matmul", "tanh", "reduce",
                                             "softmax", "erf", "add[", CONTROL_FLOW))]
CASES = [pytest.param(f, "sm_80", id=f"sm_80-{f}") for f in FAMILIES] + \
    [pytest.param(f, "sm_90", id=f"sm_90-{f}") for f in SM90] + \
    [pytest.param(f, "sm_90", id=f"sm_90-{f}", marks=pytest.mark.slow)
     for f in FAMILIES if f not in SM90]


@pytest.mark.parametrize("family, chip", CASES)
def test_ptxas_accepts_every_kernel(family, chip):
    with default_context():
        module = lower(family, chip, "binary")
        kernels = kernel_ptx(module)
    for name, ptx in kernels:
        try:
            cubin = ptxas.assemble(ptx, chip)
        except BackendError as e:
            pytest.fail(f"{family}: kernel module @{name}: {e}", pytrace=False)
        assert cubin[:4] == b"\x7fELF", f"{family}: ptxas gave no ELF cubin for @{name}"


# Ops computing something (not a view, a constant or a shape) must run as kernels.
NO_KERNEL = {"ember.constant", "ember.shape", "ember.reshape", "ember.dynamic_reshape",
             "ember.expand_dims", "ember.squeeze", "ember.fill"}


# Known gaps, each failing the check below today (strict: the mark must go when fixed).
# (ember-gpu-map maps the reductions to scalars, the operand checks and the counters'
# seeds; what remains is a read the host needs for itself.)
HOST_GAPS = {
    "ember.tensor_scatter": "each update's row index is read by the host loop (its range "
                            "check and the offset of the row's view): an element load",
}


@pytest.mark.parametrize("family", [
    pytest.param(f, marks=pytest.mark.xfail(reason=HOST_GAPS[f], strict=True))
    if f in HOST_GAPS else f for f in FAMILIES if f not in NO_KERNEL])
def test_host_code_touches_no_buffer(family):
    """After the gpu stage the host only launches kernels and handles scalars (a
    predicate, a loop counter: 0-d buffers, managed memory the host may read): a load,
    store or copy of a tensor's elements left there would compute on the CPU, over
    device memory."""
    with default_context():
        module = lower(family, "sm_80", "gpu")
        found = []
        for op in module.body.operations:
            if op.operation.name != "func.func":
                continue

            def visit(inner):
                if inner.name == "memref.copy" and _is_global(inner.operands[0]):
                    return ir.WalkResult.ADVANCE  # a host constant into managed memory
                if inner.name in ("memref.load", "memref.store", "memref.copy") and any(
                        ir.MemRefType(v.type).rank for v in inner.operands
                        if isinstance(v.type, ir.MemRefType)) or \
                        inner.name.startswith("linalg."):
                    found.append(inner.name)
                return ir.WalkResult.ADVANCE
            op.operation.walk(visit)
    assert not found, (f"{family}: the host code still runs {sorted(set(found))} on "
                       "device buffers after the gpu stage (not mapped to kernels)")


def _is_global(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.operation.name == "memref.get_global"

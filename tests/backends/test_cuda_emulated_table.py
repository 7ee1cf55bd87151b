"""The CUDA backend's mapped stage on every op of the eager-vs-numpy table and on the
passes' random programs (scf.if, scf.while, reductions, products):

- emulated (backend cuda-emulated: the mapped nests run on the CPU) against the reference
  kernels and the interpreter, as test_compiled_ops.py and test_compiled_differential.py
  check the CPU backend;
- lowered to the `gpu` stage: nothing that reads or writes elements is left on the host
  but the host's own reads of managed memory (a loop's or an if's condition, an error
  check's flag, an index the host slices with), every mapped nest became a launch;
- reductions of each type the parallel reduction takes lowered to PTX that ptxas accepts.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir

from ember.backends.cpu.compiler import compile_function, specialize
from ember.backends.cuda.backend import CudaBackend
from ember.backends.cuda.emulated import EmulatedBackend
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import dtypes
from ember.dialects.ember.irdl import default_context

ROOT = __file__.rsplit("/tests/", 1)[0]
for folder in ("tests/dialects", "tests/passes", "tests/backends"):
    sys.path.insert(0, f"{ROOT}/{folder}")
import program_generator  # noqa: E402
import test_compiled_ops as table  # noqa: E402
from test_compiled_differential import _check_float  # noqa: E402

# Ops whose host code reads device memory, each for a decision only the host can make:
# an error check's flag (division by zero, an index out of range) or a result's run-time
# size, staged through 0-d buffers; a scatter's row index (its view's offset), read where
# it is.
HOST_READS = {"ember.floordiv", "ember.mod", "ember.pow", "ember.gather",
              "ember.tensor_scatter", "ember.unique", "ember.where_indices"}
SEEDS = [0, 3, 7, 11, 17, 20, 33, 35]


@pytest.mark.parametrize("name", table.NAMES)
def test_table_op_emulated_matches_reference(name, monkeypatch):
    monkeypatch.setattr(table, "compile_function",
                        lambda *a: compile_function(*a, EmulatedBackend()))
    table._check(name, *table._row(name), dynamic=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(table.NAMES) - set(table.DYNAMIC_NOT_COMPILABLE)))
def test_table_op_emulated_with_dynamic_dims(name, monkeypatch):
    monkeypatch.setattr(table, "compile_function",
                        lambda *a: compile_function(*a, EmulatedBackend()))
    table._check(name, *table._row(name), dynamic=True)


@pytest.mark.parametrize("name", table.ELEMENTWISE)
def test_elementwise_table_op_emulated_on_empty_tensors(name, monkeypatch):
    monkeypatch.setattr(table, "compile_function",
                        lambda *a: compile_function(*a, EmulatedBackend()))
    table.test_elementwise_op_on_empty_tensors(name)


def _program(seed, dtype):
    with default_context(), ir.Location.unknown():
        program = program_generator.generate(seed, dtype)
        return program, program.text(), ir.Module.parse(program.text())


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.float32], ids=["int32", "float32"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_emulated_matches_interpreter(seed, dtype):
    program, text, module = _program(seed, dtype)
    exe = compile_function(text, "main", program.arg_types, EmulatedBackend())
    rng = np.random.default_rng(seed)
    inputs = program.inputs(rng)
    for e, g in zip(Interpreter(module).call("main", inputs), exe(inputs)):
        if dtype.is_integer:
            assert np.array_equal(np.asarray(e), g), (seed, e, g)
        else:
            _check_float(e, g, seed)


def _host_accesses(module: ir.Module) -> tuple[list, list]:
    """(element accesses other than loads, loads) in the module's host functions."""
    writes, loads = [], []
    for fn in module.body.operations:
        if fn.operation.name != "func.func":
            continue

        def visit(o):
            name = o.operation.name
            if name == "memref.load":
                loads.append(o.operation)
            elif name == "memref.copy" and _from_global(o.operation.operands[0]):
                pass  # a host constant copied into managed memory (ember-gpu-device-allocs)
            elif name in ("memref.store", "memref.copy", "scf.parallel") or \
                    name.split(".")[0] in ("linalg", "vector"):
                writes.append(str(o.operation))
            return ir.WalkResult.ADVANCE
        fn.operation.walk(visit)
    return writes, loads


def _from_global(value) -> bool:
    owner = value.owner.operation if isinstance(value, ir.OpResult) else None
    return owner is not None and owner.name == "memref.get_global"


_DECISIONS = ("scf.if", "scf.condition", "scf.while", "scf.for", "scf.yield", "func.call",
              "memref.subview", "memref.alloc", "gpu.launch_func")


def _decides(op) -> bool:
    """Whether the value of `op` (through arithmetic) only decides what the host does:
    branches, loops, error calls, views, allocations, launch sizes."""
    for result in op.results:
        for use in result.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user.name.split(".")[0] == "arith":
                if not _decides(user):
                    return False
            elif user.name not in _DECISIONS:
                return False
    return True


def _to_gpu(text: str, symbol: str, types) -> ir.Module:
    module = specialize(text, symbol, types)
    with module.context:
        CudaBackend().lower(module, stop="gpu")
    return module


@pytest.mark.parametrize("name", table.NAMES)
def test_table_op_leaves_no_element_access_on_the_host(name):
    arrays, attrs = table._row(name)
    text, args = table._module(name, arrays, attrs, False)
    module = _to_gpu(text, "f", [table._type(a, False) for a in args])
    writes, loads = _host_accesses(module)
    assert not writes, writes
    assert not loads or name in HOST_READS, [str(load) for load in loads]
    ranked = [load for load in loads if ir.MemRefType(load.operands[0].type).rank]
    assert not ranked or name == "ember.tensor_scatter", [str(load) for load in ranked]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_leaves_only_reads_on_the_host(seed):
    program, text, _ = _program(seed, dtypes.float32)
    module = _to_gpu(text, "main", program.arg_types)  # kept alive: `loads` point into it
    writes, loads = _host_accesses(module)
    assert not writes, writes  # the loads left: the conditions of its ifs and loops
    assert all(_decides(load) for load in loads), [str(load) for load in loads]


PTXAS = os.path.join(sys.prefix, "lib", f"python{sys.version_info.major}."
                     f"{sys.version_info.minor}", "site-packages", "nvidia", "cuda_nvcc",
                     "bin", "ptxas")
REDUCTIONS = """
func.func @r(%a: tensor<7x300xf32>, %b: tensor<300x5xf64>, %c: tensor<1000xi32>,
             %d: tensor<3x257xi64>) -> (tensor<7xf32>, tensor<5xf64>, tensor<i32>,
                                         tensor<3xi64>) {
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 1>, keepdims = false}
      : (tensor<7x300xf32>) -> tensor<7xf32>
  %1 = "ember.reduce_max"(%b) {axes = array<i64: 0>, keepdims = false}
      : (tensor<300x5xf64>) -> tensor<5xf64>
  %2 = "ember.reduce_sum"(%c) {axes = array<i64: 0>, keepdims = false}
      : (tensor<1000xi32>) -> tensor<i32>
  %3 = "ember.reduce_min"(%d) {axes = array<i64: 1>, keepdims = false}
      : (tensor<3x257xi64>) -> tensor<3xi64>
  return %0, %1, %2, %3 : tensor<7xf32>, tensor<5xf64>, tensor<i32>, tensor<3xi64>
}
"""


def test_parallel_reductions_become_warp_shuffles_ptxas_accepts(tmp_path):
    with default_context():
        module = ir.Module.parse(REDUCTIONS)
    with module.context:
        ptx = CudaBackend().lower(module, stop="ptx")
    kernels = ptx.split("// gpu.binary")[1:]
    assert sum("shfl.sync.bfly" in k for k in kernels) == 4, ptx
    for i, kernel in enumerate(kernels):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(kernel.split("\n", 1)[1])
        done = subprocess.run([PTXAS, "-arch=sm_80", str(path), "-o", os.devnull],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


ELEMENTWISE = """
func.func @e(%x: tensor<6x64xf32>, %r: tensor<64xf32>) -> tensor<6x64xf32> {
  %0 = "ember.mul"(%x, %r) : (tensor<6x64xf32>, tensor<64xf32>) -> tensor<6x64xf32>
  %1 = "ember.add"(%0, %x) : (tensor<6x64xf32>, tensor<6x64xf32>) -> tensor<6x64xf32>
  return %1 : tensor<6x64xf32>
}
"""


def test_contiguous_elementwise_loads_4_floats_at_once():
    with default_context():
        module = ir.Module.parse(ELEMENTWISE)
    with module.context:
        ptx = CudaBackend().lower(module, stop="ptx")
    assert ptx.count("ld.global.v4.b32") == 2 and ptx.count("st.global.v4.b32") == 1, ptx

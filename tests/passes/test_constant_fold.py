"""ember-constant-fold beyond the lit tests: folded constants give the interpreter the same
values (dtype and bits) as running the ops, also after a print/parse round trip; the size cap
counts result bytes; kernels that raise and effects are left alone; tensor.extract folds to
arith.constant for the element types arith.constant takes; constants a fold erased before the
walk met them (an unstructured body) are never touched."""

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from ember.backends.interpreter import Interpreter
from ember.dialects.ember import creation, elementwise, indexing, nn, reduction, structure
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import iter_ops
from ember.passes.ir_utils import op_id
from ember.passes.transforms.constant_fold import ConstantFoldPass


@pytest.fixture(scope="module")
def mlir_context():
    context = make_context()
    with context, ir.Location.unknown():
        yield context


def c(value, dtype=None):
    return emit(creation.ConstantOp, (), {"value": np.asarray(value, dtype=dtype)})


F32, I32, I64 = np.float32, np.int32, np.int64
SEED = [7, 42]
# name -> body building one op (or a short chain) on constants
CASES = {
    "add-broadcast": lambda: emit(elementwise.AddOp, [c([1, 2], I32), c(10, I32)]),
    "int-truediv-gives-f64": lambda: emit(elementwise.DivOp, [c([1, 7], I32), c([2, 3], I32)]),
    "float-div-by-zero": lambda: emit(elementwise.DivOp, [c([1, -1, 0], F32), c(0.0, F32)]),
    "sqrt-of-negative": lambda: emit(elementwise.SqrtOp, [c([-1.0, 4.0], F32)]),
    "exp-bf16": lambda: emit(elementwise.ExpOp, [c([0.5, 1.0], ml_dtypes.bfloat16)]),
    "pow-f16": lambda: emit(elementwise.PowOp, [c([2.0, 3.0], np.float16), c(2.0, np.float16)]),
    "cast-nan-to-i8": lambda: emit(creation.CastOp, [c([np.nan, 300.0, -1.5], F32)],
                                   {"dtype": "int8"}),
    "matmul": lambda: emit(structure.MatmulOp, [c(np.arange(6).reshape(2, 3), F32),
                                                c(np.ones((3, 2)), F32)]),
    "reduce-mean": lambda: emit(reduction.ReduceMeanOp, [c([[1, 2], [3, 5]], F32)],
                                {"axes": (1,)}),
    "softmax": lambda: emit(nn.SoftmaxOp, [c([[1.0, 2.0, 3.0]], F32)]),
    "gather": lambda: emit(indexing.GatherOp, [c([10, 20, 30], I64), c([2, 0], I32)]),
    "one-hot": lambda: emit(indexing.OneHotOp, [c([0, 2], I32), c(1.0, F32), c(0.0, F32)],
                            {"depth": 3}),
    "concat": lambda: emit(structure.ConcatOp, [c([[1, 2]], I32), c([[3, 4]], I32)],
                           {"dim": 0}),
    "random-normal": lambda: emit(creation.RandomNormalOp, [c(SEED, I64)],
                                  {"shape": (2, 2), "dtype": "float32"}),
    "equal-strings": lambda: emit(elementwise.EqualOp, [c(np.array(["a", "b"], object)),
                                                        c(np.array(["a", "c"], object))]),
    "chain": lambda: emit(elementwise.MulOp, [emit(elementwise.NegOp, [c([1, -2], I32)]),
                                              c(3, I32)]),
}


def _module(body) -> ir.Module:
    module = ir.Module.create()
    build_function(module, "main", [], body)
    return module


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_folded_constants_match_the_interpreter_bit_for_bit(mlir_context, name):
    module = _module(CASES[name])
    (expected,) = Interpreter(module).call("main", [])
    stats = ConstantFoldPass().apply(module)
    assert stats["folded"] >= 1
    body = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0]]
    assert body == ["ember.constant", "func.return"], str(module)
    reparsed = ir.Module.parse(str(module))
    for folded in (module, reparsed):
        (got,) = Interpreter(folded).call("main", [])
        assert _same_bits(expected, got), f"{name}: {expected!r} became {got!r}"


@pytest.mark.parametrize("cap,folds", [(31, False), (32, True)])
def test_size_cap_counts_the_bytes_of_the_result(mlir_context, cap, folds):
    module = _module(lambda: emit(structure.BroadcastToOp, [c(1.0, F32)], {"shape": (8,)}))
    stats = ConstantFoldPass(size_cap=cap).apply(module)
    assert stats.as_dict() == ({"folded": 1} if folds else {"skipped-size-cap": 1})


@pytest.mark.parametrize("name,body", [
    ("floordiv-by-zero", lambda: emit(elementwise.FloorDivOp, [c([1, 2], I32), c([1, 0], I32)])),
    ("mod-by-zero", lambda: emit(elementwise.ModOp, [c([1, 2], I64), c(0, I64)])),
    ("int-negative-power", lambda: emit(elementwise.PowOp, [c([2], I32), c([-1], I32)])),
    ("gather-out-of-range", lambda: emit(indexing.GatherOp, [c([1, 2], I32), c([5], I32)])),
])
def test_kernel_errors_stay_run_time_errors(mlir_context, name, body):
    module = _module(body)
    before = str(module)
    assert ConstantFoldPass().apply(module).as_dict() == {}
    assert str(module) == before


def test_effects_and_unknown_seeds_are_not_folded(mlir_context):
    module = ir.Module.parse("""
      func.func @main(%r: !ember.resource<tensor<2xi64>>, %seed: tensor<2xi64>) -> tensor<2xf32> {
        %s = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
        "ember.assign_variable"(%r, %s) : (!ember.resource<tensor<2xi64>>, tensor<2xi64>) -> ()
        "ember.print"(%s) {end = "\\0A", format = "{}", stream = "stderr", summarize = 3 : i64} : (tensor<2xi64>) -> ()
        %u = "ember.random_uniform"(%seed) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64,
            shape = array<i64: 2>} : (tensor<2xi64>) -> tensor<2xf32>
        return %u : tensor<2xf32>
      }""")
    before = str(module)
    assert ConstantFoldPass().apply(module).as_dict() == {}
    assert str(module) == before


@pytest.mark.parametrize("element,value,folds", [
    ("i1", "true", True), ("i8", "-3", True), ("i64", "9000000000", True),
    ("f16", "1.5", True), ("bf16", "-2.0", True), ("f64", "0x7FF0000000000000", True),
    ("ui8", "200", False), ("!ember.string", '"s"', False),
])
def test_extract_folds_for_the_types_arith_constant_takes(mlir_context, element, value, folds):
    t = f"tensor<2x{element}>"
    module = ir.Module.parse(f"""
      func.func @main() -> {element} {{
        %c = "ember.constant"() {{value = dense<{value}> : {t}}} : () -> {t}
        %i = arith.constant 1 : index
        %e = tensor.extract %c[%i] : {t}
        return %e : {element}
      }}""")
    stats = ConstantFoldPass().apply(module)
    assert stats["folded"] == int(folds)
    assert ("tensor.extract" in str(module)) != folds
    module.operation.verify()


def test_constants_erased_before_the_walk_meets_them_are_skipped(mlir_context, monkeypatch):
    # The add's operands are defined in a block listed after the add's: the fold erases them
    # (now unused) before the walk reaches them, and touching the freed ops reads freed memory.
    module = ir.Module.parse("""
      func.func @main() -> tensor<i32> {
        cf.br ^bb2
      ^bb1:
        %s = "ember.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        return %s : tensor<i32>
      ^bb2:
        %a = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
        %b = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
        cf.br ^bb1
      }""")
    constants = {op_id(op) for op in iter_ops(module.operation) if op.name == "ember.constant"}
    visited = []
    fold = ConstantFoldPass._fold

    def spy(self, op, *rest):
        visited.append(op_id(op))  # the pointer only: reads nothing of the op
        return fold(self, op, *rest)
    monkeypatch.setattr(ConstantFoldPass, "_fold", spy)
    assert ConstantFoldPass().apply(module).as_dict() == {"folded": 1}
    assert len(constants) == 2 and not constants & set(visited)
    module.operation.verify()
    assert str(module).count("ember.constant") == 1 and "dense<3>" in str(module)

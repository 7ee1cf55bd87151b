"""`iter_ops` and `find_op` (dialects/ember/verifier.py), the walks every pass, analysis and
backend check uses: MLIR's C++ walk must give the ops of the Python pre-order walk it
replaced, in the same order and without the root; `find_op` stops at the first match; and
nesting deeper than Python's recursion limit, built by Python code rather than parsed,
walks without a crash."""

import threading

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import find_op, iter_ops

NESTED = """
func.func @f(%a: i1, %n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %x) -> f32 {
    %y = scf.if %a -> f32 {
      %t = arith.addf %s, %s : f32
      scf.yield %t : f32
    } else {
      %u = arith.mulf %s, %s : f32
      %v = scf.if %a -> f32 {
        scf.yield %u : f32
      } else {
        scf.yield %s : f32
      }
      scf.yield %v : f32
    }
    scf.yield %y : f32
  }
  %w = arith.negf %r : f32
  return %w : f32
}

func.func @g(%x: f32) -> f32 {
  %e = scf.execute_region -> f32 {
    cf.br ^bb1
  ^bb1:
    scf.yield %x : f32
  }
  return %e : f32
}
"""


@pytest.fixture(scope="module")
def module():
    with make_context():
        yield ir.Module.parse(NESTED)


def _recursive(op: ir.Operation) -> list[ir.Operation]:
    """The plain recursive pre-order walk (regions, blocks, operations), root left out."""
    found = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                found.append(child.operation)
                found += _recursive(child.operation)
    return found


def test_iter_ops_is_the_recursive_pre_order_without_the_root(module):
    for root in [module.operation, *(op.operation for op in module.body.operations)]:
        expected = _recursive(root)
        got = iter_ops(root)
        assert [o.name for o in got] == [o.name for o in expected]
        assert got == expected  # the same ops (identity), not only the same names
        assert all(type(o) is ir.Operation for o in got)
    names = [o.name for o in iter_ops(module.operation)]
    assert names[:6] == ["func.func", "arith.constant", "arith.constant", "scf.for", "scf.if",
                         "arith.addf"]
    assert names.count("scf.if") == 2 and names.count("func.func") == 2


def test_iter_ops_of_an_op_without_regions_is_empty(module):
    constant = iter_ops(module.operation)[1]
    assert constant.name == "arith.constant" and iter_ops(constant) == []


def test_find_op_stops_at_the_first_match_in_pre_order(module):
    asked = []

    def is_if(op):
        asked.append(op.name)
        return op.name == "scf.if"
    found = find_op(module.operation, is_if)
    assert found.name == "scf.if" and found == iter_ops(module.operation)[4]
    assert asked == ["func.func", "arith.constant", "arith.constant", "scf.for", "scf.if"]
    assert find_op(module.operation, lambda op: op.name == "builtin.module") is None  # root
    assert find_op(module.operation, lambda op: False) is None


def test_find_op_raises_what_the_predicate_raises(module):
    class Stop(Exception):
        pass

    def fails(op):
        raise Stop(op.name)
    with pytest.raises(Stop, match="func.func"):  # not MLIR's RuntimeError around it
        find_op(module.operation, fails)


def _nest(depth: int) -> ir.Module:
    """`depth` scf.execute_regions, each holding the next, built without the parser."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        parent = ir.Operation.create("scf.execute_region", regions=1)
    for _ in range(depth - 1):
        block = parent.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            parent = ir.Operation.create("scf.execute_region", regions=1)
            ir.Operation.create("scf.yield")
    return module


def test_nesting_deeper_than_the_recursion_limit_walks():
    depth = 5000  # past Python's default limit of 1000 frames, and past the parser's 512
    results = {}

    def walk():
        with make_context(), ir.Location.unknown():
            module = _nest(depth)
            ops = iter_ops(module.operation)
            first_yield = find_op(module.operation, lambda op: op.name == "scf.yield")
            innermost = ops[depth - 1]  # the regions, then the yields from the inside out
            results["count"] = len(ops)
            results["ordered"] = first_yield == ops[depth] and \
                innermost.name == "scf.execute_region" and not len(innermost.regions[0].blocks)
    walk()
    assert results == {"count": 2 * depth - 1, "ordered": True}
    thread = threading.Thread(target=walk)  # a thread's stack, not the main one's
    thread.start()
    thread.join()
    assert results == {"count": 2 * depth - 1, "ordered": True}

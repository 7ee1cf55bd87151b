"""Lowering of `ember.unique`: a stable sort, then two scalar loops that compact the values
in order of first occurrence, giving a result of run-time size (`?`).

Algorithm (n = the input's size):
  1. (sorted, order) = the ascending stable sort of `ember.sort` (sorting.sort_rows): equal
     values become neighbours, each run led by its first occurrence in the input.
  2. `scf.for` j over sorted positions: a run starts where sorted[j] != sorted[j - 1]
     (`cmpf oeq` for floats: -0.0 joins 0.0, every NaN starts its own run); carry the
     run's leader and write rep[order[j]] = leader: each element's first occurrence.
  3. `scf.for` i over the input, carrying (output, idx, count): element i is a first
     occurrence when rep[i] == i; it is written to output[count], idx[i] = count, and count
     grows; otherwise idx[i] = idx[rep[i]] (rep[i] < i, already set).
  4. The result is `tensor.extract_slice` output[0:count].
Steps 2 and 3 carry their tensors through the loops and write them with `tensor.insert`,
which bufferizes in place: O(n) after the O(n log^2 n) sort, no allocation per element.
Upstream equivalent: none (tf.unique has no MLIR lowering; XLA rejects dynamic sizes).

Before:
    %y, %i = "ember.unique"(%x) {out_idx = i32} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>)
After (sketch):
    %sorted:3 = scf.while ...                        // the sort of step 1
    %rep:2 = scf.for %j = %c0 to %n step %c1 iter_args(%r = %empty, %lead = %c0_i32) ...
    %out:3 = scf.for %i = %c0 to %n step %c1 iter_args(%o = %e0, %d = %e1, %k = %c0) ...
    %y = tensor.extract_slice %out#0[0] [%out#2] [1] : tensor<?xf32> to tensor<?xf32>
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ember.dialects.ember import sorting as S
from ember.passes.conversions.ember_to_linalg.builders import (fitted, new_tensor, signless,
                                                               size_of)
from ember.passes.conversions.ember_to_linalg.common import Lowering, element_type, lowers
from ember.passes.conversions.ember_to_linalg.sorting import sort_rows


def _index() -> ir.Type:
    return ir.IndexType.get()


def _const(value: int) -> ir.Value:
    return arith.ConstantOp(_index(), value).result


def _equal(dtype, x: ir.Value, y: ir.Value) -> ir.Value:
    if dtype.is_floating:
        return arith.CmpFOp(arith.CmpFPredicate.OEQ, x, y).result
    return arith.CmpIOp(arith.CmpIPredicate.eq, x, y).result


@lowers(S.UniqueOp)
@fitted
def lower_unique(op, lw: Lowering):
    (t,) = lw.operand_types
    x = lw.operands[0]
    n = size_of(lw, x, t, 0)
    n = _const(n) if isinstance(n, int) else n
    ordered, order = sort_rows(lw, x, t, descending=False)
    rep = _first_occurrences(t, ordered, order, n)
    return _compact(lw, t, x, rep, n)


def _first_occurrences(t, ordered: ir.Value, order: ir.Value, n: ir.Value) -> ir.Value:
    """Step 2: rep[i] (i32) = the input position of the first occurrence of x[i]'s value."""
    i32 = ir.IntegerType.get_signless(32)
    loop = scf.ForOp(_const(0), n, _const(1),
                     [new_tensor([n], i32), arith.ConstantOp(i32, 0).result])
    with ir.InsertionPoint(loop.body):
        j = loop.induction_variable
        rep, leader = loop.inner_iter_args
        previous = arith.MaxSIOp(arith.SubIOp(j, _const(1)).result, _const(0)).result
        same = arith.AndIOp(
            arith.CmpIOp(arith.CmpIPredicate.sgt, j, _const(0)).result,
            _equal(t.dtype, tensor.ExtractOp(ordered, [j]).result,
                   tensor.ExtractOp(ordered, [previous]).result)).result
        position = tensor.ExtractOp(order, [j]).result
        leader = arith.SelectOp(same, leader, position).result
        at = arith.IndexCastOp(_index(), position).result
        scf.YieldOp([tensor.InsertOp(leader, rep, [at]).result, leader])
    return loop.results[0]


def _compact(lw: Lowering, t, x: ir.Value, rep: ir.Value, n: ir.Value) -> list[ir.Value]:
    """Steps 3 and 4: the first occurrences in input order, and every element's idx."""
    et, it = element_type(t.dtype), element_type(lw.attrs["out_idx"])
    loop = scf.ForOp(_const(0), n, _const(1), [new_tensor([n], et), new_tensor([n], it),
                                              _const(0)])
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        out, idx, count = loop.inner_iter_args
        leader = arith.IndexCastOp(_index(), tensor.ExtractOp(rep, [i]).result).result
        first = arith.CmpIOp(arith.CmpIPredicate.eq, leader, i).result
        value = arith.SelectOp(first, signless(tensor.ExtractOp(x, [i]).result),
                               tensor.ExtractOp(out, [count]).result).result
        own = arith.IndexCastOp(it, count).result
        index = arith.SelectOp(first, own, tensor.ExtractOp(idx, [leader]).result).result
        step = arith.SelectOp(first, _const(1), _const(0)).result
        scf.YieldOp([tensor.InsertOp(value, out, [count]).result,
                     tensor.InsertOp(index, idx, [i]).result,
                     arith.AddIOp(count, step).result])
    out, idx, count = loop.results
    dynamic = ir.ShapedType.get_dynamic_size()
    y = tensor.ExtractSliceOp(ir.RankedTensorType.get([dynamic], et), out, [], [count], [],
                              [0], [dynamic], [1]).result
    return [y, idx]

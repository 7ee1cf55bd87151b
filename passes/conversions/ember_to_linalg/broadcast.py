"""Broadcasting at run time: elementwise operands whose `?` dims meet other sizes.

A `?` dim of an operand may turn out 1 at run time where the result's dim is not: numpy
broadcasts it, but the static maps of `Lowering.elementwise` read it as the full dim (and
read past its end). The static path is kept for everything that cannot happen, and for the
rest (the common case, as fast as before plus a few compares):

  1. For each result dim where an operand's `?` dim meets another operand's dim that is
     not a static 1, the run-time size is the last of them that is not 1; a dim that is
     neither 1 nor that size fails the op's shape site (checks.shape_check: eager's
     OpShapeError, with the run-time shapes).
  2. An operand whose `?` dim there is 1 while the result's is not is materialised at the
     result's size in an `scf.if` branch (a generic reading it through `select`ed
     indices); otherwise it is used as is. Either way every `?` dim of the operand then
     equals the result's, so the generic's maps stay affine.

Before (`x + y`, tensor<?xf32> and tensor<3xf32>, x of size 1 at run time):
    reads x[i] for i < 3 (past its end)
After:
    %n = (3 != 1 ? 3 : dim x 0 != 1 ? dim x 0 : 1); check dim x 0 in {1, %n}
    %xb = scf.if (dim x 0 == 1 and %n != 1) { broadcast x to %n } else { x }
    linalg.generic ins(%xb, %y) ...
"""

from __future__ import annotations

from typing import Sequence

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.checks import shape_check
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             element_type, tensor_type)


def runtime_positions(types: Sequence[TensorType], rank: int) -> list[int]:
    """The result dims where some operand's `?` dim meets another operand's dim that is
    not a static 1 (only there can a `?` broadcast, or mismatch, at run time)."""
    found = []
    for p in range(rank):
        dims = [t.shape[p - (rank - len(t.shape))] for t in types
                if p - (rank - len(t.shape)) >= 0]
        if None in dims and sum(1 for d in dims if d != 1) > 1:
            found.append(p)
    return found


def broadcast_at_run_time(lw: Lowering, inputs: Sequence[ir.Value],
                          types: Sequence[TensorType], out: TensorType, tail: int = 0):
    """Checks and broadcasts `inputs` for the elementwise op being lowered (module doc);
    returns the inputs to use and the result's run-time size at each dim that needs one.
    With `tail`, only the dims before each operand's last `tail` broadcast (a matmul's
    batch dims; `out` then has only those)."""
    full = list(types)
    types = [TensorType(t.dtype, t.shape[:len(t.shape) - tail]) for t in types]
    rank = len(out.shape)
    positions = runtime_positions(types, rank)
    if not positions:
        return list(inputs), {}
    one = lw.index(1)

    def dim(value, t, j):
        return lw.index(t.shape[j]) if t.shape[j] is not None else \
            tensor.DimOp(value, lw.index(j)).result

    sizes, bad = {}, arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
    for p in positions:
        dims = [dim(v, t, p - (rank - len(t.shape))) for v, t in zip(inputs, types)
                if p - (rank - len(t.shape)) >= 0 and t.shape[p - (rank - len(t.shape))] != 1]
        size = one  # numpy's rule: the size that is not 1, if any (0 beats 1)
        for d in dims:
            size = arith.SelectOp(_ne(d, one), d, size).result
        sizes[p] = size
        for d in dims:
            wrong = arith.AndIOp(_ne(d, one), _ne(d, size)).result
            bad = arith.OrIOp(bad, wrong).result
    shape_check(lw, bad)
    result = []
    for value, t, whole in zip(inputs, types, full):
        lead = rank - len(t.shape)
        mine = [(j, sizes[lead + j]) for j, d in enumerate(t.shape)
                if d is None and lead + j in sizes]
        if not mine:
            result.append(value)
            continue
        small = arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
        for j, size in mine:
            d = tensor.DimOp(value, lw.index(j)).result
            small = arith.OrIOp(small, arith.AndIOp(_eq(d, one), _ne(size, one)).result).result
        branch = scf.IfOp(small, [tensor_type(whole)], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([materialize(lw, value, whole, dict(mine))])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([value])
        result.append(branch.results[0])
    return result, sizes


def materialize(lw: Lowering, value: ir.Value, t: TensorType, sizes: dict) -> ir.Value:
    """`value` broadcast to `sizes` at its dims `sizes` names (its dims of size 1 there
    repeat), of its own type."""
    rank = len(t.shape)
    shape = [sizes[j] if j in sizes else (tensor.DimOp(value, lw.index(j)).result
                                          if d is None else d)
             for j, d in enumerate(t.shape)]
    dest = tensor.EmptyOp(shape, element_type(t.dtype)).result
    zero, one = lw.index(0), lw.index(1)
    own = {j: tensor.DimOp(value, lw.index(j)).result for j in sizes}
    generic = linalg.GenericOp(
        [tensor_type(t)], [], [dest],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank))
    block = generic.regions[0].blocks.append(element_type(t.dtype))
    with ir.InsertionPoint(block):
        indices = []
        for j in range(rank):
            i = linalg.IndexOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), j)).result
            if j in own:
                i = arith.SelectOp(_eq(own[j], one), zero, i).result
            indices.append(i)
        linalg.YieldOp([tensor.ExtractOp(value, indices).result])
    return generic.results[0]


def _eq(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.CmpIOp(arith.CmpIPredicate.eq, a, b).result


def _ne(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.CmpIOp(arith.CmpIPredicate.ne, a, b).result

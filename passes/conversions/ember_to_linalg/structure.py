"""Lowering of the layout ops: transpose, reshape, broadcast_to, expand_dims, squeeze, and the
run-time check before an upstream `tensor.concat`.

Reshapes that only merge or only split neighbouring dims are `tensor.collapse_shape` /
`tensor.expand_shape` (expand_dims and squeeze always are); other static reshapes go through
1-D; dynamic ones are `tensor.reshape` with a shape tensor computed from `tensor.dim`.
broadcast_to is a `linalg.generic` whose input map drops leading dims and pins size-1 dims.
`tensor.concat` is upstream and stays. Upstream equivalent: `tosa-to-linalg`'s reshape
patterns. matmul is matmul.py; the builders the rules share are builders.py.
"""

from __future__ import annotations

import math
from typing import Sequence

from mlir import ir
from mlir.dialects import arith, scf, tensor

from ember.dialects.ember import structure as S
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, check_equal, collapse,
                                                               expand, fitted, generic, new_tensor,
                                                               ranked, size_of, sizes_of, transpose,
                                                               unit_groups)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering, LoweringError,
                                                             element_type, lowers, tensor_type)


# -- layout ops --------------------------------------------------------------------------


@lowers(S.TransposeOp)
@fitted
def lower_transpose(op, lw: Lowering):
    (t,), perm = lw.operand_types, list(lw.attrs["perm"])
    if perm == sorted(perm):
        return [lw.operands[0]]
    return [transpose(lw, lw.operands[0], t, perm)]


def _split_groups(big: Sequence[int], small: Sequence[int]):
    """Groups of consecutive `big` dims whose products are the `small` dims, or None."""
    if not small:
        return [] if all(d == 1 for d in big) else None
    groups, i = [], 0
    for d in small:
        if i >= len(big):
            return None
        group, prod = [i], big[i]
        i += 1
        while prod != d and i < len(big) and prod != 0:
            group.append(i)
            prod *= big[i]
            i += 1
        if prod != d:
            return None
        groups.append(group)
    if any(d != 1 for d in big[i:]):
        return None
    groups[-1].extend(range(i, len(big)))
    return groups


@lowers(S.ReshapeOp)
@fitted
def lower_reshape(op, lw: Lowering):
    (t,) = lw.operand_types
    x, et = lw.operands[0], element_type(t.dtype)
    shape = ranked(t)
    out = S.ReshapeOp.infer(t, shape=lw.attrs["shape"])  # static whenever the input is
    if not t.is_static:
        return [_dynamic_reshape(lw, x, t, out)]
    if shape == out.shape:
        return [x]
    if len(shape) > len(out.shape) and (g := _split_groups(shape, out.shape)) is not None:
        return [collapse(x, shape, et, g)]
    if len(shape) < len(out.shape) and (g := _split_groups(out.shape, shape)) is not None:
        return [expand(x, out.shape, et, g)]
    flat = x if len(shape) == 1 else collapse(x, shape, et, [list(range(len(shape)))])
    if len(out.shape) == 1:
        return [flat]
    return [expand(flat, out.shape, et, [list(range(len(out.shape)))])]


def _dynamic_reshape(lw: Lowering, x, t: TensorType, out: TensorType) -> ir.Value:
    """`tensor.reshape` with the shape attribute's -1 dim computed as size / known."""
    wanted = list(lw.attrs["shape"])
    dims = []
    total = lw.index(math.prod(d for d in t.shape if d is not None))
    for i, d in enumerate(t.shape):
        if d is None:
            total = arith.MulIOp(total, size_of(lw, x, t, i)).result
    known = math.prod(d for d in wanted if d != -1)
    if -1 in wanted:
        if known == 0:
            raise LoweringError(f"cannot infer the -1 dim of shape {wanted} with a 0 dim")
        inferred = arith.DivUIOp(total, lw.index(known)).result
        # the element count must be a multiple of the known dims' product
        check_equal(lw, arith.MulIOp(inferred, lw.index(known)).result, total)
    else:
        check_equal(lw, total, known)
    for d in wanted:
        dims.append(inferred if d == -1 else d)
    # collapse to 1-D, expand to the target (tensor.reshape of a dynamic shape does not
    # lower to LLVM here: an unrealized cast is left)
    et = element_type(t.dtype)
    if 0 in t.shape:  # no elements to move (and upstream's collapse of a group holding a
        # static 0 and a `?` is typed inconsistently by canonicalize: memrefs refuse it)
        return tensor.CastOp(tensor_type(out), tensor.EmptyOp(dims, et).result).result
    flat = x if len(t.shape) == 1 else collapse(x, t.shape, et, [list(range(len(t.shape)))])
    if all(isinstance(d, int) for d in dims):  # the count was checked to be theirs
        flat = tensor.CastOp(ir.RankedTensorType.get([known], et), flat).result
    if not dims:
        return tensor.CollapseShapeOp(tensor_type(out), flat, []).result
    if len(dims) == 1:
        return tensor.CastOp(tensor_type(out), flat).result
    return tensor.CastOp(tensor_type(out), expand(flat, dims, et,
                                                  [list(range(len(dims)))])).result


@lowers(S.BroadcastToOp)
@fitted
def lower_broadcast_to(op, lw: Lowering):
    (t,), x = lw.operand_types, lw.operands[0]
    target = list(lw.attrs["shape"])
    if ranked(t) == tuple(target):
        return [x]
    rank, et = len(target), element_type(t.dtype)
    lead = rank - len(t.shape)
    dynamic = {j: target[lead + j] for j, d in enumerate(t.shape) if d is None}
    if dynamic:  # a `?` dim must be 1 (repeated) or the target's size
        x = _broadcast_dynamic(lw, x, t, dynamic)
    init = new_tensor(target, et)
    maps = [lw.broadcast_map(t, rank), ir.AffineMap.get_identity(rank)]
    return generic([x], [et], [init], maps, [PARALLEL] * rank, lambda v, _: [v])


def _broadcast_dynamic(lw: Lowering, x, t: TensorType, target: dict) -> ir.Value:
    """`x` with each `?` dim j (sized `target[j]` in the result) checked to be 1 or that
    size at run time, and broadcast to it (materialised) where it is 1."""
    from ember.passes.conversions.ember_to_linalg.broadcast import materialize
    from ember.passes.conversions.ember_to_linalg.checks import shape_check
    i1 = ir.IntegerType.get_signless(1)
    bad, small = arith.ConstantOp(i1, 0).result, arith.ConstantOp(i1, 0).result
    one = lw.index(1)
    for j, size in target.items():
        d = size_of(lw, x, t, j)
        is_one = arith.CmpIOp(arith.CmpIPredicate.eq, d, one).result
        wrong = arith.CmpIOp(arith.CmpIPredicate.ne, d, lw.index(size)).result
        bad = arith.OrIOp(bad, arith.AndIOp(wrong, arith.XOrIOp(
            is_one, arith.ConstantOp(i1, 1).result).result).result).result
        if size != 1:
            small = arith.OrIOp(small, is_one).result
    shape_check(lw, bad)
    branch = scf.IfOp(small, [tensor_type(t)], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([materialize(lw, x, t, {j: lw.index(s) for j, s in target.items()})])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([x])
    return branch.results[0]


@lowers(S.ExpandDimsOp)
@fitted
def lower_expand_dims(op, lw: Lowering):
    (t,) = lw.operand_types
    x, rank = lw.operands[0], len(ranked(t))
    axis = lw.attrs["axis"] % (rank + 1)
    keep = [i for i in range(rank + 1) if i != axis]
    sizes = sizes_of(lw, x, t)
    return [expand(x, sizes[:axis] + [1] + sizes[axis:], element_type(t.dtype),
                   unit_groups(rank + 1, keep))]


@lowers(S.SqueezeOp)
@fitted
def lower_squeeze(op, lw: Lowering):
    (t,) = lw.operand_types
    x, shape = lw.operands[0], ranked(t)
    axes = {a % len(shape) for a in lw.attrs["axes"]} or \
        {i for i, d in enumerate(shape) if d == 1}
    if not axes:
        return [x]
    et = element_type(t.dtype)
    if any(shape[a] is None for a in axes):  # a `?` dim asserted to be 1: checked
        check_equal(lw, *[v for a in axes if shape[a] is None
                          for v in (size_of(lw, x, t, a), 1)])
        shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
        x = tensor.CastOp(ir.RankedTensorType.get(
            [DYNAMIC if d is None else d for d in shape], et), x).result
    keep = [i for i in range(len(shape)) if i not in axes]
    return [collapse(x, shape, et, unit_groups(len(shape), keep))]


def check_concat(op: ir.Operation, lw: Lowering) -> None:
    """Before an upstream `tensor.concat` (which stays): a run-time check that the
    operands agree in every dim but the concatenated one where some are `?` (upstream
    assumes it, and writes out of bounds otherwise); eager's error if not."""
    dim = lw.attrs["dim"]
    types = lw.operand_types
    pairs = []
    for k in range(len(types[0].shape) if types and types[0].shape else 0):
        if k == dim or all(t.shape[k] is not None for t in types):
            continue
        first = size_of(lw, lw.operands[0], types[0], k)
        for value, t in zip(lw.operands[1:], types[1:]):
            pairs += [first, size_of(lw, value, t, k)]
    if pairs:
        check_equal(lw, *pairs)


"""Builders the structural, indexing and nn lowering rules share: sizes of ranked operands
(static, or `tensor.dim`), run-time size checks, new and filled tensors, `linalg.generic`
with affine maps, collapse/expand of neighbouring dims, and `@fitted`, which casts a rule's
result to the op's declared type where that is more (or less) static.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Sequence, Union

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import dtypes
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering, LoweringError,
                                                             element_type, retype_ui8,
                                                             tensor_type)
from ember.passes.ir_utils import as_operation

Size = Union[int, ir.Value]  # a static size, or an SSA `index` value
DYNAMIC = ir.ShapedType.get_dynamic_size()


def is_half(dtype: DType) -> bool:
    return dtype in (dtypes.float16, dtypes.bfloat16)


def ranked(t: TensorType, what: str = "operand") -> tuple:
    """The shape of `t`, or a LoweringError if it is unranked."""
    if t.shape is None:
        raise LoweringError(f"{what} {t} must be ranked; run ember-shape-refine first")
    return t.shape


def signless(value: ir.Value) -> ir.Value:
    """Retypes `ui8` to `i8` in `value`'s defining op (its results, and the block arguments
    and results in its regions): named linalg ops and `tensor.extract` take their element
    types from operands that are still `ui8` while the pass runs."""
    owner = value.owner
    retype_ui8(as_operation(owner))
    return value


def size_of(lw: Lowering, value: ir.Value, t: TensorType, i: int) -> Size:
    """Dim `i` of `value`: its static size, or `tensor.dim` if it is dynamic."""
    d = ranked(t)[i]
    return tensor.DimOp(value, lw.index(i % len(t.shape))).result if d is None else d


def check_equal(lw: Lowering, *pairs: Size) -> None:
    """A run-time shape check (checks.shape_check) that each pair of sizes in `pairs`
    (flat: a0, b0, a1, b1, ...) is equal: the op's shape error (eager's) otherwise."""
    from ember.passes.conversions.ember_to_linalg.checks import shape_check
    i1 = ir.IntegerType.get_signless(1)
    bad = arith.ConstantOp(i1, 0).result
    for x, y in zip(pairs[0::2], pairs[1::2]):
        x = lw.index(x) if isinstance(x, int) else x
        y = lw.index(y) if isinstance(y, int) else y
        bad = arith.OrIOp(bad, arith.CmpIOp(arith.CmpIPredicate.ne, x, y).result).result
    shape_check(lw, bad)


def sizes_of(lw: Lowering, value: ir.Value, t: TensorType) -> list[Size]:
    """`t`'s sizes: static ints, and `tensor.dim` of `value` for dynamic dims."""
    return [size_of(lw, value, t, i) for i in range(len(ranked(t)))]


def fitted(rule: Callable) -> Callable:
    """Gives each value a rule returns its op's declared result type: a `tensor.cast` where
    the IR declares a dim static that the rule's sizes leave dynamic (or the reverse)."""
    @functools.wraps(rule)
    def wrapper(op, lw: Lowering):
        values = []
        for value, t in zip(rule(op, lw), lw.result_types):
            want = tensor_type(t)
            if str(value.type).replace("ui8>", "i8>") != str(want):
                value = tensor.CastOp(want, value).result
            values.append(value)
        return values
    return wrapper


def tensor_of(sizes: Sequence[Size], et: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([s if isinstance(s, int) else DYNAMIC for s in sizes], et)


def new_tensor(sizes: Sequence[Size], et: ir.Type) -> ir.Value:
    return tensor.EmptyOp(list(sizes), et).result


def filled(sizes: Sequence[Size], value: ir.Value) -> ir.Value:
    """A new tensor of `sizes` with every element `value` (`linalg.fill`)."""
    return linalg.fill(value, outs=[new_tensor(sizes, value.type)])


def amap(rank: int, exprs: Sequence) -> ir.AffineMap:
    """An affine map of `rank` dims whose results are dim numbers or affine expressions."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(e) if isinstance(e, int) else e
                                      for e in exprs])


def generic(inputs: Sequence[ir.Value], input_elems: Sequence[ir.Type],
            inits: Sequence[ir.Value], maps: Sequence[ir.AffineMap], iterators: Sequence[str],
            body: Callable[..., Sequence[ir.Value]]) -> list[ir.Value]:
    """A `linalg.generic` yielding `body(*input scalars, *init scalars)` into `inits`."""
    op = linalg.GenericOp([v.type for v in inits], list(inputs), list(inits),
                          ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          ir.ArrayAttr.get([ir.Attribute.parse(i) for i in iterators]))
    init_elems = [ir.RankedTensorType(v.type).element_type for v in inits]
    block = op.regions[0].blocks.append(*input_elems, *init_elems)
    with ir.InsertionPoint(block):
        linalg.YieldOp(list(body(*block.arguments)))
    return list(op.results)


def map_values(value: ir.Value, elem: ir.Type, sizes: Sequence[Size], out_elem: ir.Type,
               fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """The elementwise `fn` of `value` (whose shape is `sizes`) as a new tensor."""
    rank = len(sizes)
    ident = ir.AffineMap.get_identity(rank)
    return generic([value], [elem], [new_tensor(sizes, out_elem)], [ident, ident],
                   [PARALLEL] * rank, lambda x, _: [fn(x)])[0]


def truncated(value: ir.Value, sizes, dst: DType) -> ir.Value:
    """An f32 tensor truncated elementwise to the half float `dst`."""
    et = element_type(dst)
    return map_values(value, ir.F32Type.get(), sizes, et, lambda x: arith.TruncFOp(et, x).result)


def collapse(value: ir.Value, shape: Sequence, et: ir.Type, groups: list) -> ir.Value:
    """`tensor.collapse_shape` of `value` (of static-or-None `shape`) by `groups`.

    A value with a static 0 and a `?` dim has no elements to move: it becomes an empty
    tensor of the collapsed sizes instead. (Upstream canonicalize gives the bufferized
    collapse of a group holding both a static size of 0, which memref.collapse_shape's
    verifier then refuses: "collapsed dim must be dynamic if and only if reassociation
    group is dynamic", LLVM 22.1.)"""
    out = [None if any(shape[i] is None for i in g) else math.prod(shape[i] for i in g)
           for g in groups]
    rtype = ir.RankedTensorType.get([DYNAMIC if d is None else d for d in out], et)
    if 0 in shape and None in shape:
        index = ir.IndexType.get()
        sizes = []
        for g, d in zip(groups, out):
            size = 0 if any(shape[i] == 0 for i in g) else d
            if size is None:
                dims = [tensor.DimOp(value, arith.ConstantOp(index, i).result).result
                        for i in g]
                size = functools.reduce(lambda a, b: arith.MulIOp(a, b).result, dims)
            sizes.append(size)
        return tensor.CastOp(rtype, tensor.EmptyOp(sizes, et).result).result
    return tensor.CollapseShapeOp(rtype, value, groups).result


def expand(value: ir.Value, sizes: Sequence[Size], et: ir.Type, groups: list) -> ir.Value:
    """`tensor.expand_shape` of `value` into `sizes` (SSA values for dynamic ones)."""
    static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
    dynamic = [s for s in sizes if not isinstance(s, int)]
    return tensor.expand_shape(tensor_of(sizes, et), value, groups, dynamic, static)


def unit_groups(rank: int, keep: Sequence[int]) -> list:
    """Reassociation that folds every dim not in `keep` into a kept neighbour."""
    if not keep:
        return []
    groups, start = [], 0
    for k in keep:
        groups.append(list(range(start, k + 1)))
        start = k + 1
    groups[-1].extend(range(start, rank))
    return groups


def transpose(lw: Lowering, x: ir.Value, t: TensorType, perm) -> ir.Value:
    """`x` (of type `t`) with its dims permuted by `perm` (`linalg.transpose`)."""
    sizes = sizes_of(lw, x, t)
    init = new_tensor([sizes[p] for p in perm], element_type(t.dtype))
    return signless(linalg.transpose(x, outs=[init], permutation=list(perm)).results[0])

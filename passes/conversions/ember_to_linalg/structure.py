"""Lowering of structural ops: matmul, transpose, reshape, broadcast_to, expand_dims, squeeze.

matmul becomes `linalg.matmul` (2-D, or batch dims folded into the rows of a 2-D right
operand) or `linalg.batch_matmul` (equal batch dims, collapsed to one) on a zero-filled init;
batch dims that broadcast become one `linalg.generic` contraction whose indexing maps pin
size-1 batch dims to 0, so no operand is copied. Half floats accumulate in f32 (the named
ops extend their inputs to the init's type) and are truncated at the end, as the reference
kernel computes in f32. transpose_a/b are `linalg.transpose`s of the operand.

Reshapes that only merge or only split neighbouring dims are `tensor.collapse_shape` /
`tensor.expand_shape` (expand_dims and squeeze always are); other static reshapes go through
1-D; dynamic ones are `tensor.reshape` with a shape tensor computed from `tensor.dim`.
broadcast_to is a `linalg.generic` whose input map drops leading dims and pins size-1 dims.
`tensor.concat` is upstream and stays. Upstream equivalents: `tosa-to-linalg`'s matmul and
reshape patterns.

The helpers at the top (`sizes_of`, `new_tensor`, `filled`, `generic`, ...) are shared with
the indexing and nn rules. Rules size their results from the operands; `@fitted` casts a
result to the op's declared type where that is more (or less) static.

Before:
    %c = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false}
           : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
After:
    %e = tensor.empty() : tensor<4x5xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
           outs(%i : tensor<4x5xf32>) -> tensor<4x5xf32>
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Sequence, Union

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from ember.dialects.ember import dtypes
from ember.dialects.ember import structure as S
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, REDUCTION, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, retype_ui8,
                                                             tensor_type)
from ember.passes.ir_utils import as_operation

Size = Union[int, ir.Value]  # a static size, or an SSA `index` value
DYNAMIC = ir.ShapedType.get_dynamic_size()

# -- helpers shared with indexing.py and nn.py ---------------------------------------------


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


# -- matmul ------------------------------------------------------------------------------


def _swap_last(lw: Lowering, x: ir.Value, t: TensorType):
    rank = len(t.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return _transpose(lw, x, t, perm), t.with_shape(tuple(t.shape[p] for p in perm))


def _transpose(lw: Lowering, x: ir.Value, t: TensorType, perm) -> ir.Value:
    sizes = sizes_of(lw, x, t)
    init = new_tensor([sizes[p] for p in perm], element_type(t.dtype))
    return signless(linalg.transpose(x, outs=[init], permutation=list(perm)).results[0])


def _batch_sizes(lw, operands, nb: int) -> list[Size]:
    """The broadcast batch dims of the operands: a static size other than 1 if one has it,
    else `tensor.dim` of a dynamic one, else 1."""
    sizes = []
    for i in range(nb):
        dims = []
        for value, t in operands:
            j = i - (nb - (len(t.shape) - 2))
            if j >= 0:
                dims.append((t.shape[j], value, j))
        static = [d for d, _, _ in dims if d not in (None, 1)]
        dynamic = [(v, j) for d, v, j in dims if d is None]
        if static or not dynamic:
            sizes.append(static[0] if static else 1)
        else:
            sizes.append(tensor.DimOp(dynamic[0][0], lw.index(dynamic[0][1])).result)
    return sizes


@lowers(S.MatmulOp)
@fitted
def lower_matmul(op, lw: Lowering):
    (at, bt), out = lw.operand_types, lw.result_types[0]
    (a, b), d = lw.operands, out.dtype
    ranked(at), ranked(bt)
    if lw.attrs["transpose_a"]:
        a, at = _swap_last(lw, a, at)
    if lw.attrs["transpose_b"]:
        b, bt = _swap_last(lw, b, bt)
    if at.shape[-1] is None or bt.shape[-2] is None:  # contraction sizes met at run time
        check_equal(lw, size_of(lw, a, at, -1), size_of(lw, b, bt, -2))
    nb = max(len(at.shape), len(bt.shape)) - 2
    if None in at.shape[:-2] + bt.shape[:-2]:  # batch dims may broadcast at run time
        from ember.passes.conversions.ember_to_linalg.broadcast import broadcast_at_run_time
        (a, b), _ = broadcast_at_run_time(lw, [a, b], [at, bt],
                                          TensorType(d, out.shape[:nb]), tail=2)
    sizes = _batch_sizes(lw, [(a, at), (b, bt)], nb)
    sizes += [size_of(lw, a, at, -2), size_of(lw, b, bt, -1)]
    shape = [s if isinstance(s, int) else None for s in sizes]
    acc = ir.F32Type.get() if is_half(d) else element_type(d)
    zero = arith.ConstantOp(acc, ir.FloatAttr.get(acc, 0.0) if d.is_floating
                            else ir.IntegerAttr.get(acc, 0)).result
    init = filled(sizes, zero)
    if nb == 0:
        result = signless(linalg.matmul(a, b, outs=[init]))
    elif len(bt.shape) == 2:  # rows of every batch against one matrix: one 2-D matmul
        rows = collapse(a, at.shape, element_type(d), [list(range(nb + 1)), [nb + 1]])
        flat = collapse(init, shape, acc, [list(range(nb + 1)), [nb + 1]])
        product = signless(linalg.matmul(rows, b, outs=[flat]))
        result = expand(product, sizes, acc, [list(range(nb + 1)), [nb + 1]])
    elif at.shape[:-2] == bt.shape[:-2] and None not in at.shape[:-2]:
        if nb == 1:
            result = signless(linalg.batch_matmul(a, b, outs=[init]))
        else:  # one batch dim of their product
            groups = [list(range(nb)), [nb], [nb + 1]]
            lhs = collapse(a, at.shape, element_type(d), groups)
            rhs = collapse(b, bt.shape, element_type(d), groups)
            flat = collapse(init, shape, acc, groups)
            product = signless(linalg.batch_matmul(lhs, rhs, outs=[flat]))
            result = expand(product, sizes, acc, groups)
    else:
        result = _contraction(lw, a, at, b, bt, init, nb, d)
    return [truncated(result, sizes, d) if is_half(d) else result]


def _contraction(lw, a, at, b, bt, init, nb: int, d: DType) -> ir.Value:
    """out[..., m, n] += a[bcast(...), m, k] * b[bcast(...), k, n] as one linalg.generic."""
    rank = nb + 3
    m, n, k = nb, nb + 1, nb + 2

    def batch_exprs(t):
        lead = nb - (len(t.shape) - 2)
        return [ir.AffineConstantExpr.get(0) if s == 1 else ir.AffineDimExpr.get(lead + j)
                for j, s in enumerate(t.shape[:-2])]
    maps = [amap(rank, batch_exprs(at) + [m, k]), amap(rank, batch_exprs(bt) + [k, n]),
            amap(rank, list(range(nb)) + [m, n])]

    def body(x, y, acc):
        if d.is_floating:
            if is_half(d):
                x, y = arith.ExtFOp(acc.type, x).result, arith.ExtFOp(acc.type, y).result
            return [arith.AddFOp(acc, arith.MulFOp(x, y).result).result]
        return [arith.AddIOp(acc, arith.MulIOp(x, y).result).result]
    et = element_type(d)
    return generic([a, b], [et, et], [init], maps, [PARALLEL] * (nb + 2) + [REDUCTION],
                   body)[0]


# -- layout ops --------------------------------------------------------------------------


@lowers(S.TransposeOp)
@fitted
def lower_transpose(op, lw: Lowering):
    (t,), perm = lw.operand_types, list(lw.attrs["perm"])
    if perm == sorted(perm):
        return [lw.operands[0]]
    return [_transpose(lw, lw.operands[0], t, perm)]


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


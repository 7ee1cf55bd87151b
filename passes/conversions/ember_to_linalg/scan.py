"""Lowering of the scans (cumsum, cumprod) and of searchsorted (dialects/ember/scan.py).

A scan is an `scf.for` over the scanned axis carrying the result and the running slice
(the input's shape with the axis of size 1, filled with the identity): each step extracts
slice k of the input, combines it into the running slice with a `linalg.generic` (the
other dims in parallel, so a scan over a leading axis vectorises along the contiguous
trailing dims) and inserts the running slice at k (before combining, when exclusive);
`reverse` walks k from the end. The accumulator has the result's element type, each step
rounded to it (TensorFlow's kernel accumulates in the element type too).

    %r:2 = scf.for %k = 0 to %n step 1 iter_args(%out = %empty, %acc = %identity) {
      %xk = tensor.extract_slice %x[0, %k] [2, 1] [1, 1]
      %a = linalg.generic ins(%xk) outs(%acc) { arith.addf }
      %o = tensor.insert_slice %a into %out[0, %k] [2, 1] [1, 1]
      scf.yield %o, %a
    }

searchsorted is a `linalg.generic` over the values whose body is libstdc++'s
std::lower_bound (upper_bound) as an `scf.while` over (first, count), reading the
sequence's row with `tensor.extract`: O(log n) per value, the same probes as TensorFlow's
kernel (so NaN behaves the same).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from ember.dialects.ember import scan as S
from ember.dialects.ember.dtypes import DType
from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, check_equal, filled,
                                                               fitted, generic, new_tensor,
                                                               signless, sizes_of, tensor_of)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering, element_type,
                                                             lowers)

_INDEX = ir.IndexType.get


def _as_index(lw: Lowering, size) -> ir.Value:
    return lw.index(size) if isinstance(size, int) else size


def _combine(spec, dtype: DType):
    """The scalar step of the scan: add or multiply in `dtype` (integers wrap)."""
    if spec is S.CumsumOp:
        op = arith.AddFOp if dtype.is_floating else arith.AddIOp
    else:
        op = arith.MulFOp if dtype.is_floating else arith.MulIOp
    return lambda x, acc: [op(acc, x).result]


def _split(values) -> tuple[list, list]:
    """Dynamic values and the static list (DYNAMIC where a value stands) of mixed sizes."""
    return ([v for v in values if not isinstance(v, int)],
            [v if isinstance(v, int) else DYNAMIC for v in values])


def _slice_at(x: ir.Value, k: ir.Value, axis: int, sizes: list, et: ir.Type) -> ir.Value:
    """x[..., k:k+1, ...] along `axis`, keeping the axis (size 1)."""
    rank = len(sizes)
    offsets = [k if d == axis else 0 for d in range(rank)]
    (do, so), (ds, ss) = _split(offsets), _split(sizes)
    return tensor.ExtractSliceOp(tensor_of(sizes, et), x, do, ds, [], so, ss, [1] * rank).result


def _insert_at(part: ir.Value, dest: ir.Value, k: ir.Value, axis: int, sizes: list) -> ir.Value:
    rank = len(sizes)
    offsets = [k if d == axis else 0 for d in range(rank)]
    (do, so), (ds, ss) = _split(offsets), _split(sizes)
    return tensor.InsertSliceOp(part, dest, do, ds, [], so, ss, [1] * rank).result


@lowers(S.CumsumOp, S.CumprodOp)
@fitted
def lower_cumulative(op, lw: Lowering):
    (t,) = lw.operand_types
    x = lw.operands[0]
    spec = S.CumsumOp if op.name == S.CumsumOp.name else S.CumprodOp
    axis, exclusive, reverse = (lw.attrs["axis"] % len(t.shape), lw.attrs["exclusive"],
                                lw.attrs["reverse"])
    et = element_type(t.dtype)
    sizes = sizes_of(lw, x, t)
    if 0 in t.shape:  # nothing to scan; a slice at offset 0 of a 0-sized dim would not verify
        return [signless(new_tensor(sizes, et))]
    part = list(sizes)
    part[axis] = 1
    n = _as_index(lw, sizes[axis])
    one = lw.index(1)
    start = filled(part, lw.scalar(spec.identity, t.dtype))
    last = arith.SubIOp(n, one).result if reverse else None
    loop = scf.ForOp(lw.index(0), n, one, [new_tensor(sizes, et), start])
    with ir.InsertionPoint(loop.body):
        out, acc = loop.inner_iter_args
        k = loop.induction_variable
        if reverse:  # k runs n-1 .. 0
            k = arith.SubIOp(last, k).result
        if exclusive:
            out = _insert_at(acc, out, k, axis, part)
        rank = len(part)
        ident = ir.AffineMap.get_identity(rank)
        acc = generic([_slice_at(x, k, axis, part, et)], [et], [acc], [ident, ident],
                      [PARALLEL] * rank, _combine(spec, t.dtype))[0]
        if not exclusive:
            out = _insert_at(acc, out, k, axis, part)
        scf.YieldOp([out, acc])
    return [signless(loop.results[0])]


# -- searchsorted ------------------------------------------------------------------------------


def _less(a: ir.Value, b: ir.Value, dtype: DType) -> ir.Value:
    """C++'s a < b: false when either is NaN; unsigned for ui8."""
    if dtype.is_floating:
        return arith.CmpFOp(arith.CmpFPredicate.OLT, a, b).result
    pred = arith.CmpIPredicate.ult if dtype.kind == "uint" else arith.CmpIPredicate.slt
    return arith.CmpIOp(pred, a, b).result


def _bound(lw: Lowering, seq: ir.Value, lead: list, n: ir.Value, value: ir.Value,
           dtype: DType, right: bool) -> ir.Value:
    """libstdc++'s lower_bound (upper_bound when `right`) of `value` in seq[lead..., :n]:
        while count > 0: step = count / 2; it = first + step
            if seq[it] < value (!(value < seq[it]) for upper): first = it + 1, count -= step + 1
            else: count = step
    """
    index = _INDEX()
    zero, one = lw.index(0), lw.index(1)
    loop = scf.WhileOp([index, index], [zero, n])
    before = loop.before.blocks.append(index, index)
    with ir.InsertionPoint(before):
        first, count = before.arguments
        scf.ConditionOp(arith.CmpIOp(arith.CmpIPredicate.sgt, count, zero).result,
                        [first, count])
    after = loop.after.blocks.append(index, index)
    with ir.InsertionPoint(after):
        first, count = after.arguments
        step = arith.ShRUIOp(count, one).result
        it = arith.AddIOp(first, step).result
        probe = signless(tensor.ExtractOp(seq, lead + [it]).result)
        if right:
            go = arith.XOrIOp(_less(value, probe, dtype),
                              arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result
        else:
            go = _less(probe, value, dtype)
        past = arith.AddIOp(it, one).result
        left = arith.SubIOp(count, arith.AddIOp(step, one).result).result
        scf.YieldOp([arith.SelectOp(go, past, first).result,
                     arith.SelectOp(go, left, step).result])
    return loop.results[0]


@lowers(S.SearchSortedOp)
@fitted
def lower_searchsorted(op, lw: Lowering):
    st, vt = lw.operand_types
    seq, values = lw.operands
    out_type = lw.attrs["out_type"]
    seq_sizes, value_sizes = sizes_of(lw, seq, st), sizes_of(lw, values, vt)
    rank = len(value_sizes)
    pairs = []
    for a, b, da, db in zip(seq_sizes[:-1], value_sizes[:-1], st.shape[:-1], vt.shape[:-1]):
        if da is None or db is None:  # static pairs were checked by the verifier
            pairs += [a, b]
    if pairs:
        check_equal(lw, *pairs)
    n = _as_index(lw, seq_sizes[-1])
    right = lw.attrs["side"] == "right"
    out_et = element_type(out_type)

    def body(value, _):
        lead = [linalg.IndexOp(d).result for d in range(rank - 1)]
        found = _bound(lw, seq, lead, n, value, st.dtype, right)
        return [arith.IndexCastOp(out_et, found).result]
    ident = ir.AffineMap.get_identity(rank)
    return generic([values], [element_type(vt.dtype)], [new_tensor(value_sizes, out_et)],
                   [ident, ident], [PARALLEL] * rank, body)

"""Lowering of `ember.sort`: a bottom-up merge sort in gather form, all on tensors.

Algorithm (n = the innermost dim, sorted independently for every batch position):
  1. values = the input, indices = iota along the innermost dim (a `linalg.generic`).
  2. `scf.while` w < n, doubling the run width w from 1: one pass merges each pair of
     neighbouring sorted runs A = [s, s + w) and B = [s + w, s + 2w) (clipped to n).
  3. A pass is one parallel `linalg.generic` over the output positions, yielding a value
     and its index. Output position p of its block (q = p - s) finds how many of the
     first q merged elements come from A with a merge-path binary search (`scf.while`
     over lo < hi): i is the least m with B[q - 1 - m] strictly before A[m] (else
     min(q, len A)), and the element is A[i] unless A is used up or B[q - i] is strictly
     before A[i]. A wins ties, and every index in A is below every index in B, so the
     merge is stable; values and indices move together.
No scatter and no sequential merge: every output element is computed independently, so
a pass is a plain parallel loop nest; the work is O(n log^2 n). "Before" is `<` ascending
and `>` descending, with NaN above every number (`ult(x, y) and ord(x)`); -0.0 == 0.0.

Before:
    %v, %i = "ember.sort"(%x) {descending = false} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>)
After (sketch):
    %iota = linalg.generic ... { linalg.index 0 ... index_cast ... }
    %r:3 = scf.while (%w = %c1, %v = %x, %i = %iota) : (index, tensor<?xf32>, tensor<?xi32>) {
      %more = arith.cmpi slt, %w, %n : index
      scf.condition(%more) %w, %v, %i
    } do {
      %nv, %ni = linalg.generic ... outs(%ev, %ei) {
        ... scf.while (%lo, %hi) { binary search with tensor.extract %v ... }
        linalg.yield %value, %index : f32, i32
      }
      scf.yield %w2, %nv, %ni
    }
Upstream equivalent: none at this level (`stablehlo.sort`, `tosa` has no sort).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from ember.dialects.ember import dtypes
from ember.dialects.ember import sorting as S
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import (fitted, generic, new_tensor,
                                                               ranked, sizes_of)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             element_type, lowers, tensor_type)


def _index() -> ir.Type:
    return ir.IndexType.get()


def _const(value: int) -> ir.Value:
    return arith.ConstantOp(_index(), value).result


def strictly_before(dtype: DType, descending: bool):
    """`before(x, y)`: whether x sorts strictly before y (an i1), for scalars of `dtype`."""
    def less(x, y):
        if dtype.is_floating:  # NaN above every number: x < y, or y NaN and x not
            below = arith.CmpFOp(arith.CmpFPredicate.ULT, x, y).result
            number = arith.CmpFOp(arith.CmpFPredicate.ORD, x, x).result
            return arith.AndIOp(below, number).result
        # bool (ember.unique only): `slt` on i1 puts true first, any total order groups
        pred = arith.CmpIPredicate.ult if dtype.kind == "uint" else arith.CmpIPredicate.slt
        return arith.CmpIOp(pred, x, y).result
    return (lambda x, y: less(y, x)) if descending else less


@lowers(S.SortOp)
@fitted
def lower_sort(op, lw: Lowering):
    (t,) = lw.operand_types
    return sort_rows(lw, lw.operands[0], t, lw.attrs["descending"])


def sort_rows(lw: Lowering, x: ir.Value, t: TensorType, descending: bool) -> list[ir.Value]:
    """(values, i32 indices) of `x` (of ember type `t`) sorted stably along its innermost
    dim: steps 1 and 2 of the module's algorithm."""
    rank = len(ranked(t))
    vtype, itype = tensor_type(t), tensor_type(TensorType(dtypes.int32, t.shape))
    sizes = sizes_of(lw, x, t)
    n = sizes[-1] if not isinstance(sizes[-1], int) else _const(sizes[-1])
    iota = _iota(sizes, rank)
    loop = scf.WhileOp([_index(), vtype, itype], [_const(1), x, iota])
    before = loop.before.blocks.append(_index(), vtype, itype)
    with ir.InsertionPoint(before):
        w, v, i = before.arguments
        more = arith.CmpIOp(arith.CmpIPredicate.slt, w, n).result
        scf.ConditionOp(more, [w, v, i])
    after = loop.after.blocks.append(_index(), vtype, itype)
    with ir.InsertionPoint(after):
        w, v, i = after.arguments
        two_w = arith.MulIOp(w, _const(2)).result
        merged = _merge_pass(lw, t, v, i, w, two_w, n, rank, descending)
        scf.YieldOp([two_w, *merged])
    return [loop.results[1], loop.results[2]]


def _iota(sizes, rank: int) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    ident = ir.AffineMap.get_identity(rank)

    def body(_):
        return [arith.IndexCastOp(i32, linalg.IndexOp(rank - 1).result).result]
    return generic([], [], [new_tensor(sizes, i32)], [ident], [PARALLEL] * rank, body)[0]


def _merge_pass(lw: Lowering, t, v, i, w, two_w, n, rank: int,
                descending: bool) -> list[ir.Value]:
    """One pass: merges the runs of width `w` of (v, i) pairwise into runs of `two_w`."""
    et, i32 = element_type(t.dtype), ir.IntegerType.get_signless(32)
    sizes = sizes_of(lw, v, t)
    ident = ir.AffineMap.get_identity(rank)
    before = strictly_before(t.dtype, descending)

    block_mask = arith.SubIOp(_const(0), two_w).result  # -2w: 2w is a power of two

    def body(_v, _i):
        batch = [linalg.IndexOp(d).result for d in range(rank - 1)]
        p = linalg.IndexOp(rank - 1).result
        s = arith.AndIOp(p, block_mask).result  # p rounded down to a multiple of 2w
        a_end = arith.MinSIOp(arith.AddIOp(s, w).result, n).result
        b_end = arith.MinSIOp(arith.AddIOp(s, two_w).result, n).result
        la = arith.SubIOp(a_end, s).result
        lb = arith.SubIOp(b_end, a_end).result
        q = arith.SubIOp(p, s).result

        def at(tensor_value, pos):
            return tensor.ExtractOp(tensor_value, batch + [pos]).result

        def a_at(k):  # A[k], k < la
            return at(v, arith.AddIOp(s, k).result)

        def b_pos_of(k):  # where B[k] is, clamped into the row (read only where k < lb)
            k = arith.MinSIOp(k, arith.SubIOp(lb, _const(1)).result).result
            return arith.AddIOp(a_end, k).result

        a_count = _merge_path(q, la, lb, lambda m: before(
            at(v, arith.AddIOp(a_end, arith.SubIOp(arith.SubIOp(q, _const(1)).result, m)
                               .result).result), a_at(m)))
        j = arith.SubIOp(q, a_count).result
        a_pos = arith.AddIOp(s, arith.MinSIOp(a_count, arith.SubIOp(la, _const(1)).result
                                              ).result).result
        b_pos = b_pos_of(j)
        av, bv = at(v, a_pos), at(v, b_pos)
        b_done = arith.CmpIOp(arith.CmpIPredicate.sge, j, lb).result
        a_left = arith.CmpIOp(arith.CmpIPredicate.slt, a_count, la).result
        a_first = arith.AndIOp(a_left, _not(before(bv, av))).result
        take_a = arith.OrIOp(b_done, a_first).result
        return [arith.SelectOp(take_a, av, bv).result,
                arith.SelectOp(take_a, at(i, a_pos), at(i, b_pos)).result]
    return generic([], [], [new_tensor(sizes, et), new_tensor(sizes, i32)], [ident, ident],
                   [PARALLEL] * rank, body)


def _not(x: ir.Value) -> ir.Value:
    return arith.XOrIOp(x, arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result).result


def _merge_path(q: ir.Value, la: ir.Value, lb: ir.Value, b_first) -> ir.Value:
    """How many of the first `q` merged elements come from A (of `la` elements; B has
    `lb`): the least m in [max(0, q - lb), min(q, la)) with `b_first(m)` (B[q - 1 - m]
    strictly before A[m]), else min(q, la). A binary search: `scf.while` lo < hi."""
    lo = arith.MaxSIOp(arith.SubIOp(q, lb).result, _const(0)).result
    hi = arith.MinSIOp(q, la).result
    search = scf.WhileOp([_index(), _index()], [lo, hi])
    cond = search.before.blocks.append(_index(), _index())
    with ir.InsertionPoint(cond):
        c_lo, c_hi = cond.arguments
        scf.ConditionOp(arith.CmpIOp(arith.CmpIPredicate.slt, c_lo, c_hi).result,
                        [c_lo, c_hi])
    step = search.after.blocks.append(_index(), _index())
    with ir.InsertionPoint(step):
        s_lo, s_hi = step.arguments
        mid = arith.ShRUIOp(arith.AddIOp(s_lo, s_hi).result, _const(1)).result
        found = b_first(mid)
        scf.YieldOp([arith.SelectOp(found, s_lo, arith.AddIOp(mid, _const(1)).result).result,
                     arith.SelectOp(found, mid, s_hi).result])
    return search.results[0]

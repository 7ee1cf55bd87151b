"""Lowering of `ember.pad`: `tensor.pad` for CONSTANT, and a `linalg.generic` computing
mirrored coordinates for REFLECT (`-j`, `2(n-1) - j`) and SYMMETRIC (`-j - 1`, `2n - 1 - j`).

The verifier bounds a mirrored padding by n - 1 (REFLECT) or n (SYMMETRIC) of a known size
n, so reflecting once suffices; for a `?` dim the bound is a shape check when the op runs,
raising eager's OpShapeError (it read outside the tensor before). Upstream equivalent:
`tosa-to-linalg`'s pad pattern (constant padding only).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import indexing as I
from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, fitted, generic,
                                                               new_tensor, ranked, signless,
                                                               sizes_of)
from ember.passes.conversions.ember_to_linalg.checks import shape_check
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering, element_type,
                                                             lowers)

def _idx(lw: Lowering, v) -> ir.Value:
    return lw.index(v) if isinstance(v, int) else v


def _add(lw: Lowering, a, b):
    """a + b on sizes (ints fold; SSA index values become `arith.addi`)."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return arith.AddIOp(_idx(lw, a), _idx(lw, b)).result


@lowers(I.PadOp)
@fitted
def lower_pad(op, lw: Lowering):
    (t, _) = lw.operand_types
    x, fill = lw.operands
    shape, pads = ranked(t), list(lw.attrs["paddings"])
    if not shape or not any(pads):
        return [x]
    lows, highs = pads[0::2], pads[1::2]
    if lw.attrs["mode"] == "CONSTANT":
        value = signless(tensor.ExtractOp(fill, []).result)
        return [pad_tensor(x, shape, element_type(t.dtype), value, lows, highs)]
    return [_mirror(lw, x, t, lows, highs, lw.attrs["mode"] == "REFLECT")]


def pad_tensor(x, shape, et, value: ir.Value, lows, highs) -> ir.Value:
    """`tensor.pad` of `x` (of static-or-None `shape`) with the scalar `value`. With a dim of
    static size 0 there is nothing of `x` to copy: a fill (bufferizing the pad would copy
    into a slice at offset 0 of that dim, which MLIR's verifier rejects)."""
    result = ir.RankedTensorType.get([DYNAMIC if d is None else d + lo + hi
                                      for d, lo, hi in zip(shape, lows, highs)], et)
    if 0 in shape:
        sizes = [tensor.DimOp(x, arith.ConstantOp(ir.IndexType.get(), i).result).result
                 if d is None else d + lo + hi
                 for i, (d, lo, hi) in enumerate(zip(shape, lows, highs))]
        sizes = [s if isinstance(s, int) else arith.AddIOp(s, arith.ConstantOp(
            ir.IndexType.get(), lows[i] + highs[i]).result).result
            for i, s in enumerate(sizes)]
        return linalg.fill(value, outs=[tensor.EmptyOp(sizes, et).result])
    pad = tensor.PadOp(result, x, [], [], list(lows), list(highs))
    block = pad.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(value)
    return pad.result


def _mirror(lw: Lowering, x, t, lows, highs, reflect: bool) -> ir.Value:
    """out[i] = x[mirror(i - low)] per dim, mirrored at the edges (REFLECT or SYMMETRIC)."""
    sizes = sizes_of(lw, x, t)
    out_sizes = [_add(lw, s, lo + hi) for s, lo, hi in zip(sizes, lows, highs)]
    zero, one = lw.index(0), lw.index(1)
    # Reflecting once suffices: the verifier bounds the padding by n - 1 (or n) of a known n;
    # for a `?` n the bound is checked when the op runs, raising eager's error.
    _check_mirror_bounds(lw, sizes, lows, highs, reflect)
    edges = []
    for s, lo, hi in zip(sizes, lows, highs):
        if lo or hi:
            top = _add(lw, _add(lw, s, s), -2 if reflect else -1)
            edges.append((lo, hi, _idx(lw, s), _idx(lw, top)))
        else:
            edges.append((0, 0, None, None))

    def coordinate(dim):
        lo, hi, n, top = edges[dim]
        j = linalg.IndexOp(dim).result
        if not lo and not hi:
            return j
        j = arith.SubIOp(j, lw.index(lo)).result
        below = arith.CmpIOp(arith.CmpIPredicate.slt, j, zero).result
        neg = arith.SubIOp(zero, j).result
        low = neg if reflect else arith.SubIOp(neg, one).result
        above = arith.CmpIOp(arith.CmpIPredicate.sge, j, n).result
        high = arith.SubIOp(top, j).result
        return arith.SelectOp(below, low, arith.SelectOp(above, high, j).result).result

    def body(_):
        coords = [coordinate(d) for d in range(len(sizes))]
        return [signless(tensor.ExtractOp(x, coords).result)]
    rank = len(sizes)
    return generic([], [], [new_tensor(out_sizes, element_type(t.dtype))],
                   [ir.AffineMap.get_identity(rank)], [PARALLEL] * rank, body)[0]


def _check_mirror_bounds(lw: Lowering, sizes, lows, highs, reflect: bool) -> None:
    """A shape check that each `?` dim padded by up to p has n >= p + 1 (REFLECT) or n >= p
    (SYMMETRIC), which the verifier checks for known sizes."""
    bad = None
    for n, lo, hi in zip(sizes, lows, highs):
        if isinstance(n, int) or not (lo or hi):
            continue
        short = arith.CmpIOp(arith.CmpIPredicate.slt, n,
                             lw.index(max(lo, hi) + (1 if reflect else 0))).result
        bad = short if bad is None else arith.OrIOp(bad, short).result
    if bad is not None:
        shape_check(lw, bad)

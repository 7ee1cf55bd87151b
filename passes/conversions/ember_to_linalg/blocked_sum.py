"""Float sums over many elements in blocks, so that rounding errors do not grow with the count.

A reduction generic adds in loop order: one accumulator per result takes every element in
turn, and float32 loses about n/2 units of its last place over n elements (10**7 times 0.1
summed to 1087937, 9% off; numpy's pairwise sum is off by 1e-7). For a float sum or mean
over one block of adjacent dims (a whole-tensor sum, over the last axes, the first or the
middle ones) of more than BLOCK elements, the reduced dims are collapsed into one of R
elements and summed level by level: the first M = R - R % BLOCK elements as rows of BLOCK,
each row to one partial sum, and the other R % BLOCK elements apart; then the partial sums
again, until BLOCK or fewer remain. Each element goes through at most `levels` chains of
at most BLOCK additions (`levels` is log base BLOCK of R, or LEVELS for a size known only at
run time), so the error stays within levels * BLOCK units, as numpy's does within its
blocks of 128. Axes apart, such as (0, 2), are summed one run of adjacent dims at a time,
the last run first: sum over (0, 2) = sum over 0 of (sum over 2), each blocked alone (a
run of BLOCK or fewer is one chain), so no element goes through more chains than the runs'
levels together.

Where the reduced dims are the innermost (a whole-tensor sum, over the last axes), a row of
BLOCK is summed as BLOCK / LANES groups of LANES, lane by lane, then its LANES partial sums:
a generic whose innermost dim is parallel vectorises without reassociating additions, which
LLVM may not do (fastmath.py), where a row summed in turn is a chain of scalar additions.
Each element then goes through chains of 8 and 16 per level, not 128: 10**6 float32 sums
run ~2x faster and ~6x closer to the exact sum than with scalar rows.

Before (tensor<1000000xf32> summed):  one generic of 10**6 additions in a row.
After: generics over tensor<7812x8x16xf32> (groups of a row, to tensor<7812x16xf32>), its
lanes, tensor<61x8x16xf32> likewise, then 61 + the tails.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.dialects import arith, tensor

from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import DYNAMIC, collapse, expand
from ember.passes.conversions.ember_to_linalg.common import Lowering, element_type

BLOCK = 128
LANES = 16  # a row's partial sums, side by side: one AVX-512 vector of float32 (see _rows)
LEVELS = 5  # for a size known at run time: BLOCK**5 = 3.4e10 elements before the last chain


def blocked(lw: Lowering, x: ir.Value, t: TensorType, axes: tuple, acc: DType, init,
            combine: Callable, reduce: Callable):
    """The sum of `x` over `axes` in blocks (see the module doc), or None where the plain
    generic is as good (BLOCK or fewer elements, or none). `reduce(lw, x, t, axes, acc,
    init, combine)` is reduction.py's single generic; `combine(element, accumulator)`
    widens 16-bit elements, as there."""
    if not axes or 0 in t.shape:  # (no element: no error)
        return None
    runs = _runs(sorted(axes))
    if len(runs) == 1:
        return _run(lw, x, t, runs[0], acc, init, combine, reduce)
    reduced = [t.shape[a] for a in axes]
    if None not in reduced and _product(reduced) <= BLOCK:
        return None
    shape, src = list(t.shape), t.dtype
    for run in reversed(runs):  # the last first: the earlier runs' dims keep their places
        here = TensorType(src, tuple(shape))
        x = _run(lw, x, here, run, acc, init, combine, reduce) or \
            reduce(lw, x, here, run, acc, init, combine)
        src, combine = acc, _adder(acc)  # the next runs add partial sums, of `acc`
        del shape[run[0]:run[-1] + 1]
    return x


def _runs(axes: list) -> list[tuple]:
    """Sorted `axes` as runs of adjacent dims: [0, 2, 3] -> [(0,), (2, 3)]."""
    runs = [[axes[0]]]
    for a in axes[1:]:
        if a == runs[-1][-1] + 1:
            runs[-1].append(a)
        else:
            runs.append([a])
    return [tuple(r) for r in runs]


def _run(lw: Lowering, x: ir.Value, t: TensorType, axes: tuple, acc: DType, init,
         combine: Callable, reduce: Callable):
    """`blocked` over one run of adjacent dims `axes`, or None (BLOCK or fewer elements)."""
    rank, k = len(t.shape), len(axes)
    p = axes[0]  # the reduced dims' place once collapsed into one
    kept_dims = [i for i in range(rank) if i not in axes]
    reduced = [t.shape[a] for a in sorted(axes)]
    count = None if None in reduced else _product(reduced)
    if count is not None and count <= BLOCK:
        return None
    groups = [[i] for i in kept_dims]
    groups.insert(p, sorted(axes))
    if k > 1:
        x = collapse(x, t.shape, element_type(t.dtype), groups)
    kept = tuple(t.shape[i] for i in kept_dims)
    shape = kept[:p] + (count,) + kept[p:]
    sizes = [lw_size(lw, x, shape, i) for i in range(len(shape)) if i != p]
    add_acc = _adder(acc)
    tails, src, step = None, t.dtype, combine
    levels = LEVELS if count is None else 0
    while count is not None and count > BLOCK:
        levels, count = levels + 1, count // BLOCK  # the rows' sums (tails summed apart)
    for _ in range(levels):
        n = lw_size(lw, x, shape, p)
        rows = n // BLOCK if isinstance(n, int) else \
            arith.DivUIOp(n, lw.index(BLOCK)).result
        main = rows * BLOCK if isinstance(rows, int) else \
            arith.MulIOp(rows, lw.index(BLOCK)).result
        rest = n - main if isinstance(n, int) else arith.SubIOp(n, main).result
        head = _slice(x, src, sizes, p, 0, main)
        partial = _rows(lw, head, src, sizes, kept, p, rows, acc, init, step, reduce)
        if rest != 0:  # (a static slice may not start at the end, even empty)
            tail = reduce(lw, _slice(x, src, sizes, p, main, rest),
                          TensorType(src, kept[:p] + (_static(rest),) + kept[p:]), (p,),
                          acc, init, step)
            tails = tail if tails is None else _add(lw, tails, tail, acc, kept, add_acc)
        x, src, step = partial, acc, add_acc
        shape = kept[:p] + (_static(rows),) + kept[p:]
    last = reduce(lw, x, TensorType(src, shape), (p,), acc, init, step)
    return last if tails is None else _add(lw, last, tails, acc, kept, add_acc)


def _rows(lw: Lowering, head: ir.Value, src: DType, sizes: list, kept: tuple, p: int, rows,
          acc: DType, init, step: Callable, reduce: Callable) -> ir.Value:
    """The sums of `head`'s rows of BLOCK along dim `p` (`rows` of them). Where no kept dim
    follows p, a row's elements are the innermost: summed in turn they would be one chain
    of BLOCK scalar additions (no reassociation, so no vectors). There each row is read as
    LANES // BLOCK groups of LANES, the groups summed lane by lane (vectors of LANES, a
    chain of BLOCK // LANES) and then the LANES partial sums (a chain of LANES)."""
    rows_s, et = _static(rows), element_type(src)
    if p < len(kept):  # a kept dim is innermost: vectors run along it
        split = [[i] for i in range(p)] + [[p, p + 1]] + [[i + 2] for i in range(p, len(kept))]
        blocks = expand(head, sizes[:p] + [rows, BLOCK] + sizes[p:], et, split)
        return reduce(lw, blocks, TensorType(src, kept[:p] + (rows_s, BLOCK) + kept[p:]),
                      (p + 1,), acc, init, step)
    split = [[i] for i in range(p)] + [[p, p + 1, p + 2]]
    groups = expand(head, sizes[:p] + [rows, BLOCK // LANES, LANES], et, split)
    lanes = reduce(lw, groups, TensorType(src, kept[:p] + (rows_s, BLOCK // LANES, LANES)),
                   (p + 1,), acc, init, step)
    return reduce(lw, lanes, TensorType(acc, kept[:p] + (rows_s, LANES)), (p + 1,), acc,
                  init, _adder(acc))


def lw_size(lw: Lowering, x: ir.Value, shape: tuple, dim: int):
    """Dim `dim` of `x`: an int when static, else an index value."""
    return shape[dim] if shape[dim] is not None else tensor.DimOp(x, lw.index(dim)).result


def _product(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _static(size):
    return size if isinstance(size, int) else None


def _slice(x: ir.Value, dtype: DType, kept: list, p: int, start, size) -> ir.Value:
    """`x` from `start` for `size` along dim `p`, the other (kept) dims whole."""
    offsets = [0] * len(kept)
    offsets.insert(p, start)
    sizes = list(kept)
    sizes.insert(p, size)
    static_offsets = [o if isinstance(o, int) else DYNAMIC for o in offsets]
    static_sizes = [s if isinstance(s, int) else DYNAMIC for s in sizes]
    result = ir.RankedTensorType.get(static_sizes, element_type(dtype))
    return tensor.ExtractSliceOp(
        result, x, [o for o in offsets if not isinstance(o, int)],
        [s for s in sizes if not isinstance(s, int)], [], static_offsets, static_sizes,
        [1] * len(sizes)).result


def _adder(acc: DType):
    return lambda v, a: arith.AddFOp(v, a).result


def _add(lw: Lowering, a: ir.Value, b: ir.Value, acc: DType, shape: tuple, add) -> ir.Value:
    t = TensorType(acc, shape)
    return lw.elementwise([a, b], [t, t], t, add)

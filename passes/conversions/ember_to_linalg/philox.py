"""Lowering of `ember.philox_random` and `ember.philox_uniform_int` to two `linalg.generic`s.

The first runs over the groups (G outputs per Philox block: 4, or 2 for 64-bit dtypes) and
computes group g's Philox-4x32-10 block (dialects/ember/philox.py) once, in i32 `arith`: the
128-bit counter is the state's plus g (an i64 add with its carry), each of the ten rounds
two 32x32->64 multiplies (`arith.mului_extended`), the key bumped by the Weyl constants. It
converts the words as TensorFlow does and yields the group's G outputs into G tensors:

    uniform f32   bitcast((w & 0x7fffff) | 0x3f800000) - 1        (f16: 10 bits, bf16: 7)
    uniform f64   bitcast(((w0 & 0xfffff) << 32 | w1) | 1023 << 52) - 1
    normal        Box-Muller over word pairs: sqrt(-2 log max(u1, 1e-7)) * (sin, cos)(2 pi u2)
                  (f32: each libm function in f64, rounded once, as the reference)
    int           minval + bits % (maxval - minval)                (unsigned remainder)

A truncated normal group runs an `scf.while` over the blocks from `counter + g * 256 * G / 4`,
filling its G slots in order with the normals of |z| < 2. The second generic writes result
element n (row-major) from slot n % G of group n / G. Uniform floats and integers are
bit-exact with the reference; normal values agree up to the last bits of `log`/`sin`/`cos`
against numpy's (f32 ones go through f64, rounded once: bit for bit but for rare roundings).
Upstream has no counter-based RNG op.

Before:
    %r = "ember.philox_random"(%state, %s) {distribution = "uniform", dtype = f32}
           : (tensor<3xi64>, tensor<1xi64>) -> tensor<8xf32>
After:
    %c0 = tensor.extract %state[%i0] ...
    %p:4 = linalg.generic {iterator_types = ["parallel"]} outs(... : tensor<2xf32>, ...) {
      %g = linalg.index 0 ... %lo, %hi = arith.mului_extended %c, %m : i32 ... (10 rounds)
      %f = arith.bitcast %bits : i32 to f32 ... linalg.yield %u0, %u1, %u2, %u3 : f32, ...
    }
    %r = linalg.generic {iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
      ... %v = tensor.extract %p#0[%group] ... linalg.yield (slot n % 4) : f32
    }
"""

from __future__ import annotations

import math as pymath

import numpy as np

from mlir import ir
from mlir.dialects import arith, linalg, math, scf, tensor

from ember.dialects.ember import philox as P
from ember.dialects.ember import dtypes
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, tensor_type)
from ember.passes.conversions.ember_to_linalg.creation import check_dims, narrow_f64
from ember.passes.conversions.ember_to_linalg.random import _flat_index


def _int(bits: int, value: int) -> ir.Value:
    """A signless constant of the `bits`-wide pattern `value`."""
    t = ir.IntegerType.get_signless(bits)
    value &= (1 << bits) - 1
    return arith.ConstantOp(t, value - (1 << bits) if value >> (bits - 1) else value).result


def _float(t: ir.Type, value: float) -> ir.Value:
    return arith.ConstantOp(t, ir.FloatAttr.get(t, value)).result


def _i32(x: ir.Value) -> ir.Value:
    return arith.TruncIOp(ir.IntegerType.get_signless(32), x).result


def _u64(x: ir.Value) -> ir.Value:
    return arith.ExtUIOp(ir.IntegerType.get_signless(64), x).result


def _block(state: list, offset: ir.Value) -> list:
    """The four i32 words of Philox-4x32-10 at counter state + `offset` (i64)."""
    low = arith.AddIOp(state[0], offset).result
    carry = arith.CmpIOp(arith.CmpIPredicate.ult, low, offset).result
    high = arith.AddIOp(state[1], _u64(carry)).result
    c = [_i32(low), _i32(arith.ShRUIOp(low, _int(64, 32)).result),
         _i32(high), _i32(arith.ShRUIOp(high, _int(64, 32)).result)]
    k = [_i32(state[2]), _i32(arith.ShRUIOp(state[2], _int(64, 32)).result)]
    for r in range(P.ROUNDS):
        lo0, hi0 = arith.MulUIExtendedOp(_int(32, P.ROUND_A), c[0]).results
        lo1, hi1 = arith.MulUIExtendedOp(_int(32, P.ROUND_B), c[2]).results
        xor = arith.XOrIOp
        c = [xor(xor(hi1, c[1]).result, k[0]).result, lo1,
             xor(xor(hi0, c[3]).result, k[1]).result, lo0]
        if r + 1 < P.ROUNDS:
            k = [arith.AddIOp(k[0], _int(32, P.WEYL_A)).result,
                 arith.AddIOp(k[1], _int(32, P.WEYL_B)).result]
    return c


def _pick(index: ir.Value, values: list) -> ir.Value:
    """values[index] for an i64 `index` in range (a select chain)."""
    out = values[-1]
    for i in range(len(values) - 2, -1, -1):
        at = arith.CmpIOp(arith.CmpIPredicate.eq, index, _int(64, i)).result
        out = arith.SelectOp(at, values[i], out).result
    return out


def _unit32(w: ir.Value, bits: int = 23) -> ir.Value:
    """[0, 1) as f32 from the low `bits` bits of w: exponent 127, minus 1."""
    f32 = ir.F32Type.get()
    man = arith.AndIOp(w, _int(32, (1 << bits) - 1)).result
    if bits != 23:
        man = arith.ShLIOp(man, _int(32, 23 - bits)).result
    one = arith.OrIOp(man, _int(32, 0x3F800000)).result
    return arith.SubFOp(arith.BitcastOp(f32, one).result, _float(f32, 1.0)).result


def _unit64(hi: ir.Value, lo: ir.Value) -> ir.Value:
    f64 = ir.F64Type.get()
    top = arith.ShLIOp(_u64(arith.AndIOp(hi, _int(32, 0xFFFFF)).result), _int(64, 32)).result
    bits = arith.OrIOp(arith.OrIOp(top, _u64(lo)).result, _int(64, 1023 << 52)).result
    return arith.SubFOp(arith.BitcastOp(f64, bits).result, _float(f64, 1.0)).result


def _box_muller(words: list, wide: bool) -> list:
    """The two normals (sin, cos) of a Box-Muller pair of words x0, x1 (f32) or x0..x3
    (f64), computed as TensorFlow's BoxMullerFloat/Double."""
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()
    if wide:
        t, u1, u2 = f64, _unit64(words[0], words[1]), _unit64(words[2], words[3])
        v1 = arith.MulFOp(_float(f64, 2 * pymath.pi), u2).result
    else:
        t, u1 = f32, _unit32(words[0])
        # 2.0f * M_PI is a double product, rounded to float once
        v1 = arith.TruncFOp(f32, arith.MulFOp(_float(f64, 2 * pymath.pi), arith.ExtFOp(
            f64, _unit32(words[1])).result).result).result
    eps = _float(t, 1e-7)
    u1 = arith.SelectOp(arith.CmpFOp(arith.CmpFPredicate.OLT, u1, eps).result, eps, u1).result
    r = _libm(math.SqrtOp, arith.MulFOp(_float(t, -2.0), _libm(math.LogOp, u1)).result)
    return [arith.MulFOp(_libm(op, v1), r).result for op in (math.SinOp, math.CosOp)]


def _libm(op, x: ir.Value) -> ir.Value:
    """op(x); for f32 through f64, rounded once (glibc's logf/sinf/cosf results in all but
    rare cases, and what the reference computes)."""
    if x.type != ir.F32Type.get():
        return op(x).result
    wide = op(arith.ExtFOp(ir.F64Type.get(), x).result).result
    return arith.TruncFOp(ir.F32Type.get(), wide).result


def _group(words: list, distribution: str, dtype) -> list:
    """The outputs of a group (4, or 2 for 64-bit dtypes) from its block's four words,
    before narrowing to dtype."""
    wide = dtype.bits == 64
    if distribution == "bits":
        if not wide:
            return words
        return [arith.OrIOp(_u64(words[i]), arith.ShLIOp(_u64(words[i + 1]), _int(64, 32))
                            .result).result for i in (0, 2)]
    if distribution == "uniform":
        if wide:
            return [_unit64(words[0], words[1]), _unit64(words[2], words[3])]
        bits = {dtypes.float16: 10, dtypes.bfloat16: 7}.get(dtype, 23)
        return [_unit32(w, bits) for w in words]
    if wide:
        return _box_muller(words, True)
    return _box_muller(words[:2], False) + _box_muller(words[2:], False)


def _add(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.AddIOp(a, b).result


def _truncated(state: list, group: ir.Value, dtype) -> list:
    """The first G normals with |z| < 2 of the blocks from the group's start, in order."""
    g = P.group_size(dtype)
    ft = ir.F64Type.get() if dtype.bits == 64 else ir.F32Type.get()
    i64 = ir.IntegerType.get_signless(64)
    base = arith.MulIOp(group, _int(64, P.RESERVED * g // 4)).result
    types = [i64, i64] + [ft] * g
    loop = scf.WhileOp(types, [_int(64, 0), _int(64, 0)] + [_float(ft, 0.0)] * g)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        more = arith.CmpIOp(arith.CmpIPredicate.slt, before.arguments[1], _int(64, g)).result
        scf.ConditionOp(more, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        k, filled, *slots = after.arguments
        for z in _group(_block(state, _add(base, k)), "normal", dtype):
            ok = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(z).result,
                              _float(ft, P.TRUNCATE)).result
            for i in range(g):
                here = arith.CmpIOp(arith.CmpIPredicate.eq, filled, _int(64, i)).result
                take = arith.AndIOp(ok, here).result
                slots[i] = arith.SelectOp(take, z, slots[i]).result
            filled = _add(filled, _u64(ok))  # past g once full: no slot matches
        scf.YieldOp([_add(k, _int(64, 1)), filled] + slots)
    return list(loop.results[2:])


def _sizes(lw: Lowering) -> tuple:
    """The result sizes: static dims as ints, `?` dims read from the shape operand (after
    eager's check that none is negative)."""
    out, shape, shape_type = lw.result_types[0], lw.operands[1], lw.operand_types[1]
    if out.shape is None:
        raise LoweringError(f"result {out} needs a known rank")
    if not out.is_static:
        check_dims(lw, shape, shape_type, 1)
    return tuple(d if d is not None else arith.IndexCastOp(ir.IndexType.get(), tensor.ExtractOp(
        shape, [lw.index(i)]).result).result for i, d in enumerate(out.shape))


def _generic(lw: Lowering, group_values) -> ir.Value:
    """The result: one generic computes each group's outputs (`group_values(state, g)`, G
    values of the element type) into G tensors of ceil(n / G) elements, once per Philox
    block; a second fills the result, element n taking output n % G of group n / G."""
    out = lw.result_types[0]
    sizes = _sizes(lw)
    if lw.operand_types[0].shape != (3,):
        raise LoweringError(f"state of type {lw.operand_types[0]} must have the static "
                            "shape [3]")
    state = [tensor.ExtractOp(lw.operands[0], [lw.index(i)]).result for i in range(3)]
    g = P.group_size(out.dtype)
    et = element_type(out.dtype)
    groups = _groups(sizes, g)
    static = groups if isinstance(groups, int) else ir.ShapedType.get_dynamic_size()
    part = ir.RankedTensorType.get([static], et)
    first = linalg.GenericOp(
        [part] * g, [], [tensor.EmptyOp([groups], et).result for _ in range(g)],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(1))] * g),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)]))
    block = first.regions[0].blocks.append(*[et] * g)
    with ir.InsertionPoint(block):
        index = arith.IndexCastOp(ir.IntegerType.get_signless(64), linalg.IndexOp(0).result)
        linalg.YieldOp(group_values(state, index.result))
    parts = list(first.results)
    rank = len(sizes)
    second = linalg.GenericOp(
        [tensor_type(out)], [], [tensor.EmptyOp(list(sizes), et).result],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank))
    block = second.regions[0].blocks.append(et)
    with ir.InsertionPoint(block):
        n = _flat_index(sizes)
        at = arith.IndexCastOp(ir.IndexType.get(), arith.DivUIOp(n, _int(64, g)).result)
        j = arith.RemUIOp(n, _int(64, g)).result
        linalg.YieldOp([_pick(j, [tensor.ExtractOp(p, [at.result]).result for p in parts])])
    return second.result


def _groups(sizes: tuple, g: int):
    """ceil(number of elements / g): an int for static sizes, else an index value."""
    if all(isinstance(d, int) for d in sizes):
        return -(-int(np.prod(sizes, dtype=np.int64)) // g)
    index = ir.IndexType.get()
    n = arith.ConstantOp(index, 1).result
    for d in sizes:
        d = arith.ConstantOp(index, d).result if isinstance(d, int) else d
        n = arith.MulIOp(n, d).result
    return arith.DivUIOp(arith.AddIOp(n, arith.ConstantOp(index, g - 1).result).result,
                         arith.ConstantOp(index, g).result).result


@lowers(P.PhiloxRandomOp)
def lower_philox_random(op, lw: Lowering):
    dist, dtype = lw.attrs["distribution"], lw.result_types[0].dtype
    et = element_type(dtype)

    def group_values(state, group):
        if dist == "truncated_normal":
            values = _truncated(state, group, dtype)
        else:
            values = _group(_block(state, group), dist, dtype)
        return [v if v.type == et else narrow_f64(arith.ExtFOp(ir.F64Type.get(), v).result,
                                                   et) for v in values]  # exact
    return [_generic(lw, group_values)]


@lowers(P.PhiloxUniformIntOp)
def lower_philox_uniform_int(op, lw: Lowering):
    """minval + bits % (maxval - minval), unsigned; a zero span (equal bounds) as 1."""
    dtype = lw.result_types[0].dtype
    low, high = (tensor.ExtractOp(v, []).result for v in lw.operands[2:4])
    span = arith.SubIOp(high, low).result
    zero = arith.CmpIOp(arith.CmpIPredicate.eq, span, _int(dtype.bits, 0)).result
    span = arith.SelectOp(zero, _int(dtype.bits, 1), span).result

    def group_values(state, group):
        return [arith.AddIOp(low, arith.RemUIOp(bits, span).result).result
                for bits in _group(_block(state, group), "bits", dtype)]
    return [_generic(lw, group_values)]

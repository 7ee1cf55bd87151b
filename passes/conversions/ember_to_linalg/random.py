"""Lowering of the stateless random ops to the reference's counter-based generator.

`random_uniform` and `random_normal` become one `linalg.generic` each that recomputes
`random_bits` (dialects/ember/creation.py) per element from its flat index, with wrapping
i64 `arith` (splitmix64's finaliser over `key + counter * golden`):

    key      = mix(mix(seed[0] + golden) ^ seed[1])        (scalars, before the generic)
    bits(c)  = mix(key + c * golden)                        c = flat index + 1
    unit(b)  = f64(b >> 11) * 2**-53                        in [0, 1)
    uniform  = minval + unit(bits(n + 1)) * (maxval - minval)
    normal   = mean + stddev * sqrt(-2 log(1 - unit(bits(2n + 1)))) * cos(2 pi unit(bits(2n + 2)))

Everything is computed in f64 and rounded to the result dtype as the reference's `astype`
does (`narrow_f64`), so compiled and interpreted uniform numbers agree bit for bit; normal
numbers agree up to the last bits of libm's `log`/`cos` against numpy's. Upstream has no counter-based RNG op;
`tf.random.stateless_*` is the model.

Before:
    %r = "ember.random_uniform"(%seed) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64,
           shape = array<i64: 4>} : (tensor<2xi64>) -> tensor<4xf32>
After:
    %s0 = tensor.extract %seed[%c0]  ... %key = <splitmix64 of %s0, %s1>
    %r = linalg.generic {iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
      %n = linalg.index 0 ... %b = <mix(%key + (%n + 1) * golden)> ... linalg.yield %f
    }
"""

from __future__ import annotations

import math as pymath

from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, tensor_type)
from ember.passes.conversions.ember_to_linalg.creation import narrow_f64

GOLDEN = 0x9E3779B97F4A7C15
MIX1, MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _f64() -> ir.Type:
    return ir.F64Type.get()


def _int(value: int) -> ir.Value:
    """An i64 constant of the 64-bit pattern `value` (unsigned values wrap to signed)."""
    value &= (1 << 64) - 1
    signed = value - (1 << 64) if value >= 1 << 63 else value
    return arith.ConstantOp(_i64(), ir.IntegerAttr.get(_i64(), signed)).result


def _float(value: float) -> ir.Value:
    return arith.ConstantOp(_f64(), ir.FloatAttr.get(_f64(), value)).result


def _mix(z: ir.Value) -> ir.Value:
    """splitmix64's finaliser, as `creation._mix` (wrapping multiplies, logical shifts)."""
    for shift, factor in ((30, MIX1), (27, MIX2)):
        z = arith.XOrIOp(z, arith.ShRUIOp(z, _int(shift)).result).result
        z = arith.MulIOp(z, _int(factor)).result
    return arith.XOrIOp(z, arith.ShRUIOp(z, _int(31)).result).result


def _key(lw: Lowering) -> ir.Value:
    """mix(mix(seed[0] + golden) ^ seed[1]) from the [2] seed (i32 seeds sign-extend)."""
    seed, seed_type = lw.operands[0], lw.operand_types[0]
    if seed_type.shape != (2,):
        raise LoweringError(f"seed of type {seed_type} must have the static shape [2]")
    words = []
    for i in range(2):
        w = tensor.ExtractOp(seed, [lw.index(i)]).result
        if seed_type.dtype is dtypes.int32:
            w = arith.ExtSIOp(_i64(), w).result
        words.append(w)
    first = _mix(arith.AddIOp(words[0], _int(GOLDEN)).result)
    return _mix(arith.XOrIOp(first, words[1]).result)


def _bits(key: ir.Value, counter: ir.Value) -> ir.Value:
    return _mix(arith.AddIOp(key, arith.MulIOp(counter, _int(GOLDEN)).result).result)


def _unit(bits: ir.Value) -> ir.Value:
    """Uniform f64 in [0, 1) from the top 53 bits (exact: the integer fits 53 bits)."""
    top = arith.ShRUIOp(bits, _int(11)).result
    return arith.MulFOp(arith.UIToFPOp(_f64(), top).result, _float(2.0 ** -53)).result


def _flat_index(shape: tuple) -> ir.Value:
    """The row-major flat index of the current element as i64 (inside a generic)."""
    flat = None
    for dim, size in enumerate(shape):
        i = arith.IndexCastOp(_i64(), linalg.IndexOp(dim).result).result
        size = _int(size) if isinstance(size, int) else arith.IndexCastOp(_i64(), size).result
        flat = i if flat is None else arith.AddIOp(arith.MulIOp(flat, size).result, i).result
    return _int(0) if flat is None else flat


@lowers(C.RandomUniformOp, C.RandomNormalOp)
def lower_random(op, lw: Lowering):
    return [random_values(lw, tuple(lw.attrs["shape"]))]


def random_values(lw: Lowering, shape: tuple) -> ir.Value:
    """The op's numbers for result sizes `shape` (ints, or `index` values for `?` dims)."""
    out = lw.result_types[0]
    uniform = "minval" in lw.attrs  # also the forms with a shape operand (shape_operands.py)
    a = lw.attrs
    key = _key(lw)
    et = element_type(out.dtype)
    rank = len(shape)
    generic = linalg.GenericOp(
        [tensor_type(out)], [], [tensor.EmptyOp(list(shape), et).result],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank))
    block = generic.regions[0].blocks.append(et)
    with ir.InsertionPoint(block):
        n = _flat_index(shape)
        if uniform:
            value = _uniform(key, n, a["minval"], a["maxval"])
        else:
            value = _normal(key, n, a["mean"], a["stddev"])
        linalg.YieldOp([narrow_f64(value, et)])
    return generic.result


def _uniform(key: ir.Value, n: ir.Value, minval: float, maxval: float) -> ir.Value:
    u = _unit(_bits(key, arith.AddIOp(n, _int(1)).result))
    scaled = arith.MulFOp(u, _float(maxval - minval)).result
    return arith.AddFOp(_float(minval), scaled).result


def _normal(key: ir.Value, n: ir.Value, mean: float, stddev: float) -> ir.Value:
    """Box-Muller over the pair (bits[2n], bits[2n + 1]), i.e. counters 2n + 1 and 2n + 2."""
    twice = arith.MulIOp(n, _int(2)).result
    u1 = arith.SubFOp(_float(1.0),
                      _unit(_bits(key, arith.AddIOp(twice, _int(1)).result))).result
    u2 = _unit(_bits(key, arith.AddIOp(twice, _int(2)).result))
    radius = math.SqrtOp(arith.MulFOp(_float(-2.0), math.LogOp(u1).result).result).result
    angle = math.CosOp(arith.MulFOp(_float(2.0 * pymath.pi), u2).result).result
    z = arith.MulFOp(radius, angle).result
    return arith.AddFOp(_float(mean), arith.MulFOp(_float(stddev), z).result).result

"""Lowering of the bitwise ops (dialects/ember/elementwise/bitwise.py) to `arith` on integers
in one `linalg.generic` each. A shift amount is clamped to [0, bits - 1] before `shli`/
`shrsi`/`shrui`, whose result for an amount of the bit width or more is poison: the clamp
is TensorFlow's definition, and the reference kernels'.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ember.dialects.ember import elementwise as E
from ember.dialects.ember.base import REGISTRY
from ember.passes.conversions.ember_to_linalg.common import Lowering, lowers

_LOGIC = {E.BitwiseAndOp: arith.AndIOp, E.BitwiseOrOp: arith.OrIOp,
          E.BitwiseXorOp: arith.XOrIOp}


@lowers(E.BitwiseAndOp, E.BitwiseOrOp, E.BitwiseXorOp, E.LeftShiftOp, E.RightShiftOp)
def lower_bitwise(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    spec, d = REGISTRY[op.name], types[0].dtype

    def body(x, y):
        if spec in _LOGIC:
            return _LOGIC[spec](x, y).result
        zero = arith.ConstantOp(x.type, 0).result
        top = arith.ConstantOp(x.type, d.bits - 1).result
        if d.kind == "uint":  # never negative: only the top needs clamping
            y = arith.MinUIOp(y, top).result
        else:
            y = arith.MinSIOp(arith.MaxSIOp(y, zero).result, top).result
        if spec is E.LeftShiftOp:
            return arith.ShLIOp(x, y).result
        shift = arith.ShRUIOp if d.kind == "uint" else arith.ShRSIOp
        return shift(x, y).result
    return [lw.elementwise(lw.operands, types, out, body)]


@lowers(E.InvertOp)
def lower_invert(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    return [lw.elementwise(lw.operands, [t], out, lambda x: arith.XOrIOp(
        x, arith.ConstantOp(x.type, -1).result).result)]

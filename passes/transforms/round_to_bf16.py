"""ember-round-to-bf16: round f32 results to bfloat16 in software, keeping denormals.

Works around LLVM lowering `fptrunc float to bfloat` on a CPU with AVX512-BF16 to
`vcvtneps2bf16`, which ignores MXCSR and always flushes denormal results (and inputs) to
zero, whereas the reference kernels (ml_dtypes) keep them: bf16 `1e-40 * 1.0` gave 0.0
compiled (LLVM 22; the instruction's documented behaviour, not a bug). It can go when
bf16 denormals may flush. The CPU backend runs it on the loops, after upstream
`arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}` made every bf16
operation an explicit f32 one (`extf` the operands, compute in f32, `truncf` the result).
`extf bf16 -> f32` is a shift in LLVM (exact, no flush), and stays. Upstream
`arith-expand{include-bf16}` has the same rounding but also rewrites `arith.maximumf` into a
compare and select that loses IEEE's -0.0 < +0.0, so it is not used.

Algorithm:
  1. Drop the `contract` fastmath flag the emulation puts on `arith.extf`/`arith.truncf`.
  2. Replace each scalar `arith.truncf` f32 -> bf16 by integer operations that round to
     nearest even on the bit pattern, (bits + 0x7FFF + bit 16) >> 16, with a quiet NaN
     (of the same sign) for NaN: exact for denormals and overflow alike, since bf16 has
     f32's exponent range.

Before:
    %r = arith.truncf %x : f32 to bf16
After:
    %bits = arith.bitcast %x : f32 to i32
    ...                                    (round to nearest even; NaN -> quiet NaN)
    %r = arith.bitcast %s : i16 to bf16
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import as_operation

# The upstream step to run first: every bf16 operation computed in f32 explicitly.
EMULATE = "func.func(arith-emulate-unsupported-floats{source-types=bf16 target-type=f32})"


@dataclasses.dataclass(frozen=True)
class RoundToBf16Pass(Pass):
    name: ClassVar[str] = "ember-round-to-bf16"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        stats.add("rounded", round_truncf_to_bf16(module))


def round_truncf_to_bf16(root) -> int:
    """Rewrites every scalar `arith.truncf` from f32 to bf16 as integer rounding (and drops
    the `contract` flag the emulation puts on conversions); returns how many it rewrote."""
    found = []
    conversions = ("arith.truncf", "arith.extf")
    as_operation(root).walk(lambda op: (found.append(op) if op.name in conversions else None)
                            or ir.WalkResult.ADVANCE)
    count = 0
    for op in found:
        if "fastmath" in op.attributes:  # the emulation marks its conversions `contract`
            del op.attributes["fastmath"]
        if op.name != "arith.truncf":
            continue
        source, result = op.operands[0], op.results[0]
        if str(source.type) != "f32" or str(result.type) != "bf16":
            continue
        with ir.InsertionPoint(op), op.location:
            result.replace_all_uses_with(_round_to_bf16(source, result.type))
        op.erase()
        count += 1
    return count


def _round_to_bf16(x: ir.Value, bf16: ir.Type) -> ir.Value:
    """bf16 nearest to f32 `x`, ties to even: (bits + 0x7FFF + bit 16) >> 16; a carry
    into the exponent is the right rounding up (to the next binade, or to inf)."""
    i32, i16 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(16)

    def const(t, v):
        return arith.ConstantOp(t, ir.IntegerAttr.get(t, v)).result
    bits = arith.BitcastOp(i32, x).result
    sixteen = const(i32, 16)
    odd = arith.AndIOp(arith.ShRUIOp(bits, sixteen).result, const(i32, 1)).result
    biased = arith.AddIOp(bits, arith.AddIOp(odd, const(i32, 0x7FFF)).result).result
    rounded = arith.TruncIOp(i16, arith.ShRUIOp(biased, sixteen).result).result
    nan = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
    # the quiet NaN keeps the sign of x: numpy (ml_dtypes) does too
    sign = arith.TruncIOp(i16, arith.ShRUIOp(bits, sixteen).result).result
    quiet = arith.OrIOp(arith.AndIOp(sign, const(i16, -0x8000)).result,
                        const(i16, 0x7FC0)).result
    return arith.BitcastOp(bf16, arith.SelectOp(nan, quiet, rounded).result).result

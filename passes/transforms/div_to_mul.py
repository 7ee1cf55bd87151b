"""ember-div-to-mul: a float division by a power of two becomes a multiplication (exact).

Algorithm:
  1. Match `ember.div(x, c)`: x a float of the result's dtype, c a constant splat of ±2^k
     whose reciprocal that dtype holds exactly (x / 2^k and x * 2^-k round one real number).
  2. Replace it by `ember.mul(x, 1/c)`; count `div-pow2`.

Before:
    %q = "ember.div"(%x, %c4) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
After:
    %q = "ember.mul"(%x, %c0.25) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
"""

import dataclasses
from typing import ClassVar

import numpy as np

from ember.dialects.ember.elementwise.binary import DivOp, MulOp
from ember.dialects.ember.types import parse_type
from ember.passes.rewrite import PatternPass, constant_of, rewrite, splat


@rewrite(DivOp)
def div_pow2(op, rw):  # div(x, ±2^k) -> mul(x, ±2^-k)
    x, c = op.operands
    dtype, value = parse_type(str(x.type)).dtype, splat(c)
    if value is None or not dtype.is_floating or parse_type(str(op.results[0].type)).dtype != dtype:
        return None
    with np.errstate(all="ignore"):
        inverse = np.float64(1) / np.float64(value)
        exact = np.isfinite(inverse) and np.float64(inverse.astype(dtype.np_dtype)) == inverse
    if abs(np.frexp(np.float64(value))[0]) != 0.5 or not exact:
        return None
    return [rw.emit(MulOp, [x, rw.constant(np.full(constant_of(c).shape, inverse), c)])]


@dataclasses.dataclass(frozen=True)
class DivToMulPass(PatternPass):
    name: ClassVar[str] = "ember-div-to-mul"
    patterns: ClassVar[tuple] = (div_pow2,)

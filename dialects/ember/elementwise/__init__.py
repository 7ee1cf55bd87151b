"""Elementwise ops: unary math (unary.py; tan, the inverse and hyperbolic functions and atan2:
trig.py), binary arithmetic with broadcasting (binary.py), integers' bits (bitwise.py),
comparisons, logic and select (compare.py); shared traits and kernels in common.py.

Semantics follow TensorFlow (tf.math): no implicit dtype conversion between operands, integer
`floordiv`/`mod` round toward negative infinity, `div` is true division (integers give
float32/float64 as `tf.math.truediv` does), comparisons return `i1`. Upstream equivalents: the
`arith`/`math` dialects on tensors, `tosa` elementwise ops.

Special float values are part of the semantics, and the constant folder and the compiled code
reproduce them bit for bit (tests/backends/test_special_values.py): float `floordiv`/`mod` are
numpy's (Python's) divmod, so `inf // 3` is NaN and `mod(4, -2)` is -0.0; `sign(-0.0)` is
+0.0; `maximum`/`minimum` (and `relu`, `reduce_max`/`reduce_min`) are IEEE 754-2019's
maximum/minimum: NaN propagates and -0.0 < +0.0, whatever the operand order (numpy's own
answer on a tie of zeros depends on the order and the dtype).
"""

from ember.dialects.ember.elementwise.common import maximum, minimum
from ember.dialects.ember.elementwise.unary import (AbsOp, CeilOp, CosOp, ErfcOp, ErfOp,
                                                    Expm1Op, ExpOp, FloatUnaryOp, FloorOp,
                                                    IsFiniteOp, IsNanOp, Log1pOp, LogicalNotOp,
                                                    LogOp, NegOp, ReluOp,
                                                    RoundOp, RsqrtOp, SigmoidOp, SignOp, SinOp,
                                                    SqrtOp, SquareOp, TanhOp, UnaryOp)
from ember.dialects.ember.elementwise.special import DigammaOp, LgammaOp
from ember.dialects.ember.elementwise.trig import (AcoshOp, AcosOp, AsinhOp, AsinOp, Atan2Op,
                                                   AtanhOp, AtanOp, CoshOp, SinhOp, TanOp)
from ember.dialects.ember.elementwise.binary import (AddOp, BinaryOp, DivOp, FloorDivOp, MaximumOp,
                                                     MinimumOp, ModOp, MulOp, PowOp, SubOp,
                                                     broadcast_result)
from ember.dialects.ember.elementwise.bitwise import (BitwiseAndOp, BitwiseOrOp, BitwiseXorOp,
                                                      InvertOp, LeftShiftOp, RightShiftOp)
from ember.dialects.ember.elementwise.compare import (CompareOp, EqualityOp, EqualOp,
                                                      GreaterEqualOp, GreaterOp, LessEqualOp,
                                                      LessOp, LogicalAndOp, LogicalOp, LogicalOrOp,
                                                      NotEqualOp, OrderedCompareOp, SelectOp)

__all__ = ["AbsOp", "AddOp", "BinaryOp", "CeilOp", "CompareOp", "CosOp", "DivOp", "EqualOp",
           "EqualityOp", "ErfOp", "ErfcOp", "ExpOp", "Expm1Op", "FloatUnaryOp", "FloorDivOp", "FloorOp",
           "GreaterEqualOp", "GreaterOp", "IsFiniteOp", "IsNanOp", "LessEqualOp", "LessOp",
           "Log1pOp", "LogOp", "LogicalAndOp", "LogicalNotOp", "LogicalOp", "LogicalOrOp",
           "MaximumOp", "MinimumOp", "ModOp", "MulOp", "NegOp", "NotEqualOp", "OrderedCompareOp",
           "PowOp", "ReluOp", "RoundOp", "RsqrtOp", "SelectOp", "SigmoidOp", "SignOp", "SinOp",
           "SqrtOp", "SquareOp", "SubOp", "TanhOp", "UnaryOp", "broadcast_result", "maximum",
           "minimum"]
__all__ += ["DigammaOp", "LgammaOp"]
__all__ += ["AcoshOp", "AcosOp", "AsinhOp", "AsinOp", "Atan2Op", "AtanhOp", "AtanOp", "CoshOp",
            "SinhOp", "TanOp"]
__all__ += ["BitwiseAndOp", "BitwiseOrOp", "BitwiseXorOp", "InvertOp", "LeftShiftOp",
            "RightShiftOp"]

"""The constant ops of a trace: an eager tensor used in a FuncGraph (`x * 0.5`: the 0.5)
becomes an `ember.constant` at the start of the function's entry block (tracing.py; large
ones become arguments instead, see LARGE_CONSTANT_BYTES there).

Every eager tensor used gets an op of its own, as TensorFlow's graphs have one per tensor
(the guide counts them: "contains 11 nodes in its graph"); a small value seen before in the
trace (dtype, shape and bytes equal: `-0.0` is not `0.0`) is built from the first op's
attributes and result type instead of converting the value to an attribute again. A Python
float literal meeting a float tensor (`emit_float`, math_ops' fast path for `x * 0.5`) is
one op per (dtype, value) in the trace, which all its uses share, as a jaxpr holds a
literal once (TensorFlow makes a Const per use; CSE merges them anyway): bench case B's
`tanh(x) * 0.5 + 0.1` in a loop had 100 such ops of its 250, ~0.4 ms of a warm start's first
call to create, write and hash.

`frozen` makes the read-only snapshot a large captured constant is passed as.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from ember.dialects.ember import creation
from ember.dialects.ember.builder import emit_operation
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import IRType
from ember.frontend.tensor import Tensor

SMALL_CONSTANT_BYTES = 64  # a scalar or a short vector


def frozen(value: np.ndarray) -> np.ndarray:
    """A C-contiguous read-only array with `value`'s contents that nobody else can change:
    `value` itself when it already is one (a snapshot captured again by an outer trace)."""
    if value.flags.writeable or not value.flags.owndata or not value.flags.c_contiguous:
        value = np.array(value, order="C", copy=True)
        value.flags.writeable = False
    return value


class ConstantOps:
    """Emits the constant ops of the trace whose entry block is `block`."""

    def __init__(self, block: ir.Block):
        self._block = block
        self._made: dict[tuple, tuple] = {}  # value -> (attributes, [MLIR type], ember type)
        self._floats: dict[tuple, tuple] = {}  # (DType, Python float) -> (result, type)

    def emit(self, t, loc: ir.Location) -> tuple[ir.Value, IRType]:
        """The op of eager tensor `t` at `loc` (in its context): (result, its type)."""
        value = t._value
        by_value = (t._dtype, value.dtype, value.shape, value.tobytes()) \
            if value.nbytes <= SMALL_CONSTANT_BYTES and value.dtype.kind in "biufc" else None
        made = self._made.get(by_value) if by_value is not None else None
        if made is not None:
            return self._again(made, loc)
        ip = ir.InsertionPoint.at_block_begin(self._block)
        op, (ttype,) = emit_operation(creation.ConstantOp, (), {"value": value}, loc=loc, ip=ip)
        result = op.result
        if by_value is not None:
            self._made[by_value] = ({n: op.attributes[n] for n in op.attributes},
                                    [result.type], ttype)
        return result, ttype

    def emit_float(self, value: float, dtype: DType, loc: ir.Location) -> tuple[ir.Value, IRType]:
        """`emit` of the tensor a Python float converts to when it meets a `dtype` tensor
        (math_ops._converted: the caller has checked that `value` is finite, non-zero and
        within `dtype`'s range, so a float64 rounded to `dtype` is all there is to it),
        looked up before any array is made of it: the op of its first use in the trace,
        which every later use shares."""
        made = self._floats.get((dtype, value))
        if made is None:
            array = np.asarray(value, dtype=dtype.np_dtype)
            made = self._floats[dtype, value] = self.emit(Tensor._of_output(array, dtype), loc)
        return made

    def _again(self, made: tuple, loc: ir.Location) -> tuple[ir.Value, IRType]:
        attributes, mlir_types, ttype = made
        op = ir.Operation.create(creation.ConstantOp.name, mlir_types, None, attributes, None, 0,
                                 loc, ir.InsertionPoint.at_block_begin(self._block))
        return op.result, ttype

"""The constant ops of a trace: an eager tensor used in a FuncGraph (`x * 0.5`: the 0.5)
becomes an `ember.constant` at the start of the function's entry block (tracing.py; large
ones become arguments instead, see LARGE_CONSTANT_BYTES there).

Every use gets an op of its own, as TensorFlow's graphs have one per tensor. A small value
seen before in the trace (dtype, shape and bytes equal: `-0.0` is not `0.0`) is built from
the first op's attributes and result type instead of converting the value to an attribute
again: bench case B's `tanh(x) * 0.5 + 0.1` in a loop makes 100 of its 250 ops.
"""

from __future__ import annotations

from mlir import ir

from ember.dialects.ember import creation
from ember.dialects.ember.builder import emit_typed
from ember.dialects.ember.types import IRType

SMALL_CONSTANT_BYTES = 64  # a scalar or a short vector


class ConstantOps:
    """Emits the constant ops of the trace whose entry block is `block`."""

    def __init__(self, block: ir.Block):
        self._block = block
        self._made: dict[tuple, tuple] = {}  # value -> (attributes, [MLIR type], ember type)

    def emit(self, t, loc: ir.Location) -> tuple[ir.Value, IRType]:
        """The op of eager tensor `t` at `loc` (in its context): (result, its type)."""
        value = t._value
        by_value = (t._dtype, value.dtype, value.shape, value.tobytes()) \
            if value.nbytes <= SMALL_CONSTANT_BYTES and value.dtype.kind in "biufc" else None
        made = self._made.get(by_value) if by_value is not None else None
        ip = ir.InsertionPoint.at_block_begin(self._block)
        if made is not None:
            attributes, mlir_types, ttype = made
            op = ir.Operation.create(creation.ConstantOp.name, results=mlir_types,
                                     attributes=attributes, loc=loc, ip=ip)
            return op.result, ttype
        (result,), (ttype,) = emit_typed(creation.ConstantOp, (), {"value": value}, loc=loc,
                                         ip=ip)
        if by_value is not None:
            op = result.owner
            self._made[by_value] = ({n: op.attributes[n] for n in op.attributes},
                                    [result.type], ttype)
        return result, ttype

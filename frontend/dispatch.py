"""Runs one op spec on tensors: the single entry point every public op function goes through.

While tracing, the op is recorded into the active graph. Eagerly this normalises the
attributes, re-runs the spec's type inference (so eager mode reports exactly the errors the
verifier would), calls the numpy reference kernel and casts the results to the inferred
dtypes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError, Op, OpError
from ember.dialects.ember.types import TensorType, shapes_compatible
from ember.frontend import tracing
from ember.frontend.autodiff import recording
from ember.frontend.tensor import Tensor
from ember.frontend.user_code import user_located


def execute(spec: type[Op], operands: Sequence[Tensor], attrs: dict | None = None):
    """Runs `spec` (traced when a graph is active, else eagerly).

    Returns a Tensor, a tuple of them, or None for ops without results.
    """
    graph = tracing.current_graph()
    if graph is not None:
        results = graph.apply(spec, operands, attrs or {})
        if results is not None and recording.recording():
            recording.record_op(spec, operands, spec.normalize_attrs(attrs or {}), results)
        return results
    for t in operands:
        if isinstance(t, tracing.SymbolicTensor):
            raise tracing.eager_use_error(t)
    try:
        attrs = spec.normalize_attrs(attrs or {})
        arrays = [t._value for t in operands]
        types = tuple(TensorType(t._dtype, a.shape) for t, a in zip(operands, arrays))
        result_types = spec.infer_types(types, attrs, arrays if spec.uses_values else None)
        try:
            with np.errstate(all="ignore"):
                out = spec.reference(*arrays, **attrs)
        except (ArithmeticError, IndexError, ValueError) as e:
            raise InvalidArgumentError(spec.name, str(e)) from None
    except OpError as e:  # named at the user's line, as while tracing and in compiled code
        raise user_located(e) from None
    if not result_types:
        return None
    outs = out if isinstance(out, tuple) else (out,)
    results = []
    for rt, value in zip(result_types, outs):
        arr = np.asarray(value)
        if arr.dtype != rt.dtype.np_dtype:
            arr = arr.astype(rt.dtype.np_dtype)
        assert shapes_compatible(arr.shape, rt.shape), (spec.name, arr.shape, rt)
        results.append(Tensor(arr, rt.dtype))
    out = results[0] if len(results) == 1 else tuple(results)
    if recording.recording():
        recording.record_op(spec, operands, attrs, out)
    return out


# the float dtypes numpy casts to natively, and the largest values that `convert_to_tensor`
# converts to them without a warning (its default float32 array is made, and warns, first)
_FLOAT_MAX = {d: float(np.finfo(d.np_dtype if d.bits < 32 else np.float32).max)
              for d in (dtypes.float16, dtypes.float32, dtypes.float64)}


def float_fits(value: float, dtype) -> bool:
    """Whether Python float `value` meeting a `dtype` tensor converts by rounding its float64
    value to `dtype` alone: a float dtype numpy casts to natively, `value` within the
    largest that converts without a warning (so not NaN or infinite)."""
    top = _FLOAT_MAX.get(dtype)
    return top is not None and -top <= value <= top


def execute_float(spec: type[Op], x, y: float):
    """`execute(spec, group(x, y))` for a Python float `y` (a binary op function's `x * 0.5`)
    when `x` is a symbolic tensor, `y` fits its dtype (`float_fits`) and is not zero (`-0.0`
    converts apart) and no tape records: then `y` becomes a constant op without an eager
    tensor made of it first. None otherwise (then `execute` it)."""
    if type(x) is not tracing.SymbolicTensor or not y or not float_fits(y, x._dtype):
        return None
    return x._graph.apply_with_float(spec, x, y)

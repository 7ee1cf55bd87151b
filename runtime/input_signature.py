"""A Function's `input_signature`: checking it when the Function is made, the trace type it
gives the arguments it covers, whether call arguments fit it, and what differs if not.

The message says which argument (`x`, `l[0]`, `d['k']`), and which dtype or dimension
differs; arguments show as shape and dtype, never their values (TensorFlow prints whole
arrays, which for a large input buries the one number that matters).
"""

from __future__ import annotations

import inspect

from ember.dialects.ember.errors import EmberError
from ember.frontend import nest
from ember.frontend.shape import TensorSpec
from ember.frontend.trace_types import TensorTraceType, TraceType, trace_type_of


class InputSignatureError(EmberError, ValueError, TypeError):
    """Arguments that do not fit a Function's input_signature (both ValueError, as the
    tf.function guide expects, and TypeError, as current TensorFlow raises)."""


def type_of_argument(value) -> TraceType:
    if isinstance(value, TensorSpec):
        return TensorTraceType(value.dtype, value.shape.dims)
    if isinstance(value, (tuple, list, dict)) and any(isinstance(v, TensorSpec)
                                                     for v in nest.flatten(value)):
        return trace_type_of(nest.map_structure(_spec_stand_in, value))
    return trace_type_of(value)


class _SpecStandIn:
    """Lets a TensorSpec inside a structure type itself as the tensor it describes."""

    def __init__(self, spec: TensorSpec):
        self.spec = spec

    def __tracing_type__(self, context):
        return TensorTraceType(self.spec.dtype, self.spec.shape.dims)


def _spec_stand_in(leaf):
    return _SpecStandIn(leaf) if isinstance(leaf, TensorSpec) else leaf


def check_signature(signature, py_signature: inspect.Signature, name: str):
    if signature is None:
        return None
    if not isinstance(signature, (tuple, list)):
        raise TypeError(f"input_signature of '{name}' must be a list or tuple of "
                        f"em.TensorSpec, got {signature!r}")
    for spec in nest.flatten(list(signature)):
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"input_signature of '{name}' may only contain em.TensorSpec "
                            f"(nested in lists/tuples/dicts), got {spec!r}")
    positional = [p for p in py_signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(signature) > len(positional):
        raise TypeError(f"input_signature of '{name}' has {len(signature)} entries but the "
                        f"function takes {len(positional)} positional parameters")
    return tuple(signature)


def mismatch_message(name: str, names: list, values: list, signature: tuple) -> str:
    """The InputSignatureError text for the call of Function `name` with `values`."""
    why = next(filter(None, (_mismatch(v, s, n) for n, v, s in zip(names, values,
                                                                   signature))), "")
    inputs = ",\n    ".join(_show(v) for v in values)
    specs = ",\n    ".join(repr(s) for s in signature)
    return (f"Python inputs incompatible with input_signature of '{name}'"
            f"{': ' + why if why else ''}\n  inputs: (\n    {inputs})"
            f"\n  input_signature: (\n    {specs}).")


def fits(value, spec) -> bool:
    if isinstance(spec, TensorSpec):
        if isinstance(value, TensorSpec):
            return value.dtype is spec.dtype and spec.shape.is_compatible_with(value.shape)
        dtype = getattr(value, "dtype", None)
        shape = getattr(value, "shape", None)
        if dtype is None or shape is None:
            return False
        from ember.dialects.ember import dtypes
        try:
            return dtypes.as_dtype(dtype) is spec.dtype and spec.shape.is_compatible_with(
                tuple(shape))
        except TypeError:
            return False
    if isinstance(spec, (tuple, list)):
        return (isinstance(value, (tuple, list)) and len(value) == len(spec)
                and all(fits(v, s) for v, s in zip(value, spec)))
    if isinstance(spec, dict):
        return (isinstance(value, dict) and set(value) == set(spec)
                and all(fits(value[k], spec[k]) for k in spec))
    return value == spec


def _show(value) -> str:
    """A call argument for an error message: tensors and arrays by shape and dtype (never
    their values, which may be large), other values by a short repr."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in value.items()) + "}"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, TensorSpec):
        name = getattr(dtype, "name", str(dtype))
        return f"{type(value).__name__}(shape={_dims(shape)}, dtype={name})"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _dims(shape) -> str:
    dims = getattr(shape, "dims", shape)
    return "<unknown>" if dims is None else str(tuple(dims))


def _mismatch(value, spec, where: str) -> str | None:
    """What differs between the argument `value` (at `where`, e.g. "x" or "l[0]") and its
    `spec`, the first difference only; None if it fits."""
    if fits(value, spec):
        return None
    arg = f"argument `{where}`"
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            keys = sorted(spec, key=repr)
            return f"{arg} should be a dict with keys {keys}, got {_show(value)}"
        items = [(f"{where}[{k!r}]", value[k], spec[k]) for k in spec]
        return next(filter(None, (_mismatch(v, s, w) for w, v, s in items)), None)
    if isinstance(spec, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            return f"{arg} should be a sequence of {len(spec)} value(s), got {_show(value)}"
        items = [(f"{where}[{i}]", v, s) for i, (v, s) in enumerate(zip(value, spec))]
        return next(filter(None, (_mismatch(v, s, w) for w, v, s in items)), None)
    if not isinstance(spec, TensorSpec):
        return f"{arg} is {_show(value)}, the signature fixes it to {spec!r}"
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    want = spec.shape.dims
    if dtype is None or shape is None:
        return (f"{arg} should be a {spec.dtype.name} tensor of shape {_dims(want)}, got "
                f"{_show(value)}")
    got = getattr(dtype, "name", str(dtype))
    if got != spec.dtype.name:
        return f"{arg} has dtype {got}, its em.TensorSpec dtype {spec.dtype.name}"
    dims = getattr(shape, "dims", tuple(shape))
    if want is not None and (dims is None or len(dims) != len(want)):
        rank = "unknown" if dims is None else len(dims)
        return (f"{arg} has shape {_dims(shape)} (rank {rank}), its em.TensorSpec shape "
                f"{_dims(want)} (rank {len(want)})")
    for i, (d, w) in enumerate(zip(dims or (), want or ())):
        if w is not None and d != w:
            return (f"{arg} has shape {_dims(shape)}, its em.TensorSpec shape {_dims(want)}: "
                    f"dimension {i} is {d}, the signature fixes it to {w}")
    return f"{arg} does not fit its em.TensorSpec {spec!r}"

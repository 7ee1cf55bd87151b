"""A Function's `input_signature`: checking it when the Function is made, the trace type it
gives the arguments it covers, whether call arguments fit it, and what differs if not.

The message says which argument (`x`, `l[0]`, `d['k']`), and which dtype or dimension
differs; arguments show as shape and dtype, never their values (TensorFlow prints whole
arrays, which for a large input buries the one number that matters).
"""

from __future__ import annotations

import inspect

import numpy as np

from ember.dialects.ember.errors import EmberError
from ember.frontend import nest
from ember.frontend.shape import TensorSpec
from ember.frontend.trace_types import TensorTraceType, TraceType, trace_type_of
from ember.frontend.variables import Variable


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
    """The input_signature as given (a tuple), checked against the function's parameters:
    TypeError if it is not a sequence of TensorSpecs (nested in lists, tuples, dicts) or has
    more entries than positional parameters and the function has no `*args`."""
    if signature is None:
        return None
    if not isinstance(signature, (tuple, list)):
        raise TypeError(f"input_signature of '{name}' must be a list or tuple of "
                        f"em.TensorSpec, got {signature!r}")
    for spec in nest.flatten(list(signature)):
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"input_signature of '{name}' may only contain em.TensorSpec "
                            f"(nested in lists/tuples/dicts), got {spec!r}")
    positional = _positional(py_signature)
    if len(signature) > len(positional) and _varargs(py_signature) is None:
        raise TypeError(f"input_signature of '{name}' has {len(signature)} entries but the "
                        f"function takes {len(positional)} positional parameters (and no "
                        f"*args)")
    return tuple(signature)


def per_parameter(signature: tuple | None, py_signature: inspect.Signature):
    """The input_signature with one entry per parameter it covers, in order: where the
    function has `*args` and the signature covers every positional parameter, the entries
    past them, as one tuple, are the entry of `*args` (tf.function's input_signature then
    fixes how many it takes)."""
    if signature is None or _varargs(py_signature) is None:
        return signature
    n = len(_positional(py_signature))
    return signature if len(signature) < n else signature[:n] + (tuple(signature[n:]),)


def _positional(py_signature: inspect.Signature) -> list:
    return [p for p in py_signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _varargs(py_signature: inspect.Signature):
    return next((p for p in py_signature.parameters.values()
                 if p.kind is p.VAR_POSITIONAL), None)


def check_call(bound: inspect.BoundArguments, py_signature: inspect.Signature,
               signature: tuple, name: str) -> None:
    """Converts the `bound` arguments the input_signature covers (`signature`: one entry
    per parameter, `per_parameter`) to its dtypes, in place; InputSignatureError if they do
    not fit it, TypeError if an argument it does not cover is given (check_defaults)."""
    names = list(py_signature.parameters)[:len(signature)]
    given = [bound.arguments.get(n, ()) for n in names]
    values = [convert_to_signature(v, s) for v, s in zip(given, signature)]
    for n, value in zip(names, values):
        if n in bound.arguments:
            bound.arguments[n] = value
    check_defaults(bound, py_signature, signature, name)
    if all(fits(value, spec) for value, spec in zip(values, signature)):
        return
    varargs = _varargs(py_signature)
    if varargs is None or len(names) <= len(_positional(py_signature)):
        raise InputSignatureError(mismatch_message(name, names, values, signature, given))
    # *args as the caller sees it: its count first, then arguments and specs listed flat
    extra, want = values[-1], signature[-1]
    why = None if len(extra) == len(want) else (
        f"it fixes *{varargs.name} to {len(want)} value(s), got {len(extra)}")
    flat = [*given[:-1], *given[-1]]
    specs = (*signature[:-1], *want)
    raise InputSignatureError(_with_listing(name, why, flat, specs) if why else
                              mismatch_message(name, names, values, signature, flat, specs))


def _with_listing(name: str, why: str, given: list, specs: tuple) -> str:
    inputs = ",\n    ".join(_show(v) for v in given)
    listed = ",\n    ".join(repr(s) for s in specs)
    return (f"Python inputs incompatible with input_signature of '{name}'"
            f"{': ' + why if why else ''}\n  inputs: (\n    {inputs})"
            f"\n  input_signature: (\n    {listed}).")


def check_defaults(bound: inspect.BoundArguments, py_signature: inspect.Signature,
                   signature: tuple, name: str) -> None:
    """A parameter the input_signature does not cover takes only its default, and must have
    one (tf.function raises when it is decorated; checked here, on the call, where a
    method's `self` is bound): TypeError naming it."""
    for p in list(py_signature.parameters.values())[len(signature):]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            raise TypeError(f"input_signature of '{name}' has no entry for parameter "
                            f"'{p.name}', which has no default: add an em.TensorSpec for it, "
                            "or give it a default (the only value it may then take)")
        value = bound.arguments.get(p.name, p.default)
        if value is not p.default and not (type(value) is type(p.default)
                                           and _equal(value, p.default)):
            raise TypeError(f"'{name}' was called with {p.name}={value!r}, but its "
                            f"input_signature does not cover '{p.name}', which may only "
                            f"take its default {p.default!r}: add an em.TensorSpec for it")


def _equal(a, b) -> bool:
    """`a == b` as one bool; a Variable (whose `==` is elementwise) equals only itself."""
    if isinstance(a, Variable) or isinstance(b, Variable):
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an array or an object without a plain ==
        return False


def mismatch_message(name: str, names: list, values: list, signature: tuple,
                     given: list | None = None, listed: tuple | None = None) -> str:
    """The InputSignatureError text for the call of Function `name` with `values` (as
    converted to the signature; `given`: as the caller passed them, and `listed`: the
    input_signature as given, for the listing)."""
    why = next(filter(None, (_mismatch(v, s, n) for n, v, s in zip(names, values,
                                                                   signature))), "")
    return _with_listing(name, why, values if given is None else given,
                         signature if listed is None else listed)


def convert_to_signature(value, spec):
    """`value` with its Python numbers, lists of them and numpy arrays converted to the
    dtype of their em.TensorSpec where that loses nothing (tf.function converts inputs to
    its signature's dtypes); `value` itself where it is a tensor or does not convert, for
    `fits` and `mismatch_message` to refuse.

    Python values convert as TensorFlow's convert_to_tensor(value, dtype): bools only to
    bool; ints to any integer dtype they fit in and to floats; floats to floats (rounded,
    not overflowing) and to integers when integral. Numpy arrays keep their dtype unless it
    widens safely to the spec's (int32 to int64 or float64, float32 to float64) or both
    are integers and the values fit: float64 to float32 is refused, as for a tensor."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, (np.ndarray, np.generic)):
            return _converted(np.asarray(value), spec.dtype, python=False, default=value)
        if _is_python_literal(value):
            try:
                array = np.array(value)
            except (ValueError, TypeError, OverflowError):
                return value
            return _converted(array, spec.dtype, python=True, default=value)
        return value
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) \
            and len(value) == len(spec):
        out = [convert_to_signature(v, s) for v, s in zip(value, spec)]
        if all(a is b for a, b in zip(out, value)):
            return value
        if isinstance(value, list):
            return out
        return tuple(out) if type(value) is tuple else type(value)(*out)  # a namedtuple
    if isinstance(spec, dict) and isinstance(value, dict) and set(value) == set(spec):
        out = {k: convert_to_signature(value[k], spec[k]) for k in value}
        return value if all(out[k] is value[k] for k in value) else out
    return value


def _is_python_literal(value) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    return isinstance(value, (list, tuple)) and all(_is_python_literal(v) for v in value)


def _converted(array: np.ndarray, dtype, python: bool, default):
    """`array` as `dtype`'s numpy array if it converts without loss (see
    convert_to_signature), else `default`."""
    target = dtype.np_dtype
    src = array.dtype
    if src == target:
        return array if python else default  # a numpy value of the spec's dtype: as it is
    if src.kind not in "biuf" or target.kind not in "biuf" or (src.kind == "b") != (
            target.kind == "b"):
        return default
    if not python and not np.can_cast(src, target, "safe") and not (
            src.kind in "iu" and target.kind in "iu"):
        return default
    if target.kind in "iu":
        if src.kind == "f" and not (np.isfinite(array).all()
                                    and (array == np.trunc(array)).all()):
            return default
        if array.size:
            info = np.iinfo(target)
            if array.min() < info.min or array.max() > info.max:
                return default
        return array.astype(target)
    with np.errstate(over="ignore"):
        out = array.astype(target)
    if target.kind == "f" and src.kind == "f" and (
            np.isinf(out) & np.isfinite(array)).any():
        return default
    if target.kind == "f" and src.kind in "iu" and np.isinf(out).any():
        return default
    return out


def fits(value, spec) -> bool:
    hook = getattr(spec, "_ember_fits", None)
    if hook is not None:  # a composite spec (em.distribute's PerReplicaSpec)
        return hook(value, fits)
    if isinstance(spec, TensorSpec):
        if isinstance(value, TensorSpec):  # as specific as `spec` (a subtype), as in TF
            want, dims = spec.shape.dims, value.shape.dims
            return value.dtype is spec.dtype and (want is None or (
                dims is not None and len(dims) == len(want)
                and all(w is None or d == w for d, w in zip(dims, want))))
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
    return _equal(value, spec)


def _show(value) -> str:
    """A call argument for an error message: tensors and arrays by shape and dtype (never
    their values, which may be large), other values by a short repr."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else \
            f"({inner}{',' if len(value) == 1 else ''})"
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
        lossy = ""
        if _is_python_literal(value):
            bools = [v for v in nest.flatten(value) if isinstance(v, bool)]
            lossy = (f" (it does not convert to {spec.dtype.name} without loss)"
                     if not bools or spec.dtype.is_bool else
                     f" (bools convert only to bool, not to {spec.dtype.name})")
        return (f"{arg} should be a {spec.dtype.name} tensor of shape {_dims(want)}, got "
                f"{_show(value)}{lossy}")
    got = getattr(dtype, "name", str(dtype))
    if got != spec.dtype.name:
        return f"{arg} has dtype {got}, its em.TensorSpec dtype {spec.dtype.name}"
    dims = shape.dims if hasattr(shape, "dims") else tuple(shape)
    if want is not None and (dims is None or len(dims) != len(want)):
        rank = "unknown" if dims is None else len(dims)
        return (f"{arg} has shape {_dims(shape)} (rank {rank}), its em.TensorSpec shape "
                f"{_dims(want)} (rank {len(want)})")
    for i, (d, w) in enumerate(zip(dims or (), want or ())):
        if w is not None and d != w:
            return (f"{arg} has shape {_dims(shape)}, its em.TensorSpec shape {_dims(want)}: "
                    f"dimension {i} is {d}, the signature fixes it to {w}")
    return f"{arg} does not fit its em.TensorSpec {spec!r}"


def unexpected_keyword(signature: inspect.Signature, kwargs: dict) -> str:
    """Python's message for a keyword `signature` does not take (which `bind` reports only
    after a missing argument, blaming the wrong one), or ""."""
    params = signature.parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return ""
    for key in kwargs:
        if key not in params or params[key].kind is inspect.Parameter.POSITIONAL_ONLY:
            return f"got an unexpected keyword argument {key!r}"
    return ""

"""The fast path of a call: a cheap key of its arguments (types and shapes of tensors and
arrays, values of Python literals) under which a Function keeps the compiled entry that
served an earlier call with an equal key, so the call needs no binding and no trace type;
and that entry: the compiled code called on the arguments' data pointers.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ember.frontend.tensor import Tensor
from ember.frontend.trace_types import float_bits
from ember.frontend.tracing import SymbolicTensor
from ember.dialects.ember.array_pointer import data_pointer
from ember.runtime.structures import same_python_value

MAX_FAST_ENTRIES = 64  # per Function
_FAST_LITERALS = (int, float, bool, str, type(None))


def fast_key(args: tuple):
    """A cheap key for calls whose arguments are eager tensors, C-contiguous aligned numpy
    arrays and Python literals: equal keys have equal trace types, so a compiled entry
    recorded for one serves the other.
    None when some argument needs the general path."""
    key = []
    for a in args:
        kind = type(a)
        if kind is Tensor:
            key.append((a._dtype, a._value.shape))
        elif kind is np.ndarray:  # traced as a tensor of its dtype and shape
            if not (a.flags.c_contiguous and a.flags.aligned):
                return None  # the general path copies it
            key.append((kind, a.dtype, a.shape))
        elif kind is float:  # by bits, as trace types: -0.0 is not 0.0, a NaN is itself
            key.append((kind, float_bits(a)))
        elif kind in _FAST_LITERALS:
            key.append((kind, a))
        else:
            return None
    return tuple(key)


def drop_entry(table: dict, key, value) -> None:
    """Removes `key` from `table` if it still maps to `value`."""
    if table.get(key) is value:
        table.pop(key, None)


def make_entry(args: tuple, params: list, templates: dict, extra_args: list,
               compiled: Callable, fast_pack: Callable):
    """The fast entry of a concrete function (ConcreteFunction.fast_entry) for `args`:
    `params` its parameters, `templates` what it was traced with, `extra_args` its captured
    inputs, `compiled(shapes)` its executable for those input shapes, `fast_pack()` how
    its results are returned."""
    if (len(params) != len(args)
            or any(kind != "constant" for kind, _ in extra_args)
            or any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params)):
        return None
    positions, pointers_of, shapes = [], [], []
    for i, (param, value) in enumerate(zip(params, args)):
        template = templates[param.name]
        if isinstance(template, SymbolicTensor):
            if type(value) is Tensor and value._dtype is template.dtype:
                pointers_of.append(Tensor._data_pointer)
                array = value._value
            elif (type(value) is np.ndarray and value.dtype == template.dtype.np_dtype
                  and value.flags.c_contiguous and value.flags.aligned):
                pointers_of.append(data_pointer)  # fast_key checks the layout per call
                array = value
            else:
                return None
            positions.append(i)
            shapes.append((array.shape, array.dtype.str))
        elif not same_python_value(template, value):
            return None
    constants = [obj for _, obj in extra_args]  # large captured constants
    shapes += [(c._value.shape, c._value.dtype.str) for c in constants]
    exe = compiled(tuple(shapes))
    if exe is None or not exe.fast_path:
        return None
    call, pack = exe.call_pointers, fast_pack()
    if constants:
        pointers = [c._data_pointer() for c in constants]  # read-only snapshots

        def entry(call_args):
            return pack(call([get(call_args[i]) for i, get in zip(positions, pointers_of)]
                             + pointers))
        entry.shapes, entry.exe = tuple(shapes), exe
        return entry

    def entry(call_args):
        return pack(call([get(call_args[i]) for i, get in zip(positions, pointers_of)]))
    entry.shapes, entry.exe = tuple(shapes), exe  # (watched: dropped when exe is replaced)
    return entry

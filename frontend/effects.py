"""Effects that run on every call of a traced function: `em.print`, `em.py_function` and
`em.debugging.assert_true` (an `ember.assert` op: a run-time check), and
`em.control_dependencies`, which they make an ordering the program already has.

`em.print` to stdout/stderr becomes `ember.print` ops (one per tensor, with the text around
it in the op's `format`/`end`). Printing to any other stream, and `em.py_function`, call back
into Python: the trace declares a private function and emits a `func.call` to it, and the
runtime binds the declaration to the Python callable (a host callback).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import func

from ember.dialects.ember import dtypes, state
from ember.dialects.ember.base import AssertionFailedError, InvalidArgumentError
from ember.dialects.ember.convert import type_to_mlir
from ember.dialects.ember.types import TensorType
from ember.frontend.tensor import Tensor, _is_python_value, convert_to_tensor
from ember.frontend.tracing import FuncGraph, SymbolicTensor, current_graph, init_scope
from ember.frontend.user_code import user_located

_callback_ids = itertools.count()
_PRINT = "print"  # the label of em.print's host callbacks (`emit_host_call`'s symbols)


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def _as_tensor(value) -> Tensor:
    return value._as_tensor() if hasattr(value, "_as_tensor") else convert_to_tensor(value)


def print(*inputs, output_stream=None, summarize=None, sep: str = " ",  # noqa: A001
          end: str = "\n", name=None):
    """Prints tensors and Python values on every call, like tf.print (stderr by default).

    `summarize`: how many entries at each end of every dim are shown, the rest as `...`
    (None: 3, as tf.print; -1: all of them).

    Example:
      >>> import ember as em, sys
      >>> em.print("x =", em.constant([1, 2]), output_stream=sys.stdout)
      x = [1 2]
    """
    del name
    stream = sys.stderr if output_stream is None else output_stream
    summarize = _summarize(summarize)
    if any(isinstance(v, (tuple, list, dict)) for v in inputs):  # tf.print's structures
        inputs, sep = _spread(inputs, sep), ""
    graph = current_graph()
    if graph is None:
        stream.write(_render(inputs, sep, summarize) + end)
    elif stream is sys.stdout or stream is sys.stderr:
        _emit_prints(graph, inputs, "stdout" if stream is sys.stdout else "stderr", sep, end,
                     summarize)
    else:
        _print_via_callback(graph, inputs, stream, sep, end, summarize)


def _summarize(value) -> int:
    """em.print's `summarize` as ember.print's attribute: TypeError/ValueError if it is
    not None, -1 or an int >= 0."""
    if value is None:
        return state.EDGE_ITEMS
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"em.print: summarize must be an int (entries shown at each end of "
                        f"a dim; -1 for all, None for 3), got {value!r}")
    if value < -1:
        raise ValueError(f"em.print: summarize must be -1 (show every entry) or >= 0, got "
                         f"{value}")
    return int(value)


def _spread(inputs, sep: str) -> list:
    """The inputs with tuples, lists and dicts spelled out as tf.print shows them (their
    tensors in place: `([0], [1])`), joined by `sep` (the caller then prints with sep "")."""
    def pieces(value) -> list:
        if isinstance(value, dict):
            parts = [[repr(k) + ": "] + pieces(v) for k, v in value.items()]
            opening, closing = "{", "}"
        elif isinstance(value, (tuple, list)):
            parts = [pieces(v) for v in value]
            opening, closing = ("(", ",)" if len(value) == 1 else ")") \
                if isinstance(value, tuple) else ("[", "]")
        else:
            return [value if _is_tensor(value) else str(value)]
        out = [opening]
        for k, part in enumerate(parts):
            out += ([", "] if k else []) + part
        return out + [closing]
    out: list = []
    for k, value in enumerate(inputs):
        out += ([sep] if k else []) + pieces(value)
    return out


def assert_true(condition, message: str = "assertion failed", name=None) -> None:
    """Raises `AssertionFailedError(message)` (an `InvalidArgumentError` and an
    `AssertionError`) where the bool tensor `condition` has a false element: at once
    eagerly, when the traced function runs otherwise (compiled code raises it as eager
    does). AutoGraph turns `assert` on a tensor into this.

    Example:
      >>> import ember as em
      >>> em.debugging.assert_true(em.constant([True, True]), "all fine")
    """
    del name
    condition = convert_to_tensor(condition)
    if not condition.dtype.is_bool:
        raise TypeError(f"em.debugging.assert_true needs a bool tensor, got {condition!r}")
    message = str(message)
    graph = current_graph()
    if graph is None or not isinstance(condition, SymbolicTensor):
        if not state.AssertOp.reference(condition._value, message=message):
            raise user_located(AssertionFailedError(state.AssertOp.name, message))
        return
    graph.apply(state.AssertOp, [condition], {"message": message})


def assert_same_shape(a: Tensor, b: Tensor, message: str) -> None:
    """`assert_true` that tensors `a` and `b`, of compatible shapes, are of one shape when
    the code runs, where a `?` dim leaves it open: ops that do not broadcast (add_n, the
    losses, bias_add) are built from ops that do, which would stretch a `?` of size 1 to
    any size where eager raises. Nothing when both shapes are known or a rank is not."""
    if a.shape.rank is None or a.shape.rank != b.shape.rank or \
            (a.shape.is_fully_defined() and b.shape.is_fully_defined()):
        return
    from ember.frontend import ops
    assert_true(ops.reduce_all(ops.equal(ops.shape(a, dtypes.int64),
                                         ops.shape(b, dtypes.int64))), message)


def _render(inputs, sep: str, summarize: int = state.EDGE_ITEMS) -> str:
    parts = []
    for value in inputs:
        if _is_tensor(value):
            parts.append(state.format_value(_as_tensor(value)._value, summarize))
        else:
            parts.append(str(value))
    return sep.join(parts)


def _emit_prints(graph: FuncGraph, inputs, stream: str, sep: str, end: str,
                 summarize: int) -> None:
    """One `ember.print` per tensor, the text before it in its `format`; text known at trace
    time that cannot go there (it holds a literal `{}`, or no tensor follows) goes into an
    `end`, which takes any text: of the print before, or of a text-only print (a `format`
    without `{}`, whose operand is not shown). No string tensor is made, so it compiles."""
    pending, ops = "", []  # ops: (tensor or None for text only, format, end)
    for i, value in enumerate(inputs):
        gap = sep if i else ""
        if not _is_tensor(value):
            pending += gap + str(value)
            continue
        prefix = pending + gap
        if "{}" in prefix:
            ops.append((None, "", prefix))
            prefix = ""
        ops.append((_as_tensor(value), prefix + "{}", ""))
        pending = ""
    if not ops:
        ops.append((None, "", ""))
    tensor, fmt, last_end = ops[-1]
    ops[-1] = (tensor, fmt, last_end + pending + end)
    anchor = None
    for tensor, fmt, text in ops:
        if tensor is None:  # text only: any operand will do, it is not shown
            anchor = tensor = anchor or convert_to_tensor(0)
        graph.apply(state.PrintOp, [tensor], {"format": fmt, "end": text, "stream": stream,
                                              "summarize": summarize})


def _print_via_callback(graph: FuncGraph, inputs, stream, sep: str, end: str,
                        summarize: int) -> None:
    tensors = [_as_tensor(v) for v in inputs if _is_tensor(v)]

    def host(*arrays):
        values = iter(arrays)
        shown = [Tensor(np.asarray(next(values))) if _is_tensor(v) else v for v in inputs]
        stream.write(_render(shown, sep, summarize) + end)
        return ()
    emit_host_call(graph, host, tensors, [], _PRINT)


def is_print(symbol: str) -> bool:
    """Whether host callback `symbol` is an em.print's (to a stream other than stdout/stderr):
    one muted leaves a call's results as they are (it has none)."""
    return symbol.startswith(f"__{_PRINT}_")


def emit_host_call(graph: FuncGraph, host: Callable, args: list[Tensor],
                   result_dtypes: list, label: str, result_shapes: list | None = None) -> list:
    """Declares `@label_N` in the trace's module, binds it to `host` and calls it. The
    results have unknown rank unless `result_shapes` gives each one's (None: unknown)."""
    symbol = f"__{label}_{next(_callback_ids)}"
    values = [graph.resolve(t) for t in args]
    shapes = result_shapes if result_shapes is not None else [None] * len(result_dtypes)
    with graph.context, ir.Location.unknown():
        results = [type_to_mlir(TensorType(d, s)) for d, s in zip(result_dtypes, shapes)]
        fn_type = ir.FunctionType.get([v.type for v in values], results)
        with ir.InsertionPoint.at_block_begin(graph.module.body):
            func.FuncOp(symbol, fn_type, visibility="private")
        with graph.insertion_point(), graph.location():
            call = func.CallOp(results, symbol, values)
    graph.callbacks[symbol] = host
    graph.callees.add(symbol)
    return [graph.wrap(r, label) for r in call.results]


def py_function(func_: Callable, inp, Tout, name=None):
    """Runs the Python callable `func_` on every call, even inside an em.function.

    `inp` is a list of tensors; `Tout` a dtype or a list of dtypes; returns a tensor or a
    list of tensors (of unknown shape when traced).

    Example:
      >>> import ember as em
      >>> em.py_function(lambda x: x * 2, [em.constant(3)], em.int32)
      <ember.Tensor: shape=(), dtype=int32, numpy=6>
    """
    del name
    single = not isinstance(Tout, (list, tuple))
    out_dtypes = [dtypes.as_dtype(d) for d in ([Tout] if single else Tout)]
    args = [_as_tensor(v) for v in inp]

    def host(*arrays):
        with init_scope():
            out = func_(*[Tensor(np.asarray(a)) for a in arrays])
        if single:
            outs = [out]
        elif out is None and not out_dtypes:  # Tout=[]: run for the side effect only
            outs = []
        elif isinstance(out, (list, tuple)):
            outs = list(out)
        else:
            outs = [out]
        if len(outs) != len(out_dtypes):
            raise InvalidArgumentError("py_function", f"{_callable_name(func_)} returned "
                                       f"{len(outs)} value(s), but Tout lists "
                                       f"{len(out_dtypes)}: {_dtype_names(out_dtypes)}")
        return tuple(_result_array(o, d, i, func_, single)
                     for i, (o, d) in enumerate(zip(outs, out_dtypes)))

    graph = current_graph()
    if graph is None:
        results = [Tensor(v) for v in host(*[a._value for a in args])]
    else:
        results = emit_host_call(graph, host, args, out_dtypes, "py_function")
    from ember.frontend.autodiff import recording
    if recording.recording():
        _record_gradient(func_, args, results)
    return results[0] if single else results


def _record_gradient(func_, args: list, results: list) -> None:
    """Makes a py_function differentiable, as TensorFlow's: its backward is another
    py_function, which runs `func_` again eagerly under a tape on the same inputs and takes
    the gradient of its float results weighted by their cotangents."""
    from ember.frontend.autodiff import control
    from ember.frontend.autodiff.tape import GradientTape, UnconnectedGradients, differentiable
    wrt = [i for i, a in enumerate(args) if differentiable(a)]
    if not wrt:
        return

    def backward(cts):
        from ember.frontend.ops import cast, reshape, shape
        used = [j for j, (r, c) in enumerate(zip(results, cts))
                if c is not None and differentiable(r)]
        if not used:
            return [None] * len(args)

        def gradient(*values):
            xs = [convert_to_tensor(v) for v in values[:len(args)]]
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch([xs[i] for i in wrt])
                out = func_(*xs)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            grads = tape.gradient([_as_tensor(outs[j]) for j in used], [xs[i] for i in wrt],
                                  output_gradients=list(values[len(args):]),
                                  unconnected_gradients=UnconnectedGradients.ZERO)
            return [cast(g, args[i].dtype) for g, i in zip(grads, wrt)]
        grads = py_function(gradient, list(args) + [cts[j] for j in used],
                            [args[i].dtype for i in wrt])
        full = [None] * len(args)
        for g, i in zip(grads, wrt):  # (py_function results have unknown shapes)
            full[i] = reshape(g, shape(args[i]))
        return full
    control.record(list(args), list(results), backward)


def _callable_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _dtype_names(out_dtypes) -> str:
    return "[" + ", ".join(d.name for d in out_dtypes) + "]"


def _result_array(value, dtype, index: int, fn, single: bool) -> np.ndarray:
    """Result `index` of the py_function `fn` as an array of exactly `dtype` (its Tout): a
    value that `dtype` cannot hold exactly (1.5 for int32, 300 for uint8, a float64 tensor for
    float32) is an InvalidArgumentError, as TensorFlow's py_function raises, never a silent
    truncation. Python and numpy numbers convert when every element keeps its value;
    floating Tout rounds floats as casting does. Tensors must already have `dtype`."""
    what = f"{_callable_name(fn)} returned" + ("" if single else f", as result {index},")
    if _is_tensor(value):
        tensor = _as_tensor(value)
        if tensor.dtype is not dtype:
            raise InvalidArgumentError("py_function", f"{what} a tensor of dtype "
                                       f"{tensor.dtype.name}, but Tout says {dtype.name}; "
                                       f"return em.cast(x, em.{dtype.name}) or fix Tout")
        return tensor._value
    try:
        if dtype.is_string:
            return convert_to_tensor(value, dtype=dtype)._value
        # Python values as numpy sees them (1.5 as float64, not em's default float32)
        arr = np.asarray(value) if _is_python_value(value) else convert_to_tensor(
            value)._value
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError("py_function", f"{what} {value!r}, which is not a "
                                   f"tensor value of dtype {dtype.name}: {e}") from None
    if arr.dtype == dtype.np_dtype:
        return arr
    if not _holds_exactly(arr, dtype):
        shown = repr(value) if arr.size <= 8 else f"an array of shape {arr.shape}"
        raise InvalidArgumentError("py_function", f"{what} {shown} ({arr.dtype}), which "
                                   f"{dtype.name} (its Tout) cannot hold exactly; return "
                                   f"values of dtype {dtype.name} or fix Tout")
    return Tensor(arr.astype(dtype.np_dtype), dtype)._value


def _holds_exactly(arr: np.ndarray, dtype) -> bool:
    """Whether casting `arr` to `dtype` keeps every value (floats to a floating dtype may
    round; nothing else may change a value, and kinds do not mix with strings or bools)."""
    kind = arr.dtype.kind
    if dtype.is_string or kind in "OSU":
        return dtype.is_string and kind in "OSU"
    if dtype.is_bool or kind == "b":
        return dtype.is_bool and kind == "b"
    if dtype.is_floating:
        if kind != "f":  # integers: exact only while they fit the float's mantissa
            with np.errstate(all="ignore"):
                return bool(np.array_equal(arr.astype(dtype.np_dtype).astype(arr.dtype), arr))
        with np.errstate(all="ignore"):  # no overflow to inf
            cast = arr.astype(dtype.np_dtype)
        return bool(np.array_equal(np.isinf(cast), np.isinf(arr)))
    if kind == "f":  # integral and in range: compare as float64 after the round trip
        info = np.iinfo(dtype.np_dtype)
        wide = arr.astype(np.float64)
        return bool(np.all(np.isfinite(wide)) and np.all(wide == np.round(wide))
                    and wide.min() >= info.min and wide.max() <= info.max)
    info = np.iinfo(dtype.np_dtype)  # integers: in range (compared as Python ints)
    return bool(arr.size == 0 or (int(arr.min()) >= info.min and int(arr.max()) <= info.max))


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """tf.control_dependencies: the ops in the block run after `control_inputs` (tensors,
    variables, or the None that em.print and em.debugging's asserts return). Ember keeps
    every effect (a print, an assert, a variable's read or write, a py_function) in program
    order and computes pure ops only from their inputs, so what TensorFlow 2 gets from
    this block (and from its automatic control dependencies) already holds: the block
    orders nothing more. Its inputs are checked as TensorFlow checks them.

    Example:
      >>> import ember as em
      >>> x = em.constant([1.0, 2.0])
      >>> with em.control_dependencies([em.debugging.assert_all_finite(x, "x")]):
      ...     y = em.identity(x)
    """
    if control_inputs is not None:
        if not isinstance(control_inputs, (list, tuple)):
            raise TypeError(f"em.control_dependencies takes a list of tensors or variables "
                            f"(or None), got {type(control_inputs).__name__}")
        from ember.frontend.variables import Variable
        for c in control_inputs:
            if c is not None and not isinstance(c, (Tensor, Variable)):
                raise TypeError(f"em.control_dependencies: control inputs must be tensors, "
                                f"variables or None (what em.print and the asserts "
                                f"return), got {type(c).__name__}: {c!r}")
    yield

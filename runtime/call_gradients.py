"""A Function called while a tape records is recorded as one operation, as TensorFlow
records a `tf.function` call: its inputs are the call's tensors and Variables and the
Variables and outer tensors the trace captured; its gradient is a second Function, traced
from the same Python function under a tape (forward again, then backward), and called
(compiled eagerly, or as a nested `func.call` while tracing)."""

from __future__ import annotations

from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.autodiff.tape import Entry, GradientTape, UnconnectedGradients, _is_variable
from ember.frontend.tensor import Tensor
from ember.frontend.tracing import current_graph


def _leaves(structure) -> list:
    """The tensors and Variables in `structure`, each once, in order."""
    out, seen = [], set()
    for leaf in nest.flatten(structure):
        if (isinstance(leaf, Tensor) or _is_variable(leaf)) and id(leaf) not in seen:
            seen.add(id(leaf))
            out.append(leaf)
    return out


def call_recorded(function, args, kwargs, concrete=None):
    """`function(*args, **kwargs)` (or `concrete(...)`, one of its traces) while a tape
    records: run, then recorded as one op."""
    if concrete is None:
        bound = function._bind(args, kwargs)
        concrete = function._concrete_for(bound)
        args, kwargs = bound.args, bound.kwargs
    arguments = concrete.call_arguments(args, kwargs)
    flat = concrete._flat_inputs(arguments)
    graph = current_graph()
    result = concrete.call_in_graph(graph, flat) if graph is not None else \
        concrete.call_flat(flat)
    record_call(function, concrete, (), arguments, result)
    return result


def record_call(function, concrete, args: tuple, kwargs: dict, result) -> None:
    """Records the call `function(*args, **kwargs) -> result` (run by `concrete`)."""
    explicit = _leaves((args, kwargs))
    captured = [obj for kind, obj in concrete._graph.extra_args
                if kind in ("variable", "tensor") and all(obj is not e for e in explicit)]
    inputs = explicit + captured
    outputs = [o for o in nest.flatten(result) if isinstance(o, Tensor)]
    backward_fn = None

    def backward(cts):
        nonlocal backward_fn
        from ember.frontend import ops
        if backward_fn is None:
            backward_fn = _backward_function(function, captured)
        cts = [ops.zeros_like(o) if c is None else c for c, o in zip(cts, outputs)]
        return list(backward_fn(args, kwargs, cts))
    for tape in recording.tapes():
        for v in inputs:
            if _is_variable(v):
                tape._accessed(v)  # watched, as reading it under the tape would
        if any(tape._connected(v) for v in inputs):
            tape._add(Entry(inputs, outputs, backward))


def _backward_function(function, captured: list):
    from ember.frontend.autograph.conversion import convert
    from ember.runtime.function import Function
    python_function = function.python_function
    if function._autograph:
        python_function = convert(python_function)

    def gradient(args, kwargs, cts):
        sources = _leaves((args, kwargs)) + captured
        with GradientTape(watch_accessed_variables=False) as tape:
            tape._watch(sources)
            out = python_function(*args, **kwargs)
        targets = [o for o in nest.flatten(out) if isinstance(o, Tensor)]
        return tape.gradient(targets, sources, output_gradients=cts,
                             unconnected_gradients=UnconnectedGradients.ZERO)
    return Function(gradient, autograph=False, name=f"{function._name}_grad")

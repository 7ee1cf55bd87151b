"""A Function called while a tape records is recorded as one operation, as TensorFlow
records a `tf.function` call: its inputs are the call's tensors and Variables and the
Variables and outer tensors the trace captured; its gradient is a second Function, traced
from the same Python function under a tape (forward again, then backward), and called
(compiled eagerly, or as a nested `func.call` while tracing).

The second Function replays the forward (frontend/autodiff/regions.py): the call reads
the Variables the function writes before it runs, and the replay's reads see those values
and its writes are not emitted again. Else its random ops, which read and advance a state
Variable, would draw other numbers than the call did (dropout's gradient with another
mask), and its writes would happen twice. A Function called inside a replay is traced in
place, its Python function replayed like the rest."""

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
    graph = current_graph()
    if graph is not None and recording.replaying_now():
        return _replayed(function, args, kwargs)
    if concrete is None:
        bound = function._bind(args, kwargs)
        concrete = function._concrete_for(bound)
        args, kwargs = bound.args, bound.kwargs
    arguments = concrete.call_arguments(args, kwargs)
    flat = concrete._flat_inputs(arguments)
    written = list(concrete._graph.replay_log.written.values())
    before = _values_before(written, graph)
    result = concrete.call_in_graph(graph, flat) if graph is not None else \
        concrete.call_flat(flat)
    for v in written:
        recording.record_write(v)
    record_call(function, concrete, (), arguments, result, before)
    return result


def _values_before(variables: list, graph) -> list:
    """(Variable, its value) for each of `variables` that has one: a Variable an em.function
    creates gets its first value from that function's first call (the replay writes it)."""
    with recording.paused():  # (an enclosing region hears of the reads: regions.py)
        return [(v, v.read_value()) for v in variables
                if graph is not None or getattr(v, "_handle", None) is None or
                v._handle.value is not None]


def _replayed(function, args, kwargs):
    """A call inside a gradient's replay: the function's Python function traced in place,
    as the rest of the replay, reading and writing the replay's Variable values (a call
    would run its writes and draw its random numbers again)."""
    from ember.frontend.autograph.conversion import convert
    python_function = function.python_function
    return (convert(python_function) if function._autograph else python_function)(
        *args, **kwargs)


def record_call(function, concrete, args: tuple, kwargs: dict, result,
                snapshots: list = ()) -> None:
    """Records the call `function(*args, **kwargs) -> result` (run by `concrete`);
    `snapshots`: (Variable, its value before the call) for each Variable it writes."""
    explicit = _leaves((args, kwargs))
    captured = [obj for kind, obj in concrete._graph.extra_args
                if kind in ("variable", "tensor") and all(obj is not e for e in explicit)]
    inputs = explicit + captured
    outputs = [o for o in nest.flatten(result) if isinstance(o, Tensor)]

    def backward(cts):
        from ember.frontend import ops
        # One gradient Function per trace and captures the call did not pass (objects the
        # trace holds, so their ids stay theirs), kept by the trace: a new one per call
        # would trace and compile the gradient again on each step of an eager training loop.
        known = concrete._call_gradients
        which = (*map(id, captured), None, *(id(v) for v, _ in snapshots))
        backward_fn = known.get(which)
        if backward_fn is None:
            backward_fn = known[which] = _backward_function(
                function, captured, [v for v, _ in snapshots],
                concrete._graph.replay_log.drawn)
        cts = [ops.zeros_like(o) if c is None else c for c, o in zip(cts, outputs)]
        return list(backward_fn(args, kwargs, cts, [value for _, value in snapshots]))
    for tape in recording.tapes():
        for v in inputs:
            if _is_variable(v):
                tape._accessed(v)  # watched, as reading it under the tape would
        if any(tape._connected(v) for v in inputs):
            tape._add(Entry(inputs, outputs, backward))


def _backward_function(function, captured: list, written: list, drawn: list):
    """The gradient Function of calls of `function`: it takes the call's arguments, the
    cotangents of its results and the values of the Variables it writes (`written`) before
    the call, and replays the call (see the module docstring), its random ops drawing from
    the generators the call's did (`drawn`)."""
    from ember.frontend.autograph.conversion import convert
    from ember.runtime.function import Function
    python_function = function.python_function
    if function._autograph:
        python_function = convert(python_function)

    def gradient(args, kwargs, cts, values):
        sources = _leaves((args, kwargs)) + captured
        graph = current_graph()
        for v in written if graph is not None else ():  # its inputs, for a tape around
            graph.capture_variable(v)  # its calls (the replay reads none of them)
        with GradientTape(watch_accessed_variables=False) as tape, \
                recording.replaying({id(v): x for v, x in zip(written, values)}, drawn):
            tape._watch(sources)
            out = python_function(*args, **kwargs)
        targets = [o for o in nest.flatten(out) if isinstance(o, Tensor)]
        return tape.gradient(targets, sources, output_gradients=cts,
                             unconnected_gradients=UnconnectedGradients.ZERO)
    return Function(gradient, autograph=False, name=f"{function._name}_grad")

"""`em.while_loop` -> `scf.while`.

Eagerly it is a plain Python `while`. While tracing, the condition and the body (converted
by AutoGraph, as TensorFlow converts those given to tf.while_loop) are each traced once into
their own region (Python side effects in them happen once, at trace
time). A loop variable keeps its shape across iterations, as in TensorFlow: one whose
shape changes in the body is an error, unless `shape_invariants` gives it a less specific
shape (`em.TensorShape([None])`), which the loop then carries.
"""

from __future__ import annotations

import contextlib
from typing import Callable

from mlir import ir

from ember.dialects.ember import dtypes
from ember.dialects.ember.types import TensorType
from ember.frontend import detached, nest
from ember.frontend.autodiff import loops, recording
from ember.frontend.control_flow import ControlFlowError, _cast, _predicate, _ttype
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tensor_array import TensorArray
from ember.frontend.tracing import FuncGraph, current_graph
from ember.frontend.user_code import user_location


def while_loop(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
               parallel_iterations=10, back_prop=True, swap_memory=False,
               maximum_iterations=None, name=None):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (tf.while_loop, its
    parameters in its order).

    While tracing, each loop variable must keep its shape across an iteration; a variable
    whose shape changes needs a less specific shape in `shape_invariants` (a structure like
    `loop_vars` of `em.TensorShape`s, e.g. `em.TensorShape([None])`). `parallel_iterations`
    and `swap_memory` are accepted and have no effect (an iteration runs as one compiled
    step; nothing is swapped to the host); `back_prop=False` stops gradients through the
    loop's results, as TF's deprecated argument did.

    Example:
      >>> import ember as em
      >>> em.while_loop(lambda i: i < 10, lambda i: (i * 2,), (em.constant(1),))
      (<ember.Tensor: shape=(), dtype=int32, numpy=16>,)
    """
    del name, parallel_iterations, swap_memory
    graph = current_graph()
    if graph is None:
        out = _eager_while(cond, body, loop_vars, maximum_iterations)
    else:
        from ember.frontend.autograph.conversion import convert
        out = _traced_while(graph, convert(cond), convert(body), loop_vars, shape_invariants,
                            maximum_iterations)
    if not back_prop:
        from ember.frontend.autodiff.custom import stop_gradient
        out = nest.map_structure(lambda v: stop_gradient(v) if isinstance(v, Tensor) else v, out)
    return out


def _call(fn, structure):
    if isinstance(structure, (tuple, list)) and not hasattr(type(structure), "_fields"):
        return fn(*structure)
    return fn(structure)


def _eager_while(cond, body, loop_vars, maximum_iterations):
    count = 0
    while bool(_call(cond, loop_vars)):
        if maximum_iterations is not None and count >= int(maximum_iterations):
            break
        out = _call(body, loop_vars)
        loop_vars = _like(loop_vars, out)
        count += 1
    return loop_vars


def _like(loop_vars, out):
    """The body's result `out` in the structure of `loop_vars` (tuples and lists may stand
    for each other, as in TensorFlow); a ControlFlowError saying both structures if `out`
    does not have one value per loop variable in that structure."""
    if _same_structure(loop_vars, out):
        pass
    elif _is_sequence(loop_vars) and len(loop_vars) == 1 and _same_structure(loop_vars[0],
                                                                              out):
        out = (out,)  # a body may return a lone value for a single loop variable
    elif not _is_sequence(loop_vars) and _is_sequence(out) and len(out) == 1:
        out = out[0]  # or a 1-tuple for a loop variable given bare
    if not _same_structure(loop_vars, out):
        filename, line = user_location()
        raise ControlFlowError(
            f"the body of em.while_loop at {filename}:{line} returned "
            f"{_count(out)} value(s) structured as {_structure_text(out)}, but the loop has "
            f"{_count(loop_vars)} loop variable(s) structured as "
            f"{_structure_text(loop_vars)}; the body must return one value per loop "
            "variable, in the structure of loop_vars")
    return nest.pack_sequence_as(loop_vars, nest.flatten(out))


def _is_sequence(value) -> bool:
    return isinstance(value, (tuple, list))


def _same_structure(a, b) -> bool:
    """Whether `a` and `b` nest alike (a tuple, list or namedtuple matches any of them with
    as many elements; dicts need the same keys, dataclasses the same type)."""
    if _is_sequence(a) or _is_sequence(b):
        return (_is_sequence(a) and _is_sequence(b) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
                and all(_same_structure(a[k], b[k]) for k in a))
    kids_a, kids_b = nest._children(a), nest._children(b)
    if kids_a is None or kids_b is None:
        return kids_a is None and kids_b is None
    return type(a) is type(b) and all(_same_structure(x, y) for x, y in zip(kids_a, kids_b))


def _count(value) -> int:
    return len(nest.flatten(value))


def _structure_text(value) -> str:
    """`value`'s nesting with each leaf shown as its kind: `(int32 tensor, [float32 tensor])`."""
    if nest._is_namedtuple(value):
        fields = ", ".join(f"{f}={_structure_text(v)}" for f, v in zip(value._fields, value))
        return f"{type(value).__name__}({fields})"
    if _is_sequence(value):
        inner = ", ".join(_structure_text(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' * (len(value) == 1)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_structure_text(v)}" for k, v in value.items()) + "}"
    if nest._children(value) is not None:  # a dataclass
        return f"{type(value).__name__}(...)"
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        return f"{value.dtype.name} tensor"
    return type(value).__name__


def trace_while(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
                labels: list[str] | None = None, relax: Callable | None = None,
                maximum_iterations=None, what: str = "em.while_loop"):
    """`while_loop` while tracing, for AutoGraph: `labels` names each (flattened) loop
    variable in errors, e.g. "loop variable 'x' of the while loop at f.py:3";
    `relax(i, shape)` says how to let variable i's shape vary (shape: a relaxed one);
    `what` names the loop in errors ("the for loop at f.py:3")."""
    return _traced_while(current_graph(), cond, body, loop_vars, shape_invariants,
                         maximum_iterations, labels, relax, what)


def _traced_while(graph: FuncGraph, cond, body, loop_vars, shape_invariants,
                  maximum_iterations, labels: list[str] | None = None,
                  relax: Callable | None = None, what: str = "em.while_loop"):
    if maximum_iterations is not None:
        limit = convert_to_tensor(maximum_iterations, dtype_hint=dtypes.int32)
        wrapped_vars = (loop_vars, convert_to_tensor(0, dtype=limit.dtype))
        if shape_invariants is not None:
            shape_invariants = (shape_invariants, TensorShape([]))

        def counted_cond(inner, i):
            from ember.frontend import ops
            return ops.logical_and(_call(cond, inner), i < limit)

        def counted_body(inner, i):
            return (_like(inner, _call(body, inner)), i + 1)
        counted = None if labels is None else labels + ["the iteration count"]
        return _traced_while(graph, counted_cond, counted_body, wrapped_vars,
                             shape_invariants, None, counted, relax, what)[0]
    _check_arrays(loop_vars, what)
    inits = [convert_to_tensor(v) for v in nest.flatten(loop_vars)]
    types = [TensorType(t.dtype, t.shape.dims) for t in inits]
    if shape_invariants is not None or _any_array_varies(loop_vars):
        types = _invariant_types(loop_vars, shape_invariants, types, labels, what)
    return _trace_while_once(graph, cond, body, loop_vars, inits, types,
                             shape_invariants is not None, labels, relax, what)


def _here(what: str) -> str:
    """`what` (a loop), for em.while_loop with the user's `file:line` that builds it (called
    while tracing it); AutoGraph's loops name theirs already ("the for loop at f.py:3")."""
    if what != "em.while_loop":
        return what
    filename, line = user_location()
    return f"{what} at {filename}:{line}"


def _label(labels: list[str] | None, i: int, what: str) -> str:
    return labels[i] if labels else f"loop variable {i} of {_here(what)}"


def _check_arrays(loop_vars, what: str) -> None:
    """An em.TensorArray nothing was written to has no buffer a loop could carry yet."""
    for var in nest.flatten(loop_vars, expand_composites=False):
        if isinstance(var, TensorArray) and not var.allocated:
            raise ControlFlowError(
                f"{_here(what)} carries an em.TensorArray nothing is written to before the "
                f"loop and whose element_shape is not given, so the type of its elements "
                f"is unknown when the loop is built; give it element_shape= (None for a "
                f"dimension that varies), or write it in a Python loop that AutoGraph stages")


def _any_array_varies(loop_vars) -> bool:
    return any(isinstance(v, TensorArray) and v.changes_shape_in_loops
               for v in nest.flatten(loop_vars, expand_composites=False))


_OWN = object()  # (no shape invariant given: the shape the variable enters the loop with)


def _invariant_types(loop_vars, shape_invariants, types: list[TensorType],
                     labels: list[str] | None = None,
                     what: str = "em.while_loop") -> list[TensorType]:
    """The loop variables' types with the shapes `shape_invariants` gives them (None:
    those they enter with), an em.TensorArray's those its buffer needs, whatever is
    given for it (as in TensorFlow)."""
    shapes: list[TensorShape | None] = []

    def walk(var, inv):
        if isinstance(var, TensorArray):
            shapes.extend(var.loop_invariants())
            return
        kids = nest._children(var)
        if kids is None:
            shapes.append(None if inv is _OWN else TensorShape(inv))
            return
        inv_kids = [_OWN] * len(kids) if inv is _OWN else nest._children(inv)
        if inv_kids is None or len(inv_kids) != len(kids):
            raise ControlFlowError(f"shape_invariants {shape_invariants!r} of {_here(what)} "
                                   f"do not match the structure of its loop_vars "
                                   f"{loop_vars!r}")
        for k, i in zip(kids, inv_kids):
            walk(k, i)
    try:
        walk(loop_vars, _OWN if shape_invariants is None else shape_invariants)
    except TypeError as e:
        raise ControlFlowError(f"{_here(what)}: shape_invariants must hold an em.TensorShape "
                               f"per loop variable: {e}") from None
    out = []
    for i, (t, shape) in enumerate(zip(types, shapes)):
        if shape is None:
            out.append(t)
            continue
        if not _allows(shape.dims, t.shape):
            raise ControlFlowError(
                f"{_label(labels, i, what)} enters the loop with shape "
                f"{TensorShape(t.shape)}, which its shape invariant {shape} does not allow; "
                f"give it an invariant that does (None for a dimension that varies), or "
                f"give the value that shape before the loop (em.ensure_shape)")
        out.append(TensorType(t.dtype, shape.dims))
    return out


def _allows(invariant: tuple | None, shape: tuple | None) -> bool:
    """Whether a value of `shape` fits a loop variable of shape `invariant`."""
    if invariant is None:
        return True
    if shape is None or len(shape) != len(invariant):
        return False
    return all(s is None or s == d for s, d in zip(invariant, shape))


def _trace_while_once(graph, cond, body, loop_vars, inits, types, declared: bool,
                      labels: list[str] | None = None, relax: Callable | None = None,
                      what: str = "em.while_loop", recorded: bool = True, extend=None):
    """Traces the loop; with `extend`, a gradient's (autodiff/loops.py) hook called at the
    end of the body's trace, the loop carries the values it adds (`_Carry`) too, and the
    result is (the loop's results, the added values' results)."""
    if recorded and recording.recording():  # a tape records: keep what its gradient needs
        def trace_once(cond_, body_, loop_vars_, inits_, types_, labels_, extend=None):
            return _trace_while_once(graph, cond_, body_, loop_vars_, inits_, types_,
                                     declared, labels_, relax, what, False, extend)
        return loops.record_while(trace_once, cond, body, loop_vars, inits, types, labels)
    def label(i: int) -> str:
        return _label(labels, i, what)
    mlir_types = [ir.Type.parse(str(t), context=graph.context) for t in types]
    with graph.context:
        owner = ir.Operation.create("scf.execute_region", regions=2, loc=ir.Location.unknown())
        locs = [ir.Location.unknown()] * len(types)
        before = ir.Block.create_at_start(owner.regions[0], mlir_types, locs)
        after = ir.Block.create_at_start(owner.regions[1], mlir_types, locs)
    carry = _Carry(graph, before, after)
    with detached.abandoned_on_error(owner):  # (its blocks move to the scf.while)
        with graph.region(before, f"the condition of {what}"):
            args = nest.pack_sequence_as(loop_vars, [graph.wrap(a, "while") for a in
                                                     before.arguments])
            keep_going = _predicate(graph, _call(cond, args), what)
        with graph.region(after, f"the body of {what}"):
            args = nest.pack_sequence_as(loop_vars, [graph.wrap(a, "while") for a in
                                                     after.arguments])
            out = _like(loop_vars, _call(body, args))
            flat = [convert_to_tensor(v) for v in nest.flatten(out)]
            if len(flat) != len(types):
                raise ControlFlowError(f"em.while_loop body returned {len(flat)} values for "
                                       f"{len(types)} loop variables")
            values = [graph.resolve(v) for v in flat]
            added = [graph.resolve(v) for v in extend(carry)] if extend else []
        with graph.context, ir.InsertionPoint(before), ir.Location.unknown():
            # the condition, then all of `before`'s arguments (the carry's too)
            ir.Operation.create("scf.condition", operands=[keep_going, *before.arguments])
        for i, (t, v) in enumerate(zip(types, values)):
            got = _ttype(v)
            if got.dtype is not t.dtype:
                raise ControlFlowError(f"{label(i)} enters as {t.dtype.name} and leaves the "
                                       f"body as {got.dtype.name}; a loop variable keeps its "
                                       f"dtype across iterations: cast it (em.cast) in the "
                                       f"body or give it the wider dtype before the loop")
            if not _allows(t.shape, got.shape):
                where = "its shape invariant" if declared else "the shape it enters the loop with"
                raise ControlFlowError(
                    f"{label(i)} ({_describe(loop_vars, i)}) has shape "
                    f"{TensorShape(t.shape)} ({where}) but shape {TensorShape(got.shape)} after "
                    f"one iteration; to let its shape vary across iterations, " + (
                        relax or _relax_hint)(i, _relaxed(t.shape, got.shape)))
        types = types + carry.types
        with graph.context, ir.InsertionPoint(after), ir.Location.unknown():
            ir.Operation.create("scf.yield", operands=[
                _cast(graph, v, t) for v, t in zip(values + added, types)])
        inits = inits + [v for make in carry.inits for v in make()]  # (before the loop)
        with graph.context, graph.insertion_point(), graph.location():
            # the casts of the initial values go before the loop, in the block it is built in
            init_values = [_cast(graph, graph.resolve(v), t) for v, t in zip(inits, types)]
            loop = ir.Operation.create("scf.while", results=[v.type for v in init_values],
                                       operands=init_values, regions=2)
        before.append_to(loop.regions[0])
        after.append_to(loop.regions[1])
    results = [graph.wrap(r, "while") for r in loop.results]
    out = nest.pack_sequence_as(loop_vars, results[:len(mlir_types)])
    return (out, results[len(mlir_types):]) if extend else out


class _Carry:
    """What a gradient's `extend` hook (see `_trace_while_once`) uses to make the loop being
    traced carry more values once its body is traced: `carry(types, make_inits)`
    adds loop-carried values of `types` (an argument of both regions, forwarded by the
    condition, yielded by the body) and returns the body's arguments for them;
    `make_inits()` gives their initial values, before the loop. Within `at_start()`, ops
    go to the start of the body (a Variable's value as the iteration begins)."""

    def __init__(self, graph: FuncGraph, before: ir.Block, after: ir.Block):
        self.graph, self.before, self.after = graph, before, after
        self.types: list[TensorType] = []
        self.inits: list[Callable] = []

    def __call__(self, types: list[TensorType], make_inits: Callable) -> list:
        out = []
        with self.graph.context:
            loc = ir.Location.unknown()
            for t in types:
                mlir_type = ir.Type.parse(str(t))
                self.before.add_argument(mlir_type, loc)
                out.append(self.graph.wrap(self.after.add_argument(mlir_type, loc), "while"))
        self.types += types
        self.inits.append(make_inits)
        return out

    @contextlib.contextmanager
    def at_start(self):
        graph = self.graph
        graph._insertion.append(ir.InsertionPoint.at_block_begin(self.after))
        try:
            yield
        finally:
            graph._insertion.pop()


def _relax_hint(i: int, shape: str) -> str:
    return ("pass shape_invariants with a less specific shape for it, e.g. "
            f"em.TensorShape({shape})")


def _describe(loop_vars, index: int) -> str:
    leaf = nest.flatten(loop_vars)[index]
    return f"initial value {leaf!r}"


def _relaxed(a: tuple | None, b: tuple | None) -> str:
    if a is None or b is None or len(a) != len(b):
        return "None"
    return "[" + ", ".join("None" if x != y else str(x) for x, y in zip(a, b)) + "]"

"""Gradients through staged control flow: `scf.if` (em.cond) and `scf.while`.

While a branch or a loop body is traced, the tapes record its ops as usual; when the region
is done those entries are dropped (their values live only inside the region) and the whole
`scf.if`/`scf.while` is recorded as one entry whose inputs are the values the region read
from outside (and, for a loop, the initial loop variables).

The backward of an `scf.if` is another `scf.if` on the same condition whose branches trace
the forward branch again under a tape and take its gradient (TensorFlow's cond_v2 keeps the
branch's intermediates as extra outputs instead; tracing again keeps the forward op as it
was). A loop traced while a tape records carries an iteration count and a stack of its loop
variables' values at the start of each iteration (TensorFlow stacks intermediates in
TensorLists); the backward is a loop that runs the iterations in reverse, each one tracing
the body again on the stacked values and taking its gradient. The stacks are outputs of the
recorded loop too: a tape around that gradient (a second derivative) sees the reverse loop
read them, and the cotangents it gives them join the loop variables' in the reverse loop.
"""

from __future__ import annotations

import contextlib

from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.autodiff.closures import frozen
from ember.frontend.autodiff.tape import (Entry, GradientTape, UnconnectedGradients,
                                          differentiable)
from ember.frontend.tensor import Tensor, convert_to_tensor


class Region:
    """What the tapes saw while one region was traced: per tape, the outside values read."""

    def __init__(self):
        self.touched: dict[int, tuple] = {}  # id(tape) -> (tape, [values read from outside])

    def inputs(self) -> list:
        """The outside values any tape saw the region read (no repeats, in order)."""
        seen, out = set(), []
        for _, values in self.touched.values():
            for v in values:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    def passes(self, leaves) -> None:
        """Adds the outside values among `leaves` (a region's outputs): a region that
        returns one as it is reads it with no op, so no entry of it shows the read."""
        for tape in recording.tapes():
            _, values = self.touched.setdefault(id(tape), (tape, []))
            for v in leaves:
                if isinstance(v, Tensor) and tape._connected(v) and \
                        all(x is not v for x in values):
                    values.append(v)


@contextlib.contextmanager
def region(into: Region):
    """Traces a region: its entries are dropped from the tapes at the end, and the outside
    values they read are added to `into`."""
    marks = [(tape, len(tape._entries)) for tape in recording.tapes()]
    try:
        yield into
    finally:
        for tape, mark in marks:
            inner = tape._entries[mark:]
            del tape._entries[mark:]
            produced = {id(o) for e in inner for o in e.outputs if o is not None}
            _, values = into.touched.setdefault(id(tape), (tape, []))
            for e in inner:
                for value in e.inputs:
                    if value is not None and id(value) not in produced and \
                            tape._connected(value) and all(v is not value for v in values):
                        values.append(value)
            for key in produced:
                tape._live.pop(key, None)


def record(inputs: list, outputs: list, backward, touched: Region | None = None) -> None:
    """Records a control-flow op on each recording tape that sees one of `inputs`."""
    outs = [o if isinstance(o, Tensor) else None for o in outputs]
    for tape in recording.tapes():
        if any(tape._connected(v) for v in inputs):
            tape._add(Entry(inputs, outs, backward))


def gradient_of(fn, sources: list, outputs_like: list, cts: list, structure=None):
    """Traces `fn()` again under a tape watching `sources`; the gradient of its tensor
    outputs (paired with `outputs_like`, the op's results, laid out as `structure` when
    given) weighted by `cts`, with zeros for sources it does not reach."""
    with GradientTape(watch_accessed_variables=False) as tape, recording.replaying():
        tape._watch(sources)
        out = fn()
    leaves = nest.flatten(out) if structure is None else _aligned(out, structure)
    targets, weights = [], []
    for leaf, like, ct in zip(leaves, outputs_like, cts):
        if isinstance(leaf, Tensor) and like is not None and ct is not None and \
                differentiable(leaf):
            targets.append(leaf)
            weights.append(ct)
    if not targets:
        return [_zeros(s) for s in sources]
    return tape.gradient(targets, list(sources), output_gradients=weights,
                         unconnected_gradients=UnconnectedGradients.ZERO)


def _aligned(value, like) -> list:
    """`value`'s leaves laid out as `like`'s: a branch's output before AutoGraph reconciled
    it, against the merged result. A return value the branch leaves undefined became zeros
    of the other branch's structure in the result (placeholders): None for each leaf."""
    from ember.frontend.autograph.undefined import Undefined
    if isinstance(value, Undefined):
        return [None] * len(nest.flatten(like))
    kids, like_kids = nest._children(value), nest._children(like)
    if kids is None or like_kids is None or len(kids) != len(like_kids):
        return nest.flatten(value)
    return [leaf for k, lk in zip(kids, like_kids) for leaf in _aligned(k, lk)]


def _zeros(value):
    from ember.frontend import ops
    if hasattr(value, "read_value"):
        return ops.zeros_like(value.read_value())
    return ops.zeros_like(value)


def filled(cts: list, outputs: list) -> list:
    """The cotangents of `outputs`, zeros where there is none (a branch must yield each)."""
    from ember.frontend import ops
    return [None if not isinstance(o, Tensor) or not differentiable(o)
            else (c if c is not None else ops.zeros_like(o)) for c, o in zip(cts, outputs)]


# -- em.cond ------------------------------------------------------------------------------

def record_cond(pred, true_fn, false_fn, result, seen: Region) -> None:
    sources = seen.inputs()
    if not sources:
        return
    true_fn, false_fn = frozen(true_fn), frozen(false_fn)  # as they were traced
    outputs = nest.flatten(result)

    def backward(cts):
        from ember.frontend.control_flow import trace_cond
        cts = filled(cts, outputs)

        def branch(fn):
            return lambda: tuple(gradient_of(fn, sources, outputs, cts, result))
        return list(trace_cond(pred, branch(true_fn), branch(false_fn),
                               what="the gradient of an em.cond"))
    record(sources, outputs, backward)


# -- scf.while ----------------------------------------------------------------------------

def record_while(trace_once, cond, body, loop_vars, inits: list, types: list, labels, **kw):
    """Traces the loop with an iteration count and a stack per loop variable (see the
    module docstring) and records it; `trace_once` is while_loop's tracer."""
    from ember.dialects.ember import dtypes
    from ember.dialects.ember.types import TensorType
    from ember.frontend.while_loop import _call, _like
    traced_body = frozen(body)  # what the backward re-traces: the body as traced now
    count0 = convert_to_tensor(0, dtype=dtypes.int32)
    stacks0 = tuple(_new_stack(v, t) for v, t in zip(inits, types))
    wrapped = (loop_vars, count0, stacks0)

    def counted_cond(inner, n, stacks):
        return _call(cond, inner)

    returned = []  # what the body returns: an outside value returned as it is is read

    def counted_body(inner, n, stacks):
        pushed = tuple(_push(s, n, v) for s, v in zip(stacks, nest.flatten(inner)))
        out = _call(body, inner)
        returned.extend(nest.flatten(out))
        return (_like(inner, out), n + 1, pushed)
    stack_types, more = [], []
    for i, (s, t) in enumerate(zip(stacks0, types)):
        if isinstance(s, tuple):  # (elements, offsets, shapes): see _new_stack
            stack_types += [TensorType(t.dtype, (None,)), TensorType(dtypes.int64, (None,)),
                            TensorType(dtypes.int64, (None, len(t.shape)))]
            more += [f"the {part} of loop variable {i} kept for the gradient"
                     for part in ("elements", "offsets", "shapes")]
        else:
            stack_types.append(TensorType(t.dtype, (None,) + tuple(t.shape)))
            more.append(f"the stack of loop variable {i} kept for the gradient")
    seen = Region()
    with region(seen):
        out, count, stacks = trace_once(
            counted_cond, counted_body, wrapped, inits + [count0] + nest.flatten(stacks0),
            types + [TensorType(dtypes.int32, ())] + stack_types,
            None if labels is None else labels + ["the iteration count"] + more)
    seen.passes(returned)
    results = nest.flatten(out)
    captured = seen.inputs()
    sources = [v if differentiable(v) else None for v in inits] + captured
    names = labels or [f"loop variable {i} of the em.while_loop at {_here()}"
                       for i in range(len(types))]  # in errors of the reverse loop

    # The stacks are outputs too: a tape around the gradient (a second derivative) sees
    # the reverse loop read them, so their cotangents flow back into this loop.
    kept = nest.flatten(stacks)

    def backward(cts):
        stack_cts = _stack_cotangents(stacks, cts[len(results):])
        return _while_backward(traced_body, loop_vars, results, filled(cts, results), count,
                               stacks, stack_cts, types, captured, names)
    record(sources, results + kept, backward)
    return out


def _stack_cotangents(stacks: tuple, cts: list) -> list:
    """Per loop variable, the cotangent of its stack laid out as the stack (`_new_stack`),
    or None when it has none: the elements' cotangent with the offsets and shapes kept."""
    out, k = [], 0
    for s in stacks:
        ct = cts[k] if k < len(cts) else None
        if isinstance(s, tuple):
            out.append(None if ct is None else (ct, s[1], s[2]))
            k += 3
        else:
            out.append(ct)
            k += 1
    return out


def _new_stack(value: Tensor, ttype):
    """An empty stack for `value`'s loop variable, with room for one element to begin with:
    a tensor of rows for a variable of static shape; for one with `?` dims, which may
    change from one iteration to the next (a shape invariant, a growing TensorArray), the
    elements flattened one after another, with each one's offset and shape."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    if ttype.shape is None:
        raise ValueError(f"the gradient of a while loop needs the rank of its loop variable "
                         f"{value!r}; give it a known rank")
    if None not in ttype.shape:
        return ops.zeros([1] + list(ttype.shape), value.dtype)
    return (ops.zeros([1], value.dtype), ops.zeros([2], dtypes.int64),
            ops.zeros([1, len(ttype.shape)], dtypes.int64))


def _push(stack, n: Tensor, value: Tensor):
    """`stack` with `value` at row n, its capacity doubled first when it is full."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    from ember.frontend.scatter_ops import tensor_scatter_nd_update
    if not isinstance(stack, tuple):
        return tensor_scatter_nd_update(_room(stack, n + 1), ops.reshape(n, [1, 1]),
                                        ops.expand_dims(value, 0))
    elements, offsets, shapes = stack
    flat = ops.reshape(value, [-1])
    start = offsets[n]
    end = start + ops.size(flat, out_type=dtypes.int64)
    elements = tensor_scatter_nd_update(
        _room(elements, end), ops.reshape(ops.range(start, end), [-1, 1]), flat)
    offsets = tensor_scatter_nd_update(_room(offsets, n + 2), ops.reshape(n + 1, [1, 1]),
                                       ops.reshape(end, [1]))
    shapes = tensor_scatter_nd_update(_room(shapes, n + 1), ops.reshape(n, [1, 1]),
                                      ops.expand_dims(ops.shape(value, dtypes.int64), 0))
    return elements, offsets, shapes


def _room(buffer: Tensor, rows) -> Tensor:
    """`buffer` with at least `rows` rows: its capacity doubled (or raised to `rows`)."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    from ember.frontend.control_flow import smart_cond
    have = ops.cast(ops.shape(buffer)[0], rows.dtype)

    def grow():
        extra = ops.maximum(have, rows - have)
        pad = ops.zeros(ops.concat([ops.reshape(ops.cast(extra, dtypes.int32), [1]),
                                    ops.shape(buffer)[1:]], 0), buffer.dtype)
        return ops.concat([buffer, pad], 0)
    return smart_cond(rows > have, grow, lambda: buffer)


def _popped(stack, i: Tensor, ttype) -> Tensor:
    """Element i of a stack (`_new_stack`) for a loop variable of type `ttype`. An element
    of a ragged stack gets the dims `ttype` fixes back (its stored shape is a tensor, which
    would leave every dim `?`), so the body is traced again on the type it was traced on
    and the reverse loop's cotangents keep the loop variable's shape."""
    from ember.frontend import ops
    if not isinstance(stack, tuple):
        return ops.gather(stack, i)
    elements, offsets, shapes = stack
    dims = [shapes[i][k] if d is None else d for k, d in enumerate(ttype.shape)]
    return ops.reshape(elements[offsets[i]:offsets[i + 1]], dims)


def _joined(a: tuple | None, b: tuple | None) -> list | None:
    """The most specific shape both dims `a` and `b` fit (a loop variable's type and the
    cotangent of its result, which may know less: from a cond or a `?` broadcast)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return [x if x == y else None for x, y in zip(a, b)]


def _here() -> str:
    from ember.frontend.user_code import user_location
    filename, line = user_location()
    return f"{filename}:{line}"


def _fitted(grad: Tensor, dims: list | None, label: str) -> Tensor:
    """`grad`, a loop variable's cotangent after one reverse iteration, with the static dims
    `dims` the reverse loop carries it at. A gradient has its source's shape, but a rule
    (an em.custom_gradient's grad_fn) may return it with `?` dims the loop knows."""
    from ember.frontend import ops
    from ember.frontend.control_flow import ControlFlowError
    from ember.frontend.shape import TensorShape
    from ember.frontend.while_loop import _allows
    have = grad.shape.dims
    if _allows(dims, have):
        return grad
    if have is not None and (len(have) != len(dims) or not _allows(have, dims)):
        raise ControlFlowError(
            f"the gradient with respect to {label} has shape {TensorShape(have)}, but the "
            f"loop variable has shape {TensorShape(dims)}; a gradient must have the shape of "
            f"what it is the gradient of: check the gradient functions (em.custom_gradient) "
            f"of the ops in the loop body")
    return ops.reshape(grad, [ops.shape(grad)[k] if d is None else d
                              for k, d in enumerate(dims)])


def _while_backward(body, loop_vars, results, cts, count, stacks, stack_cts, types, captured,
                    labels):
    from ember.frontend import ops
    from ember.frontend.shape import TensorShape
    from ember.frontend.while_loop import _call, _like, while_loop
    diff = [j for j, t in enumerate(types) if t.dtype.is_floating or t.dtype.is_complex]
    # the shapes both a loop variable and its cotangent fit; each iteration keeps them
    dims = [_joined(types[j].shape, cts[j].shape.dims) for j in diff]
    zeros = tuple(_zeros(c) for c in captured)
    cap_dims = [z.shape.dims for z in zeros]

    def keep_going(i, ct_vars, ct_caps):
        return ops.greater(i, 0)

    def step(i, ct_vars, ct_caps):
        i = i - 1
        state = [_popped(s, i, t) for s, t in zip(stacks, types)]
        inner = nest.pack_sequence_as(loop_vars, state)
        full = [None] * len(types)
        for j, c in zip(diff, ct_vars):
            full[j] = c
        grads = gradient_of(lambda: _like(loop_vars, _call(body, inner)),
                            [state[j] for j in diff] + captured, results, full)
        # the value pushed at iteration i was read by a later computation too (the
        # reverse loop of a first derivative): its cotangent joins the body's
        grads = [g if stack_cts[j] is None else g + _popped(stack_cts[j], i, types[j])
                 for g, j in zip(grads, diff)] + list(grads[len(diff):])
        new_vars = tuple(_fitted(g, d, labels[j]) for g, d, j in zip(grads, dims, diff))
        new_caps = tuple(a + _fitted(g, d, f"the value {c!r} the loop body reads")
                         for a, g, d, c in zip(ct_caps, grads[len(diff):], cap_dims, captured))
        return i, new_vars, new_caps
    start = (count, tuple(cts[j] for j in diff), zeros)
    invariants = (TensorShape([]), tuple(TensorShape(d) for d in dims),
                  tuple(TensorShape(d) for d in cap_dims))
    _, ct_vars, ct_caps = while_loop(keep_going, step, start, shape_invariants=invariants)
    out = [None] * len(types)
    for j, c in zip(diff, ct_vars):
        out[j] = c
    return out + list(ct_caps)

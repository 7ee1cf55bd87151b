"""Gradients through `scf.while`: em.while_loop, AutoGraph's loops, em.scan/foldl/map_fn.

A loop traced while a tape records carries an iteration count and a stack of its loop
variables' values at the start of each iteration (TensorFlow stacks intermediates in
TensorLists), and, for each Variable its body reads and writes (a random op's state), a
stack of the Variable's value at the start of each iteration. The backward is a loop that
runs the iterations in reverse, each one tracing the body again on the stacked values
(control.gradient_of) and taking its gradient.

The stacks are outputs of the recorded loop too: a tape around that gradient (a second
derivative) sees the reverse loop read them, and the cotangents it gives them join the
loop variables' in the reverse loop. (A Variable's stacked value needs none: the replay's
read of it is a read of the Variable, recording.replayed_read.)

A loop traced inside a replay (the gradient of an enclosing branch or loop body, traced
again) carries the replay's Variable values as loop variables (`_threaded`): the replay
emits no writes, so its values must go from one iteration to the next as the Variables'
values do in the forward.
"""

from __future__ import annotations

import dataclasses

from ember.frontend import nest
from ember.frontend.autodiff import recording, stacks
from ember.frontend.autodiff.closures import frozen
from ember.frontend.autodiff.control import _zeros, filled, gradient_of
from ember.frontend.autodiff.regions import Region, record, region
from ember.frontend.autodiff.tape import differentiable
from ember.frontend.tensor import Tensor, convert_to_tensor


@dataclasses.dataclass
class _Forward:
    """What the reverse loop needs of the forward loop's trace."""
    body: object  # the body as traced (closures.frozen)
    loop_vars: object  # the loop variables' structure
    results: list  # the loop's results, flattened
    count: Tensor  # how many iterations ran
    stacks: tuple  # per loop variable, its values (stacks.new_stack)
    types: list  # the loop variables' TensorTypes
    captured: list  # the outside tensors and Variables the loop reads
    labels: list  # the loop variables' names, for errors
    rewritten: list  # (Variable, TensorType, stack of its values) per Variable it writes
    fixed: list  # (Variable, value) per Variable it reads and does not write
    drawn: list  # the generators the body's random ops drew from, in order


def record_while(trace_once, cond, body, loop_vars, inits: list, types: list, labels, **kw):
    """Traces the loop with an iteration count and stacks (see the module docstring) and
    records it; `trace_once` is while_loop's tracer."""
    values = recording.replay_values()
    if values:
        return _threaded(values, trace_once, cond, body, loop_vars, inits, types, labels)
    return _record_while(trace_once, cond, body, loop_vars, inits, types, labels)


def _record_while(trace_once, cond, body, loop_vars, inits, types, labels):
    from ember.dialects.ember import dtypes
    from ember.dialects.ember.types import TensorType
    from ember.frontend.while_loop import _call, _like
    traced_body = frozen(body)  # what the backward re-traces: the body as traced now
    count0 = convert_to_tensor(0, dtype=dtypes.int32)
    stacks0 = tuple(stacks.new_stack(t, f"its loop variable {v!r}")
                    for v, t in zip(inits, types))
    now = {}  # the body's iteration count, for `extend`
    returned = []  # what the body returns: an outside value returned as it is is read

    def counted_cond(inner, n, kept):
        return _call(cond, inner)

    def counted_body(inner, n, kept):
        now["n"] = n
        pushed = tuple(stacks.push(s, n, v) for s, v in zip(kept, nest.flatten(inner)))
        drawn = seen.graph.replay_log.drawn
        first = len(drawn)
        out = _call(body, inner)
        now["drawn"] = drawn[first:]
        returned.extend(nest.flatten(out))
        return (_like(inner, out), n + 1, pushed)
    stack_types, more = [], []
    for i, t in enumerate(types):
        stack_types += stacks.stack_types(t)
        more += stacks.stack_labels(t, f"loop variable {i}")
    seen = Region()
    rewritten = []  # (Variable, TensorType, stack), as `extend` adds them

    def extend(carry):
        """At the end of the body's trace: a stack of the value each Variable the loop
        reads and writes has at the start of each iteration (while_loop's `carry`)."""
        if recording.replay_values() is not None:
            return []  # a replay's values are loop variables already (`_threaded`)
        ends = []
        for v in seen.rewritten():
            ttype = TensorType(v.dtype, v.shape.dims)
            with carry.at_start(), recording.paused():
                value = v.read_value()
            what = f"the values of Variable {v.name!r}"
            args = carry(stacks.stack_types(ttype),
                         lambda t=ttype, w=what: nest.flatten(stacks.new_stack(t, w)))
            stack = tuple(args) if len(args) > 1 else args[0]
            rewritten.append((v, ttype, stack))
            ends += nest.flatten(stacks.push(stack, now["n"], value))
        return ends
    with region(seen):
        (out, count, kept), extra = trace_once(
            counted_cond, counted_body, (loop_vars, count0, stacks0),
            inits + [count0] + nest.flatten(stacks0),
            types + [TensorType(dtypes.int32, ())] + stack_types,
            None if labels is None else labels + ["the iteration count"] + more,
            extend=extend)
    at = 0
    for k, (v, ttype, stack) in enumerate(rewritten):
        rewritten[k] = (v, ttype, stacks.packed(stack, extra, at))
        at += len(nest.flatten(stack))
    seen.passes(returned)
    if recording.replay_values() is None:  # (in a replay, they are loop variables too)
        seen.snapshot([v for key, v in seen.read.items() if key not in seen.written])
    results = nest.flatten(out)
    captured = seen.inputs()
    sources = [v if differentiable(v) else None for v in inits] + captured
    names = labels or [f"loop variable {i} of the em.while_loop at {_here()}"
                       for i in range(len(types))]  # in errors of the reverse loop
    forward = _Forward(traced_body, loop_vars, results, count, kept, types, captured, names,
                       rewritten, seen.snapshots, now["drawn"])

    def backward(cts):
        stack_cts, at = [], len(results)
        for s in kept:
            stack_cts.append(stacks.cotangent(s, cts[at]))
            at += len(nest.flatten(s))
        return _reverse(forward, filled(cts[:len(results)], results), stack_cts)
    # the stacks are outputs too (see the module docstring)
    record(sources, results + nest.flatten(kept), backward)
    return out


def _threaded(values: dict, trace_once, cond, body, loop_vars, inits, types, labels):
    """`record_while` of a loop traced inside a replay, with the replay's Variable values
    (`values`, id(Variable) -> value) as more loop variables (see the module docstring)."""
    from ember.dialects.ember.types import TensorType
    from ember.frontend.while_loop import _call, _like
    keys = list(values)
    start = [convert_to_tensor(values[k]) for k in keys]

    def rebind(carried) -> None:
        now = recording.replay_values()  # (the backward's replay has its own values)
        if now is not None:
            now.update(zip(keys, carried))

    def threaded_cond(inner, carried):
        rebind(carried)
        return _call(cond, inner)

    def threaded_body(inner, carried):
        rebind(carried)
        out = _call(body, inner)
        now = recording.replay_values()
        return (_like(inner, out), tuple(now.get(k, c) for k, c in zip(keys, carried)))
    more = [TensorType(t.dtype, t.shape.dims) for t in start]
    out, carried = _record_while(
        trace_once, threaded_cond, threaded_body, (loop_vars, tuple(start)), inits + start,
        types + more, None if labels is None else
        labels + ["the value of a Variable in a gradient's replay"] * len(start))
    for key in [k for k in values if k not in keys]:
        del values[key]  # written in the body only: a value of the body's
    values.update(zip(keys, carried))
    return out


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


def _reverse(fwd: _Forward, cts: list, stack_cts: list) -> list:
    """The cotangents of the loop's inputs (initial loop variables, then the captured
    values) from those of its results (`cts`) and of its loop variables' stacks
    (`stack_cts`, None where there is none)."""
    from ember.frontend import ops
    from ember.frontend.shape import TensorShape
    from ember.frontend.while_loop import _call, _like, while_loop
    types, captured = fwd.types, fwd.captured
    diff = [j for j, t in enumerate(types) if t.dtype.is_floating or t.dtype.is_complex]
    # the shapes both a loop variable and its cotangent fit; each iteration keeps them
    dims = [_joined(types[j].shape, cts[j].shape.dims) for j in diff]
    zeros = tuple(_zeros(c) for c in captured)
    cap_dims = [z.shape.dims for z in zeros]

    def keep_going(i, ct_vars, ct_caps):
        return ops.greater(i, 0)

    def step(i, ct_vars, ct_caps):
        i = i - 1
        state = [stacks.popped(s, i, t) for s, t in zip(fwd.stacks, types)]
        inner = nest.pack_sequence_as(fwd.loop_vars, state)
        snapshots = fwd.fixed + [(v, stacks.popped(s, i, t)) for v, t, s in fwd.rewritten]
        full = [None] * len(types)
        for j, c in zip(diff, ct_vars):
            full[j] = c
        grads = gradient_of(lambda: _like(fwd.loop_vars, _call(fwd.body, inner)),
                            [state[j] for j in diff] + captured, fwd.results, full,
                            snapshots=snapshots, drawn=fwd.drawn)
        # the value pushed at iteration i was read by a later computation too (the
        # reverse loop of a first derivative): its cotangent joins the body's
        var_grads = [g if stack_cts[j] is None else g + stacks.popped(stack_cts[j], i, types[j])
                     for g, j in zip(grads, diff)]
        cap_grads = grads[len(diff):]
        new_vars = tuple(_fitted(g, d, fwd.labels[j])
                         for g, d, j in zip(var_grads, dims, diff))
        new_caps = tuple(a + _fitted(g, d, f"the value {c!r} the loop body reads")
                         for a, g, d, c in zip(ct_caps, cap_grads, cap_dims, captured))
        return i, new_vars, new_caps
    start = (fwd.count, tuple(cts[j] for j in diff), zeros)
    invariants = (TensorShape([]), tuple(TensorShape(d) for d in dims),
                  tuple(TensorShape(d) for d in cap_dims))
    _, ct_vars, ct_caps = while_loop(keep_going, step, start, shape_invariants=invariants)
    out = [None] * len(types)
    for j, c in zip(diff, ct_vars):
        out[j] = c
    return out + list(ct_caps)

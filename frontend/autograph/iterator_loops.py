"""`for x in iterable` over a staged iterator: one `scf.while` that pulls an element per
iteration, whatever the number of elements (tf.data's loops in AutoGraph).

The protocol (what an iterable defines to take part; `em.data.Dataset` and its iterators
do, and a distributed dataset can):
  - `__ember_staged_iter__(self)`, called inside a trace, returns a staged iterator: an
    object with `get_next_as_optional()`, whose result has `has_value()` (a scalar bool
    tensor of the trace) and `get_value()` (the element: a structure of tensors, or
    anything the loop body accepts). If it returns a new object with a `close()` method,
    the loop calls `close()` after it (to release what the iterator holds); if it returns
    `self`, the iterator keeps its position after the loop, as TF's iterators do.
  - converted `next(it)` on such an object calls `it.__ember_staged_iter__().get_next()`.

The loop is TF's (`_tf_iterator_for_stmt`): a carried flag `more`, the test `more and not
break`, and a body that pulls an optional and runs the user's body only if it has a value,
so a `break` pulls no element beyond the one it stopped on.
"""

from __future__ import annotations

from ember.frontend.autograph.operators import and_, reconciler
from ember.frontend.control_flow import trace_cond
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import current_graph

from ember.dialects.ember import dtypes


def staged_iterator(iterable):
    """The staged iterator of `iterable` inside a trace (the protocol above), or None."""
    hook = getattr(type(iterable), "__ember_staged_iter__", None)
    if hook is None or isinstance(iterable, type) or current_graph() is None:
        return None
    return hook(iterable)


def iterator_for(iterable, iterator, body, state: tuple, names: tuple, where: str,
                 extra_test, opts, staged_loop):
    """The loop over `iterator` (what `staged_iterator(iterable)` gave) as `staged_loop`
    (loops._staged_loop) over (`more`, *state)."""
    def test(more, *s):
        if extra_test is None:
            return more
        return and_(lambda: more, lambda: extra_test(*s))

    def step(more, *s):
        optional = iterator.get_next_as_optional()
        has = optional.has_value()
        value = getattr(optional, "_value", None)  # an em.data optional: no run-time check
        if value is None:
            value = optional.get_value()
        out = trace_cond(has, lambda: tuple(body(value, *s)), lambda: tuple(s),
                         reconciler(names, where))
        return (has,) + tuple(out)
    more = convert_to_tensor(True, dtype=dtypes.bool_)
    out = staged_loop(test, step, (more,) + tuple(state), ("<more>",) + tuple(names), where,
                      "for", opts)
    if iterator is not iterable and hasattr(iterator, "close"):
        iterator.close()
    return tuple(out[1:])

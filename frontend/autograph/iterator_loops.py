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
  - converted `next(it)` on such an object calls `it.__ember_staged_iter__().get_next()`;
    converted `enumerate(obj[, start])` counts in the loop (an int64 count), and
    `zip(a, b, ...)` of such objects pulls from each, ending with the shortest.

The loop is TF's (`_tf_iterator_for_stmt`): a carried flag `more`, the test `more and not
break`, and a body that pulls an optional and runs the user's body only if it has a value,
so a `break` pulls no element beyond the one it stopped on.
"""

from __future__ import annotations

from ember.frontend import nest
from ember.frontend.autograph.operators import and_, reconciler
from ember.frontend.control_flow import trace_cond, trial_trace
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import current_graph

from ember.dialects.ember import dtypes


class Enumerated:
    """`enumerate(ds[, start])` in converted code, `ds` taking part in the protocol: the
    loop carries the count (an int64 tensor, as `Dataset.enumerate`'s)."""

    def __init__(self, iterable, start=0):
        self.iterable, self.start = iterable, start

    def __iter__(self):  # eagerly: Python's own
        return enumerate(self.iterable, self.start)


class Zipped:
    """`zip(a, b, ...)` in converted code, all of them taking part in the protocol: one
    loop pulling from each, ending with the shortest."""

    def __init__(self, *iterables):
        self.iterables = iterables

    def __iter__(self):  # eagerly: Python's own
        return zip(*self.iterables)

    def __ember_staged_iter__(self):
        return _ZipIterator([staged_iterator(i) for i in self.iterables], self.iterables)


class _ZipIterator:
    def __init__(self, iterators: list, sources: tuple):
        self._iterators, self._sources = iterators, sources
        specs = [getattr(it, "element_spec", None) for it in iterators]
        self.element_spec = None if any(s is None for s in specs) else tuple(specs)

    def get_next_as_optional(self):
        return _ZipOptional([it.get_next_as_optional() for it in self._iterators])

    def close(self):
        for iterator, source in zip(self._iterators, self._sources):
            if iterator is not source and hasattr(iterator, "close"):
                iterator.close()


class _ZipOptional:
    def __init__(self, optionals: list):
        self._optionals = optionals

    def has_value(self):
        from ember.frontend.ops import logical_and
        has = self._optionals[0].has_value()
        for optional in self._optionals[1:]:
            has = logical_and(has, optional.has_value())
        return has

    def get_value(self):
        return tuple(_value_of(o) for o in self._optionals)


def _value_of(optional):
    value = getattr(optional, "_value", None)  # an em.data optional: no run-time check
    return optional.get_value() if value is None else value


def staged_iterator(iterable):
    """The staged iterator of `iterable` inside a trace (the protocol above), or None."""
    if isinstance(iterable, Enumerated):
        return staged_iterator(iterable.iterable)
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

    counted = isinstance(iterable, Enumerated)

    def step(more, count, *s):
        optional = iterator.get_next_as_optional()
        has = optional.has_value()

        def run():  # the value is taken where it is known to exist
            value = _value_of(optional)
            return tuple(body((count, value) if counted else value, *s))
        out = trace_cond(has, run, lambda: tuple(s), reconciler(names, where))
        return (has, count + 1) + tuple(out)
    more = convert_to_tensor(True, dtype=dtypes.bool_)
    start = convert_to_tensor(iterable.start if counted else 0, dtype=dtypes.int64)
    full = (more, start) + tuple(state)
    opts = _relaxed(opts, iterator, step, full)
    out = staged_loop(lambda more, count, *s: test(more, *s), step, full,
                      ("<more>", "<count>") + tuple(names), where, "for", opts)
    source = iterable.iterable if counted else iterable
    if iterator is not source and hasattr(iterator, "close"):
        iterator.close()
    return tuple(out[2:])


def _relaxed(opts, iterator, step, full: tuple):
    """`opts` with shape invariants for the loop variables (top-level tensors) whose shape
    the body changes, when the elements' shapes are not all known: as tf.data's loops
    relax their state (`Dataset.reduce`), to the dims that stay the same (`loss += x` with
    x of unknown shape). The body is traced once more for it, into a dropped region."""
    if opts and opts.get("shape_invariants"):
        return opts
    spec = getattr(iterator, "element_spec", None)
    if spec is not None and all(isinstance(s, TensorSpec) and s.shape.is_fully_defined()
                                for s in nest.flatten(spec)):
        return opts
    outs = trial_trace(lambda *s: tuple(step(*s)), list(full))
    pairs = []
    for value, out in zip(full[2:], outs[2:]):
        if isinstance(value, Tensor) and isinstance(out, TensorSpec) and \
                value.shape != out.shape:
            pairs.append((value, _join(value.shape, out.shape)))
    return dict(opts or {}, shape_invariants=pairs) if pairs else opts


def _join(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])

"""All-reduce inside compiled code: `ReplicaContext.all_reduce` of a traced value (and the
optimizer's gradients inside an em.function that `strategy.run` runs) emits one
`py_function` that, at each call, meets the other replicas of the `strategy.run` calling
the compiled function and returns the reduced values (reshaped to the traced shapes)."""

from __future__ import annotations

from ember.frontend import tracing
from ember.frontend.effects import py_function
from ember.frontend.ops import reshape
from ember.runtime.distribute.values import reduce_op_of


def is_traced(value) -> bool:
    return isinstance(value, tracing.SymbolicTensor)


def traced_all_reduce(reduce_op, values: list) -> list:
    """`reduce_op` of each traced value over the replicas, at every call (one barrier)."""
    from ember.runtime.distribute.strategy import get_replica_context
    op = reduce_op_of(reduce_op, "ReplicaContext.all_reduce")
    context = get_replica_context()
    if getattr(getattr(context, "_group", None), "traced", False):  # traced_run.py: in the IR
        return context._group.all_reduce(context._id - context.strategy._first_replica, op,
                                         list(values))

    def reduce_now(*tensors):
        context = get_replica_context()
        if context is None:
            raise RuntimeError("ReplicaContext.all_reduce: the em.function that all-reduces "
                               "was called in the cross-replica context (inside "
                               "strategy.scope(), outside strategy.run); call it in the "
                               "function strategy.run runs")
        return context._reduce_arrays(op, [t.numpy() for t in tensors])

    reduced = py_function(reduce_now, list(values), [v.dtype for v in values])
    return [reshape(r, v.shape.as_list()) if v.shape.is_fully_defined() else r
            for r, v in zip(reduced, values)]

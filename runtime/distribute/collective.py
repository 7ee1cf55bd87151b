"""All-reduce inside compiled code: `ReplicaContext.all_reduce` of a traced value (and the
optimizer's gradients inside an em.function that `strategy.run` runs) emits one
host call that, at each call, meets the other replicas of the `strategy.run` calling the
compiled function and returns the reduced values, of the traced shapes."""

from __future__ import annotations

import numpy as np

from ember.frontend import tracing
from ember.frontend.effects import emit_host_call
from ember.frontend.tracing import current_graph
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

    def reduce_now(*arrays):
        context = get_replica_context()
        if context is None:
            raise RuntimeError("ReplicaContext.all_reduce: the em.function that all-reduces "
                               "was called in the cross-replica context (inside "
                               "strategy.scope(), outside strategy.run); call it in the "
                               "function strategy.run runs")
        reduced = context._reduce_arrays(op, [np.asarray(a) for a in arrays])
        return tuple(np.asarray(t.numpy()) for t in reduced)

    # the reduction reads its arguments during the call only (its results are new arrays):
    # the compiled caller's buffers are lent, not copied (backends/cpu/host_calls.py)
    reduce_now.borrows_arguments = True

    # the results have the values' shapes (the replicas' shapes must agree, _Group checks):
    # a host call of known shapes is compiled, where an unknown rank kept the whole function
    # on the interpreter (backends/cpu/host_calls.py)
    shapes = [None if v.shape.rank is None else tuple(v.shape.as_list()) for v in values]
    return emit_host_call(current_graph(), reduce_now, list(values), [v.dtype for v in values],
                          "all_reduce", shapes)

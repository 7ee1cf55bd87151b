"""`strategy.run` inside an em.function, as TF's MirroredStrategy in graph mode: the trace
calls `fn` once per replica, each replica's ops under its device scope and replica context,
and the results are PerReplica values of the replicas' symbolic tensors.

The replicas are traced on threads of their own that take turns (one runs at a time, in
replica order: TF's mirrored_run), all emitting into the same trace. A replica that calls
`ReplicaContext.all_reduce` (or `merge_call`, or an optimizer's apply_gradients, which
all-reduces the gradients) waits there until every replica has reached the same call; the
last one then emits the ops combining the values (a sum, divided by the count for MEAN) and
the replicas go on, each with the combined value: the all-reduce is ops in the IR, and the
compiled function runs every replica's part in one call.

A MirroredVariable read or written by replica i inside such a trace is its copy i (each copy
a captured variable of its own, mirrored.py).

Several workers (processes): the replicas of this process are summed in the IR, then one
host call sums those sums over the workers, `strategy._cross_worker_sum_arrays(arrays,
where)` (numpy in, numpy out: the identity on one worker; a multi-worker strategy overrides
it with its collective, e.g. one MPI Allreduce per array), and MEAN divides by the global
count. On one worker no host call is emitted.
"""

from __future__ import annotations

import threading

import numpy as np

from ember.frontend import trace_scope, tracing
from ember.frontend.effects import emit_host_call
from ember.frontend.tensor import convert_to_tensor
from ember.runtime import function as function_module
from ember.runtime.devices import device
from ember.runtime.distribute import strategy as strategy_module
from ember.runtime.distribute.values import ReduceOp, reduce_op_of, regroup

TURN_TIMEOUT = 600.0  # seconds a replica waits for its turn (the others trace) before an error


class _Aborted(Exception):
    """Another replica failed: this one stops too (the first error is re-raised)."""


class TracedGroup:
    """The replicas of one `strategy.run` inside a trace, taking turns (see the module)."""

    traced = True

    def __init__(self, strategy, n: int):
        self.strategy, self.n = strategy, n
        self.graph = tracing.current_graph()  # the trace the replicas emit into
        self.depth = len(self.graph._blocks)  # the block strategy.run was called in
        self.cond = threading.Condition()
        self.turn = 0
        self.failed = False
        self.finished = [False] * n
        self.calls = [0] * n  # meetings (all_reduce / merge_call) each replica reached
        self.slots: list = [None] * n
        self.result = None

    def wait_turn(self, i: int) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: self.turn == i or self.failed, TURN_TIMEOUT):
                self.failed = True
                self.cond.notify_all()
                raise RuntimeError(
                    f"strategy.run inside an em.function: replica {i} waited "
                    f"{TURN_TIMEOUT:g} s for its turn: the replica tracing before it is "
                    "blocked (waiting for a lock or an event another replica holds?); the "
                    "replicas are traced one at a time")
            if self.failed:
                raise _Aborted()

    def give_turn(self, to: int) -> None:
        with self.cond:
            self.turn = to
            self.cond.notify_all()

    def fail(self) -> None:
        with self.cond:
            self.failed = True
            self.cond.notify_all()

    def meet(self, i: int, value, combine, where: str):
        """Replica i's `value` in this meeting; the last replica computes
        `combine(values)` once; every replica returns it."""
        self.calls[i] += 1
        if tracing.current_graph() is None:
            raise ValueError(
                f"{where} (replica {i}): called under em.init_scope() while strategy.run "
                "is traced inside an em.function: the replicas meet in ops of the trace, "
                "which init_scope leaves; call it outside the init_scope")
        if tracing.current_graph() is not self.graph:
            raise ValueError(
                f"{where} (replica {i}): called inside an em.function that the function "
                "strategy.run runs calls (a trace of its own, shared by the replicas): "
                "inside an em.function strategy.run traces the replicas into one trace; "
                "call the inner function's Python function there (or drop its "
                "@em.function: the outer function compiles it anyway)")
        if len(self.graph._blocks) != self.depth:
            raise ValueError(
                f"{where} (replica {i}): called inside a loop or branch on tensors of the "
                "function strategy.run runs, inside an em.function: the replicas are traced "
                "one after the other into one trace, and meet only outside such regions. "
                "Move the all_reduce (or apply_gradients) out of the loop or branch, or the "
                "loop into the caller, around strategy.run")
        if any(self.finished):
            raise ValueError(f"{where} (replica {i}): replica "
                             f"{self.finished.index(True)} returned without reaching it: "
                             "every replica must call it the same number of times")
        self.slots[i] = value
        if i == self.n - 1:
            if len(set(self.calls)) != 1:
                raise ValueError(f"{where}: the replicas reached different numbers of "
                                 f"all_reduce/merge_call calls ({self.calls})")
            self.result = combine(list(self.slots))
            self.give_turn(0)
        else:
            self.give_turn(i + 1)
        self.wait_turn(i)
        return self.result

    def finish(self, i: int) -> None:
        if i and self.calls[i] != self.calls[0]:
            raise ValueError(f"strategy.run inside an em.function: replica {i} reached "
                             f"{self.calls[i]} all_reduce/merge_call calls, replica 0 "
                             f"{self.calls[0]}: every replica must make the same calls")
        self.finished[i] = True
        self.give_turn(i + 1)

    def all_reduce(self, i: int, reduce_op, values: list) -> list:
        where = "ReplicaContext.all_reduce"
        op = reduce_op_of(reduce_op, where)
        values = [convert_to_tensor(v) for v in values]

        def combine(slots):
            if any(len(s) != len(values) for s in slots):
                raise ValueError(f"{where}: the replicas all-reduce different numbers of "
                                 f"values ({[len(s) for s in slots]})")
            return [symbolic_combine(self.strategy, op, [s[k] for s in slots], where)
                    for k in range(len(values))]
        # each replica its own tensor object (of the same value), as the eager path gives:
        # run() regroups them into a PerReplica, as TF's Mirrored result
        graph = tracing.current_graph()
        return [graph.wrap(graph.resolve(v), "all_reduce")
                for v in self.meet(i, values, combine, where)]

    def merge(self, i: int, strategy, merge_fn, args, kwargs):
        def combine(slots):
            return strategy_module._cross_replica(
                strategy, merge_fn, regroup([s[0] for s in slots]),
                regroup([s[1] for s in slots]))
        return self.meet(i, (args, kwargs), combine, "ReplicaContext.merge_call")


def cross_worker_sum(strategy, tensors: list, where: str) -> list:
    """`tensors` (this worker's sums) summed over every worker: a host call of
    `strategy._cross_worker_sum_arrays`, or the tensors themselves on one worker."""
    if strategy._input_workers()[0] == 1:
        return tensors

    def host(*arrays):
        summed = strategy._cross_worker_sum_arrays([np.asarray(a) for a in arrays], where)
        return tuple(np.asarray(a, dtype=t.dtype.np_dtype) for a, t in zip(summed, tensors))
    return emit_host_call(tracing.current_graph(), host, tensors, [t.dtype for t in tensors],
                          "cross_worker_sum", [t.shape.dims for t in tensors])


def symbolic_combine(strategy, op: ReduceOp, values: list, where: str, axis=None):
    """`op` of the replicas' tensors as ops of the trace, over every worker (with `axis`:
    summed along it in each first; MEAN then divides by the total count, as TF)."""
    first = values[0]
    for r, v in enumerate(values):
        if v.dtype != first.dtype or (axis is None and v.shape.as_list() !=
                                      first.shape.as_list()):
            raise ValueError(f"{where}: replica {r} has a {v.dtype} value of shape "
                             f"{v.shape}, replica 0 a {first.dtype} one of shape "
                             f"{first.shape}: they must agree")
    from ember.frontend import ops
    count = strategy.num_replicas_in_sync  # of every worker
    if axis is not None:
        rank = first.shape.rank
        if rank is not None and not -rank <= axis < rank:
            raise ValueError(f"{where}: axis {axis!r} is out of range for values of shape "
                             f"{first.shape}")
        count = sum(ops.cast(ops.shape(v)[axis], first.dtype) for v in values)
        values = [ops.reduce_sum(v, axis=axis) for v in values]
    total = values[0]
    for v in values[1:]:
        total = total + v
    if axis is not None and op is ReduceOp.MEAN:
        total, count = cross_worker_sum(strategy, [total, count], where)
    else:
        total, = cross_worker_sum(strategy, [total], where)
    if op is ReduceOp.MEAN:
        total = total / count if first.dtype.is_floating or first.dtype.is_complex \
            else total // count
    return total


def traced_run(strategy, fn, args, kwargs):
    """`strategy.run(fn, args, kwargs)` while tracing (see the module)."""
    n, kwargs = len(strategy._devices), dict(kwargs or {})  # this process's replicas
    group = TracedGroup(strategy, n)
    fn = _inlined(fn)
    graphs = list(trace_scope.thread_state.graphs)
    keys = list(function_module._tracing.keys)
    results: list = [None] * n
    errors: list = [None] * n

    def replica(i: int) -> None:
        trace_scope.thread_state.graphs = list(graphs)  # the same trace, from this thread
        function_module._tracing.keys = list(keys)
        strategy_module._local.replica = strategy_module.ReplicaContext(
            strategy, strategy._first_replica + i, group)
        try:
            group.wait_turn(i)
            with device(strategy._devices[i]):
                out = fn(*strategy_module._select(args, i, n),
                         **strategy_module._select(kwargs, i, n))
            group.finish(i)
            results[i] = out
        except _Aborted:
            pass
        except BaseException as error:  # noqa: BLE001 - re-raised by the caller's thread
            errors[i] = error
            group.fail()
        finally:
            strategy_module._local.replica = None

    threads = [threading.Thread(target=replica, args=(i,), name=f"ember-trace-replica-{i}")
               for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    # no reference cycle through the error's frames may hold the trace (its MLIR module
    # must not be collected in a cycle, ops and module in any order)
    errors.clear()
    group.graph = group.slots = group.result = None
    if failed:
        i, error = failed[0]
        del failed
        error.add_note(f"(raised in replica {i} of {n} while tracing strategy.run inside "
                       "an em.function)")
        try:
            raise error
        finally:
            del error
    return regroup(results)


def _inlined(fn):
    """An em.function given to strategy.run inside a trace runs as part of that trace (its
    Python function, converted as it would be): TF's graph mode inlines it too, and its
    all_reduce and apply_gradients then meet the other replicas in the same trace. One
    with an input_signature is called as a function (its signature checked). Another
    callable is converted by AutoGraph when the function being traced is (TF's run)."""
    if not isinstance(fn, function_module.Function):
        keys = function_module._tracing.keys  # as TF: converted if the caller's trace is
        if keys and getattr(keys[-1][0], "_autograph", False):
            from ember.frontend.autograph.conversion import convert
            return convert(fn)
        return fn
    if fn._input_signature is not None:
        return fn
    python = fn._python_function
    return function_module.convert_control_flow(python) if fn._autograph else python


def traced_reduce(strategy, reduce_op, value, axis):
    """`strategy.reduce` of a value holding traced tensors: ops of the trace."""
    from ember.runtime.distribute.values import PerReplica
    where = "MirroredStrategy.reduce"
    op = reduce_op_of(reduce_op, where)
    if isinstance(value, PerReplica):
        values = [convert_to_tensor(v) for v in value.values]
    elif len(strategy._devices) == 1:  # this worker's one replica's value
        values = [convert_to_tensor(value)]
    elif op is ReduceOp.MEAN and axis is None:  # the same value on every replica
        return convert_to_tensor(value)
    else:
        raise ValueError(f"A non-DistributedValues value {value!r} cannot be reduced with "
                         f"the given reduce op {op}: pass the PerReplica that strategy.run "
                         "returned")
    return symbolic_combine(strategy, op, values, where, axis)


def is_traced_value(value) -> bool:
    from ember.runtime.distribute.values import PerReplica
    values = value.values if isinstance(value, PerReplica) else (value,)
    return tracing.current_graph() is not None and any(
        isinstance(v, tracing.SymbolicTensor) for v in values)


def in_traced_replica() -> bool:
    """Whether this thread traces a replica of a `strategy.run` inside an em.function."""
    replica = getattr(strategy_module._local, "replica", None)
    return replica is not None and getattr(replica._group, "traced", False) \
        and tracing.current_graph() is not None

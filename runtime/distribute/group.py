"""The replicas of one `MirroredStrategy.run` meeting: `_Group` holds the slots of
`ReplicaContext.all_reduce` and `merge_call` and the barrier the replica threads meet at
(strategy.py makes one per `run`; multiworker.py's `_WorkerGroup` extends it)."""

from __future__ import annotations

import threading

import numpy as np

from ember.backends.cpu import block_cache
from ember.frontend.device_memory import placed
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.trace_scope import active_graphs
from ember.frontend.variables import Variable
from ember.runtime import function as function_module
from ember.runtime.executor import held_variables
from ember.runtime.distribute.values import check_agree, reduce_op_of, reduce_share, regroup

BARRIER_TIMEOUT = 60.0  # seconds a replica waits in all_reduce for the others


@placed  # a GPU replica's result goes to its GPU (gpu_replicas.py)
def _shared(array):
    return convert_to_tensor(array)


class Meeting:
    """threading.Barrier's `wait` and `abort`, and `leave` for a replica whose function
    returned: a wait that can no longer complete (a replica left, raised or timed out)
    raises BrokenBarrierError at once, not after the timeout. A wait already completed is
    never broken afterwards (threading.Barrier's abort can break the threads it has just
    released, before they wake)."""

    def __init__(self, parties: int, timeout: float):
        self._cond = threading.Condition()
        self._parties, self._timeout = parties, timeout
        self._count = self._generation = 0
        self._broken = False
        self.left: list[int] = []  # the replicas that returned

    def wait(self, timeout=None) -> None:
        with self._cond:
            if self._broken or self.left:
                raise threading.BrokenBarrierError
            generation = self._generation
            self._count += 1
            if self._count == self._parties:
                self._count, self._generation = 0, generation + 1
                self._cond.notify_all()
                return
            self._cond.wait_for(lambda: self._generation != generation or self._broken or
                                self.left, self._timeout if timeout is None else timeout)
            if self._generation != generation:
                return
            self._broken = True  # timed out, or can never complete: the others raise too
            self._cond.notify_all()
            raise threading.BrokenBarrierError

    def abort(self) -> None:
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def leave(self, replica: int) -> None:
        with self._cond:
            self.left.append(replica)
            self._cond.notify_all()


class _Group:
    """The replicas of one `run`: slots for all_reduce and the barrier they meet at."""

    def __init__(self, n: int):
        self.slots = [None] * n
        self.barrier = Meeting(n, BARRIER_TIMEOUT)
        self.failed_together = False
        self.merged = None  # (ok, result or error) of the last merge_call
        self.out = []  # all_reduce's result buffers (replica 0 allocates them)

    def all_reduce(self, replica: int, op, arrays: list) -> list:
        """Each replica sums its share of every value's elements into buffers replica 0
        allocated (a reduce-scatter and all-gather in shared memory: the replicas divide the
        work instead of each summing everything); all get the same read-only results."""
        where = f"ReplicaContext.all_reduce (replica {replica})"
        self.check_can_meet(where)
        self.slots[replica] = arrays
        if replica == 0:  # shapes as replica 0's: the check below refuses any other
            self.out = [block_cache.empty(np.shape(a), np.asarray(a).dtype) for a in arrays]
        self._wait(where)
        try:
            if any(len(s) != len(arrays) for s in self.slots):
                raise ValueError(f"{where}: the replicas all-reduce different numbers of "
                                 f"values ({[len(s) for s in self.slots]})")
            parts = [[s[k] for s in self.slots] for k in range(len(arrays))]
            for values in parts:
                check_agree(values, where)
            for values, out in zip(parts, self.out):
                reduce_share(reduce_op_of(op, where), values, out, replica, len(self.slots))
            result = list(self.out)  # taken before the barrier: replica 0 then may renew it
        except BaseException:
            self.failed_together = True  # the same slots: every replica raises it
            raise
        finally:
            self._wait(where)  # every share is written; the slots are read before reuse
        return [_shared(out) for out in result]  # on the CPU no copy: never written again

    def merge(self, replica: int, strategy, merge_fn, args, kwargs):
        where = f"ReplicaContext.merge_call (replica {replica})"
        self.check_can_meet(where)
        self.slots[replica] = (args, kwargs)
        self._wait(where)
        if replica == 0:  # only replica 0 reads the slots, before the barrier below
            from ember.runtime.distribute.strategy import _cross_replica  # it imports this
            try:
                merged = (True, _cross_replica(strategy, merge_fn,
                                               regroup([s[0] for s in self.slots]),
                                               regroup([s[1] for s in self.slots])))
            except BaseException as error:  # noqa: BLE001 - replica 0 re-raises it
                merged = (False, error)
            self.merged = merged
        self._wait(where)
        ok, value = self.merged
        if ok:
            return value
        self.failed_together = True  # every replica raises now: none waits at the barrier
        if replica == 0:
            raise value
        raise RuntimeError(f"{where}: another replica raised in the merge_call function "
                           f"({type(value).__name__}: {value})")

    def check_can_meet(self, where: str) -> None:
        """Refuses at once a meeting the other replicas can never come to (waiting for them
        would only end at the barrier's timeout): reached while this replica traces an
        em.function they call too (they wait for the trace, which serves them all), or
        inside a compiled call holding the locks of variables that their calls write."""
        if len(self.slots) < 2:
            return
        if active_graphs():
            keys = function_module._tracing.keys
            name = f"em.function '{keys[-1][0]._name}'" if keys else "an em.function"
            raise RuntimeError(
                f"{where}: reached while this replica traces {name}, which every replica "
                "of strategy.run calls: the others wait for this trace (one trace serves "
                "them all), so they cannot meet here. Make the variables before "
                "strategy.run, under strategy.scope() (build the model: "
                "model.build(input_shape) or one call on a batch; the optimizer's slots: "
                "optimizer.build(variables); metrics), call merge_call outside the "
                "em.function, or trace the replicas together: call strategy.run inside the "
                "em.function (@em.function def step(...): return strategy.run(fn, ...))")
        from ember.runtime.distribute.mirrored import MirroredVariable  # it imports this
        for name, held in held_variables():
            shared = [v.name for v in held
                      if isinstance(v, Variable) and not isinstance(v, MirroredVariable)]
            if shared:
                raise RuntimeError(
                    f"{where}: em.function '{name}' meets the other replicas here while it "
                    f"holds the locks of {shared}, which every replica's call writes: a "
                    "compiled call holds the locks of the variables it writes until it "
                    "returns (calls on several threads never update the same old value), "
                    "and the other replicas' calls wait for them, so they cannot come. "
                    "Give each replica its own: make them under strategy.scope() (a "
                    "MirroredVariable has a copy per replica; an em.random.Generator made "
                    "there a stream per replica), or write them outside the function that "
                    "all-reduces")

    def _wait(self, where: str) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            if self.barrier.left:
                raise RuntimeError(
                    f"{where}: replica {self.barrier.left[0]} returned from the function "
                    f"without making this call: every replica must make the same "
                    f"all_reduce and merge_call calls, in the same order") from None
            raise RuntimeError(f"{where}: another replica raised or timed out "
                               f"({BARRIER_TIMEOUT:g} s) instead of calling all_reduce: every"
                               " replica must call it the same number of times") from None

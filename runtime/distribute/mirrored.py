"""Mirrored variables as tf.distribute's: under `strategy.scope()` (or inside `strategy.run`)
`em.Variable(...)` makes a `MirroredVariable`, one copy per replica.

- In a replica (a function `strategy.run` runs) reads and writes use that replica's copy; a
  compiled function captures the variable once and each call binds the copy of the replica
  calling it.
- In the cross-replica context reads give the first copy and `assign`/`assign_add`/
  `assign_sub` write every copy.
- `optimizer.apply_gradients` inside a replica is a merge_call (as TF's optimizers): the
  replicas meet, their gradients are summed (ReduceOp.SUM: scale the loss by the global batch
  size) and applied once in the cross-replica context, so every copy stays identical. Inside
  an em.function that strategy.run runs, the compiled function all-reduces the gradients at
  each call and each replica updates its own copies (the variables and the optimizer made
  under the scope, the optimizer's slots built before: `optimizer.build(variables)`).

Variables created inside `strategy.run` are created once (in a merge_call, from replica 0's
initial value): every replica must create the same variables in the same order. One made
under em.init_scope while a replica traces an em.function (a metric made in the step) is
mirrored by that replica alone, from its initial value: the other replicas may wait for
that trace, which serves them all, and could never join a merge_call. Variables created by
a trace (inside em.function) stay ordinary variables. Under
MultiWorkerMirroredStrategy every variable created under the scope, in `run` or by a trace
starts from worker 0's initial value (broadcast: every worker must create the same variables
in the same order; with several workers a traced initial value is an error).
Under a OneDeviceStrategy variables are ordinary ones on its device, as TF's.
"""

from __future__ import annotations

import threading

import numpy as np

from ember.dialects.ember import state
from ember.frontend import tracing
from ember.frontend.autodiff import recording
from ember.frontend.training import metrics as metrics_lib
from ember.frontend.training import optimizer_base
from ember.frontend import variables
from ember.frontend.trace_scope import active_graphs
from ember.frontend.trace_types import VariableTraceType
from ember.frontend.variables import Variable
from ember.runtime.distribute import generators  # noqa: F401 - em.random.Generator's hooks
from ember.runtime.devices import device
from ember.runtime.distribute import gpu_replicas
from ember.runtime.distribute.strategy import (MirroredStrategy, get_replica_context,
                                               get_strategy, has_strategy, replica_index)
from ember.runtime.distribute.values import PerReplica, ReduceOp


# .reduced: apply_gradients of gradients already all-reduced; .plain: in _plain
_state = threading.local()


class MirroredVariable(Variable):
    """tf.distribute's MirroredVariable: a variable with one copy per replica (see the
    module). `.values` (and `strategy.experimental_local_results`) lists the copies."""

    def __init__(self, strategy, copies: list):
        first = copies[0]
        self.trainable = first.trainable
        self._name = first._name
        self._type = first._type
        self._initialized = None
        self._strategy = strategy
        self._values = tuple(copies)

    @property
    def values(self) -> tuple:
        return self._values

    @property
    def _local_values(self) -> tuple:
        return self._values

    @property
    def device(self) -> str:
        """The device of the copy of the replica running on this thread (the first copy's
        outside a replica), as TF's."""
        return self._copy().device

    @property
    def _handle(self):
        return self._copy()._handle

    def _copy(self) -> Variable:
        """The copy of the replica running on this thread (the first one outside)."""
        i = replica_index()
        if i is None or get_strategy() is not self._strategy:
            return self._values[0]
        return self._values[i]

    def _ember_trace_type(self):
        # one trace serves every replica: each call binds its replica's copy (`handle`)
        first = self._values[0]
        return VariableTraceType(first._handle.id, self.dtype, self._type.shape)

    def read_value(self):
        from ember.runtime.distribute.traced_run import in_traced_replica
        if not in_traced_replica():
            return super().read_value()
        # strategy.run inside an em.function: this replica's copy, captured on its own; the
        # tape sees a read of the mirrored variable (gradients are asked of it)
        graph = tracing.current_graph()
        replayed = recording.replayed_read(self)
        if replayed is not None:
            return replayed
        value = graph.apply_on_values(state.ReadVariableOp,
                                      [graph.capture_variable(self._copy())], {})
        if recording.recording():
            recording.record_read(self, value)
        return value

    def _write(self, spec, value):
        from ember.runtime.distribute.traced_run import in_traced_replica
        if in_traced_replica():  # strategy.run inside an em.function: this replica's copy
            self._copy()._write(spec, value)
            return self
        if replica_index() is not None:
            super()._write(spec, value)  # this replica's copy
            gpu_replicas.keep_on_devices(self, replica_index())
            return self
        if tracing.current_graph() is not None and len(self._values) > 1:
            raise ValueError(
                f"{self.name} is a MirroredVariable: an em.function called outside "
                "strategy.run cannot write its copies; assign it eagerly in the cross-replica "
                "context, or write it inside the function strategy.run runs")
        for copy in self._values:
            copy._write(spec, value)
        gpu_replicas.keep_on_devices(self)  # GPU replicas: the copies back on their GPUs
        return self

    def __repr__(self) -> str:
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return "MirroredVariable:{\n" + body + "\n}"


def _plain(*args, **kwargs) -> Variable:
    """An ordinary em.Variable (the creator hook not asked again, nor for the variables it
    makes itself: a traced initial value's `initialized` flag)."""
    _state.plain = True
    try:
        return type.__call__(Variable, *args, **kwargs)
    finally:
        _state.plain = False


def _mirror(strategy, args, kwargs):
    first = _from_chief(strategy, _plain(*args, **kwargs))
    if first._handle.value is None:  # initialised by the trace creating it
        return first
    copies = [first] + [_plain(np.array(first._handle.value, copy=True),
                               trainable=first.trainable, name=first._name, dtype=first.dtype,
                               shape=first.shape)
                        for _ in range(_local_replicas(strategy) - 1)]
    for copy, device in zip(copies, strategy._devices):
        copy._device = device  # `.device`: its replica's device (full name)
    mirrored = MirroredVariable(strategy, copies)
    gpu_replicas.place_copies(mirrored)  # GPU replicas: a copy on each replica's GPU
    return mirrored


def _from_chief(strategy, variable: Variable) -> Variable:
    """Under several workers (MultiWorkerMirroredStrategy), gives `variable` worker 0's
    initial value, as TF's chief broadcasts it (every worker creates the same variables in
    the same order: a collective)."""
    broadcast = getattr(strategy, "_broadcast_initial_value", None)
    if broadcast is not None:
        variable._handle.value = broadcast(variable._handle.value, variable._name)
    return variable


def _create(args, kwargs):
    """variables.variable_creator: a MirroredVariable under a MirroredStrategy."""
    if not has_strategy() or getattr(_state, "plain", False):
        return None
    strategy = get_strategy()
    if not isinstance(strategy, MirroredStrategy):
        return None
    one_device = getattr(strategy, "_one_device", None)
    if one_device is not None:  # OneDeviceStrategy: an ordinary variable, on its device
        if tracing.current_graph() is not None:
            return None
        with device(one_device):
            return _plain(*args, **kwargs)
    if tracing.current_graph() is not None:
        if getattr(strategy, "_broadcast_initial_value", None) is None:
            return None  # an ordinary variable
        return _mirror(strategy, args, kwargs)  # from worker 0's value (the first trace's)
    if replica_index() is None or active_graphs():
        # (a replica tracing, under em.init_scope: the other replicas may wait for this
        # trace, which serves them all, and could never join a merge_call)
        return _mirror(strategy, args, kwargs)
    return get_replica_context().merge_call(lambda s: _mirror(s, args, kwargs))


def _distributed_apply(optimizer, grads_and_vars):
    """optimizer_base.distributed_apply: in a replica, sum the replicas' gradients and apply
    them once across the replicas; elsewhere None."""
    if replica_index() is None or getattr(_state, "reduced", False) \
            or getattr(get_strategy(), "_one_device", None) is not None:
        return None  # (OneDeviceStrategy: one replica, its gradients as they are)
    where = f"{type(optimizer).__name__}.apply_gradients"
    pairs = []
    for item in list(grads_and_vars):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"{where} takes (gradient, variable) pairs, e.g. zip(grads, "
                            f"vars); got {item!r}")
        pairs.append(tuple(item))
    if tracing.current_graph() is not None:
        return _apply_traced(optimizer, pairs, where)
    context = get_replica_context()
    return context.merge_call(_apply_summed, args=(optimizer, pairs))


def _apply_traced(optimizer, pairs: list, where: str):
    """In a compiled replica function: the gradients all-reduced (SUM) at each call, then
    each replica updates its own copies (identical updates of identical copies)."""
    slots = [s for _, v in pairs for s in optimizer._slots.get(id(v), {}).values()]
    shared = [v for v in [optimizer.iterations] + [v for _, v in pairs] + slots
              if not isinstance(v, MirroredVariable)]
    if shared:
        made = [v.name for v in shared
                if any(v is c for c in tracing.current_graph().created_variables)]
        which = "they" if len(made) == len(shared) else str(made)
        raise ValueError(
            f"{where}: inside an em.function that strategy.run runs every variable it "
            f"updates must be mirrored, but {[v.name for v in shared]} are not: create the "
            "model's variables and the optimizer under strategy.scope()" + (
                f"; {which} were made while the function was traced (a Keras model makes "
                "its weights on its first call, an optimizer its slots in build or its first "
                "apply_gradients), and a trace makes ordinary variables: build them under "
                "strategy.scope() before the step (model.build(input_shape) or one call on "
                "a batch; optimizer.build(model.trainable_variables))" if made else ""))
    slots = [name for name, _ in optimizer._slot_names_for()]
    unbuilt = [v.name for _, v in pairs if slots and id(v) not in optimizer._slots]
    if unbuilt:
        raise ValueError(
            f"{where}: inside an em.function that strategy.run runs the optimizer cannot "
            f"create its slots {slots} for {unbuilt}: call optimizer.build(variables) under "
            "strategy.scope() first (or apply the gradients eagerly once)")
    given = [(i, g) for i, (g, _) in enumerate(pairs) if g is not None]
    summed = list(pairs)
    if given:
        from ember.runtime.distribute.collective import traced_all_reduce
        from ember.frontend.tensor import convert_to_tensor
        reduced = traced_all_reduce(ReduceOp.SUM, [convert_to_tensor(g) for _, g in given])
        for (i, _), grad in zip(given, reduced):
            summed[i] = (grad, pairs[i][1])
    _state.reduced = True
    try:
        return optimizer.apply_gradients(summed)
    finally:
        _state.reduced = False


def _local_replicas(strategy) -> int:
    """The replicas of `strategy` in this process (all of them for MirroredStrategy)."""
    return len(strategy._devices)


def _apply_summed(strategy, optimizer, pairs):
    n = _local_replicas(strategy)
    summed = []
    for grad, var in pairs:
        if isinstance(var, PerReplica):
            raise ValueError(f"{type(optimizer).__name__}.apply_gradients: the replicas "
                             "passed different variables at the same position; pass the same "
                             "(mirrored) variables in the same order in every replica")
        if isinstance(grad, PerReplica):
            if any(g is None for g in grad.values):
                raise ValueError(f"{type(optimizer).__name__}.apply_gradients: the gradient "
                                 f"of {var.name} is None in some replicas only")
            grads = list(grad.values)
        elif grad is None:
            summed.append((None, var))
            continue
        else:  # the same object from every replica
            grads = [grad] * n
        # strategy.reduce: a multi-worker strategy sums the other workers' replicas too
        summed.append((strategy.reduce(ReduceOp.SUM, PerReplica(grads), axis=None), var))
    return optimizer.apply_gradients(summed)


def _replica_sum(tensors: list) -> list:
    """metrics.replica_sum: in a replica of a MirroredStrategy of several replicas, each
    tensor summed over the replicas (a metric's copies then get the same update)"""
    context = get_replica_context()
    if context is None or not isinstance(context.strategy, MirroredStrategy) or \
            context.num_replicas_in_sync == 1:
        return tensors
    return [context.all_reduce("SUM", t) for t in tensors]


variables.variable_creator = _create
metrics_lib.replica_sum = _replica_sum
optimizer_base.distributed_apply = _distributed_apply

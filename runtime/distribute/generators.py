"""`em.random.Generator` under a MirroredStrategy, as TensorFlow's random-numbers guide
describes ("Interaction with distribution strategies"): a generator made outside any
strategy's scope is one stream the replicas share, taking turns, so each draws different
numbers; one made under a MirroredStrategy's scope, or inside its `run`, gives "each
replica a different and independent stream of random numbers", deterministic for a seeded
generator.

How (TensorFlow's `Generator._preprocess_key`): the state of a generator made under the
scope is a MirroredVariable (the strategy's variable creator), whose copies the replicas
advance alike, and a replica draws with the state's key hashed with its replica id
(frontend/random_generator.py). This module gives the frontend that replica id: a constant
eagerly and in a trace of `strategy.run` inside an em.function (a trace per replica); in
an em.function that the replicas call, read at each call for the replica calling, -1 when
it is called outside them. A ParameterServerStrategy's generator keeps one state on a
parameter server that its workers take turns on (TensorFlow's), so it needs no hashing.

The random ops (`em.random.uniform`, dropout) of an em.function that a replica of an eager
`strategy.run` traces get the same treatment (`replica_states`): their state is mirrored,
each replica's call binding its own copy (random_seed.py says why).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import random_generator, random_seed
from ember.frontend.effects import emit_host_call
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import current_graph
from ember.runtime.distribute import gpu_replicas
from ember.runtime.distribute import strategy as strategy_module


def strategy_of_new():
    """The MirroredStrategy (or MultiWorkerMirroredStrategy) current where a generator is
    made, under its scope or in its `run`; None elsewhere."""
    strategy = strategy_module.get_strategy()
    if strategy_module.has_strategy() and isinstance(strategy,
                                                     strategy_module.MirroredStrategy):
        return strategy
    return None


def replica_id(strategy) -> int:
    """The id of the replica of `strategy` running on this thread, -1 outside its replicas
    (the cross-replica context, or no strategy); ValueError in another strategy's."""
    context = getattr(strategy_module._local, "replica", None)
    if context is None:
        return -1
    if context.strategy is not strategy:
        raise ValueError(
            f"em.random.Generator: this generator was made under {strategy!r}, and it "
            f"draws in a replica of {context.strategy!r}; a generator made under a "
            "strategy's scope (or by an em.function its replicas traced) draws in that "
            "strategy's replicas only: make it under the scope of the strategy running it, "
            "or outside any scope (its replicas then share one stream)")
    return context._id


def replica_of(strategy):
    """The replica id a generator of `strategy` draws with (random_generator.py's hook)."""
    replica = replica_id(strategy)
    context = getattr(strategy_module._local, "replica", None)
    graph = current_graph()
    if graph is None or getattr(context._group if context else None, "traced", False):
        # eagerly, or in `strategy.run` inside an em.function: a trace per replica
        return None if replica < 0 else convert_to_tensor(np.int64(replica))

    def calling_replica():
        return (np.asarray(replica_id(strategy), np.int64),)
    return emit_host_call(graph, calling_replica, [], [dtypes.int64], "replica_id", [()])[0]


def replica_states(make):
    """random_seed.py's hook: for a random op traced by a replica of an eager `strategy.run`
    of a MirroredStrategy with several replicas here, (a MirroredVariable whose copies
    `make()` makes, the strategy); None elsewhere (in strategy.run inside an em.function
    every replica's ops are in the one trace, and one call runs them all)."""
    context = getattr(strategy_module._local, "replica", None)
    if context is None or context._group is None or getattr(context._group, "traced", False):
        return None
    strategy = context.strategy
    if not isinstance(strategy, strategy_module.MirroredStrategy) or \
            len(strategy._devices) < 2:
        return None
    from ember.runtime.distribute.mirrored import MirroredVariable  # it imports this module
    copies = [make() for _ in strategy._devices]
    for copy, device in zip(copies, strategy._devices):
        copy._device = device
    mirrored = MirroredVariable(strategy, copies)
    gpu_replicas.place_copies(mirrored)
    return mirrored, strategy


random_generator.strategy_of_new = strategy_of_new
random_generator.replica_of = replica_of
random_seed.replica_states = replica_states
